//! Claims whose worker died and whose client never came back: found, and taken over by the
//! same compare-and-set a retry's takeover uses, for a completer to finish the work
//! ([`crate::completer`]).

use idem_store::{Fingerprint, IdRef, IdempotencyKey, RecordId, RouteConfig};
use sqlx::Row;

use super::{begin::Decided, error::to_i64, ClaimTx, Db, DbError};

/// In flight, not released, its lease taken at least an age ago, and a recovery point of its
/// own request (how far the work got): the oldest first.
const ABANDONED: &str = "SELECT c.scope, c.key, c.fingerprint, c.locked_at FROM idem_claims c \
     WHERE c.status = 'in_flight' AND c.released_token IS DISTINCT FROM c.token \
     AND c.locked_at <= $1 \
     AND EXISTS (SELECT 1 FROM idem_recovery r \
                 WHERE r.scope = c.scope AND r.key = c.key AND r.fingerprint = c.fingerprint) \
     ORDER BY c.locked_at LIMIT $2";

/// A claim nobody finished: who it is, the request it is bound to, when its lease was taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Abandoned {
    /// (scope, key).
    pub id: RecordId,
    /// The request the key is bound to (its recovery point is this request's).
    pub fingerprint: Fingerprint,
    /// When its last lease was taken, on the table's clock.
    pub locked_at: u64,
}

impl Db {
    /// Up to `limit` claims abandoned at `now`: in flight (not released), their lease taken
    /// `abandoned_after_ms` or more ago, with a recovery point of their own request; the
    /// oldest first. A claim without a recovery point is not listed: nothing says how far
    /// its work got, so it is left to its client's retry or to expire. A row that cannot be
    /// read as a claim is logged and skipped.
    pub async fn abandoned(
        &self,
        now: u64,
        abandoned_after_ms: u64,
        limit: u32,
    ) -> Result<Vec<Abandoned>, DbError> {
        let now = self.now(now).await?;
        // Nothing can be that old yet.
        let Some(before) = now.checked_sub(abandoned_after_ms) else {
            return Ok(Vec::new());
        };
        let before = to_i64("now", before)?;
        let rows = on_pool!(self, |pool| {
            sqlx::query(ABANDONED)
                .bind(before)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?
                .iter()
                .map(|r| {
                    let scope: String = r.try_get("scope")?;
                    let key: String = r.try_get("key")?;
                    let fingerprint: Vec<u8> = r.try_get("fingerprint")?;
                    let locked_at: i64 = r.try_get("locked_at")?;
                    Ok((scope, key, fingerprint, locked_at))
                })
                .collect::<Result<Vec<_>, sqlx::Error>>()?
        });
        let mut found = Vec::with_capacity(rows.len());
        for (scope, key, fingerprint, locked_at) in rows {
            let read = IdempotencyKey::parse(&key).ok().zip(
                <[u8; 32]>::try_from(fingerprint.as_slice())
                    .ok()
                    .zip(u64::try_from(locked_at).ok()),
            );
            match read {
                Some((parsed, (fp, locked_at))) => found.push(Abandoned {
                    id: RecordId::new(&scope, parsed),
                    fingerprint: Fingerprint(fp),
                    locked_at,
                }),
                None => tracing::error!(%scope, %key, "unreadable abandoned claim; skipped"),
            }
        }
        Ok(found)
    }

    /// Take `abandoned` over for a completer, as a retry of its request would: one read and
    /// the rule core's decision, then the compare-and-set on the token it read. `Some`: the
    /// claim is ours, its transaction open with the request's recovery point
    /// ([`ClaimTx::recovery`]); `None`: someone else got there first (a retry, another
    /// server's completer), or the work finished meanwhile, or its lease is live again.
    /// Several servers sharing the table: one winner per claim.
    pub async fn take_over(
        &self,
        now: u64,
        abandoned: &Abandoned,
        route: &RouteConfig,
    ) -> Result<Option<ClaimTx>, DbError> {
        let id = IdRef {
            scope: abandoned.id.scope(),
            key: abandoned.id.key().as_str(),
        };
        match self
            .decide(now, id, abandoned.fingerprint, route, None, None)
            .await?
        {
            Decided::Claimed(claim) => Ok(Some(claim)),
            Decided::Answer(_) | Decided::Created { .. } => Ok(None),
        }
    }
}
