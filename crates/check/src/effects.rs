//! Counting what the target did: a URL answering a number or a list of effects (a ledger, the
//! orders), or a command printing a number. With a list and a field naming each effect's
//! operation, effects are counted per operation; otherwise in total, and cases compare the
//! total before and after.

use std::time::Duration;

use serde_json::Value;

use crate::{
    config::Effects,
    exchange::{join, send_with, Fresh, Sent},
};

/// The effect observer of a run.
pub struct Observer {
    effects: Effects,
    target: String,
    http: reqwest::Client,
}

/// One reading: every effect, and each asked-about operation's when effects are attributed.
pub type Counts = (u64, Vec<Option<u64>>);

/// What one observation saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Every effect.
    pub total: u64,
    /// The effects that name the operation asked about, when effects are listed with a
    /// field; `None` otherwise.
    pub of_operation: Option<u64>,
}

impl Observer {
    /// An observer for `effects` of `target`.
    pub fn new(effects: Effects, target: &str) -> Observer {
        Observer {
            effects,
            target: target.to_owned(),
            http: reqwest::Client::builder()
                .no_proxy()
                .build()
                .unwrap_or_default(),
        }
    }

    /// Wait for effects under way to land (the configured settle time).
    pub async fn settle(&self) {
        tokio::time::sleep(Duration::from_millis(self.effects.settle_ms)).await;
    }

    /// Count the effects, and those of each of `ops` when they are attributed.
    pub async fn count(&self, ops: &[&Fresh]) -> Result<Counts, String> {
        if let Some(command) = &self.effects.command {
            let total = run_command(command).await?;
            return Ok((total, ops.iter().map(|_| None).collect()));
        }
        let Some(url) = &self.effects.url else {
            return Err("effects: neither a url nor a command".to_owned());
        };
        let sent = Sent {
            method: "GET".to_owned(),
            url: join(&self.target, url),
            headers: self
                .effects
                .headers
                .iter()
                .map(|(n, v)| (n.clone(), v.clone()))
                .collect(),
            body: Vec::new(),
        };
        let answer = send_with(&self.http, &sent, Duration::from_secs(30)).await?;
        if !answer.is_success() {
            return Err(format!("effects: {} answered {}", sent.url, answer.status));
        }
        let json: Value = serde_json::from_slice(&answer.body)
            .map_err(|e| format!("effects: {} is not JSON: {e}", sent.url))?;
        self.read(&json, ops)
    }

    /// The counts in `json`, an answer of the effects URL.
    fn read(&self, json: &Value, ops: &[&Fresh]) -> Result<Counts, String> {
        if let Some(pointer) = &self.effects.list {
            let list = json
                .pointer(pointer)
                .and_then(Value::as_array)
                .ok_or_else(|| format!("effects: no list at {pointer:?}"))?;
            let matching = &self.effects.matching;
            let list: Vec<&Value> = list
                .iter()
                .filter(|item| {
                    matching
                        .iter()
                        .all(|(field, value)| item.pointer(&pointer_of(field)) == Some(value))
                })
                .collect();
            let total = list.len() as u64;
            let per = ops
                .iter()
                .map(|op| {
                    let field = self.effects.field.as_ref()?;
                    let of = list.iter().filter(|item| {
                        item.pointer(&pointer_of(field))
                            .is_some_and(|v| op.names(v))
                    });
                    Some(of.count() as u64)
                })
                .collect();
            return Ok((total, per));
        }
        let pointer = self.effects.count.clone().unwrap_or_default();
        let total = json
            .pointer(&pointer)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("effects: no count at {pointer:?}"))?;
        Ok((total, ops.iter().map(|_| None).collect()))
    }

    /// One observation for one operation.
    pub async fn seen(&self, op: &Fresh) -> Result<Seen, String> {
        let (total, per) = self.count(&[op]).await?;
        Ok(Seen {
            total,
            of_operation: per.into_iter().next().flatten(),
        })
    }
}

/// A field name as a JSON pointer (`amount` → `/amount`; a pointer stays one).
fn pointer_of(field: &str) -> String {
    if field.starts_with('/') {
        field.to_owned()
    } else {
        format!("/{field}")
    }
}

/// Run `command` with `sh -c`; the number it printed.
async fn run_command(command: &str) -> Result<u64, String> {
    let output = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .output()
        .await
        .map_err(|e| format!("effects: cannot run {command:?}: {e}"))?;
    if !output.status.success() {
        return Err(format!("effects: {command:?} exited {}", output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    text.trim().parse().map_err(|_| {
        format!(
            "effects: {command:?} printed {:?}, not a number",
            text.trim()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observer(list: Option<&str>, field: Option<&str>, count: Option<&str>) -> Observer {
        Observer::new(
            Effects {
                url: Some("/ledger".to_owned()),
                list: list.map(str::to_owned),
                field: field.map(str::to_owned),
                count: count.map(str::to_owned),
                ..Effects::default()
            },
            "http://127.0.0.1:1",
        )
    }

    #[test]
    fn listed_effects_are_counted_per_operation_by_their_field() {
        let (a, b, c) = (Fresh::new(1, 1), Fresh::new(1, 2), Fresh::new(1, 3));
        let ledger = serde_json::json!({"rows": [
            {"amount": a.n}, {"amount": a.n}, {"amount": b.n}, {"other": 1},
            {"amount": c.n, "outcome": "declined"}
        ]});
        let mut listed = observer(Some("/rows"), Some("amount"), None);
        let seen = listed.read(&ledger, &[&a, &b, &c]).unwrap();
        assert_eq!(seen, (5, vec![Some(2), Some(1), Some(1)]));
        listed
            .effects
            .matching
            .insert("outcome".into(), serde_json::json!("declined"));
        let seen = listed.read(&ledger, &[&a, &b, &c]).unwrap();
        assert_eq!(seen, (1, vec![Some(0), Some(0), Some(1)]));
    }

    #[test]
    fn a_count_is_read_where_it_points_and_its_absence_is_an_error() {
        let a = Fresh::new(1, 1);
        let json = serde_json::json!({"charges": 3});
        let seen = observer(None, None, Some("/charges")).read(&json, &[&a]);
        assert_eq!(seen.unwrap(), (3, vec![None]));
        let missing = observer(None, None, Some("/nope")).read(&json, &[&a]);
        assert!(missing.unwrap_err().contains("/nope"));
        let not_a_list = observer(Some("/charges"), None, None).read(&json, &[&a]);
        assert!(not_a_list.is_err());
    }

    #[tokio::test]
    async fn a_command_prints_the_count() {
        let observer = Observer::new(
            Effects {
                command: Some("echo 5".to_owned()),
                ..Effects::default()
            },
            "http://127.0.0.1:1",
        );
        assert_eq!(observer.count(&[]).await.unwrap().0, 5);
        let bad = Observer::new(
            Effects {
                command: Some("echo five".to_owned()),
                ..Effects::default()
            },
            "http://127.0.0.1:1",
        );
        assert!(bad.count(&[]).await.unwrap_err().contains("five"));
    }
}
