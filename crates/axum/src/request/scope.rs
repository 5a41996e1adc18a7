//! Scopes: which tenant a request belongs to, so one tenant's key never replays another's.
//!
//! The claim table's identity is (scope, key). The scope must come from who the caller *is*
//! (a credential the server checked), never from the request body or a header the caller
//! picks freely. [`BearerTenants`] is the example: one bearer token per tenant.
//! [`Unscoped`] puts every caller in one scope: two tenants that happen to pick the same key
//! (a counter, a cart id) then get each other's saved responses, a cross-tenant data leak.
//! It exists for single-tenant deployments and to show that bug; do not use it for a
//! service with more than one client. [`FromExtension`] takes the scope from the
//! application's own authentication: a value its auth layer put in the request's extensions.

use std::{collections::HashMap, marker::PhantomData, sync::Arc};

use http::{request::Parts, HeaderMap};
use idem_store::http::{internal_error, unauthorized, Challenge, HttpResponse};

/// Finds the scope of a request from its headers. Implementations must be cheap and must
/// not trust anything the caller can choose without proving it.
pub trait ScopeExtractor: Send + Sync + 'static {
    /// The request's scope, or the reason it has none (answered 401).
    fn scope(&self, headers: &HeaderMap) -> Result<Arc<str>, ScopeRejection>;

    /// The request's scope from its whole head (headers and extensions, where an earlier
    /// layer leaves what it authenticated). By default, [`scope`](Self::scope) of its headers.
    fn scope_of_request(&self, parts: &Parts) -> Result<Arc<str>, ScopeRejection> {
        self.scope(&parts.headers)
    }
}

/// Why a request has no scope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeRejection {
    /// No `Authorization: Bearer …` header.
    #[error("missing bearer token: send Authorization: Bearer <token>")]
    MissingToken,
    /// A bearer token no tenant holds.
    #[error("unknown bearer token")]
    UnknownToken,
    /// A token in the URL's `access_token` query parameter that is not taken from a URL
    /// (demo mode takes demo tokens only there; see [`QueryTokenRefused`]).
    #[error("this access_token is not accepted in a URL: send Authorization: Bearer <token>")]
    QueryTokenRefused,
    /// The application's authentication left nothing in the request for [`FromExtension`]:
    /// the route is wired without its auth layer in front (a bug of the server, not of the
    /// request: answered 500 and logged).
    #[error("no authenticated principal in the request: its authentication layer must run first")]
    NoPrincipal,
}

impl ScopeRejection {
    /// The 401 problem and its Bearer challenge: `error="invalid_token"` when a token came and
    /// was refused, the bare challenge when none came (RFC 6750 §3.1). Every route's 401 is
    /// written here.
    pub fn response(&self) -> HttpResponse {
        let challenge = match self {
            Self::MissingToken => Challenge::TokenMissing,
            Self::UnknownToken | Self::QueryTokenRefused => Challenge::TokenInvalid,
            Self::NoPrincipal => {
                tracing::error!("{self}");
                return internal_error();
            }
        };
        unauthorized(challenge, &self.to_string())
    }
}

/// The scope from the application's own authentication: its auth layer (in front of the
/// idempotency layer) puts what it authenticated, a `T`, in the request's extensions, and
/// `read` names the tenant it belongs to. The auth layer answers its own refusals as it
/// likes; a request that reaches here without a `T` is a wiring bug (500, see
/// [`ScopeRejection::NoPrincipal`]).
///
/// ```
/// use std::sync::Arc;
/// use idem_axum::request::FromExtension;
///
/// #[derive(Clone)]
/// struct User { account: String }
///
/// let scopes = FromExtension::new(|user: &User| Arc::from(user.account.as_str()));
/// # let _ = scopes;
/// ```
pub struct FromExtension<T, F> {
    read: F,
    principal: PhantomData<fn(&T)>,
}

impl<T, F> FromExtension<T, F>
where
    T: Send + Sync + 'static,
    F: Fn(&T) -> Arc<str> + Send + Sync + 'static,
{
    /// The scope of a request whose extensions hold a `T`: `read(&t)`.
    pub fn new(read: F) -> Self {
        Self {
            read,
            principal: PhantomData,
        }
    }
}

impl<T, F> ScopeExtractor for FromExtension<T, F>
where
    T: Send + Sync + 'static,
    F: Fn(&T) -> Arc<str> + Send + Sync + 'static,
{
    fn scope(&self, _headers: &HeaderMap) -> Result<Arc<str>, ScopeRejection> {
        Err(ScopeRejection::NoPrincipal)
    }

    fn scope_of_request(&self, parts: &Parts) -> Result<Arc<str>, ScopeRejection> {
        let principal = parts.extensions.get::<T>();
        principal.map(&self.read).ok_or(ScopeRejection::NoPrincipal)
    }
}

/// A request extension: the request carried a token in its URL that a middleware did not
/// accept (demo mode's `access_token`, which takes demo tokens only). Without an
/// `Authorization` header such a request is refused as [`ScopeRejection::QueryTokenRefused`]
/// (a token came and is not valid here), not as a request without credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryTokenRefused;

/// One bearer token per tenant: `Authorization: Bearer <token>` selects the tenant.
#[derive(Debug, Clone, Default)]
pub struct BearerTenants {
    tenants: HashMap<String, Arc<str>>,
}

impl BearerTenants {
    /// No tenants yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add the tenant `tenant`, authenticated by `token`.
    pub fn with(mut self, token: impl Into<String>, tenant: &str) -> Self {
        self.tenants.insert(token.into(), Arc::from(tenant));
        self
    }

    /// The tenants, as (token, tenant) pairs in token order.
    pub fn tenants(&self) -> Vec<(&str, &str)> {
        let mut pairs: Vec<_> = self
            .tenants
            .iter()
            .map(|(token, tenant)| (token.as_str(), &**tenant))
            .collect();
        pairs.sort_unstable();
        pairs
    }
}

impl ScopeExtractor for BearerTenants {
    fn scope(&self, headers: &HeaderMap) -> Result<Arc<str>, ScopeRejection> {
        self.tenants
            .get(bearer_token(headers)?)
            .cloned()
            .ok_or(ScopeRejection::UnknownToken)
    }
}

/// The token of `Authorization: Bearer <token>` (scheme case-insensitive, spaces trimmed);
/// [`ScopeRejection::MissingToken`] without one.
pub fn bearer_token(headers: &HeaderMap) -> Result<&str, ScopeRejection> {
    let value = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .ok_or(ScopeRejection::MissingToken)?;
    let (scheme, token) = value
        .trim()
        .split_once(' ')
        .ok_or(ScopeRejection::MissingToken)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(ScopeRejection::MissingToken);
    }
    Ok(token.trim())
}

/// Every request in the scope `"global"`. A cross-tenant bug for any service with more than
/// one client: see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unscoped;

impl ScopeExtractor for Unscoped {
    fn scope(&self, _headers: &HeaderMap) -> Result<Arc<str>, ScopeRejection> {
        Ok(Arc::from("global"))
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn auth(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("authorization", HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn a_token_selects_its_tenant() {
        let tenants = BearerTenants::new().with("tok-a", "a").with("tok-b", "b");
        assert_eq!(tenants.scope(&auth("Bearer tok-a")).as_deref(), Ok("a"));
        assert_eq!(tenants.scope(&auth("bearer tok-b")).as_deref(), Ok("b"));
    }

    #[test]
    fn no_or_unknown_token_is_refused() {
        let tenants = BearerTenants::new().with("tok-a", "a");
        assert_eq!(
            tenants.scope(&HeaderMap::new()),
            Err(ScopeRejection::MissingToken)
        );
        assert_eq!(
            tenants.scope(&auth("Basic tok-a")),
            Err(ScopeRejection::MissingToken)
        );
        assert_eq!(
            tenants.scope(&auth("Bearer tok-x")),
            Err(ScopeRejection::UnknownToken)
        );
    }

    #[test]
    fn only_a_refused_token_gets_an_error_code() {
        let challenge = |r: ScopeRejection| {
            r.response()
                .header(idem_store::http::WWW_AUTHENTICATE)
                .map(str::to_owned)
        };
        assert_eq!(
            challenge(ScopeRejection::MissingToken).as_deref(),
            Some(r#"Bearer realm="idem""#)
        );
        for refused in [
            ScopeRejection::UnknownToken,
            ScopeRejection::QueryTokenRefused,
        ] {
            assert_eq!(
                challenge(refused).as_deref(),
                Some(r#"Bearer realm="idem", error="invalid_token""#)
            );
        }
    }
}
