//! What to check and how: the target, the request template, and the optional parts a case
//! needs (a second tenant, a second endpoint, how to make the work slow, how to observe the
//! effect, an origin for CORS). Read from a JSON file; every field but `target` and
//! `request` has a default, listed with its meaning in the repository's `docs/check.md`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::proxy::FaultMix;

/// The most chaos operations one run drives (their `{{n}}` values stay distinct).
pub const MAX_OPERATIONS: usize = 800;

/// The whole configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The server's base URL, `http://host:port` (a path prefix is kept).
    pub target: String,
    /// The keyed request the checks send, with `{{fresh}}` / `{{n}}` placeholders.
    pub request: Template,
    /// The key header's name and form.
    #[serde(default)]
    pub key: KeyHeader,
    /// Headers that make a request another tenant's (they replace the template's headers
    /// of the same names). Without them the isolation case is not checked.
    #[serde(default)]
    pub second_tenant: Option<BTreeMap<String, String>>,
    /// Another keyed endpoint (its method, path, and optionally headers and body; the rest
    /// from `request`). Without it the other-endpoint case is not checked.
    #[serde(default)]
    pub second_endpoint: Option<Endpoint>,
    /// A request sent once before the checks (to arm slowness, create the tenant, …).
    #[serde(default)]
    pub setup: Option<Endpoint>,
    /// How to make the work slow enough for a duplicate to arrive while the first request
    /// runs. Without it the concurrent-duplicate case is not checked.
    #[serde(default)]
    pub slow: Option<Slow>,
    /// How to count the effects (charges, orders, emails). Without it the effect cases and
    /// the chaos phase's per-operation checks are not checked.
    #[serde(default)]
    pub effects: Option<Effects>,
    /// The key-state endpoint idem's SDK asks when an operation's outcome is unknown
    /// (`reconcile`). Without it the key-state cases are not checked.
    #[serde(default)]
    pub key_state: Option<KeyStateEndpoint>,
    /// An origin the browser checkout runs on; the CORS case is checked only with one.
    #[serde(default)]
    pub origin: Option<String>,
    /// Whether the server says its error bodies are RFC 9457 problems
    /// (`application/problem+json`); the problem case is checked only then.
    #[serde(default)]
    pub problem_json: bool,
    /// The chaos phase.
    #[serde(default)]
    pub chaos: Chaos,
}

/// A request, with placeholders: `{{fresh}}` (a string unique to each logical operation) and
/// `{{n}}` (an integer unique to each operation, for a numeric field).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Template {
    /// `POST`, `PUT`, `PATCH`, `DELETE`.
    #[serde(default = "post")]
    pub method: String,
    /// The path (and query) after the target.
    pub path: String,
    /// Headers sent with it (the tenant's credentials, `Content-Type`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The body; none by default.
    #[serde(default)]
    pub body: Option<String>,
}

fn post() -> String {
    "POST".to_owned()
}

/// Another request: the fields it sets replace the template's.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    /// The method (the template's by default).
    #[serde(default)]
    pub method: Option<String>,
    /// The path.
    pub path: String,
    /// Headers added to (or replacing) the template's.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The body (the template's by default).
    #[serde(default)]
    pub body: Option<String>,
}

/// The key-state endpoint: `GET` of a path with `{key}` where the key goes (as minted, not in
/// its header form), idem-server's `/api/keys/{key}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyStateEndpoint {
    /// The path, with `{key}`.
    pub path: String,
    /// Headers for it (the template's by default: the same tenant asks).
    #[serde(default)]
    pub headers: Option<BTreeMap<String, String>>,
}

/// The key header.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KeyHeader {
    /// Its name.
    pub name: String,
    /// How a key is written in it.
    pub form: KeyForm,
}

impl Default for KeyHeader {
    fn default() -> Self {
        Self {
            name: idem_store::http::IDEMPOTENCY_KEY.to_owned(),
            form: KeyForm::SfString,
        }
    }
}

/// How a key is written in its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyForm {
    /// A structured-field string, `"…"` (the IETF draft's form).
    SfString,
    /// The key as it is (what most servers read).
    Token,
}

impl KeyForm {
    /// `key` as this form writes it (the sf-string as idem-store writes it).
    pub fn write(self, key: &str) -> String {
        match self {
            KeyForm::SfString => idem_store::http::format_key_header(key),
            KeyForm::Token => key.to_owned(),
        }
    }
}

/// How to make the first of two concurrent requests slow. One of the ways is enough.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slow {
    /// Headers that make the server take its time (`X-Delay-Ms: 1500`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A body (same placeholders) whose fields make the work slow.
    #[serde(default)]
    pub body: Option<String>,
    /// A request that arms slowness before the case (as idem-server's demo faults do).
    #[serde(default)]
    pub setup: Option<Endpoint>,
    /// The work always takes at least this long (a far payment provider): no arming needed.
    #[serde(default)]
    pub always_ms: Option<u64>,
    /// How long after the first request the duplicate is sent (ms).
    #[serde(default = "duplicate_after_ms")]
    pub duplicate_after_ms: u64,
}

fn duplicate_after_ms() -> u64 {
    100
}

/// How to count effects: a URL answering a number or a list, or a command printing a number.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Effects {
    /// A URL (absolute, or a path after the target) answering JSON.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers for it (its own credentials).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A JSON pointer to the list of effects in the answer (`""`: the answer is the list);
    /// without it the answer (or what `count` points at) is a number.
    #[serde(default)]
    pub list: Option<String>,
    /// A JSON pointer to a number in the answer (when there is no list).
    #[serde(default)]
    pub count: Option<String>,
    /// The field of a listed effect that carries its operation's `{{fresh}}` or `{{n}}`
    /// value: with it, effects are counted per operation (at most one each), not in total.
    #[serde(default)]
    pub field: Option<String>,
    /// Only listed effects whose fields have these values count (`{"outcome": "charged"}`:
    /// a ledger that also lists declines).
    #[serde(default)]
    pub matching: BTreeMap<String, serde_json::Value>,
    /// Whether the observer sees only the first tenant's effects (its own view of the
    /// ledger); by default it sees every tenant's, and the isolation case counts the second
    /// tenant's effect too.
    #[serde(default)]
    pub scoped_to_tenant: bool,
    /// A shell command printing the number of effects (instead of a URL).
    #[serde(default)]
    pub command: Option<String>,
    /// How long to wait for effects to settle before reading them (ms).
    #[serde(default = "settle_ms")]
    pub settle_ms: u64,
}

fn settle_ms() -> u64 {
    200
}

/// The chaos phase's settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Chaos {
    /// Run it.
    pub enabled: bool,
    /// Logical operations.
    pub operations: usize,
    /// Operations in flight at once.
    pub concurrency: usize,
    /// The seed of the fault draws, fresh values and backoff; a random one when absent
    /// (printed, with the command that reruns it).
    pub seed: Option<u64>,
    /// How often each fault is drawn.
    pub mix: FaultMix,
    /// One attempt's timeout (ms); a held answer is held past it.
    pub attempt_timeout_ms: u64,
    /// How long an operation keeps retrying (ms).
    pub retry_window_ms: u64,
    /// The bound on the whole phase (ms): operations still running then are reported.
    pub max_ms: u64,
}

impl Default for Chaos {
    fn default() -> Self {
        Self {
            enabled: true,
            operations: 40,
            concurrency: 4,
            seed: None,
            mix: FaultMix::CHAOS,
            attempt_timeout_ms: 2_000,
            retry_window_ms: 30_000,
            max_ms: 120_000,
        }
    }
}

/// Why a configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The JSON is not a configuration.
    #[error("{path} is not a configuration: {source}")]
    Parse {
        /// The file.
        path: String,
        /// Why.
        source: serde_json::Error,
    },
    /// A value is out of range or inconsistent.
    #[error("{0}")]
    Invalid(String),
}

impl Config {
    /// Read a configuration file.
    pub fn from_file(path: &str) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let config: Config = serde_json::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.to_owned(),
            source,
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Check what serde cannot: the target is an `http://` URL, the numbers make sense.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |why: String| Err(ConfigError::Invalid(why));
        if !self.target.starts_with("http://") {
            return invalid(format!(
                "target {:?} is not an http:// URL (idem-check and its fault proxy speak plain \
                 HTTP: point it at the server's own listener, not at TLS in front of it)",
                self.target
            ));
        }
        if reqwest::Url::parse(&self.target).is_err() {
            return invalid(format!("target {:?} is not a URL", self.target));
        }
        if !self.request.path.starts_with('/') {
            return invalid(format!(
                "request.path {:?} must start with /",
                self.request.path
            ));
        }
        if reqwest::Method::from_bytes(self.request.method.as_bytes()).is_err() {
            return invalid(format!(
                "request.method {:?} is not a method",
                self.request.method
            ));
        }
        if self.chaos.operations > MAX_OPERATIONS {
            return invalid(format!(
                "chaos.operations is {}, at most {}",
                self.chaos.operations, MAX_OPERATIONS
            ));
        }
        if self.chaos.concurrency == 0 {
            return invalid("chaos.concurrency must be at least 1".to_owned());
        }
        if self.chaos.attempt_timeout_ms == 0 {
            return invalid("chaos.attempt_timeout_ms must be at least 1".to_owned());
        }
        if let Some(key_state) = &self.key_state {
            if !key_state.path.contains("{key}") {
                return invalid(format!(
                    "key_state.path {:?} has no {{key}}",
                    key_state.path
                ));
            }
        }
        if let Some(effects) = &self.effects {
            if effects.url.is_none() && effects.command.is_none() {
                return invalid("effects needs a url or a command".to_owned());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minimal_file_takes_every_default() {
        let config: Config = serde_json::from_str(
            r#"{"target": "http://127.0.0.1:1", "request": {"path": "/pay", "body": "{}"}}"#,
        )
        .unwrap();
        config.validate().unwrap();
        assert_eq!(config.request.method, "POST");
        assert_eq!(config.key.name, "Idempotency-Key");
        assert_eq!(config.key.form, KeyForm::SfString);
        assert!(config.chaos.enabled);
        assert_eq!(config.chaos.mix, FaultMix::CHAOS);
    }

    #[test]
    fn an_unknown_field_or_a_bad_target_is_refused_with_its_name() {
        let unknown = serde_json::from_str::<Config>(
            r#"{"target": "http://x", "request": {"path": "/"}, "retries": 3}"#,
        )
        .unwrap_err();
        assert!(unknown.to_string().contains("retries"), "{unknown}");
        let config: Config =
            serde_json::from_str(r#"{"target": "ftp://x", "request": {"path": "/"}}"#).unwrap();
        let refused = config.validate().unwrap_err().to_string();
        assert!(refused.contains("ftp://x"), "{refused}");
        let mut config: Config =
            serde_json::from_str(r#"{"target": "http://x", "request": {"path": "/"}}"#).unwrap();
        config.chaos.operations = 801;
        let refused = config.validate().unwrap_err().to_string();
        assert!(refused.contains("801"), "{refused}");
    }

    #[test]
    fn keys_are_written_in_their_form() {
        assert_eq!(KeyForm::SfString.write(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(KeyForm::Token.write("abc"), "abc");
    }
}
