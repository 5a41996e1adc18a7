//! `GET /problems/{name}`: every problem `type` the services send is a relative reference
//! that resolves, against the request's URI, to a description on the same origin. Every
//! entry of the tables (`idem_server::problems::all()`: idem-axum's and the application's) is served by both services; a
//! `type` read from a real answer resolves; an unknown name is a 404 problem. (Every problem
//! any HTTP test reads is checked against the same table in `client::answer`.)

use crate::{client, stack::Stack, support::process::TENANT_A};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_problem_type_resolves_to_its_description() {
    let stack = Stack::sqlite(&[]).await;
    let http = client::http();
    for origin in [stack.url(), stack.payco.url.as_str()] {
        for t in idem_server::problems::all() {
            let url = format!("{origin}{}", t.uri);
            let a = client::answer(http.get(&url).send().await.expect("GET")).await;
            assert_eq!(a.status, 200, "{url}: {}", a.text());
            assert_eq!(a.header("content-type"), Some("text/plain; charset=utf-8"));
            let text = a.text();
            assert!(text.starts_with(t.title), "{url}: {text}");
            assert!(text.contains(t.description), "{url}: {text}");
        }
        let unknown = format!("{origin}/problems/no-such-problem");
        let a = client::answer(http.get(&unknown).send().await.expect("GET")).await;
        assert_eq!(a.status, 404);
        assert_eq!(a.problem().kind, idem_store::http::problem::NOT_FOUND);
    }

    // A real answer's `type`, resolved against the URI of the request that got it (RFC 9457
    // §3.1.1): the same origin's description.
    let body = client::body("cart-problem", 1200, "tok_visa");
    let checkout = format!("{}/api/checkout", stack.url());
    let first = client::post(&http, &checkout, TENANT_A.0, "problem-1", &body).await;
    assert_eq!(first.status, 201, "{}", first.text());
    let other = client::body("cart-problem", 1201, "tok_visa");
    let mismatch = client::post(&http, &checkout, TENANT_A.0, "problem-1", &other).await;
    assert_eq!(mismatch.status, 422);
    let kind = mismatch.problem().kind;
    let resolved = reqwest::Url::parse(&checkout)
        .expect("the request's URI")
        .join(&kind)
        .expect("a relative reference");
    assert_eq!(resolved.as_str(), format!("{}{kind}", stack.url()));
    let described = client::answer(http.get(resolved).send().await.expect("GET")).await;
    assert_eq!(described.status, 200);
    assert!(described.text().contains("Do not retry with this key"));
}
