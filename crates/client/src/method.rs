//! HTTP methods and whether an operation carries an idempotency key.

use serde::{Deserialize, Serialize};

/// The HTTP method of an operation.
///
/// POST and PATCH are not idempotent by HTTP semantics, so they carry an `Idempotency-Key` by
/// default. GET, HEAD, PUT and DELETE are idempotent by definition (RFC 9110 §9.2.2): repeating
/// them leaves the server in the same state, so by default they are sent without a key. Note the
/// usual caveat: a retried DELETE whose first attempt succeeded answers 404 (the resource is
/// already gone), which the operation reports as a rejection; ask for a key
/// ([`KeyUse::Always`]) if the server should replay the first answer instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// `POST`: creates something; keyed by default.
    Post,
    /// `PATCH`: partial update; keyed by default.
    Patch,
    /// `PUT`: full replacement, idempotent by HTTP semantics.
    Put,
    /// `DELETE`: idempotent by HTTP semantics (a retry may answer 404).
    Delete,
    /// `GET`: safe and idempotent; has no body.
    Get,
    /// `HEAD`: safe and idempotent; has no body.
    Head,
}

impl Method {
    /// The method's name on the wire, e.g. `"POST"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Post => "POST",
            Method::Patch => "PATCH",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Get => "GET",
            Method::Head => "HEAD",
        }
    }

    /// The method named `name` on the wire (exactly `"POST"`, `"PATCH"`, ...), as serde reads it.
    pub fn from_name(name: &str) -> Option<Method> {
        Some(match name {
            "POST" => Method::Post,
            "PATCH" => Method::Patch,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            _ => return None,
        })
    }

    /// Whether HTTP semantics already make this method idempotent (so no key is needed).
    pub fn is_idempotent(self) -> bool {
        !matches!(self, Method::Post | Method::Patch)
    }

    /// Whether a request with this method carries a body.
    pub fn has_body(self) -> bool {
        !matches!(self, Method::Get | Method::Head)
    }
}

/// Whether an operation sends an `Idempotency-Key`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum KeyUse {
    /// Key on POST and PATCH only (see [`Method`]).
    #[default]
    Auto,
    /// Key whatever the method, e.g. a DELETE whose retry should replay rather than answer 404.
    Always,
}

impl KeyUse {
    /// Whether an operation with `method` carries a key under this choice.
    pub fn applies_to(self, method: Method) -> bool {
        match self {
            KeyUse::Auto => !method.is_idempotent(),
            KeyUse::Always => true,
        }
    }
}
