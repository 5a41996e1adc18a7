//! The conformance phase: one case per rule, each on a logical operation of its own (fresh
//! values, a fresh key), in an order where a later case never depends on an earlier one's
//! success. Each returns its [`CaseResult`], with the exact exchanges when it fails.

use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{
    effects::Observer,
    exchange::{new_key, Answer, Exchange, Fresh, Sent, Target},
    report::{Basis, Case, CaseResult, Verdict},
};

/// The longest key idem's SDK and server accept (idem's choice, not the draft's).
const MAX_KEY_LEN: usize = idem_store::MAX_KEY_LEN;

// The cases, in the order they run.
const FIRST_RUNS: Case = Case {
    id: "first-runs",
    basis: Basis::Required,
    title: "a new key's request runs (2xx)",
};
const FIRST_TOOK_EFFECT: Case = Case {
    id: "first-took-effect",
    basis: Basis::Required,
    title: "the first request took effect once",
};
const REPEAT_REPLAYED: Case = Case {
    id: "repeat-replayed",
    basis: Basis::NeededBySdk,
    title: "the same key and bytes again get the first answer: status, content type, body",
};
const REPEAT_MARKED: Case = Case {
    id: "repeat-marked",
    basis: Basis::Advisory,
    title: "a replay is marked Idempotent-Replayed: true",
};
const REPEAT_NO_EFFECT: Case = Case {
    id: "repeat-no-effect",
    basis: Basis::Required,
    title: "the repeat takes no effect",
};
const OTHER_BODY_422: Case = Case {
    id: "other-body-422",
    basis: Basis::Required,
    title: "the same key with another body is 422, with no effect",
};
const OTHER_ENDPOINT_422: Case = Case {
    id: "other-endpoint-422",
    basis: Basis::Required,
    title: "the same key on another endpoint is 422",
};
const REORDERED_JSON_REPLAYED: Case = Case {
    id: "reordered-json-replayed",
    basis: Basis::Advisory,
    title: "the same JSON body with members reordered and spaced is the replay",
};
const KEY_255_ACCEPTED: Case = Case {
    id: "key-255-accepted",
    basis: Basis::Advisory,
    title: "a key of 255 characters is accepted",
};
const KEY_256_REFUSED: Case = Case {
    id: "key-256-refused",
    basis: Basis::Advisory,
    title: "a key of 256 characters is refused with 400",
};
const KEY_MALFORMED_REFUSED: Case = Case {
    id: "key-malformed-refused",
    basis: Basis::Advisory,
    title: "a malformed key (an unterminated sf-string, or empty) is refused with 400",
};
const KEY_MISSING_REFUSED: Case = Case {
    id: "key-missing-refused",
    basis: Basis::Required,
    title: "a request without a key is refused with 400",
};
const EXPIRED_FIRST_SENT_REFUSED: Case = Case {
    id: "expired-first-sent-refused",
    basis: Basis::Advisory,
    title: "a new key first sent long ago (Repeatability-First-Sent in 1970) is refused with 412, not run",
};
const TENANTS_ISOLATED: Case = Case {
    id: "tenants-isolated",
    basis: Basis::Required,
    title: "two tenants using one key are two operations: no replay across tenants",
};
const CONCURRENT_DUPLICATE: Case = Case {
    id: "concurrent-duplicate",
    basis: Basis::NeededBySdk,
    title: "a duplicate while the first runs gets 409 with Retry-After, or waits for the replay",
};
const CORS_EXPOSES: Case = Case {
    id: "cors-exposes",
    basis: Basis::NeededBySdk,
    title: "CORS allows Idempotency-Key and Repeatability-First-Sent, exposes Retry-After and Idempotent-Replayed",
};
const ERRORS_ARE_PROBLEMS: Case = Case {
    id: "errors-are-problems",
    basis: Basis::Required,
    title: "error bodies are RFC 9457 problems (application/problem+json)",
};

const KEY_STATE_DONE: Case = Case {
    id: "key-state-done",
    basis: Basis::NeededBySdk,
    title: "the key-state endpoint answers a finished operation's key with its saved answer, as the SDK's reconcile reads it",
};
const KEY_STATE_UNKNOWN: Case = Case {
    id: "key-state-unknown",
    basis: Basis::NeededBySdk,
    title: "the key-state endpoint answers 404 for a key it never saw",
};

/// A case's outcome before it is named.
struct Outcome {
    verdict: Verdict,
    exchanges: Vec<String>,
}

fn pass() -> Outcome {
    Outcome {
        verdict: Verdict::Pass,
        exchanges: Vec::new(),
    }
}

fn fail(why: impl Into<String>, exchanges: &[&Exchange]) -> Outcome {
    Outcome {
        verdict: Verdict::Fail { why: why.into() },
        exchanges: exchanges.iter().map(|e| e.render()).collect(),
    }
}

fn not_checked(why: impl Into<String>) -> Outcome {
    Outcome {
        verdict: Verdict::NotChecked { why: why.into() },
        exchanges: Vec::new(),
    }
}

/// The phase's state: the target, the observer, the run's generator and operation count,
/// and the error answers met on the way (for the problem-body case).
pub struct Conformance<'t> {
    target: &'t Target,
    observer: Option<&'t Observer>,
    seed: u64,
    rng: ChaCha8Rng,
    ops: u64,
    errors: Vec<Exchange>,
    results: Vec<CaseResult>,
}

impl<'t> Conformance<'t> {
    /// The phase for `target`, its operations numbered from 1, keys drawn from `seed`.
    pub fn new(target: &'t Target, observer: Option<&'t Observer>, seed: u64) -> Self {
        Self {
            target,
            observer,
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed),
            ops: 0,
            errors: Vec::new(),
            results: Vec::new(),
        }
    }

    /// A new logical operation's values.
    fn op(&mut self) -> Fresh {
        self.ops += 1;
        Fresh::new(self.seed, self.ops)
    }

    /// A new key, in its header form.
    fn key(&mut self) -> String {
        let key = new_key(&mut self.rng);
        self.target.key_header(&key)
    }

    fn record(&mut self, case: &Case, outcome: Outcome) {
        self.results
            .push(case.result(outcome.verdict, outcome.exchanges));
    }

    /// `value`, or `case` recorded as not checked because the configuration lacks it.
    fn configured<T>(&mut self, case: &Case, value: Option<T>, missing: &str) -> Option<T> {
        if value.is_none() {
            self.record(case, not_checked(missing));
        }
        value
    }

    /// Send `sent`; an error answer is kept for the problem-body case.
    async fn send(&mut self, sent: Sent) -> Exchange {
        let exchange = self.target.send(sent).await;
        if let Ok(answer) = &exchange.answer {
            if answer.status >= 400 && answer.status != 401 && answer.status != 403 {
                self.errors.push(exchange.clone());
            }
        }
        exchange
    }

    /// Effects of `op`, or the total, as the observer sees them now (after settling).
    async fn effects(&self, op: &Fresh) -> Option<Result<(u64, Option<u64>), String>> {
        let observer = self.observer?;
        observer.settle().await;
        Some(observer.seen(op).await.map(|s| (s.total, s.of_operation)))
    }

    /// Run every case, in order.
    pub async fn run(mut self) -> Vec<CaseResult> {
        self.first_and_repeat().await;
        self.other_body().await;
        self.other_endpoint().await;
        self.reordered_json().await;
        self.key_limits().await;
        self.missing_key().await;
        self.expired_first_sent().await;
        self.tenants().await;
        self.concurrent_duplicate().await;
        self.cors().await;
        self.key_state().await;
        self.problems();
        self.results
    }

    /// The first request runs once; its repeat is the same answer, marked, with no effect.
    async fn first_and_repeat(&mut self) {
        let op = self.op();
        let key = self.key();
        let before = self.effects(&op).await;
        let first = self.send(self.target.keyed(&op, Some(&key))).await;
        let outcome = match first.answer() {
            Ok(a) if a.is_success() => pass(),
            Ok(a) => fail(format!("expected 2xx, got {}", a.status), &[&first]),
            Err(e) => fail(e, &[&first]),
        };
        let ran = matches!(outcome.verdict, Verdict::Pass);
        self.record(&FIRST_RUNS, outcome);
        let after_first = self.effects(&op).await;
        let took_effect = match (&before, &after_first, ran) {
            (None, _, _) | (_, None, _) => not_checked("no effects observer configured"),
            (_, _, false) => not_checked("the first request did not run"),
            (Some(Err(e)), _, _) | (_, Some(Err(e)), _) => fail(e.clone(), &[]),
            (Some(Ok((total_before, _))), Some(Ok((total, of_op))), true) => match of_op {
                Some(1) => pass(),
                Some(n) => fail(format!("{n} effects for one operation"), &[&first]),
                None if *total == total_before + 1 => pass(),
                None => fail(
                    format!("effects went from {total_before} to {total}, not up by one"),
                    &[&first],
                ),
            },
        };
        self.record(&FIRST_TOOK_EFFECT, took_effect);

        let repeat = self.send(self.target.keyed(&op, Some(&key))).await;
        let (replayed, marked) = match (first.answer(), repeat.answer()) {
            (Ok(a), Ok(_)) if !a.is_success() => (
                not_checked(format!("the first request got {}", a.status)),
                not_checked(format!("the first request got {}", a.status)),
            ),
            (Ok(a), Ok(b)) => (
                same_answer(a, b, &first, &repeat),
                marked_replay(b, &repeat),
            ),
            (Err(e), _) | (_, Err(e)) => (fail(e.clone(), &[&first, &repeat]), fail(e, &[])),
        };
        self.record(&REPEAT_REPLAYED, replayed);
        self.record(&REPEAT_MARKED, marked);
        let after_repeat = self.effects(&op).await;
        let no_effect = match (&after_first, &after_repeat) {
            (None, _) | (_, None) => not_checked("no effects observer configured"),
            (Some(Err(e)), _) | (_, Some(Err(e))) => fail(e.clone(), &[]),
            (Some(Ok(a)), Some(Ok(b))) if a == b => pass(),
            (Some(Ok((t1, o1))), Some(Ok((t2, o2)))) => fail(
                format!("the repeat took effect again: total {t1} → {t2}, this operation's {o1:?} → {o2:?}"),
                &[&repeat],
            ),
        };
        self.record(&REPEAT_NO_EFFECT, no_effect);
    }

    /// The same key with another body: 422, and that body's operation takes no effect.
    async fn other_body(&mut self) {
        let (op, other) = (self.op(), self.op());
        let key = self.key();
        let a = self.target.keyed(&op, Some(&key));
        let b = self.target.keyed(&other, Some(&key));
        if a.body == b.body && a.url == b.url {
            let why = "the template has no {{fresh}} or {{n}} to make another body";
            self.record(&OTHER_BODY_422, not_checked(why));
            return;
        }
        let first = self.send(a).await;
        let reused = self.send(b).await;
        let mut outcome = expect_status(&reused, 422, &[&first, &reused]);
        if matches!(outcome.verdict, Verdict::Pass) {
            if let Some(Ok((_, Some(n)))) = self.effects(&other).await {
                if n > 0 {
                    outcome = fail(format!("refused, yet {n} effects"), &[&reused]);
                }
            }
        }
        self.record(&OTHER_BODY_422, outcome);
    }

    /// The same key on the second endpoint: 422.
    async fn other_endpoint(&mut self) {
        let config = self.target.config().second_endpoint.clone();
        let Some(endpoint) =
            self.configured(&OTHER_ENDPOINT_422, config, "no second_endpoint configured")
        else {
            return;
        };
        let op = self.op();
        let key = self.key();
        let first = self.send(self.target.keyed(&op, Some(&key))).await;
        let reused = self
            .send(self.target.endpoint(&endpoint, &op, Some(&key)))
            .await;
        let outcome = expect_status(&reused, 422, &[&first, &reused]);
        self.record(&OTHER_ENDPOINT_422, outcome);
    }

    /// The same JSON with its members reordered and spaced: the replay, not 422.
    async fn reordered_json(&mut self) {
        let op = self.op();
        let key = self.key();
        let sent = self.target.keyed(&op, Some(&key));
        let Some(reordered) = reorder(&sent.body) else {
            let why = "the body is not a JSON object of two or more members";
            self.record(&REORDERED_JSON_REPLAYED, not_checked(why));
            return;
        };
        let first = self.send(sent.clone()).await;
        let again = self
            .send(Sent {
                body: reordered,
                ..sent
            })
            .await;
        let outcome = match (first.answer(), again.answer()) {
            (Ok(a), Ok(b)) if a.is_success() => same_answer(a, b, &first, &again),
            (Ok(a), Ok(_)) => not_checked(format!("the first request got {}", a.status)),
            (Err(e), _) | (_, Err(e)) => fail(e, &[&first, &again]),
        };
        self.record(&REORDERED_JSON_REPLAYED, outcome);
    }

    /// 255 characters accepted; 256 and a malformed key refused with 400.
    async fn key_limits(&mut self) {
        let form = self.target.config().key.form;
        let mut longest = |c: char, len: usize| -> String {
            let mut key = new_key(&mut self.rng);
            key.extend(std::iter::repeat_n(c, len.saturating_sub(key.len())));
            form.write(&key)
        };
        let (k255, k256) = (longest('a', MAX_KEY_LEN), longest('b', MAX_KEY_LEN + 1));
        let op = self.op();
        let accepted = self.send(self.target.keyed(&op, Some(&k255))).await;
        let outcome = match accepted.answer() {
            Ok(a) if a.is_success() => pass(),
            Ok(a) => fail(format!("expected 2xx, got {}", a.status), &[&accepted]),
            Err(e) => fail(e, &[&accepted]),
        };
        self.record(&KEY_255_ACCEPTED, outcome);

        let op = self.op();
        let refused = self.send(self.target.keyed(&op, Some(&k256))).await;
        let outcome = expect_status(&refused, 400, &[&refused]);
        self.record(&KEY_256_REFUSED, outcome);

        let op = self.op();
        let malformed = match form {
            crate::config::KeyForm::SfString => "\"unterminated".to_owned(),
            crate::config::KeyForm::Token => String::new(),
        };
        let refused = self.send(self.target.keyed(&op, Some(&malformed))).await;
        let outcome = expect_status(&refused, 400, &[&refused]);
        self.record(&KEY_MALFORMED_REFUSED, outcome);
    }

    /// No key on a keyed route: 400.
    async fn missing_key(&mut self) {
        let op = self.op();
        let refused = self.send(self.target.keyed(&op, None)).await;
        let outcome = expect_status(&refused, 400, &[&refused]);
        self.record(&KEY_MISSING_REFUSED, outcome);
    }

    /// The expired-key guard: a key never seen, on a request that says it was first sent at
    /// the epoch (longer ago than any retention), is refused with 412 instead of run; a server
    /// without the guard runs it (and would run a retry that outlived its retention again).
    async fn expired_first_sent(&mut self) {
        let op = self.op();
        let key = self.key();
        let mut sent = self.target.keyed(&op, Some(&key));
        let long_ago = idem_store::first_sent::header_value(0);
        sent.set_header(idem_store::first_sent::HEADER, long_ago);
        let refused = self.send(sent).await;
        let outcome = expect_status(&refused, 412, &[&refused]);
        self.record(&EXPIRED_FIRST_SENT_REFUSED, outcome);
    }

    /// Two tenants, one key: two operations; the second is not the first's replay.
    async fn tenants(&mut self) {
        let config = self.target.config().second_tenant.clone();
        let Some(second) =
            self.configured(&TENANTS_ISOLATED, config, "no second_tenant configured")
        else {
            return;
        };
        let op = self.op();
        let key = self.key();
        let first = self.send(self.target.keyed(&op, Some(&key))).await;
        let mut theirs = self.target.keyed(&op, Some(&key));
        for (name, value) in &second {
            theirs.set_header(name, op.fill(value));
        }
        let other = self.send(theirs).await;
        let scoped = self
            .target
            .config()
            .effects
            .as_ref()
            .is_some_and(|e| e.scoped_to_tenant);
        let effects = if scoped {
            None
        } else {
            self.effects(&op).await
        };
        let shown = [&first, &other];
        let outcome = match (first.answer(), other.answer()) {
            (Ok(a), _) if !a.is_success() => {
                not_checked(format!("the first tenant's request got {}", a.status))
            }
            (Ok(_), Ok(b)) if b.is_marked_replay() => fail(
                "the second tenant got a replay of the first tenant's answer",
                &shown,
            ),
            (Ok(_), Ok(b)) if !b.is_success() => fail(
                format!(
                    "the second tenant's request got {}, not its own 2xx",
                    b.status
                ),
                &shown,
            ),
            // Both ran if both took effect: the observer sees every tenant's.
            (Ok(_), Ok(_)) if matches!(effects, Some(Ok((_, Some(2))))) => pass(),
            (Ok(_), Ok(_)) if matches!(effects, Some(Ok((_, Some(_))))) => {
                let n = effects
                    .and_then(Result::ok)
                    .and_then(|(_, n)| n)
                    .unwrap_or(0);
                fail(
                    format!(
                        "{n} effects for the two tenants' requests: the second did not run its own"
                    ),
                    &shown,
                )
            }
            (Ok(a), Ok(b)) if a.body == b.body => fail(
                "the second tenant got the first tenant's answer byte for byte \
                 (an effects observer that sees both tenants tells a coincidence apart)",
                &shown,
            ),
            (Ok(_), Ok(_)) => pass(),
            (Err(e), _) | (_, Err(e)) => fail(e, &shown),
        };
        self.record(&TENANTS_ISOLATED, outcome);
    }

    /// A duplicate while the first runs: 409 with `Retry-After`, or a wait and the replay.
    async fn concurrent_duplicate(&mut self) {
        let config = self.target.config().slow.clone();
        let Some(slow) = self.configured(
            &CONCURRENT_DUPLICATE,
            config,
            "no way to make the work slow configured (slow)",
        ) else {
            return;
        };
        let op = self.op();
        let key = self.key();
        if let Some(setup) = &slow.setup {
            let armed = self
                .target
                .send(self.target.endpoint(setup, &op, None))
                .await;
            match armed.answer() {
                Ok(a) if a.is_success() => {}
                Ok(a) => {
                    let why = format!("the slow setup request got {}", a.status);
                    let outcome = fail(why, &[&armed]);
                    self.record(&CONCURRENT_DUPLICATE, outcome);
                    return;
                }
                Err(e) => {
                    let outcome = fail(e, &[&armed]);
                    self.record(&CONCURRENT_DUPLICATE, outcome);
                    return;
                }
            }
        }
        let mut sent = self.target.keyed(&op, Some(&key));
        for (name, value) in &slow.headers {
            sent.set_header(name, op.fill(value));
        }
        if let Some(body) = &slow.body {
            sent.body = op.fill(body).into_bytes();
        }
        let target = self.target.clone();
        let first = tokio::spawn({
            let sent = sent.clone();
            async move { target.send(sent).await }
        });
        tokio::time::sleep(Duration::from_millis(slow.duplicate_after_ms)).await;
        let duplicate = self.send(sent).await;
        let Ok(first) = first.await else {
            let outcome = fail("the first request's task failed", &[&duplicate]);
            self.record(&CONCURRENT_DUPLICATE, outcome);
            return;
        };
        let outcome = match (first.answer(), duplicate.answer()) {
            (_, Ok(d)) if d.status == 409 => match d.header("retry-after") {
                Some(_) => pass(),
                None => fail("409 without Retry-After", &[&first, &duplicate]),
            },
            (Ok(f), Ok(d)) if f.is_success() && d.is_success() => {
                if d.is_marked_replay() || f.is_marked_replay() {
                    same_answer(f, d, &first, &duplicate)
                } else {
                    fail(
                        "both copies ran (neither is a 409 nor a marked replay)",
                        &[&first, &duplicate],
                    )
                }
            }
            (Ok(f), Ok(d)) => fail(
                format!(
                    "the first got {}, the duplicate {}: expected 409 + Retry-After or the replay",
                    f.status, d.status
                ),
                &[&first, &duplicate],
            ),
            (Err(e), _) | (_, Err(e)) => fail(e, &[&first, &duplicate]),
        };
        let mut outcome = outcome;
        if matches!(outcome.verdict, Verdict::Pass) {
            if let Some(Ok((_, Some(n)))) = self.effects(&op).await {
                if n != 1 {
                    outcome = fail(
                        format!("{n} effects for one operation"),
                        &[&first, &duplicate],
                    );
                }
            }
        }
        self.record(&CONCURRENT_DUPLICATE, outcome);
    }

    /// CORS lets a browser page send the key and read the headers its retries need.
    async fn cors(&mut self) {
        let config = self.target.config().origin.clone();
        let Some(origin) = self.configured(&CORS_EXPOSES, config, "no origin configured") else {
            return;
        };
        let op = self.op();
        let key = self.key();
        let sent = self.target.keyed(&op, Some(&key));
        let requested: Vec<String> = sent
            .headers
            .iter()
            .map(|(n, _)| n.to_ascii_lowercase())
            .filter(|n| {
                !matches!(
                    n.as_str(),
                    "accept" | "accept-language" | "content-language"
                )
            })
            .collect();
        let preflight = self
            .send(Sent {
                method: "OPTIONS".to_owned(),
                url: sent.url.clone(),
                headers: vec![
                    ("Origin".to_owned(), origin.clone()),
                    (
                        "Access-Control-Request-Method".to_owned(),
                        sent.method.clone(),
                    ),
                    (
                        "Access-Control-Request-Headers".to_owned(),
                        requested.join(","),
                    ),
                ],
                body: Vec::new(),
            })
            .await;
        let mut real = sent;
        real.headers.push(("Origin".to_owned(), origin.clone()));
        let answered = self.send(real).await;
        let outcome = match (preflight.answer(), answered.answer()) {
            (Ok(p), Ok(a)) => cors_verdict(&origin, &requested, p, a, &[&preflight, &answered]),
            (Err(e), _) | (_, Err(e)) => fail(e, &[&preflight, &answered]),
        };
        self.record(&CORS_EXPOSES, outcome);
    }

    /// The key-state endpoint, read by idem-client's own reader (`KeyState::from_reply`): a
    /// finished operation's key is `done` with the first answer, and the answer names the
    /// request holding the key so that the SDK knows it for its own; a key never used is 404.
    async fn key_state(&mut self) {
        let config = self.target.config().key_state.clone();
        let missing = "no key_state endpoint configured";
        let Some(endpoint) = self.configured(&KEY_STATE_DONE, config, missing) else {
            self.record(&KEY_STATE_UNKNOWN, not_checked(missing));
            return;
        };
        let ask = |target: &Target, op: &Fresh, key: &str| {
            let template = &target.config().request;
            let headers = endpoint.headers.as_ref().unwrap_or(&template.headers);
            Sent {
                method: "GET".to_owned(),
                url: crate::exchange::join(
                    &target.config().target,
                    &op.fill(&endpoint.path).replace("{key}", key),
                ),
                headers: headers
                    .iter()
                    .map(|(n, v)| (n.clone(), op.fill(v)))
                    .collect(),
                body: Vec::new(),
            }
        };
        let op = self.op();
        let key = new_key(&mut self.rng);
        let sent = self.target.keyed(&op, Some(&self.target.key_header(&key)));
        let payload = serde_json::from_slice::<serde_json::Value>(&sent.body)
            .ok()
            .and_then(|json| idem_client::CanonicalPayload::new(&json).ok());
        let outcome = match payload {
            None => not_checked("the body is not JSON: the SDK sends JSON"),
            Some(payload) => {
                let first = self.send(sent).await;
                let asked = self.target.send(ask(self.target, &op, &key)).await;
                match (first.answer(), asked.answer()) {
                    (Ok(a), _) if !a.is_success() => {
                        not_checked(format!("the first request got {}", a.status))
                    }
                    (Ok(a), Ok(s)) => done_verdict(a, s, &payload, &[&first, &asked]),
                    (Err(e), _) | (_, Err(e)) => fail(e, &[&first, &asked]),
                }
            }
        };
        self.record(&KEY_STATE_DONE, outcome);

        let op = self.op();
        let never = new_key(&mut self.rng);
        let asked = self.target.send(ask(self.target, &op, &never)).await;
        let empty = idem_client::CanonicalPayload::from_canonical("{}".to_owned());
        let outcome = match asked.answer() {
            Ok(s) => match idem_client::KeyState::from_reply(s.status, &s.body, &empty) {
                Some(idem_client::KeyState::NotFound) => pass(),
                _ => fail(format!("expected 404, got {}", s.status), &[&asked]),
            },
            Err(e) => fail(e, &[&asked]),
        };
        self.record(&KEY_STATE_UNKNOWN, outcome);
    }

    /// The error answers met so far are RFC 9457 problems, when the server says they are.
    fn problems(&mut self) {
        if !self.target.config().problem_json {
            let why = "the server does not claim RFC 9457 (problem_json: false)";
            self.record(&ERRORS_ARE_PROBLEMS, not_checked(why));
            return;
        }
        if self.errors.is_empty() {
            let why = "no error answer was met";
            self.record(&ERRORS_ARE_PROBLEMS, not_checked(why));
            return;
        }
        let bad = self.errors.iter().find_map(|e| {
            let answer = e.answer.as_ref().ok()?;
            problem_flaw(answer).map(|why| (why, e))
        });
        let outcome = match bad {
            None => pass(),
            Some((why, e)) => fail(why, &[e]),
        };
        self.record(&ERRORS_ARE_PROBLEMS, outcome);
    }
}

/// What idem's SDK makes of a key-state answer `state` for the request first answered `first`.
fn done_verdict(
    first: &Answer,
    state: &Answer,
    payload: &idem_client::CanonicalPayload,
    shown: &[&Exchange],
) -> Outcome {
    use idem_client::KeyState;
    match KeyState::from_reply(state.status, &state.body, payload) {
        Some(KeyState::Done { status, body }) if status == first.status && body == first.body => {
            pass()
        }
        Some(KeyState::Done { status, .. }) => fail(
            format!(
                "done with {status} and another body than the first answer ({})",
                first.status
            ),
            shown,
        ),
        Some(KeyState::BoundToAnotherRequest) => fail(
            "the SDK reads it as another request's: the fingerprint it names is not the one \
             of (operation, the JSON body), so its reconcile would refuse its own answer",
            shown,
        ),
        Some(other) => fail(format!("the SDK reads {other:?}, not done"), shown),
        None => fail(
            format!(
                "the SDK cannot read a {} answer as a key state",
                state.status
            ),
            shown,
        ),
    }
}

/// Whether `again` is `first` byte for byte: status, content type and body.
fn same_answer(first: &Answer, again: &Answer, a: &Exchange, b: &Exchange) -> Outcome {
    if first.status != again.status {
        return fail(
            format!("status {} then {}", first.status, again.status),
            &[a, b],
        );
    }
    if first.header("content-type") != again.header("content-type") {
        return fail(
            format!(
                "content type {:?} then {:?}",
                first.header("content-type"),
                again.header("content-type")
            ),
            &[a, b],
        );
    }
    if first.body != again.body {
        return fail("another body the second time", &[a, b]);
    }
    pass()
}

fn marked_replay(answer: &Answer, exchange: &Exchange) -> Outcome {
    if answer.is_marked_replay() {
        pass()
    } else {
        fail("no Idempotent-Replayed: true on the replay", &[exchange])
    }
}

fn expect_status(exchange: &Exchange, status: u16, shown: &[&Exchange]) -> Outcome {
    match exchange.answer() {
        Ok(a) if a.status == status => pass(),
        Ok(a) => fail(format!("expected {status}, got {}", a.status), shown),
        Err(e) => fail(e, shown),
    }
}

/// `body` as a JSON object with its members in reverse order and spaces between tokens, if
/// it is an object of two or more members.
fn reorder(body: &[u8]) -> Option<Vec<u8>> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let object = value.as_object()?;
    if object.len() < 2 {
        return None;
    }
    // serde_json reads members into name order; the original's first member is the name
    // written earliest. Descending order, unless that starts with the same member.
    let text = String::from_utf8_lossy(body);
    let position = |name: &String| {
        let quoted = serde_json::to_string(name).unwrap_or_default();
        text.find(&quoted).unwrap_or(usize::MAX)
    };
    let first = object.keys().min_by_key(|name| position(name));
    let mut members: Vec<(&String, &serde_json::Value)> = object.iter().collect();
    members.reverse();
    if members.first().map(|(name, _)| *name) == first {
        members.reverse();
    }
    let parts: Vec<String> = members
        .into_iter()
        .map(|(k, v)| {
            let name = serde_json::to_string(k).unwrap_or_default();
            let value = serde_json::to_string(v).unwrap_or_default();
            format!("{name} : {value}")
        })
        .collect();
    Some(format!("{{ {} }}", parts.join(" , ")).into_bytes())
}

/// What is wrong with a CORS exchange, if anything.
fn cors_verdict(
    origin: &str,
    requested: &[String],
    preflight: &Answer,
    answered: &Answer,
    shown: &[&Exchange],
) -> Outcome {
    let list = |answer: &Answer, name: &str| -> Vec<String> {
        answer
            .header(name)
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let allows_origin = |answer: &Answer| {
        answer
            .header("access-control-allow-origin")
            .is_some_and(|v| v == origin || v == "*")
    };
    if !(200..300).contains(&preflight.status) || !allows_origin(preflight) {
        return fail(
            format!(
                "the preflight got {} without allowing {origin}",
                preflight.status
            ),
            shown,
        );
    }
    let allowed = list(preflight, "access-control-allow-headers");
    let missing: Vec<&String> = requested
        .iter()
        .filter(|h| !allowed.contains(h) && !allowed.iter().any(|a| a == "*"))
        .collect();
    if !missing.is_empty() {
        return fail(
            format!("the preflight does not allow the headers {missing:?}"),
            shown,
        );
    }
    if !allows_origin(answered) {
        return fail(format!("the answer does not allow {origin}"), shown);
    }
    let exposed = list(answered, "access-control-expose-headers");
    let needed = ["retry-after", "idempotent-replayed"];
    let hidden: Vec<&str> = needed
        .into_iter()
        .filter(|h| !exposed.iter().any(|e| e == h || e == "*"))
        .collect();
    if hidden.is_empty() {
        pass()
    } else {
        fail(
            format!("the answer does not expose {hidden:?} to the page"),
            shown,
        )
    }
}

/// What makes `answer` not an RFC 9457 problem, if anything.
fn problem_flaw(answer: &Answer) -> Option<String> {
    let content_type = answer.header("content-type").unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or_default().trim();
    if !media.eq_ignore_ascii_case(idem_store::http::PROBLEM_JSON) {
        return Some(format!(
            "a {} answer's content type is {content_type:?}",
            answer.status
        ));
    }
    let Ok(serde_json::Value::Object(problem)) = serde_json::from_slice(&answer.body) else {
        return Some(format!(
            "a {} problem's body is not a JSON object",
            answer.status
        ));
    };
    if let Some(status) = problem.get("status") {
        if status.as_u64() != Some(u64::from(answer.status)) {
            return Some(format!("a {} problem says status {status}", answer.status));
        }
    }
    if let Some(kind) = problem.get("type") {
        if !kind.is_string() {
            return Some(format!(
                "a {} problem's type is not a string",
                answer.status
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, headers: &[(&str, &str)], body: &str) -> Answer {
        Answer {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_reordered_body_is_the_same_json_in_another_order() {
        let body = br#"{"cart":"c-1","amount":42}"#;
        let reordered = reorder(body).unwrap();
        assert_ne!(reordered, body);
        let a: serde_json::Value = serde_json::from_slice(body).unwrap();
        let b: serde_json::Value = serde_json::from_slice(&reordered).unwrap();
        assert_eq!(a, b);
        assert!(String::from_utf8(reordered)
            .unwrap()
            .starts_with(r#"{ "amount""#));
        let sorted = br#"{"amount":42,"cart":"c-1"}"#;
        let reordered = String::from_utf8(reorder(sorted).unwrap()).unwrap();
        assert!(reordered.starts_with(r#"{ "cart""#), "{reordered}");
        assert_eq!(reorder(br#"{"one":1}"#), None);
        assert_eq!(reorder(b"amount=1&cart=2"), None);
    }

    #[test]
    fn a_problem_needs_its_media_type_an_object_and_a_matching_status() {
        let json = [("content-type", "application/problem+json")];
        assert_eq!(
            problem_flaw(&answer(422, &json, r#"{"type":"/x","status":422}"#)),
            None
        );
        assert!(
            problem_flaw(&answer(422, &[("content-type", "application/json")], "{}")).is_some()
        );
        assert!(problem_flaw(&answer(422, &json, r#"{"status":400}"#)).is_some());
        assert!(problem_flaw(&answer(422, &json, "[1]")).is_some());
    }

    #[test]
    fn cors_needs_the_key_allowed_and_both_headers_exposed() {
        let sent = Sent {
            method: "POST".into(),
            url: "http://x/".into(),
            headers: vec![],
            body: vec![],
        };
        let exchange = Exchange {
            sent,
            answer: Err("unused".into()),
        };
        let origin = "http://page";
        let requested = vec!["idempotency-key".to_owned()];
        let preflight = answer(
            204,
            &[
                ("access-control-allow-origin", origin),
                (
                    "access-control-allow-headers",
                    "content-type, idempotency-key",
                ),
            ],
            "",
        );
        let good = answer(
            201,
            &[
                ("access-control-allow-origin", origin),
                (
                    "access-control-expose-headers",
                    "Retry-After, Idempotent-Replayed",
                ),
            ],
            "",
        );
        let verdict =
            |p: &Answer, a: &Answer| cors_verdict(origin, &requested, p, a, &[&exchange]).verdict;
        assert_eq!(verdict(&preflight, &good), Verdict::Pass);
        let hidden = answer(201, &[("access-control-allow-origin", origin)], "");
        assert!(matches!(verdict(&preflight, &hidden), Verdict::Fail { .. }));
        let no_key = answer(204, &[("access-control-allow-origin", origin)], "");
        assert!(matches!(verdict(&no_key, &good), Verdict::Fail { .. }));
    }
}
