//! One two-step layer in front of many routes, as a Rust team puts idem in front of its own
//! axum router, over real HTTP (an in-process server on 127.0.0.1) on SQLite and on
//! PostgreSQL: the fingerprint binds the method, the matched route, its path parameters, the
//! query and the body (JSON, form-encoded, empty, or bytes), so one key is never another
//! endpoint's or another resource's answer; safe methods pass untouched; an answer too large
//! to save completes its key instead of running the work again.

use std::sync::{Arc, Mutex};

use axum::{
    body::Bytes,
    extract::State,
    routing::{get, post},
    Router,
};
use idem_server::{
    db::{Db, DbOptions},
    request::{BearerTenants, BodyLimits, PathParam},
    serve::{serve, ConnLimits},
    two_step::TwoStepLayer,
};
use idem_store::{ErrorPolicy, RouteConfig};

use crate::{
    client::{self, Answer},
    support::postgres::Postgres,
};

/// `$check(database URL)` as two tests: on a fresh SQLite file and on a fresh PostgreSQL
/// database.
macro_rules! on_both_backends {
    ($check:ident: $sqlite:ident, $postgres:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            let (_dir, url) = sqlite(concat!(stringify!($check), ".db"));
            $check(&url).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            $check(&Postgres::shared().fresh_database(stringify!($check)).await).await;
        }
    };
}

/// Every handler run: which route, with what.
type Runs = Arc<Mutex<Vec<String>>>;

/// The largest answer saved in these tests (small, so the export below is cheap).
const SAVED: usize = 64 * 1024;

fn ran(runs: &Runs, what: String) -> String {
    let mut runs = runs.lock().unwrap();
    runs.push(what);
    format!("{{\"run\":{}}}", runs.len())
}

/// A router of the shapes a team protects: two JSON endpoints, a resource's sub-collection, a
/// Stripe-shaped form route, a body-less confirm, a read, and an export larger than `SAVED`.
fn app(runs: Runs) -> Router<()> {
    Router::new()
        .route(
            "/v2/a",
            post(|State(r): State<Runs>, body: Bytes| async move { ran(&r, format!("a {}", body.len())) }),
        )
        .route(
            "/v2/b",
            post(|State(r): State<Runs>, body: Bytes| async move { ran(&r, format!("b {}", body.len())) }),
        )
        .route(
            "/v1/customers/{id}/notes",
            post(|State(r): State<Runs>, PathParam(id): PathParam<String>| async move { ran(&r, format!("note {id}")) }),
        )
        .route(
            "/v1/charges",
            post(|State(r): State<Runs>, body: String| async move { ran(&r, format!("charge {body}")) }),
        )
        .route(
            "/v1/payment_intents/{id}/confirm",
            post(|State(r): State<Runs>, PathParam(id): PathParam<String>| async move { ran(&r, format!("confirm {id}")) }),
        )
        .route(
            "/v1/charges/{id}",
            get(|State(r): State<Runs>, PathParam(id): PathParam<String>| async move { ran(&r, format!("read {id}")) }),
        )
        .route(
            "/v1/exports",
            post(|State(r): State<Runs>| async move {
                ran(&r, "export".into());
                (http::StatusCode::CREATED, vec![b'x'; 3 * SAVED])
            }),
        )
        .with_state(runs)
}

async fn start(db_url: &str) -> (String, Runs) {
    let runs = Runs::default();
    let layer = layer_on(db_url).await.max_saved_bytes(SAVED);
    let app = app(runs.clone()).layer(layer);
    let url = spawn(app).await;
    (url, runs)
}

/// A layer on a fresh pool of `db_url`: every key required, a released claim on a work error,
/// the tenant from `scopes`, default body limits.
async fn layer_with(
    db_url: &str,
    scopes: impl idem_server::request::ScopeExtractor,
) -> TwoStepLayer {
    let db = Db::open(db_url, DbOptions::default())
        .await
        .expect("open the database");
    let route = RouteConfig::required("any route", ErrorPolicy::ReleaseClaim);
    TwoStepLayer::new(db, route, scopes, BodyLimits::default())
}

/// [`layer_with`] the one tenant `token-a` names.
async fn layer_on(db_url: &str) -> TwoStepLayer {
    layer_with(db_url, BearerTenants::new().with("token-a", "tenant-a")).await
}

/// Serve `app` on a free port of 127.0.0.1: its base URL.
async fn spawn(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(serve(listener, app, ConnLimits::default()));
    url
}

/// A fresh SQLite file's URL; the file lives as long as the directory.
fn sqlite(file: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join(file).display());
    (dir, url)
}

/// A request as a client sends it: `POST` (or `method`) with the tenant's token, `key` if
/// any, `content_type` if any.
async fn send(
    method: &str,
    url: &str,
    key: Option<&str>,
    content_type: Option<&str>,
    body: &str,
) -> Answer {
    let method = http::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = client::http()
        .request(method, url)
        .bearer_auth("token-a")
        .body(body.to_owned());
    if let Some(key) = key {
        request = request.header("Idempotency-Key", format!("\"{key}\""));
    }
    if let Some(ct) = content_type {
        request = request.header("Content-Type", ct);
    }
    client::answer(request.send().await.expect("send")).await
}

/// A `POST` of `body` to `base` + `path` under `key`, as [`send`].
async fn post_to(
    base: &str,
    path: &str,
    key: &str,
    content_type: Option<&str>,
    body: &str,
) -> Answer {
    send(
        "POST",
        &format!("{base}{path}"),
        Some(key),
        content_type,
        body,
    )
    .await
}

const JSON: Option<&str> = Some("application/json");
const FORM: Option<&str> = Some("application/x-www-form-urlencoded");

async fn any_route(db_url: &str) {
    let (url, runs) = start(db_url).await;
    let count = || runs.lock().unwrap().len();
    let at = |path: &str| format!("{url}{path}");

    // Another endpoint, same key and body: 422, never /v2/a's answer.
    let a = post_to(&url, "/v2/a", "k-ab", JSON, r#"{"x":1}"#).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let b = post_to(&url, "/v2/b", "k-ab", JSON, r#"{"x":1}"#).await;
    assert_eq!(b.status, 422, "{}", b.text());
    let again = post_to(&url, "/v2/a", "k-ab", JSON, r#"{ "x" : 1.0 }"#).await;
    assert!(
        again.is_replay() && again.body == a.body,
        "the same request, respelled"
    );
    assert_eq!(count(), 1);

    // Another resource: cus_B never gets cus_A's answer; a percent-encoded spelling of cus_A
    // is cus_A.
    let note_a = post_to(&url, "/v1/customers/cus_A/notes", "k-note", JSON, "{}").await;
    assert_eq!(note_a.status, 200);
    let note_b = post_to(&url, "/v1/customers/cus_B/notes", "k-note", JSON, "{}").await;
    assert_eq!(note_b.status, 422);
    let spelled = post_to(&url, "/v1/customers/cus%5FA/notes", "k-note", JSON, "{}").await;
    assert!(spelled.is_replay(), "{}", spelled.text());
    // Another query is another request; the same pairs in another order are not.
    let q1 = post_to(&url, "/v2/a?b=2&a=1", "k-query", JSON, "{}").await;
    assert_eq!(q1.status, 200);
    assert!(post_to(&url, "/v2/a?a=1&b=2", "k-query", JSON, "{}")
        .await
        .is_replay());
    assert_eq!(
        post_to(&url, "/v2/a?a=1&b=3", "k-query", JSON, "{}")
            .await
            .status,
        422
    );
    assert_eq!(count(), 3);

    // A Stripe-shaped form route: read as pairs, not refused as "not JSON".
    let charge = post_to(
        &url,
        "/v1/charges",
        "k-charge",
        FORM,
        "amount=2590&currency=usd",
    )
    .await;
    assert_eq!(charge.status, 200, "{}", charge.text());
    let respelled = post_to(
        &url,
        "/v1/charges",
        "k-charge",
        FORM,
        "currency=usd&amount=2590",
    )
    .await;
    assert!(respelled.is_replay() && respelled.body == charge.body);
    let other = post_to(
        &url,
        "/v1/charges",
        "k-charge",
        FORM,
        "amount=9999&currency=usd",
    )
    .await;
    assert_eq!(other.status, 422);
    // Any other media type is its bytes.
    let text = post_to(&url, "/v2/b", "k-text", Some("text/plain"), "not json").await;
    assert_eq!(text.status, 200, "{}", text.text());
    assert!(
        post_to(&url, "/v2/b", "k-text", Some("text/plain"), "not json")
            .await
            .is_replay()
    );
    assert_eq!(count(), 5);

    // A body-less confirm runs once per key; another intent under the key is 422.
    let confirm = post_to(
        &url,
        "/v1/payment_intents/pi_1/confirm",
        "k-confirm",
        None,
        "",
    )
    .await;
    assert_eq!(confirm.status, 200, "{}", confirm.text());
    assert!(post_to(
        &url,
        "/v1/payment_intents/pi_1/confirm",
        "k-confirm",
        None,
        ""
    )
    .await
    .is_replay());
    assert_eq!(
        post_to(
            &url,
            "/v1/payment_intents/pi_2/confirm",
            "k-confirm",
            None,
            ""
        )
        .await
        .status,
        422
    );
    assert_eq!(count(), 6);

    // A read needs no key and is never claimed.
    let read = send("GET", &at("/v1/charges/ch_1"), None, None, "").await;
    assert_eq!(read.status, 200, "{}", read.text());
    let read_again = send("GET", &at("/v1/charges/ch_1"), Some("k-read"), None, "").await;
    assert!(!read_again.is_replay());
    assert_eq!(count(), 8);

    // An answer too large to save: the caller gets all of it, the key is completed, and a
    // retry is told so with the same status; the export ran once.
    let export = post_to(&url, "/v1/exports", "k-export", JSON, "{}").await;
    assert_eq!((export.status, export.body.len()), (201, 3 * SAVED));
    let retry = post_to(&url, "/v1/exports", "k-export", JSON, "{}").await;
    assert_eq!(retry.status, 201);
    assert!(retry.is_replay());
    let problem = retry.problem();
    assert_eq!(problem.kind, "/problems/answer-too-large");
    assert_eq!(count(), 9, "the export ran once");
    let runs = runs.lock().unwrap().clone();
    assert_eq!(
        runs.iter().filter(|r| *r == "export").count(),
        1,
        "{runs:?}"
    );
}

on_both_backends!(any_route: one_layer_in_front_of_many_routes_on_sqlite, one_layer_in_front_of_many_routes_on_postgres);

/// What the application's own authentication leaves in a request.
#[derive(Clone)]
struct User {
    account: String,
}

/// The application's auth layer: `X-User` names the account; without it, the application's
/// own refusal (403 and its own body), which the idempotency layer never sees.
async fn auth(
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let user = request
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match user {
        Some(account) => {
            request.extensions_mut().insert(User { account });
            next.run(request).await
        }
        None => (http::StatusCode::FORBIDDEN, "who are you?").into_response(),
    }
}

/// One key sent by no account, then by two (named in `header`): the application's own 403
/// with `refusal` untouched; two requests, never each other's answer; the first account's
/// retry replayed; two runs.
async fn two_accounts_under_one_key(url: &str, header: &'static str, refusal: &str, runs: &Runs) {
    let post = |account: Option<&'static str>| {
        let mut request = client::http()
            .post(url)
            .header("Idempotency-Key", "\"k-shared\"")
            .header("Content-Type", "application/json")
            .body("{}");
        if let Some(account) = account {
            request = request.header(header, account);
        }
        async move { client::answer(request.send().await.unwrap()).await }
    };
    let refused = post(None).await;
    assert_eq!((refused.status, refused.text().as_str()), (403, refusal));
    let a = post(Some("acct_A")).await;
    let b = post(Some("acct_B")).await;
    assert_eq!((a.status, b.status), (200, 200));
    assert!(
        !b.is_replay() && a.body != b.body,
        "acct_B got acct_A's answer"
    );
    assert!(post(Some("acct_A")).await.is_replay());
    assert_eq!(runs.lock().unwrap().len(), 2);
}

async fn scope_from_auth(db_url: &str) {
    use idem_server::request::FromExtension;
    let runs = Runs::default();
    let scopes = || FromExtension::new(|user: &User| Arc::from(user.account.as_str()));
    let guarded = app(runs.clone())
        .layer(layer_with(db_url, scopes()).await)
        .layer(axum::middleware::from_fn(auth));
    let url = format!("{}/v2/a", spawn(guarded).await);
    two_accounts_under_one_key(&url, "x-user", "who are you?", &runs).await;

    // Wired without the auth layer: a server bug, 500, the work never runs.
    let bare = app(runs.clone()).layer(layer_with(db_url, scopes()).await);
    let bare_url = format!("{}/v2/a", spawn(bare).await);
    let unwired = send("POST", &bare_url, Some("k-bare"), JSON, "{}").await;
    assert_eq!(unwired.status, 500);
    assert_eq!(runs.lock().unwrap().len(), 2);
}

on_both_backends!(scope_from_auth: the_scope_comes_from_the_application_auth_on_sqlite, the_scope_comes_from_the_application_auth_on_postgres);

/// The work of the wait-mode route: slow enough that every duplicate arrives while it runs.
const SLOW_MS: u64 = 400;

/// `servers` in-process servers on `db_url`, each with its own pool, sharing one run log:
/// `POST /v1/slow` behind a layer in wait mode (or not).
async fn slow_servers(db_url: &str, servers: usize, wait: bool) -> (Vec<String>, Runs) {
    let runs = Runs::default();
    let mut urls = Vec::new();
    for _ in 0..servers {
        let mut layer = layer_on(db_url).await;
        if wait {
            layer = layer.wait_for_first(std::time::Duration::from_secs(5));
        }
        let slow = Router::new()
            .route(
                "/v1/slow",
                post(|State(r): State<Runs>| async move {
                    tokio::time::sleep(std::time::Duration::from_millis(SLOW_MS)).await;
                    let nanos = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_nanos();
                    // Unique per run: equal bodies can only be one run's answer.
                    format!("{} at {nanos}", ran(&r, "slow".into()))
                }),
            )
            .with_state(runs.clone())
            .layer(layer);
        urls.push(format!("{}/v1/slow", spawn(slow).await));
    }
    (urls, runs)
}

/// `n` identical requests at once, request `i` to `urls[i % len]`.
async fn storm(urls: &[String], n: usize) -> Vec<Answer> {
    let barrier = Arc::new(tokio::sync::Barrier::new(n));
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (url, barrier) = (urls[i % urls.len()].clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                send("POST", &url, Some("k-storm"), JSON, r#"{"x":1}"#).await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.unwrap());
    }
    answers
}

/// 50 duplicates of one request while it runs: in wait mode, one execution and 50 answers
/// with its body, no 409; without it, the same storm meets 409s (so the storm does overlap).
async fn wait_mode(db_url: &str, servers: usize) {
    let (urls, runs) = slow_servers(db_url, servers, true).await;
    let answers = storm(&urls, 50).await;
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    let first = &answers[0].body;
    assert!(answers.iter().all(|a| &a.body == first), "one body for all");
    assert_eq!(runs.lock().unwrap().len(), 1, "one execution");
    assert!(answers.iter().filter(|a| a.is_replay()).count() >= 49);
}

async fn no_wait_mode(db_url: &str) {
    let (urls, runs) = slow_servers(db_url, 1, false).await;
    let answers = storm(&urls, 50).await;
    assert!(
        answers.iter().any(|a| a.status == 409),
        "the storm overlaps the work"
    );
    assert_eq!(runs.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_mode_answers_duplicates_with_the_first_answer_on_sqlite() {
    let (_dir, url) = sqlite("wait.db");
    wait_mode(&url, 1).await;
    let (_dir, url) = sqlite("no-wait.db");
    no_wait_mode(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_mode_answers_duplicates_with_the_first_answer_on_postgres() {
    wait_mode(&Postgres::shared().fresh_database("wait_one").await, 1).await;
    wait_mode(&Postgres::shared().fresh_database("wait_two").await, 2).await;
    no_wait_mode(&Postgres::shared().fresh_database("no_wait").await).await;
}

/// Atomic mode: a route writing two tables of its own through the claim's transaction.
mod atomic {
    use std::sync::atomic::{AtomicBool, Ordering};

    use idem_server::{db::Tx, two_step::Writes, with_tx};

    use super::*;

    /// The route's schema on both backends (the same SQL).
    const SCHEMA: &str = "CREATE TABLE notes (id INTEGER PRIMARY KEY, account TEXT NOT NULL, \
                          text TEXT NOT NULL); \
                          CREATE TABLE audit (account TEXT NOT NULL, what TEXT NOT NULL)";

    async fn write(tx: &mut Tx, account: &str, text: &str) -> Result<i64, sqlx::Error> {
        with_tx!(tx, |conn| {
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO notes (account, text) VALUES ($1, $2) RETURNING id",
            )
            .bind(account)
            .bind(text)
            .fetch_one(&mut *conn)
            .await?;
            sqlx::query("INSERT INTO audit (account, what) VALUES ($1, 'note added')")
                .bind(account)
                .execute(&mut *conn)
                .await?;
            Ok(id)
        })
    }

    /// `POST /v1/accounts/{id}/notes`: two writes, then 201; a 500 after the writes while
    /// `fail` is set.
    async fn add_note(
        State(fail): State<Arc<AtomicBool>>,
        PathParam(account): PathParam<String>,
        writes: Writes,
        body: String,
    ) -> (http::StatusCode, String) {
        let mut tx = writes
            .lock()
            .await
            .expect("the request is not answered yet");
        let id = write(&mut tx, &account, &body).await.expect("write");
        if fail.swap(false, Ordering::SeqCst) {
            return (
                http::StatusCode::INTERNAL_SERVER_ERROR,
                "failed after writing".into(),
            );
        }
        if body == "refuse" {
            return (
                http::StatusCode::BAD_REQUEST,
                "refused after writing".into(),
            );
        }
        (http::StatusCode::CREATED, format!("{{\"note\":{id}}}"))
    }

    async fn count(db_url: &str, table: &str) -> i64 {
        // `table` is one of this file's two names.
        let sql = format!("SELECT COUNT(*) FROM {table}");
        if db_url.starts_with("sqlite:") {
            let pool = sqlx::SqlitePool::connect(db_url).await.unwrap();
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql.as_str()))
                .fetch_one(&pool)
                .await
                .unwrap()
        } else {
            let pool = sqlx::PgPool::connect(db_url).await.unwrap();
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql.as_str()))
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    }

    async fn create_tables(db_url: &str) {
        for statement in SCHEMA.split("; ") {
            if db_url.starts_with("sqlite:") {
                let pool = sqlx::SqlitePool::connect(&format!("{db_url}?mode=rwc"))
                    .await
                    .unwrap();
                sqlx::query(statement).execute(&pool).await.unwrap();
            } else {
                let pool = sqlx::PgPool::connect(db_url).await.unwrap();
                let statement = statement.replace("INTEGER PRIMARY KEY", "BIGSERIAL PRIMARY KEY");
                sqlx::query(sqlx::AssertSqlSafe(statement.as_str()))
                    .execute(&pool)
                    .await
                    .unwrap();
            }
        }
    }

    async fn atomic_route(db_url: &str) {
        create_tables(db_url).await;
        let fail = Arc::new(AtomicBool::new(false));
        let layer = layer_on(db_url).await.atomic();
        let app = Router::new()
            .route("/v1/accounts/{id}/notes", post(add_note))
            .with_state(fail.clone())
            .layer(layer);
        let url = format!("{}/v1/accounts/acct_1/notes", spawn(app).await);
        let text = Some("text/plain");

        // The writes and the saved answer commit together; the retry is the replay.
        let first = send("POST", &url, Some("k-note-1"), text, "hello").await;
        assert_eq!(first.status, 201, "{}", first.text());
        let again = send("POST", &url, Some("k-note-1"), text, "hello").await;
        assert!(again.is_replay() && again.body == first.body);
        assert_eq!(
            (count(db_url, "notes").await, count(db_url, "audit").await),
            (1, 1)
        );
        // Another body under the key: 422, nothing written.
        assert_eq!(
            send("POST", &url, Some("k-note-1"), text, "bye")
                .await
                .status,
            422
        );

        // A 500 after both writes: they roll back, the claim is released, and the retry runs
        // the work again, writing once.
        fail.store(true, Ordering::SeqCst);
        let failed = send("POST", &url, Some("k-note-2"), text, "second").await;
        assert_eq!(failed.status, 500);
        assert_eq!(
            (count(db_url, "notes").await, count(db_url, "audit").await),
            (1, 1)
        );
        let retried = send("POST", &url, Some("k-note-2"), text, "second").await;
        assert_eq!(retried.status, 201, "{}", retried.text());
        assert!(!retried.is_replay());
        assert_eq!(
            (count(db_url, "notes").await, count(db_url, "audit").await),
            (2, 2)
        );
        // A 4xx under release-claim: released, so its writes roll back with it (a retry would
        // run the work again and must not find them twice).
        let refused = send("POST", &url, Some("k-note-3"), text, "refuse").await;
        assert_eq!(refused.status, 400);
        assert!(!send("POST", &url, Some("k-note-3"), text, "refuse")
            .await
            .is_replay());
        assert_eq!(
            (count(db_url, "notes").await, count(db_url, "audit").await),
            (2, 2)
        );
    }

    /// `POST /v1/broken`: a statement of the handler's fails (its table does not exist), the
    /// handler answers 201 all the same, the first time only.
    async fn broken(State(fail): State<Arc<AtomicBool>>, writes: Writes) -> http::StatusCode {
        let mut tx = writes
            .lock()
            .await
            .expect("the request is not answered yet");
        if fail.swap(false, Ordering::SeqCst) {
            let failed = with_tx!(&mut *tx, |conn| {
                sqlx::query("INSERT INTO no_such_table VALUES (1)")
                    .execute(&mut *conn)
                    .await
                    .map(|_| ())
            });
            assert!(failed.is_err());
        }
        http::StatusCode::CREATED
    }

    /// On PostgreSQL a failed statement aborts the transaction, so the commit fails: the claim
    /// is released (503), and the retry runs the work again instead of meeting 409s.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_commit_that_fails_releases_the_claim_on_postgres() {
        let db_url = Postgres::shared().fresh_database("atomic_abort").await;
        let fail = Arc::new(AtomicBool::new(true));
        let layer = layer_on(&db_url).await.atomic();
        let app = Router::new()
            .route("/v1/broken", post(broken))
            .with_state(fail)
            .layer(layer);
        let url = format!("{}/v1/broken", spawn(app).await);
        let first = send("POST", &url, Some("k-abort"), JSON, "{}").await;
        assert_eq!(first.status, 503, "{}", first.text());
        let retry = send("POST", &url, Some("k-abort"), JSON, "{}").await;
        assert_eq!(
            retry.status,
            201,
            "released, so run again: {}",
            retry.text()
        );
    }

    /// Atomic mode needs a key: on an optional-key route a request without one is refused
    /// (there is no claim to commit its writes with), and one with a key runs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_atomic_route_refuses_a_request_without_a_key() {
        let (_dir, db_url) = sqlite("optional.db");
        create_tables(&db_url).await;
        let db = Db::open(&db_url, DbOptions::default()).await.unwrap();
        let route = RouteConfig::optional("any route", ErrorPolicy::ReleaseClaim);
        let tenants = BearerTenants::new().with("token-a", "tenant-a");
        let layer = TwoStepLayer::new(db, route, tenants, BodyLimits::default()).atomic();
        let app = Router::new()
            .route("/v1/accounts/{id}/notes", post(add_note))
            .with_state(Arc::new(AtomicBool::new(false)))
            .layer(layer);
        let url = format!("{}/v1/accounts/acct_1/notes", spawn(app).await);
        let text = Some("text/plain");
        let keyless = send("POST", &url, None, text, "hello").await;
        assert_eq!(keyless.status, 400, "{}", keyless.text());
        assert_eq!(count(&db_url, "notes").await, 0);
        assert_eq!(
            send("POST", &url, Some("k-1"), text, "hello").await.status,
            201
        );
    }

    on_both_backends!(atomic_route: an_atomic_route_commits_its_writes_with_the_answer_on_sqlite, an_atomic_route_commits_its_writes_with_the_answer_on_postgres);
}

/// The phases pattern through the layer: the handler saves a typed recovery point before
/// calling another system, and the next worker of the same request resumes from it.
mod phases {
    use std::{
        collections::HashSet,
        sync::atomic::{AtomicBool, AtomicU64, Ordering},
    };

    use idem_server::two_step::{Recovery, RecoveryError};
    use serde::{Deserialize, Serialize};

    use super::*;

    /// The shop's side: order ids, the payment provider's ledger (one row per downstream
    /// key it was called with), and a crash armed for after the call.
    #[derive(Default)]
    struct Shop {
        orders: AtomicU64,
        calls: Mutex<Vec<String>>,
        crash_after_the_call: AtomicBool,
    }

    /// How far a checkout got: its order, whose id is the downstream key.
    #[derive(Serialize, Deserialize)]
    struct Point {
        order: u64,
    }

    async fn checkout(
        State(shop): State<Arc<Shop>>,
        recovery: Recovery,
    ) -> Result<(http::StatusCode, String), (http::StatusCode, String)> {
        let failed = |e: RecoveryError| (http::StatusCode::SERVICE_UNAVAILABLE, e.to_string());
        let point = match recovery.get::<Point>().map_err(failed)? {
            Some(point) => point,
            None => {
                let point = Point {
                    order: shop.orders.fetch_add(1, Ordering::SeqCst) + 1,
                };
                recovery.save(&point).await.map_err(failed)?;
                point
            }
        };
        // The foreign call, under the order's own key: asked again, it answers what it did.
        shop.calls
            .lock()
            .unwrap()
            .push(format!("charge:{}", point.order));
        if shop.crash_after_the_call.swap(false, Ordering::SeqCst) {
            let outcome = "the provider's answer was lost".to_owned();
            return Err((http::StatusCode::BAD_GATEWAY, outcome));
        }
        Ok((
            http::StatusCode::CREATED,
            format!("{{\"order\":{}}}", point.order),
        ))
    }

    async fn resumes(db_url: &str) {
        let db = Db::open(db_url, DbOptions::default()).await.unwrap();
        let shop = Arc::new(Shop::default());
        let route = RouteConfig::required("checkout", ErrorPolicy::ReleaseClaim);
        let tenants = BearerTenants::new().with("token-a", "tenant-a");
        let app = Router::new()
            .route("/v1/checkouts", post(checkout))
            .with_state(shop.clone())
            .layer(TwoStepLayer::new(db, route, tenants, BodyLimits::default()));
        let url = format!("{}/v1/checkouts", spawn(app).await);

        // The call happened, its answer did not come back: 502, the claim released.
        shop.crash_after_the_call.store(true, Ordering::SeqCst);
        let lost = send("POST", &url, Some("k-co"), JSON, r#"{"cart":"c-1"}"#).await;
        assert_eq!(lost.status, 502, "{}", lost.text());
        // The retry resumes the same order: the provider is asked the same question again.
        let retry = send("POST", &url, Some("k-co"), JSON, r#"{"cart":"c-1"}"#).await;
        assert_eq!(
            (retry.status, retry.text().as_str()),
            (201, r#"{"order":1}"#)
        );
        assert!(send("POST", &url, Some("k-co"), JSON, r#"{"cart":"c-1"}"#)
            .await
            .is_replay());
        let calls = shop.calls.lock().unwrap().clone();
        let keys: HashSet<_> = calls.iter().collect();
        assert_eq!(
            (calls.len(), keys.len()),
            (2, 1),
            "one downstream key: {calls:?}"
        );
        assert_eq!(shop.orders.load(Ordering::SeqCst), 1, "one order");
        // Another request under the key never sees the point: 422.
        let other = send("POST", &url, Some("k-co"), JSON, r#"{"cart":"c-2"}"#).await;
        assert_eq!(other.status, 422);
        // A new key starts over.
        let next = send("POST", &url, Some("k-co-2"), JSON, r#"{"cart":"c-1"}"#).await;
        assert_eq!(next.text(), r#"{"order":2}"#);
    }

    /// Without a key (an optional-key route) there is nothing to resume: the handler runs,
    /// reads no point and its save writes nothing.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_request_without_a_key_runs_with_nothing_to_resume() {
        let (_dir, db_url) = sqlite("keyless.db");
        let db = Db::open(&db_url, DbOptions::default()).await.unwrap();
        let shop = Arc::new(Shop::default());
        let route = RouteConfig::optional("checkout", ErrorPolicy::ReleaseClaim);
        let tenants = BearerTenants::new().with("token-a", "tenant-a");
        let app = Router::new()
            .route("/v1/checkouts", post(checkout))
            .with_state(shop.clone())
            .layer(TwoStepLayer::new(db, route, tenants, BodyLimits::default()));
        let url = format!("{}/v1/checkouts", spawn(app).await);
        for order in ["{\"order\":1}", "{\"order\":2}"] {
            let keyless = send("POST", &url, None, JSON, r#"{"cart":"c-1"}"#).await;
            assert_eq!((keyless.status, keyless.text().as_str()), (201, order));
        }
    }

    on_both_backends!(resumes: a_retry_resumes_from_the_saved_point_on_sqlite, a_retry_resumes_from_the_saved_point_on_postgres);
}

/// A route that leaves a free-text field out of the fingerprint: a retry that reworded it is
/// the same request (the replay), not a 422 a client would answer with a new key and a second
/// payment; any other field still binds.
async fn reworded_note(db_url: &str) {
    let runs = Runs::default();
    let layer = layer_on(db_url)
        .await
        .fingerprint_fields(idem_store::BodyFields::Except(vec!["note".into()]));
    let url = format!("{}/v2/a", spawn(app(runs.clone()).layer(layer)).await);
    let first = send(
        "POST",
        &url,
        Some("k-note"),
        JSON,
        r#"{"amount":1,"note":"for Ann"}"#,
    )
    .await;
    assert_eq!(first.status, 200);
    let reworded = send(
        "POST",
        &url,
        Some("k-note"),
        JSON,
        r#"{"note":"for Anne","amount":1}"#,
    )
    .await;
    assert!(reworded.is_replay() && reworded.body == first.body);
    let other = send(
        "POST",
        &url,
        Some("k-note"),
        JSON,
        r#"{"amount":2,"note":"for Ann"}"#,
    )
    .await;
    assert_eq!(other.status, 422);
    assert_eq!(runs.lock().unwrap().len(), 1);
}

on_both_backends!(reworded_note: a_reworded_free_text_field_is_the_same_request_on_sqlite, a_reworded_free_text_field_is_the_same_request_on_postgres);

/// The application's own extractor: `X-Api-Key` names the account; without it, its own
/// rejection.
struct ApiAccount(String);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for ApiAccount {
    type Rejection = (http::StatusCode, &'static str);

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        match parts.headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
            Some(account) => Ok(ApiAccount(account.to_owned())),
            None => Err((http::StatusCode::FORBIDDEN, "no api key")),
        }
    }
}

/// The tenant from any extractor of the application's (`TwoStepLayer::tenant_from`): its
/// rejection is the answer as it wrote it, and two accounts under one key are two requests.
async fn tenant_from_extractor(db_url: &str) {
    let runs = Runs::default();
    // The layer's own scopes (no tenant at all) are replaced by the extractor's tenant.
    let layer = layer_with(db_url, BearerTenants::new())
        .await
        .tenant_from(|account: ApiAccount| Arc::from(account.0.as_str()));
    let url = format!("{}/v2/a", spawn(app(runs.clone()).layer(layer)).await);
    two_accounts_under_one_key(&url, "x-api-key", "no api key", &runs).await;
}

on_both_backends!(tenant_from_extractor: the_tenant_comes_from_an_extractor_of_the_application_on_sqlite, the_tenant_comes_from_an_extractor_of_the_application_on_postgres);
