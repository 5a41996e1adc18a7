//! Reading a stored row back as an [`idem_store::Record`], checking every column: a row
//! written by hand, by an older schema or by a bug is a [`DbError::Corrupt`], never a panic.
//!
//! `status = 'in_flight'` is in flight, or released when `released_token` names the row's
//! own lease (schema version 3, see `sql.rs`); `'done'` is done.

use idem_store::{ErrorPolicy, Fingerprint, Lease, Record, SavedResponse, Status};
use sqlx::{ColumnIndex, Decode, Row, Type};

use super::DbError;

/// The claim columns as the database returned them, before any check.
#[derive(Debug, Default)]
pub(crate) struct RawRow {
    fingerprint: Option<Vec<u8>>,
    on_error: Option<String>,
    status: Option<String>,
    token: Option<i64>,
    locked_at: Option<i64>,
    created_at: Option<i64>,
    expires_at: Option<i64>,
    retention_ms: Option<i64>,
    response_status: Option<i64>,
    response_content_type: Option<String>,
    response_headers: Option<String>,
    response_body: Option<Vec<u8>>,
    released_token: Option<i64>,
}

/// Column by name, on either backend's row type.
pub(crate) fn get<'r, R, T>(row: &'r R, column: &'static str) -> Result<T, sqlx::Error>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    T: Decode<'r, R::Database> + Type<R::Database>,
{
    row.try_get(column)
}

impl RawRow {
    /// Read the claim columns of `row`. A column of the wrong type (text where a number
    /// belongs) comes back as `Err(reason)`.
    pub(crate) fn read<'r, R>(row: &'r R) -> Result<Self, String>
    where
        R: Row,
        &'static str: ColumnIndex<R>,
        Option<Vec<u8>>: Decode<'r, R::Database> + Type<R::Database>,
        Option<String>: Decode<'r, R::Database> + Type<R::Database>,
        Option<i64>: Decode<'r, R::Database> + Type<R::Database>,
    {
        let e = |e: sqlx::Error| e.to_string();
        Ok(Self {
            fingerprint: get(row, "fingerprint").map_err(e)?,
            on_error: get(row, "on_error").map_err(e)?,
            status: get(row, "status").map_err(e)?,
            token: get(row, "token").map_err(e)?,
            locked_at: get(row, "locked_at").map_err(e)?,
            created_at: get(row, "created_at").map_err(e)?,
            expires_at: get(row, "expires_at").map_err(e)?,
            retention_ms: get(row, "retention_ms").map_err(e)?,
            response_status: get(row, "response_status").map_err(e)?,
            response_content_type: get(row, "response_content_type").map_err(e)?,
            response_headers: get(row, "response_headers").map_err(e)?,
            response_body: get(row, "response_body").map_err(e)?,
            released_token: get(row, "released_token").map_err(e)?,
        })
    }

    /// Whether the outer join found no claim.
    pub(crate) fn is_absent(&self) -> bool {
        self.fingerprint.is_none() && self.status.is_none()
    }

    /// The record, or why it is not one.
    pub(crate) fn into_record(self) -> Result<Record, String> {
        let fingerprint = self.fingerprint.ok_or("fingerprint is NULL")?;
        let fingerprint = <[u8; 32]>::try_from(fingerprint.as_slice())
            .map(Fingerprint)
            .map_err(|_| format!("fingerprint is {} bytes, not 32", fingerprint.len()))?;
        let on_error = self.on_error.ok_or("on_error is NULL")?;
        let on_error = ErrorPolicy::parse(&on_error)
            .ok_or_else(|| format!("unknown on_error policy {on_error:?}"))?;
        // Released while the lease that released the row is still the row's (a takeover by
        // a server that does not know the column moves `token` on and leaves it).
        let released = self.released_token.is_some() && self.released_token == self.token;
        let token = unsigned("token", self.token)?;
        let locked_at = unsigned("locked_at", self.locked_at)?;
        let lease = Lease { locked_at, token };
        let status = match self.status.as_deref() {
            Some("in_flight") if released => Status::Released { lease },
            Some("in_flight") => Status::InFlight { lease },
            Some("done") => Status::Done {
                response: response(
                    self.response_status,
                    self.response_content_type,
                    self.response_headers,
                    self.response_body,
                )?,
            },
            Some(other) => return Err(format!("unknown status {other:?}")),
            None => return Err("status is NULL".to_owned()),
        };
        Ok(Record {
            fingerprint,
            on_error,
            status,
            created_at: unsigned("created_at", self.created_at)?,
            expires_at: unsigned("expires_at", self.expires_at)?,
            retention_ms: unsigned("retention_ms", self.retention_ms)?,
        })
    }
}

fn unsigned(column: &str, value: Option<i64>) -> Result<u64, String> {
    let value = value.ok_or_else(|| format!("{column} is NULL"))?;
    u64::try_from(value).map_err(|_| format!("{column} is negative ({value})"))
}

fn response(
    status: Option<i64>,
    content_type: Option<String>,
    headers: Option<String>,
    body: Option<Vec<u8>>,
) -> Result<SavedResponse, String> {
    let status = status.ok_or("a done row has no response_status")?;
    let status = u16::try_from(status)
        .ok()
        .filter(|s| (100..=999).contains(s))
        .ok_or_else(|| format!("response_status {status} is not an HTTP status"))?;
    let headers = match headers.as_deref() {
        None | Some("") => Vec::new(),
        Some(json) => serde_json::from_str::<Vec<(String, String)>>(json)
            .map_err(|e| format!("response_headers is not a list of [name, value]: {e}"))?,
    };
    Ok(SavedResponse {
        status,
        content_type: content_type.ok_or("a done row has no response_content_type")?,
        headers,
        body: body.ok_or("a done row has no response_body")?,
    })
}

/// The saved headers as stored: a JSON array of [name, value] pairs.
pub(crate) fn headers_json(response: &SavedResponse) -> String {
    // A list of string pairs always serialises.
    serde_json::to_string(&response.headers).unwrap_or_else(|_| "[]".to_owned())
}

/// The [`DbError::Corrupt`] for the row of (scope, key).
pub(crate) fn corrupt(scope: &str, key: &str, reason: String) -> DbError {
    DbError::Corrupt {
        scope: scope.to_owned(),
        key: key.to_owned(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done_row() -> RawRow {
        RawRow {
            fingerprint: Some(vec![1; 32]),
            on_error: Some("save-response".into()),
            status: Some("done".into()),
            token: Some(3),
            locked_at: Some(10),
            created_at: Some(10),
            expires_at: Some(99),
            retention_ms: Some(89),
            response_status: Some(201),
            response_content_type: Some("application/json".into()),
            response_headers: Some(r#"[["Location","/o/1"]]"#.into()),
            response_body: Some(b"{}".to_vec()),
            released_token: None,
        }
    }

    fn in_flight_row(released_token: Option<i64>) -> RawRow {
        RawRow {
            status: Some("in_flight".into()),
            response_status: None,
            response_content_type: None,
            response_headers: None,
            response_body: None,
            released_token,
            ..done_row()
        }
    }

    /// Released while `released_token` is the row's own token; a row taken over since (by a
    /// server that does not know the column, which leaves it) is in flight.
    #[test]
    fn released_token_marks_the_row_released_only_under_its_own_lease() {
        let lease = Lease {
            locked_at: 10,
            token: 3,
        };
        for (released_token, status) in [
            (Some(3), Status::Released { lease }),
            (None, Status::InFlight { lease }),
            (Some(2), Status::InFlight { lease }),
        ] {
            let r = in_flight_row(released_token).into_record().unwrap();
            assert_eq!(r.status, status, "{released_token:?}");
        }
        // A done row is done whatever the column says.
        let done = RawRow {
            released_token: Some(3),
            ..done_row()
        };
        assert!(matches!(
            done.into_record().unwrap().status,
            Status::Done { .. }
        ));
    }

    #[test]
    fn a_good_row_reads_back() {
        let r = done_row().into_record().unwrap();
        let Status::Done { response } = r.status else {
            panic!("done")
        };
        assert_eq!(response.headers, vec![("Location".into(), "/o/1".into())]);
        assert_eq!((r.created_at, r.expires_at, r.retention_ms), (10, 99, 89));
    }

    #[test]
    fn each_kind_of_damage_is_named() {
        let cases: Vec<(RawRow, &str)> = vec![
            (
                RawRow {
                    status: Some("paused".into()),
                    ..done_row()
                },
                "unknown status \"paused\"",
            ),
            (
                RawRow {
                    fingerprint: Some(vec![0; 31]),
                    ..done_row()
                },
                "fingerprint is 31 bytes, not 32",
            ),
            (
                RawRow {
                    on_error: Some("retry".into()),
                    ..done_row()
                },
                "unknown on_error policy \"retry\"",
            ),
            (
                RawRow {
                    token: Some(-1),
                    ..done_row()
                },
                "token is negative (-1)",
            ),
            (
                RawRow {
                    retention_ms: Some(-3),
                    ..done_row()
                },
                "retention_ms is negative (-3)",
            ),
            (
                RawRow {
                    response_status: Some(70_000),
                    ..done_row()
                },
                "response_status 70000 is not an HTTP status",
            ),
            (
                RawRow {
                    response_body: None,
                    ..done_row()
                },
                "a done row has no response_body",
            ),
            (
                RawRow {
                    response_headers: Some("{".into()),
                    ..done_row()
                },
                "response_headers is not a list",
            ),
        ];
        for (row, reason) in cases {
            let got = row.into_record().unwrap_err();
            assert!(got.starts_with(reason), "{got:?} vs {reason:?}");
        }
    }
}
