//! Every 401 carries its `WWW-Authenticate` challenge (RFC 9110 §15.5.2), a Bearer one (RFC
//! 6750 §3): the bare `Bearer realm="idem"` when no bearer token came, with
//! `error="invalid_token"` when one came and was refused. Over real HTTP, on every route of
//! both services that answers 401: the checkout, its views, the key state, the event stream
//! (also with a refused `access_token`), demo mode's routes, and PayCo's.

use reqwest::Method;

use crate::{client, stack::Stack};

const BARE: &str = r#"Bearer realm="idem""#;
const INVALID: &str = r#"Bearer realm="idem", error="invalid_token""#;

/// Every route that answers 401, as (service, method, path).
const ROUTES: &[(Service, Method, &str)] = &[
    (Service::Checkout, Method::POST, "/api/checkout"),
    (Service::Checkout, Method::GET, "/api/orders"),
    (Service::Checkout, Method::GET, "/api/orders/1"),
    (Service::Checkout, Method::GET, "/api/claims"),
    (Service::Checkout, Method::GET, "/api/claims/k-1"),
    (Service::Checkout, Method::GET, "/api/keys/k-1"),
    (Service::Checkout, Method::GET, "/api/events"),
    (Service::Checkout, Method::GET, "/api/demo"),
    (Service::Checkout, Method::GET, "/api/demo/faults"),
    (Service::Checkout, Method::PUT, "/api/demo/faults"),
    (Service::Checkout, Method::GET, "/api/demo/ledger"),
    (Service::Payco, Method::POST, "/charges"),
    (Service::Payco, Method::GET, "/ledger"),
];

#[derive(Clone, Copy, Debug)]
enum Service {
    Checkout,
    Payco,
}

/// The 401's challenge, after checking it is the unauthorized problem.
fn challenge(a: &client::Answer, what: &str) -> String {
    assert_eq!(a.status, 401, "{what}: {}", a.text());
    assert_eq!(
        a.problem().kind,
        idem_store::http::problem::UNAUTHORIZED,
        "{what}"
    );
    let all: Vec<_> = a.headers.get_all("www-authenticate").iter().collect();
    assert_eq!(all.len(), 1, "{what}: one challenge, {all:?}");
    all[0].to_str().expect("a text challenge").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_401_carries_a_bearer_challenge() {
    let stack = Stack::sqlite(&["--demo-faults"]).await;
    let http = client::http();
    let body = client::body("cart-401", 100, "tok_visa");
    for (service, method, path) in ROUTES {
        let origin = match service {
            Service::Checkout => stack.url(),
            Service::Payco => stack.payco.url.as_str(),
        };
        let url = format!("{origin}{path}");
        // (credentials, the challenge they get)
        let cases: [(Option<&str>, &str); 4] = [
            (None, BARE),
            // Another scheme is no bearer token: RFC 6750 §3.1, no error code.
            (Some("Basic dG9rZW4tYTo="), BARE),
            (Some("Bearer nobody"), INVALID),
            (Some("Bearer demo-not-a-uuid"), INVALID),
        ];
        for (authorization, expected) in cases {
            let mut request = http
                .request(method.clone(), &url)
                .header("Idempotency-Key", "k-401")
                .header("Content-Type", "application/json")
                .body(body.clone());
            if let Some(value) = authorization {
                request = request.header("Authorization", value);
            }
            let a = client::answer(request.send().await.expect("send")).await;
            let what = format!("{method} {path} with {authorization:?}");
            assert_eq!(challenge(&a, &what), expected, "{what}");
        }
    }
}

/// The event stream's `access_token` (demo mode, for `EventSource`): a token in the URL that
/// is not a demo session's (a configured tenant's, or garbage) was sent and refused, so the
/// 401 says `invalid_token`; without one, the bare challenge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_access_token_is_an_invalid_token() {
    let stack = Stack::sqlite(&["--demo-faults"]).await;
    let http = client::http();
    for path in ["/api/events", "/api/claims", "/api/keys/k-1", "/api/demo"] {
        for (query, expected) in [
            ("", BARE),
            ("?x=1", BARE),
            ("?access_token=token-a", INVALID),
            ("?x=1&access_token=nobody", INVALID),
        ] {
            let url = format!("{}{path}{query}", stack.url());
            let a = client::answer(http.get(&url).send().await.expect("send")).await;
            assert_eq!(challenge(&a, &url), expected, "{url}");
        }
    }
    // A demo session's token in the URL is taken: no 401.
    let session = format!("demo-{}", uuid::Uuid::new_v4());
    let url = format!("{}/api/claims?access_token={session}", stack.url());
    let a = client::answer(http.get(&url).send().await.expect("send")).await;
    assert_eq!(a.status, 200, "{}", a.text());
}
