//! The errors of the durable tables.

/// Why a table operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The claim was taken over (or released, saved, pruned) before this fenced write: it
    /// wrote nothing, and the transaction's own writes were rolled back. Answer
    /// `idem_store::http::lease_lost()` (409): the client's retry gets the new holder's
    /// answer.
    #[error("lease lost: the claim was taken over or is gone")]
    Fenced,
    /// The database did not answer or refused the statement (down, restarting, out of
    /// connections, busy past the timeout). Nothing was decided: answer 503.
    #[error("database unavailable: {0}")]
    Unavailable(#[source] sqlx::Error),
    /// A stored row cannot be read as a claim (an unknown status, a fingerprint of the
    /// wrong length, a negative time, a missing response column): someone wrote the table
    /// by hand or a migration went wrong. The row is left as it is; answer 500.
    #[error("stored claim {scope}/{key} is corrupt: {reason}")]
    Corrupt {
        /// The row's scope.
        scope: String,
        /// The row's key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A time or size does not fit the table's 64-bit signed integers.
    #[error("{what} {value} does not fit a table column")]
    OutOfRange {
        /// Which value.
        what: &'static str,
        /// The value.
        value: u64,
    },
    /// A route's own write ([`RouteInsert`](super::RouteInsert),
    /// [`RouteUpdate`](super::RouteUpdate)) names a table or column that is not a plain
    /// identifier, or names no column, or updates with no filter: a bug in the route, found
    /// before any statement ran. Answer 500.
    #[error("route write refused: {0}")]
    InvalidWrite(String),
    /// The URL names no database idem can open (`sqlite:…` or `postgres://…`).
    #[error("unsupported database url {0:?}: expected sqlite:PATH or postgres://…")]
    Url(String),
    /// The schema migrations failed.
    #[error("schema migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl DbError {
    /// Whether the database could not be reached or refused the statement (answer 503).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }

    /// Whether this is [`DbError::Fenced`].
    pub fn is_fenced(&self) -> bool {
        matches!(self, Self::Fenced)
    }

    /// The HTTP status a route answers for this error: 409 (fenced), 503 (unavailable),
    /// 500 (anything else: corrupt rows, configuration).
    pub fn status(&self) -> u16 {
        match self {
            Self::Fenced => 409,
            Self::Unavailable(_) => 503,
            _ => 500,
        }
    }
}

impl From<sqlx::Error> for DbError {
    fn from(e: sqlx::Error) -> Self {
        Self::Unavailable(e)
    }
}

/// `value` as a table integer.
pub(crate) fn to_i64(what: &'static str, value: u64) -> Result<i64, DbError> {
    i64::try_from(value).map_err(|_| DbError::OutOfRange { what, value })
}
