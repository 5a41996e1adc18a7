//! The checkout's HTTP client for PayCo: one charge under the order's key, retried (the same
//! key makes that safe) while PayCo says the key is in flight or the connection broke, and an
//! honest "unknown" when PayCo still cannot be reached or answers nonsense.

use std::time::Duration;

use idem_store::http::{format_key_header, IDEMPOTENCY_KEY, RETRY_AFTER};

use crate::payco::wire::{Charge, ChargeRequest, LedgerEntry};

/// What PayCo answered for a charge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChargeOutcome {
    /// 201 (first answer or replay): the card is charged.
    Charged(Charge),
    /// 402 (first answer or replay): the card was declined, and PayCo saved that under the
    /// key, so every later call with it is declined too.
    Declined,
}

/// The charge's outcome is not known: PayCo may or may not have charged. The caller must
/// not record a result; a retry under the same key will learn the truth.
#[derive(Debug, thiserror::Error)]
pub enum ChargeUnknown {
    /// Connection refused, reset, or timed out.
    #[error("payment provider unreachable: {0}")]
    Unreachable(#[from] reqwest::Error),
    /// An answer that is neither 201, 402 nor 409.
    #[error("payment provider answered {0}")]
    Unexpected(u16),
    /// PayCo kept answering 409 (another call with this key in flight) past the deadline.
    #[error("payment provider kept the charge in flight")]
    StillInFlight,
}

/// PayCo's ledger could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// Connection refused, reset, timed out, or an unreadable body.
    #[error("payment provider unreachable: {0}")]
    Unreachable(#[from] reqwest::Error),
    /// An answer other than 200.
    #[error("payment provider answered {0}")]
    Unexpected(u16),
}

/// A PayCo client for one merchant.
#[derive(Debug, Clone)]
pub struct PaycoClient {
    http: reqwest::Client,
    /// Parsed once: reqwest parses a URL given as text on every call (IDNA included).
    charges_url: reqwest::Url,
    ledger_url: String,
    merchant_token: String,
}

/// Longest total wait on PayCo's 409s before giving up as unknown.
const IN_FLIGHT_DEADLINE: Duration = Duration::from_secs(10);

/// Attempts when the connection fails (refused, reset, a kept-alive connection PayCo had just
/// closed), each after [`TRANSPORT_BACKOFF`] times its number.
const TRANSPORT_ATTEMPTS: u32 = 3;
const TRANSPORT_BACKOFF: Duration = Duration::from_millis(100);

impl PaycoClient {
    /// A client for PayCo at `base_url` (e.g. `http://127.0.0.1:9090`), authenticating as the
    /// merchant holding `merchant_token`. Each call times out after `timeout`.
    pub fn new(
        base_url: &str,
        merchant_token: &str,
        timeout: Duration,
    ) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            // Below PayCo's own idle timeout (5 s by default), so a pooled connection is
            // rarely one PayCo is closing.
            .pool_idle_timeout(Duration::from_secs(2))
            .no_proxy()
            .build()?;
        let base_url = base_url.trim_end_matches('/');
        // reqwest's own check of the URL, so a bad one is the same `reqwest::Error` it was
        // when the first call found it.
        let charges_url = http
            .post(format!("{base_url}/charges"))
            .build()?
            .url()
            .clone();
        Ok(Self {
            http,
            charges_url,
            ledger_url: format!("{base_url}/ledger"),
            merchant_token: merchant_token.to_owned(),
        })
    }

    /// The merchant's ledger rows for orders `from_order` and later, oldest first (PayCo's
    /// `GET /ledger?from_order=N`). Read-only; one attempt.
    pub async fn ledger(&self, from_order: i64) -> Result<Vec<LedgerEntry>, LedgerError> {
        let response = self
            .http
            .get(format!("{}?from_order={from_order}", self.ledger_url))
            .bearer_auth(&self.merchant_token)
            .send()
            .await?;
        match response.status().as_u16() {
            200 => Ok(response.json().await?),
            other => Err(LedgerError::Unexpected(other)),
        }
    }

    /// Charge `request` under `key` (the checkout passes `charge:<order>`). Safe to call
    /// again with the same key: PayCo answers a key it has seen with its saved answer.
    pub async fn charge(
        &self,
        key: &str,
        request: &ChargeRequest,
    ) -> Result<ChargeOutcome, ChargeUnknown> {
        let started = tokio::time::Instant::now();
        let mut failed_sends = 0;
        loop {
            let sent = self
                .http
                .post(self.charges_url.clone())
                .bearer_auth(&self.merchant_token)
                .header(IDEMPOTENCY_KEY, format_key_header(key))
                .json(request)
                .send()
                .await;
            let response = match sent {
                Ok(response) => response,
                Err(e) if !e.is_timeout() && failed_sends + 1 < TRANSPORT_ATTEMPTS => {
                    failed_sends += 1;
                    tracing::debug!(error = %e, "PayCo connection failed; retrying under the same key");
                    tokio::time::sleep(TRANSPORT_BACKOFF * failed_sends).await;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            match response.status().as_u16() {
                201 => return Ok(ChargeOutcome::Charged(response.json().await?)),
                402 => return Ok(ChargeOutcome::Declined),
                409 => {
                    let wait = response
                        .headers()
                        .get(RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or(1)
                        .clamp(1, 5);
                    if started.elapsed() + Duration::from_secs(wait) > IN_FLIGHT_DEADLINE {
                        return Err(ChargeUnknown::StillInFlight);
                    }
                    tokio::time::sleep(Duration::from_secs(wait)).await;
                }
                other => return Err(ChargeUnknown::Unexpected(other)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_reqwest_cannot_use_is_refused_when_the_client_is_built() {
        let timeout = Duration::from_secs(1);
        for bad in ["", "not a url", "http://exa mple.com", "127.0.0.1:9090"] {
            assert!(
                PaycoClient::new(bad, "token", timeout).is_err(),
                "{bad:?} accepted"
            );
        }
        let client = PaycoClient::new("http://127.0.0.1:9090/", "token", timeout).expect("a URL");
        assert_eq!(client.charges_url.as_str(), "http://127.0.0.1:9090/charges");
        assert_eq!(client.ledger_url, "http://127.0.0.1:9090/ledger");
    }
}
