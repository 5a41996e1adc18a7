//! Housekeeping and the read-only views: prune, rows of a scope, one key, the event log.

use idem_store::{Event, EventKind, IdRef, RecordId, RowView};
use sqlx::Row;

use super::{error::to_i64, row, sql, Db, DbError};

impl Db {
    /// Delete every claim past retention at `now` that is no live claim, in batches of
    /// [`DbOptions::prune_batch`](super::DbOptions::prune_batch) rows (so no statement
    /// holds the table for long), and the recovery points past retention whose key holds
    /// no claim in flight; how many claims went.
    pub async fn prune(&self, now: u64) -> Result<usize, DbError> {
        let now = self.now(now).await?;
        let now_i = to_i64("now", now)?;
        let lock = to_i64("lock_ms", self.lock_ms())?;
        let batch = i64::from(self.inner.options.prune_batch.max(1));
        let mut total = 0;
        loop {
            let turn = self.writer_turn().await;
            let gone: Vec<(String, String)> = on_writer!(self, |pool| {
                sqlx::query(sql::PRUNE_BATCH)
                    .bind(now_i)
                    .bind(lock)
                    .bind(batch)
                    .fetch_all(pool)
                    .await?
                    .iter()
                    .map(|r| Ok((r.try_get("scope")?, r.try_get("key")?)))
                    .collect::<Result<_, sqlx::Error>>()?
            });
            drop(turn);
            for (scope, key) in &gone {
                self.log(now, scope, Some(key), EventKind::Pruned);
            }
            total += gone.len();
            if (gone.len() as i64) < batch {
                break;
            }
        }
        loop {
            let _turn = self.writer_turn().await;
            let gone = on_writer!(self, |pool| {
                sqlx::query(sql::PRUNE_RECOVERY_BATCH)
                    .bind(now_i)
                    .bind(batch)
                    .execute(pool)
                    .await?
                    .rows_affected()
            });
            if (gone as i64) < batch {
                break;
            }
        }
        Ok(total)
    }

    /// The rows of `scope` at `now`, in key order: at most `limit`, starting after the key
    /// `after` (`""` for the first page).
    pub async fn rows(
        &self,
        now: u64,
        scope: &str,
        after: &str,
        limit: u32,
    ) -> Result<Vec<RowView>, DbError> {
        let lock_ms = self.lock_ms();
        let now = self.now(now).await?;
        let raws = on_pool!(self, |pool| {
            let rows = sqlx::query(sql::ROWS)
                .bind(scope)
                .bind(after)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?;
            rows.iter()
                .map(|r| {
                    let key: String = r.try_get("key")?;
                    Ok((key, row::RawRow::read(r)))
                })
                .collect::<Result<Vec<_>, sqlx::Error>>()?
        });
        raws.into_iter()
            .map(|(key, raw)| {
                let record = raw
                    .and_then(row::RawRow::into_record)
                    .map_err(|reason| row::corrupt(scope, &key, reason))?;
                Ok(RowView::new(
                    IdRef { scope, key: &key },
                    &record,
                    now,
                    lock_ms,
                ))
            })
            .collect()
    }

    /// One key's row at `now`, if any.
    pub async fn row(&self, now: u64, scope: &str, key: &str) -> Result<Option<RowView>, DbError> {
        let id = IdRef { scope, key };
        let (record, now) = self.read(now, id).await?;
        Ok(record.map(|r| RowView::new(id, &r, now, self.lock_ms())))
    }

    /// `now` on the configured clock: the caller's `now` itself, or the database's clock
    /// (one query) under [`Clock::Database`](super::Clock::Database).
    pub async fn now(&self, now: u64) -> Result<u64, DbError> {
        if self.inner.options.clock == super::Clock::Caller {
            return Ok(now);
        }
        let sql = std::sync::Arc::clone(&self.inner.sql.now);
        let db_now: i64 = on_pool!(self, |pool| {
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .fetch_one(pool)
                .await?
        });
        u64::try_from(db_now).map_err(|_| DbError::OutOfRange {
            what: "database clock",
            value: 0,
        })
    }

    /// The events this process still holds with [`Event::seq`] at least `seq`, oldest
    /// first (the log is bounded by `event_capacity`: a gap in seqs means some were
    /// dropped).
    pub fn events_since(&self, seq: u64) -> Vec<Event> {
        self.with_log(|log| log.since(seq).cloned().collect())
    }

    /// The seq the next event will get: a reader's cursor for [`events_since`](Self::events_since).
    pub fn next_event_seq(&self) -> u64 {
        self.with_log(|log| log.next_seq())
    }

    /// Every later event as it is logged, for a live view (server-sent events). A
    /// receiver that falls more than 1,024 events behind gets `Lagged` and can catch up
    /// from [`events_since`](Self::events_since).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    /// Add an event to the log the views and the event stream serve, and publish it: the
    /// store's own events are logged by this crate; an application adds its notes this way
    /// (`EventKind::Note`: the example's demo mode says what PayCo answered and which fault
    /// fired).
    pub fn log(&self, at: u64, scope: &str, key: Option<&str>, kind: EventKind) {
        let event = self.with_log(|log| {
            log.push_unchecked_key(at, scope, key, kind);
            log.iter().next_back().cloned()
        });
        self.publish(event);
    }

    pub(crate) fn log_id(&self, at: u64, id: &RecordId, kind: EventKind) {
        let event = self.with_log(|log| {
            log.push_id(at, id, kind);
            log.iter().next_back().cloned()
        });
        self.publish(event);
    }

    fn publish(&self, event: Option<Event>) {
        if let Some(event) = event {
            // No subscriber is fine: nobody is watching.
            let _ = self.inner.events.send(event);
        }
    }

    fn with_log<R>(&self, f: impl FnOnce(&mut idem_store::EventLog) -> R) -> R {
        // A panic while holding the lock cannot leave the log half-written (each push is
        // one append), so a poisoned lock is still a good log.
        let mut log = self
            .inner
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut log)
    }
}
