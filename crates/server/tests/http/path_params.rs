//! Path parameters the route cannot read, over real HTTP: a percent-encoded segment that is
//! not UTF-8 (`%FF`) is a 400 problem (`invalid-path-parameter`) on every route with a path
//! parameter, of both services, never axum's plain-text 400; and on a scoped route a caller
//! without a tenant gets its 401 (with the challenge) first, whatever its path.

use reqwest::Method;

use crate::{
    client::{self, Answer},
    stack::Stack,
    support::process::TENANT_A,
};

const INVALID_PATH: &str = "/problems/invalid-path-parameter";

async fn send(http: &reqwest::Client, method: Method, url: &str, token: Option<&str>) -> Answer {
    let mut request = http.request(method, url).body("off");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    client::answer(request.send().await.expect("send")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_that_is_not_utf8_is_a_problem_after_the_scope() {
    let stack = Stack::sqlite(&["--failpoints"]).await;
    let http = client::http();
    let checkout = stack.url();
    let payco = stack.payco.url.as_str();

    // Scoped routes: 401 without a tenant, whatever the path; 400 problem with one.
    for path in ["/api/orders/%FF", "/api/claims/%FF", "/api/keys/%FF"] {
        let url = format!("{checkout}{path}");
        for token in [None, Some("nobody")] {
            let a = send(&http, Method::GET, &url, token).await;
            assert_eq!(a.status, 401, "{path} as {token:?}: {}", a.text());
            assert_eq!(a.problem().kind, idem_store::http::problem::UNAUTHORIZED);
        }
        let a = send(&http, Method::GET, &url, Some(TENANT_A.0)).await;
        assert_eq!(a.status, 400, "{path}: {}", a.text());
        assert_eq!(a.problem().kind, INVALID_PATH, "{path}");
        assert!(a.problem().detail.contains("UTF-8"), "{path}: {}", a.text());
    }

    // Unscoped routes with a path parameter, on both services.
    for (method, url) in [
        (Method::GET, format!("{checkout}/problems/%FF")),
        (Method::GET, format!("{payco}/problems/%FF")),
        (Method::PUT, format!("{checkout}/api/failpoints/%FF")),
        (Method::GET, format!("{checkout}/problems/a%C3")),
    ] {
        let a = send(&http, method.clone(), &url, None).await;
        assert_eq!(a.status, 400, "{method} {url}: {}", a.text());
        assert_eq!(a.problem().kind, INVALID_PATH, "{method} {url}");
    }

    // A path that reads as text still reaches the route's own rules.
    let a = send(
        &http,
        Method::GET,
        &format!("{checkout}/api/keys/%C3%A9"),
        Some(TENANT_A.0),
    )
    .await;
    assert_eq!(a.status, 400, "{}", a.text());
    assert_eq!(a.problem().kind, idem_store::http::problem::KEY_INVALID);
    let a = send(
        &http,
        Method::PUT,
        &format!("{checkout}/api/failpoints/after-claim"),
        None,
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
}
