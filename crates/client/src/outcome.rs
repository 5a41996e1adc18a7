//! How an operation ended.

use serde::{Deserialize, Serialize};

use crate::json::u64_string;
use crate::Json;

/// The final result of an operation: what happened, under which key, after how many attempts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The operation's name, e.g. `checkout:cart-42`.
    pub name: String,
    /// What happened.
    pub kind: OutcomeKind,
    /// The idempotency key sent (hyphenated UUID), or `None` for an operation sent without one.
    pub key: Option<String>,
    /// How many attempts were sent in total (across reloads).
    pub attempts: u32,
    /// Whether the key was in the journal or only in memory.
    pub durability: Durability,
}

/// What happened to an operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum OutcomeKind {
    /// The server ran the work and answered 2xx.
    Succeeded {
        /// HTTP status.
        status: u16,
        /// Response body.
        body: Vec<u8>,
    },
    /// The server had already run the work for this key and replayed its saved 2xx answer
    /// (`Idempotent-Replayed: true`).
    Replayed {
        /// HTTP status.
        status: u16,
        /// Response body (the saved one).
        body: Vec<u8>,
    },
    /// The server refused the request (422 or another non-retryable status); never retried.
    Rejected {
        /// HTTP status.
        status: u16,
        /// Response body (problem details, usually).
        body: Vec<u8>,
        /// The body parsed as RFC 9457 problem details, when it is one.
        problem: Option<Problem>,
    },
    /// The retry window closed (or attempts ran out) without a final answer: the work may or may
    /// not have run. Reconcile with the server under the same key; never mint a new one.
    Unknown {
        /// The last failure seen, if any attempt was sent.
        last_error: Option<Failure>,
    },
}

impl OutcomeKind {
    /// The wire name used by the JS bindings: `succeeded`, `replayed`, `rejected` or `unknown`.
    pub fn name(&self) -> &'static str {
        match self {
            OutcomeKind::Succeeded { .. } => "succeeded",
            OutcomeKind::Replayed { .. } => "replayed",
            OutcomeKind::Rejected { .. } => "rejected",
            OutcomeKind::Unknown { .. } => "unknown",
        }
    }
}

/// Where the operation's key lived while it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Durability {
    /// Written to the journal before the first send: a reload resumes with the same key.
    Journaled,
    /// Held only in memory: the journal failed and the caller opted into
    /// [`Persistence::AllowMemoryOnly`](crate::Persistence::AllowMemoryOnly). A reload loses it.
    MemoryOnly,
    /// The operation carries no key (an idempotent method), so there was nothing to persist.
    Unkeyed,
}

/// A retryable failure of one attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Failure {
    /// The request or its response was lost (fetch rejected, connection reset...).
    Network {
        /// The transport's message.
        message: String,
    },
    /// No reply within the attempt timeout.
    Timeout,
    /// The server answered with a retryable status (409, 429, 5xx).
    Status {
        /// HTTP status.
        status: u16,
    },
    /// The server no longer remembers the key (past its retention) and refused to run the
    /// request again (412, its expired-key guard): it may have run under the key. The
    /// outcome is unknown for good; find out what became of it before paying again.
    KeyExpired,
}

impl Failure {
    /// The failure in words, e.g. `status 503` (what `Display` writes; built without
    /// `core::fmt`, which the browser package avoids).
    pub fn message(&self) -> String {
        match self {
            Failure::Network { message } => ["network error: ", message].concat(),
            Failure::Timeout => "timed out".to_owned(),
            Failure::Status { status } => ["status ", &u64_string(u64::from(*status))].concat(),
            Failure::KeyExpired => "key expired: reconcile before paying again".to_owned(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// RFC 9457 problem details (`application/problem+json`); unknown members are ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// A URI reference identifying the problem type.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// A short, human-readable summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The HTTP status the server set in the body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// A human-readable explanation of this occurrence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Problem {
    /// Parses `body` as problem details; `None` when it is not a JSON object, or when a member
    /// it reads has the wrong type (`type`, `title`, `detail`: string or null; `status`: an
    /// integer 0..=65535 or null).
    pub fn parse(body: &[u8]) -> Option<Problem> {
        let value = Json::parse(core::str::from_utf8(body).ok()?)?;
        if !value.is_object() {
            return None;
        }
        let text = |field: &str| match value.get(field) {
            None | Some(Json::Null) => Some(None),
            Some(Json::String(s)) => Some(Some(s.clone())),
            Some(_) => None,
        };
        Some(Problem {
            kind: text("type")?,
            title: text("title")?,
            status: match value.get("status") {
                None | Some(Json::Null) => None,
                Some(n) => Some(u16::try_from(n.as_u64()?).ok()?),
            },
            detail: text("detail")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `Problem::parse` did with serde_json.
    fn serde_parse(body: &[u8]) -> Option<Problem> {
        match serde_json::from_slice::<serde_json::Value>(body).ok()? {
            value @ serde_json::Value::Object(_) => serde_json::from_value(value).ok(),
            _ => None,
        }
    }

    #[test]
    fn problem_parse_agrees_with_serde_json() {
        for body in [
            &br#"{"type":"about:blank","title":"Key reused","status":422,"detail":"different payload"}"#[..],
            br#"{"title":"t"}"#,
            br#"{}"#,
            br#"{"type":null,"status":null,"other":[1,2]}"#,
            br#"{"status":"422"}"#,
            br#"{"status":422.0}"#,
            br#"{"status":70000}"#,
            br#"{"status":-1}"#,
            br#"{"title":5}"#,
            br#"{"title":"a","title":"b"}"#,
            br#"[1]"#,
            br#""text""#,
            b"",
            b"not json",
            b"{\"title\":\"\xff\"}",
            br#"{"detail":"caf\u00e9 \ud83d\ude00"}"#,
        ] {
            assert_eq!(Problem::parse(body), serde_parse(body), "{:?}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn failure_messages() {
        assert_eq!(Failure::Status { status: 503 }.to_string(), "status 503");
        assert_eq!(Failure::Timeout.to_string(), "timed out");
        assert_eq!(
            Failure::KeyExpired.to_string(),
            "key expired: reconcile before paying again"
        );
        assert_eq!(
            Failure::Network {
                message: "reset".into()
            }
            .to_string(),
            "network error: reset"
        );
    }
}
