//! Demo mode's tenants: the configured bearer tokens, plus one fresh tenant per page session.
//!
//! A page in real-server mode makes up `demo-<uuid>` (a lowercase hyphenated UUID, e.g. from
//! `crypto.randomUUID()`) and sends it as its bearer token: that token is its own scope, so
//! the session's claims, orders, events, ledger rows and armed faults are its own, even on a
//! database that earlier sessions filled. Only in demo mode, which only runs on a loopback
//! address: anyone who can reach the server may invent a tenant, which is the point there and
//! would be a hole anywhere else.

use std::sync::Arc;

use http::HeaderMap;

use crate::request::{bearer_token, BearerTenants, ScopeExtractor, ScopeRejection};

/// The prefix of a demo session's token (and scope).
pub const DEMO_TOKEN_PREFIX: &str = "demo-";

/// The configured tenants, then `demo-<uuid>` as a tenant of its own.
#[derive(Debug, Clone)]
pub struct DemoTenants {
    configured: BearerTenants,
}

impl DemoTenants {
    /// `configured`'s tokens keep their tenants; any demo token is its own.
    pub fn new(configured: BearerTenants) -> Self {
        Self { configured }
    }
}

impl ScopeExtractor for DemoTenants {
    fn scope(&self, headers: &HeaderMap) -> Result<Arc<str>, ScopeRejection> {
        match self.configured.scope(headers) {
            Err(ScopeRejection::UnknownToken) => {
                let token = bearer_token(headers)?;
                if is_demo_token(token) {
                    Ok(Arc::from(token))
                } else {
                    Err(ScopeRejection::UnknownToken)
                }
            }
            known => known,
        }
    }
}

/// Whether `token` is `demo-` followed by a lowercase hyphenated UUID (8-4-4-4-12 hex digits).
pub fn is_demo_token(token: &str) -> bool {
    let Some(uuid) = token.strip_prefix(DEMO_TOKEN_PREFIX) else {
        return false;
    };
    uuid.len() == 36
        && uuid.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        })
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn bearer(token: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            "authorization",
            HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
        h
    }

    const SESSION: &str = "demo-0f8fad5b-d9cb-469f-a165-70867728950e";

    #[test]
    fn a_demo_token_is_its_own_tenant_and_configured_ones_keep_theirs() {
        let tenants = DemoTenants::new(BearerTenants::new().with("token-a", "tenant-a"));
        assert_eq!(tenants.scope(&bearer(SESSION)).as_deref(), Ok(SESSION));
        assert_eq!(tenants.scope(&bearer("token-a")).as_deref(), Ok("tenant-a"));
        assert_eq!(
            tenants.scope(&bearer("token-x")),
            Err(ScopeRejection::UnknownToken)
        );
        assert_eq!(
            tenants.scope(&HeaderMap::new()),
            Err(ScopeRejection::MissingToken)
        );
    }

    #[test]
    fn only_demo_dash_uuid_is_a_demo_token() {
        assert!(is_demo_token(SESSION));
        for bad in [
            "demo-",
            "demo-0F8FAD5B-D9CB-469F-A165-70867728950E",
            "demo-0f8fad5b-d9cb-469f-a165-70867728950",
            "demo-0f8fad5b-d9cb-469f-a165-70867728950e0",
            "demo-0f8fad5bxd9cb-469f-a165-70867728950e",
            "demo-0f8fad5b-d9cb-469f-a165-70867728950g",
            "0f8fad5b-d9cb-469f-a165-70867728950e",
            "demo-0f8fad5b-d9cb-469f-a165-70867728950é",
        ] {
            assert!(!is_demo_token(bad), "{bad}");
        }
    }
}
