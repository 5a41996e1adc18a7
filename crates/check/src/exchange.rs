//! One request to the target and what came back, kept whole so a failed case can show the
//! exact exchange; and the fresh values one logical operation puts in its template.

use std::{fmt::Write as _, time::Duration};

use idem_client::KeyMinter;
use rand_chacha::ChaCha8Rng;

use crate::config::{Config, Endpoint, Template};

/// What one logical operation puts in the template's placeholders: `{{fresh}}` and `{{n}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fresh {
    /// `{{fresh}}`: a string no other operation of any run uses.
    pub text: String,
    /// `{{n}}`: an integer no other operation of this run uses (below 10^8, so it fits an
    /// amount in cents).
    pub n: u64,
}

impl Fresh {
    /// The values of operation `index` of the run seeded `seed`.
    pub fn new(seed: u64, index: u64) -> Fresh {
        Fresh {
            text: format!("idem-check-{seed:016x}-{index}"),
            n: (seed % 90_000 + 10_000) * 1_000 + index % 1_000,
        }
    }

    /// `template` with its placeholders filled.
    pub fn fill(&self, template: &str) -> String {
        template
            .replace("{{fresh}}", &self.text)
            .replace("{{n}}", &self.n.to_string())
    }

    /// Whether `value` (a listed effect's field) names this operation.
    pub fn names(&self, value: &serde_json::Value) -> bool {
        match value {
            serde_json::Value::String(s) => *s == self.text || *s == self.n.to_string(),
            serde_json::Value::Number(n) => n.as_u64() == Some(self.n),
            _ => false,
        }
    }
}

/// A fresh key, minted as idem's SDK mints one (a UUID v4), from the run's generator so a
/// seed reproduces the run.
pub fn new_key(rng: &mut ChaCha8Rng) -> String {
    idem_client::RngKeys(rng).mint().hyphenated().to_string()
}

/// A request as sent.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The method.
    pub method: String,
    /// The whole URL.
    pub url: String,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Sent {
    /// Set header `name` to `value`, replacing any of the same name (in any case).
    pub fn set_header(&mut self, name: &str, value: String) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value));
    }
}

/// An answer as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The status.
    pub status: u16,
    /// The headers, names lowercase.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// A header's value (`name` lowercase), the first if repeated.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// Whether the answer is marked as a replay (`Idempotent-Replayed: true`).
    pub fn is_marked_replay(&self) -> bool {
        self.header(&idem_store::http::IDEMPOTENT_REPLAYED.to_ascii_lowercase())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }
}

/// One request and its answer (or why there was none).
#[derive(Debug, Clone)]
pub struct Exchange {
    /// What was sent.
    pub sent: Sent,
    /// What came back.
    pub answer: Result<Answer, String>,
}

impl Exchange {
    /// The answer, or a failure naming the transport error.
    pub fn answer(&self) -> Result<&Answer, String> {
        self.answer
            .as_ref()
            .map_err(|e| format!("no answer to {} {}: {e}", self.sent.method, self.sent.url))
    }

    /// The exchange as text, for a failed case: request line, headers, body, then the
    /// answer's status, headers and body (bodies cut at 2,000 bytes).
    pub fn render(&self) -> String {
        let mut out = format!("> {} {}\n", self.sent.method, self.sent.url);
        for (name, value) in &self.sent.headers {
            let _ = writeln!(out, "> {name}: {value}");
        }
        if !self.sent.body.is_empty() {
            let _ = writeln!(out, ">\n> {}", excerpt(&self.sent.body));
        }
        match &self.answer {
            Ok(answer) => {
                let _ = writeln!(out, "< {}", answer.status);
                for (name, value) in &answer.headers {
                    let _ = writeln!(out, "< {name}: {value}");
                }
                if !answer.body.is_empty() {
                    let _ = writeln!(out, "<\n< {}", excerpt(&answer.body));
                }
            }
            Err(e) => {
                let _ = writeln!(out, "< (no answer: {e})");
            }
        }
        out
    }
}

/// `bytes` as text, cut at 2,000 bytes.
fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(2_000)];
    let mut text = String::from_utf8_lossy(cut).into_owned();
    if bytes.len() > cut.len() {
        let _ = write!(text, "… ({} bytes)", bytes.len());
    }
    text
}

/// The target and a client for it.
#[derive(Clone)]
pub struct Target {
    config: Config,
    http: reqwest::Client,
    /// `Repeatability-First-Sent` for every keyed request of the run: when it started, so
    /// never later than an operation's first send (as the SDK sends it; a server with the
    /// expired-key guard reads it, others ignore it, and the CORS case asks for it).
    first_sent: String,
}

/// One attempt's timeout in the conformance phase.
const TIMEOUT: Duration = Duration::from_secs(30);

impl Target {
    /// A client for `config`'s target: one connection per request (so a request never
    /// rides a connection the proxy already failed), no system proxy.
    pub fn new(config: Config) -> Result<Target, String> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| format!("http client: {e}"))?;
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let first_sent = idem_store::first_sent::header_value(started);
        Ok(Target {
            config,
            http,
            first_sent,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The template's request for `op`, with `key` (already in its header form) if any,
    /// to the target or to `base` (the fault proxy) when given.
    pub fn keyed(&self, op: &Fresh, key: Option<&str>) -> Sent {
        self.request(&self.config.request, None, op, key)
    }

    /// `endpoint`'s request (the template's fields where it sets none).
    pub fn endpoint(&self, endpoint: &Endpoint, op: &Fresh, key: Option<&str>) -> Sent {
        self.request(&self.config.request, Some(endpoint), op, key)
    }

    fn request(
        &self,
        template: &Template,
        endpoint: Option<&Endpoint>,
        op: &Fresh,
        key: Option<&str>,
    ) -> Sent {
        let method = endpoint
            .and_then(|e| e.method.clone())
            .unwrap_or_else(|| template.method.clone())
            .to_ascii_uppercase();
        let path = endpoint.map_or(&template.path, |e| &e.path);
        let body = endpoint
            .and_then(|e| e.body.as_ref())
            .or(template.body.as_ref())
            .map(|b| op.fill(b).into_bytes())
            .unwrap_or_default();
        let mut sent = Sent {
            method,
            url: join(&self.config.target, &op.fill(path)),
            headers: Vec::new(),
            body,
        };
        let extra = endpoint.map(|e| &e.headers).into_iter().flatten();
        for (name, value) in template.headers.iter().chain(extra) {
            sent.set_header(name, op.fill(value));
        }
        if let Some(key) = key {
            sent.set_header(&self.config.key.name, key.to_owned());
            sent.set_header(idem_store::first_sent::HEADER, self.first_sent.clone());
        }
        sent
    }

    /// `key` in the configured header form.
    pub fn key_header(&self, key: &str) -> String {
        self.config.key.form.write(key)
    }

    /// Send `sent` and wait for the whole answer.
    pub async fn send(&self, sent: Sent) -> Exchange {
        let answer = send_with(&self.http, &sent, TIMEOUT).await;
        Exchange { sent, answer }
    }
}

/// `base` + `path` (no doubled slash).
pub fn join(base: &str, path: &str) -> String {
    if path.starts_with("http://") || path.starts_with("https://") {
        return path.to_owned();
    }
    format!("{}{}", base.trim_end_matches('/'), path)
}

/// Send `sent` with `http` within `timeout`; the whole answer or the transport error.
pub async fn send_with(
    http: &reqwest::Client,
    sent: &Sent,
    timeout: Duration,
) -> Result<Answer, String> {
    let method = reqwest::Method::from_bytes(sent.method.as_bytes())
        .map_err(|_| format!("{:?} is not a method", sent.method))?;
    let mut request = http.request(method, &sent.url).timeout(timeout);
    for (name, value) in &sent.headers {
        request = request.header(name, value);
    }
    if !sent.body.is_empty() {
        request = request.body(sent.body.clone());
    }
    let response = request.send().await.map_err(|e| error_chain(&e))?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| {
            let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
            (n.as_str().to_owned(), value)
        })
        .collect();
    let body = response.bytes().await.map_err(|e| error_chain(&e))?;
    Ok(Answer {
        status,
        headers,
        body: body.to_vec(),
    })
}

/// An error and its causes on one line (reqwest's own message hides the cause).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_values_fill_every_placeholder_and_differ_per_operation() {
        let (a, b) = (Fresh::new(7, 1), Fresh::new(7, 2));
        let body = r#"{"cart":"{{fresh}}","amount":{{n}},"again":"{{fresh}}"}"#;
        let filled = a.fill(body);
        assert!(!filled.contains("{{"), "{filled}");
        assert_ne!(filled, b.fill(body));
        assert!(a.n < 100_000_000 && a.n != b.n);
        assert!(a.names(&serde_json::json!(a.n)));
        assert!(a.names(&serde_json::json!(a.text)));
        assert!(!a.names(&serde_json::json!(b.n)));
    }

    #[test]
    fn a_path_joins_its_target_once() {
        assert_eq!(join("http://h:1/", "/pay"), "http://h:1/pay");
        assert_eq!(join("http://h:1/api", "/pay"), "http://h:1/api/pay");
        assert_eq!(join("http://h:1", "http://o:2/x"), "http://o:2/x");
    }
}
