//! What PostgreSQL itself says about the checkout's connections. Two signs that a pooled
//! connection went back to its pool inside a transaction (every later statement it carries,
//! meant to commit on its own, is then lost with that transaction): a session `idle in
//! transaction` once the clients are done and the nemesis has stopped, and, in PostgreSQL's
//! log, a `BEGIN` sent inside an open transaction (this server sends `BEGIN` only on a
//! connection it just took from its pool).

use sqlx::Connection;

/// How long a session must have sat idle in its transaction to count: no request of a
/// healthy server holds a transaction open between two statements for that long.
const IDLE_FOR: &str = "1 second";

/// The sessions of `database` (its name) idle in a transaction for longer than
/// [`IDLE_FOR`], described for the log, read through `cluster` (a URL of the same server).
pub async fn idle_in_transaction(cluster: &str, database: &str) -> Vec<String> {
    let mut conn = sqlx::PgConnection::connect(cluster)
        .await
        .expect("connect to the cluster to read pg_stat_activity");
    let sql = format!(
        "SELECT pid, CAST(EXTRACT(EPOCH FROM now() - state_change) AS float8), query \
         FROM pg_stat_activity \
         WHERE datname = $1 AND state = 'idle in transaction' \
           AND state_change < now() - interval '{IDLE_FOR}'"
    );
    let rows: Vec<(i32, f64, String)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(database)
        .fetch_all(&mut conn)
        .await
        .expect("read pg_stat_activity");
    rows.into_iter()
        .map(|(pid, idle_s, query)| {
            let query: String = query.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("backend {pid}, idle in transaction for {idle_s:.1} s after {query:.120}")
        })
        .collect()
}

/// PostgreSQL's warning for a `BEGIN` inside an open transaction.
const BEGIN_INSIDE: &str = "there is already a transaction in progress";

/// The lines of PostgreSQL's `log` warning of a `BEGIN` inside an open transaction.
pub fn begins_inside_transactions(log: &str) -> Vec<String> {
    log.lines()
        .filter(|line| line.contains(BEGIN_INSIDE))
        .map(str::to_owned)
        .collect()
}
