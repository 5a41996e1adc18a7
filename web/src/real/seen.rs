//! What this page session saw, kept in sessionStorage: every event of the tenant's stream (the
//! server's own text) and every attempt the page sent with what came back ([`Exchange`]).
//!
//! idem-server keeps its event history in memory: after it restarts, its stream starts empty,
//! and after a reload the page's memory is gone. The claim table and PayCo's ledger are durable
//! on the server (the page reads them again), but no table records a 409, a takeover, a fenced
//! write or when an attempt left the browser. So the page keeps what it saw, as long as its
//! tenant lives (sessionStorage: this tab), and a reload or a server restart shows the same
//! feed, counters and sequence diagram as before.
//!
//! Bounded: the newest [`MAX_EVENTS`] events and [`MAX_EXCHANGES`] attempts are kept (a class's
//! hour of checkouts fits many times over); the claim table is seeded from the server's own
//! whatever this log has dropped. An entry that cannot be read back is skipped, never a panic.

use idem_client::Json;

use crate::browser;
use crate::model::real::{Answer, Exchange};

/// The events kept (each about 150 bytes of JSON).
pub const MAX_EVENTS: usize = 2_000;
/// The attempts kept.
pub const MAX_EXCHANGES: usize = 1_000;

/// What an attempt still out when the page went away became: nobody will hear its answer.
pub const GONE: &str = "the page was reloaded before an answer came";

/// sessionStorage items of `tenant`'s log.
fn items(tenant: &str) -> (String, String) {
    (
        ["idem-demo:events:", tenant].concat(),
        ["idem-demo:exchanges:", tenant].concat(),
    )
}

/// Keeps `events` (the stream's `data` texts, oldest first) and `exchanges`; `false` when
/// storage refused them (full, or disabled): the page carries on with what it has in memory.
pub fn save(tenant: &str, events: &[String], exchanges: &[Exchange]) -> bool {
    let (event_item, exchange_item) = items(tenant);
    let events = &events[events.len().saturating_sub(MAX_EVENTS)..];
    let exchanges = &exchanges[exchanges.len().saturating_sub(MAX_EXCHANGES)..];
    let lines: Vec<String> = exchanges.iter().map(encode).collect();
    browser::session_set(&event_item, &events.join("\n"))
        & browser::session_set(&exchange_item, &lines.join("\n"))
}

/// `tenant`'s kept events (their `data` texts) and attempts; an attempt that was still out is
/// [`Answer::Failed`] with [`GONE`] at `now`.
pub fn load(tenant: &str, now: u64) -> (Vec<String>, Vec<Exchange>) {
    let (event_item, exchange_item) = items(tenant);
    let lines = |item: &str| {
        browser::session_get(item)
            .unwrap_or_default()
            .split('\n')
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let exchanges = lines(&exchange_item)
        .iter()
        .filter_map(|l| decode(l, now))
        .collect();
    (lines(&event_item), exchanges)
}

/// One attempt as one line of JSON (serde_json's writer escapes every newline in it). Derived:
/// a hand-written writer measured 59 B larger in the bundle (`make build`, gzip -9).
fn encode(x: &Exchange) -> String {
    serde_json::to_string(x).unwrap_or_default()
}

/// An attempt [`encode`] wrote; `None` for anything else.
fn decode(line: &str, now: u64) -> Option<Exchange> {
    let x = Json::parse(line)?;
    let n = |v: &Json, name: &str| v.get(name).and_then(Json::as_u64);
    let s = |v: &Json, name: &str| v.get(name).and_then(Json::as_str).map(str::to_owned);
    let a = x.get("answer")?;
    let answer = match a.as_str() {
        Some("Open") => Answer::Failed {
            at: now,
            message: GONE.to_owned(),
        },
        _ => {
            let (tag, v) = match a {
                Json::Object(members) => members.first()?,
                _ => return None,
            };
            match tag.as_str() {
                "Reply" => Answer::Reply {
                    at: n(v, "at")?,
                    status: u16::try_from(n(v, "status")?).ok()?,
                    replayed: matches!(v.get("replayed")?, Json::Bool(true)),
                    retry_after_ms: n(v, "retry_after_ms"),
                    body: s(v, "body")?,
                },
                "TimedOut" => Answer::TimedOut { at: n(v, "at")? },
                "Failed" => Answer::Failed {
                    at: n(v, "at")?,
                    message: s(v, "message")?,
                },
                _ => return None,
            }
        }
    };
    Some(Exchange {
        checkout: s(&x, "checkout")?,
        number: u32::try_from(n(&x, "number")?).ok()?,
        key: s(&x, "key")?,
        sent_at: n(&x, "sent_at")?,
        body: s(&x, "body")?,
        answer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(answer: Answer) -> Exchange {
        Exchange {
            checkout: "co_2".into(),
            number: 3,
            key: "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9".into(),
            sent_at: 1_796_154_650_000,
            body: r#"{"amount":2590,"card":"tok_visa","cart":"co_2"}"#.into(),
            answer,
        }
    }

    #[test]
    fn every_answer_reads_back_as_it_was_written() {
        let answers = [
            Answer::Reply {
                at: 1_796_154_650_020,
                status: 201,
                replayed: true,
                retry_after_ms: None,
                body: "{\"order\":1}\n\"quoted\"\ttab ✓".into(),
            },
            Answer::Reply {
                at: 7,
                status: 409,
                replayed: false,
                retry_after_ms: Some(2_000),
                body: String::new(),
            },
            Answer::TimedOut { at: 9 },
            Answer::Failed {
                at: 11,
                message: "Failed to fetch".into(),
            },
        ];
        for answer in answers {
            let x = exchange(answer);
            let line = encode(&x);
            assert!(!line.contains('\n'), "one line: {line}");
            // Valid JSON by serde_json's own reading, whatever the strings hold.
            let value: serde_json::Value = serde_json::from_str(&line).expect("JSON");
            assert_eq!(value["key"], x.key.as_str());
            assert_eq!(decode(&line, 99), Some(x));
        }
    }

    #[test]
    fn an_attempt_still_out_came_to_nothing_when_the_page_went() {
        let line = encode(&exchange(Answer::Open));
        let back = decode(&line, 1_234).unwrap();
        assert_eq!(
            back.answer,
            Answer::Failed {
                at: 1_234,
                message: GONE.into()
            }
        );
    }

    #[test]
    fn what_is_not_an_attempt_is_skipped() {
        let good = encode(&exchange(Answer::TimedOut { at: 5 }));
        for bad in [
            "",
            "not json",
            "{}",
            "[1,2]",
            &good.replace("\"number\":3", "\"number\":-3"),
            &good.replace("\"number\":3", "\"number\":99999999999"),
            &good.replace("TimedOut", "Exploded"),
            &good.replace("\"at\":5", "\"at\":\"5\""),
        ] {
            assert_eq!(decode(bad, 0), None, "{bad}");
        }
    }
}
