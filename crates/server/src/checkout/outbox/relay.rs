//! The relay: every [`RelayConfig::interval`] it reads up to [`RelayConfig::batch`] unsent
//! outbox messages in id order, posts each to the consumer (`POST {url}/deliveries`,
//! [`super::wire::Delivery`]) and marks it sent only after a 2xx acknowledgement: at least
//! once, never "at most once". A relay killed between the acknowledgement and its mark sends
//! the message again after its restart (the `relay-after-send` checkpoint is that moment).
//!
//! A consumer that cannot be reached, times out or answers 408, 429 or 5xx ends the pass:
//! later messages wait for the next one, so a healthy consumer sees them in id order (a
//! resend may still arrive after a later message). Any other answer (a 4xx: the consumer
//! refuses the message itself) is logged as an error and the message stays unsent, tried
//! again until an operator looks: it never blocks the messages after it, however many are
//! refused, because each pass reads on from where the last one stopped (a cursor over ids,
//! back to the start once a pass reaches the end), not from the oldest unsent message.
//!
//! After each pass the relay deletes rows sent longer ago than [`RelayConfig::keep_sent`] (a
//! batch at a time): a sent row is history, and the consumer's table of handled ids, not the
//! row, is what makes a resend harmless.
//!
//! Several servers sharing PostgreSQL each run a relay over the same table, without locks:
//! two may send the same message (each marks it; the second mark changes nothing), which the
//! consumer's dedupe absorbs. What it does not do: deliver anywhere but one consumer URL.

use std::{
    sync::atomic::{AtomicBool, AtomicI64, Ordering},
    time::Duration,
};

use reqwest::header::AUTHORIZATION;

use super::{
    table::{self, Unsent},
    wire::{Delivery, DELIVERIES_PATH},
};
use crate::{
    checkout::{
        checkpoint::{At, Flow, Point},
        Checkout,
    },
    periodic::Periodic,
    sql::now_ms,
};

/// Where and how often the relay delivers.
///
/// ## Default values (`idem-server serve`)
/// - `url`: `http://127.0.0.1:9191`, the `receipts` service's default address.
/// - `token`: `relay-token`, the bearer token the `receipts` service accepts by default.
/// - `interval`: 1 s between passes.
/// - `batch`: 100 messages per pass.
/// - `timeout`: 5 s per delivery.
/// - `keep_sent`: 24 h: a sent row is deleted a day after its acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayConfig {
    /// The consumer's base URL.
    pub url: String,
    /// The relay's bearer token at the consumer.
    pub token: String,
    /// Time between passes.
    pub interval: Duration,
    /// Messages per pass.
    pub batch: u32,
    /// Time allowed for one delivery.
    pub timeout: Duration,
    /// How long a sent row is kept; `None`: forever.
    pub keep_sent: Option<Duration>,
}

impl Default for RelayConfig {
    fn default() -> Self {
        Self {
            url: "http://127.0.0.1:9191".to_owned(),
            token: "relay-token".to_owned(),
            interval: Duration::from_secs(1),
            batch: 100,
            timeout: Duration::from_secs(5),
            keep_sent: Some(Duration::from_secs(24 * 60 * 60)),
        }
    }
}

/// The relay as a background pass of the checkout's service.
pub fn relay(app: Checkout, config: RelayConfig) -> Result<Periodic, reqwest::Error> {
    let http = reqwest::Client::builder()
        .timeout(config.timeout)
        .connect_timeout(config.timeout)
        // Below the consumer's idle timeout (5 s by default), as the PayCo client's: a
        // pooled connection is rarely one the consumer is closing.
        .pool_idle_timeout(Duration::from_secs(2))
        .no_proxy()
        .build()?;
    let url = format!("{}{DELIVERIES_PATH}", config.url.trim_end_matches('/'));
    let relay = std::sync::Arc::new(Relay {
        app,
        http,
        url,
        bearer: format!("Bearer {}", config.token),
        batch: config.batch.max(1),
        keep_sent: config.keep_sent,
        unavailable: AtomicBool::new(false),
        after: AtomicI64::new(0),
    });
    Ok(Periodic::new("relay", config.interval, move || {
        let relay = std::sync::Arc::clone(&relay);
        async move { relay.pass().await }
    }))
}

struct Relay {
    app: Checkout,
    http: reqwest::Client,
    url: String,
    bearer: String,
    batch: u32,
    keep_sent: Option<Duration>,
    /// Whether the last pass found the consumer unavailable: a consumer that stays down is
    /// logged once, not once a pass.
    unavailable: AtomicBool,
    /// The next pass reads unsent messages with a greater id (0: from the start). Passes never
    /// overlap ([`Periodic`] runs one at a time), so a plain load and store suffice.
    after: AtomicI64,
}

/// What became of one delivery.
enum Delivered {
    /// The consumer answered 2xx: it has the message.
    Acknowledged,
    /// The consumer refused this message (a 4xx other than 408 and 429).
    Refused(String),
    /// The consumer could not be asked, or asks to come back later.
    Unreachable(String),
}

impl Relay {
    async fn pass(&self) {
        self.send_unsent().await;
        self.prune().await;
    }

    async fn send_unsent(&self) {
        let after = self.after.load(Ordering::Relaxed);
        let unsent = match table::unsent(&self.app.db, after, self.batch).await {
            Ok(unsent) => unsent,
            Err(e) => return tracing::warn!(error = %e, "relay: outbox unreadable"),
        };
        // A short read reached the end: the next pass starts over, from refused messages
        // (tried again) and whatever was written since.
        let reached_end = unsent.len() < self.batch as usize;
        for message in unsent {
            match self.deliver(&message).await {
                Delivered::Acknowledged => {
                    if self.unavailable.swap(false, Ordering::Relaxed) {
                        tracing::info!("relay: the consumer is back");
                    }
                }
                Delivered::Refused(why) => {
                    tracing::error!(message = %message.message_id, %why,
                        "relay: the consumer refused a message; it stays unsent");
                    self.after.store(message.id, Ordering::Relaxed);
                    continue;
                }
                Delivered::Unreachable(why) => {
                    if !self.unavailable.swap(true, Ordering::Relaxed) {
                        tracing::warn!(message = %message.message_id, %why,
                            "relay: consumer unavailable; trying again every pass");
                    }
                    return;
                }
            }
            let at = At {
                scope: &message.scope,
                key: Some(&message.message_id),
            };
            // A stop here is a relay that died before its mark: the message goes again.
            if !matches!(
                self.app.checkpoints.pass(Point::RelayAfterSend, at).await,
                Flow::Continue
            ) {
                return;
            }
            let now = i64::try_from(now_ms()).unwrap_or(i64::MAX);
            if let Err(e) = table::mark_sent(&self.app.db, message.id, now).await {
                return tracing::warn!(error = %e, "relay: mark failed; the message goes again");
            }
            self.after.store(message.id, Ordering::Relaxed);
        }
        if reached_end {
            self.after.store(0, Ordering::Relaxed);
        }
    }

    /// Delete a batch of rows sent longer ago than `keep_sent`.
    async fn prune(&self) {
        let Some(keep) = self.keep_sent else { return };
        let keep = i64::try_from(keep.as_millis()).unwrap_or(i64::MAX);
        let now = i64::try_from(now_ms()).unwrap_or(i64::MAX);
        let before = now.saturating_sub(keep);
        if let Err(e) = table::prune_sent(&self.app.db, before, self.batch).await {
            tracing::warn!(error = %e, "relay: pruning sent messages failed; kept for now");
        }
    }

    async fn deliver(&self, message: &Unsent) -> Delivered {
        let Ok(payload) = serde_json::from_str(&message.payload) else {
            return Delivered::Refused("its payload is not JSON".to_owned());
        };
        let delivery = Delivery {
            id: message.message_id.clone(),
            kind: message.kind.clone(),
            scope: message.scope.clone(),
            payload,
        };
        let sent = self
            .http
            .post(&self.url)
            .header(AUTHORIZATION, &self.bearer)
            .json(&delivery)
            .send()
            .await;
        let status = match sent {
            Ok(answer) => answer.status(),
            Err(e) => return Delivered::Unreachable(e.to_string()),
        };
        match status.as_u16() {
            200..=299 => Delivered::Acknowledged,
            408 | 429 | 500..=599 => Delivered::Unreachable(format!("answered {status}")),
            _ => Delivered::Refused(format!("answered {status}")),
        }
    }
}
