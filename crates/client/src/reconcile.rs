//! Reconciling an operation whose outcome is not known, by asking the server what became of
//! its key: the one place the key-state endpoint's answer (idem-server's
//! `GET /api/keys/{key}`) is read. [`Operation::handle_key_state`](crate::Operation::handle_key_state)
//! settles the operation from it; the JS bindings send the request.
//!
//! The key's state is the state of whichever request claimed the key first. An answer that
//! names that request (idem-server's `operation` and `fingerprint`) is checked against this
//! operation's own payload with the server's fingerprint rule ([`idem_store::Fingerprint`]):
//! another request's answer is never taken for this one's.

use idem_store::Fingerprint;

use crate::payload::CanonicalPayload;
use crate::Json;

/// What the server knows about a key, for the tenant that asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyState {
    /// The work finished: the saved answer, exactly what a retry would replay.
    Done {
        /// The saved HTTP status.
        status: u16,
        /// The saved body.
        body: Vec<u8>,
    },
    /// A worker holds (or held) the claim: the work may still commit.
    InFlight {
        /// How long ago the current lease was taken, in ms.
        lease_age_ms: u64,
        /// How long until a retry may take the claim over, in ms (0: stale).
        lease_left_ms: u64,
    },
    /// The claim was released after a failure that saved no answer (a declined charge under
    /// the server's `release-claim` policy, or a charge whose outcome the server could not
    /// learn): nothing is committed under the key, and the key stays bound to this operation's
    /// payload until the server's retention ends. The work did not complete, and the key is
    /// free for this same payload: sending again with the same key and bytes runs it again
    /// from where it stopped (idem-server resumes the same order and charges under the same
    /// downstream key, so money moves at most once); another payload under the key is 422.
    Released,
    /// No live claim under this key: no attempt reached the server, or it is past the server's
    /// retention (or the server deletes a released claim, as idem-server before its schema
    /// version 3 did).
    NotFound,
    /// The key is bound to another request (another body, or another endpoint): this payload
    /// never ran under it, and any attempt with it would be refused (422), whatever state the
    /// other request's work is in. Only learned from a server that names the request holding
    /// the key (idem-server's `operation` and `fingerprint` members); from one that does not,
    /// the state is taken as this payload's.
    BoundToAnotherRequest,
}

impl KeyState {
    /// Reads the endpoint's answer about the key `payload` was sent under: 404, or 200 with
    /// `{"state": "done", "status", "body"}` (`body_base64` for a body that is not UTF-8),
    /// `{"state": "in_flight", "lease_age_ms", "lease_left_ms"}` or `{"state": "released"}`;
    /// other members are ignored. When the answer also names the request holding the key
    /// (`"operation"`, the endpoint's operation such as `POST /api/checkout`, and
    /// `"fingerprint"`, 64 hex digits), a fingerprint other than `payload`'s under that
    /// operation is [`KeyState::BoundToAnotherRequest`]. `None` for anything else (401, a 5xx,
    /// a body that is not a key state, a malformed binding): nothing was learned.
    pub fn from_reply(status: u16, body: &[u8], payload: &CanonicalPayload) -> Option<KeyState> {
        if status == 404 {
            return Some(KeyState::NotFound);
        }
        if status != 200 {
            return None;
        }
        let state = Json::parse(core::str::from_utf8(body).ok()?)?;
        match (state.get("operation"), state.get("fingerprint")) {
            (None, None) => {}
            (Some(Json::String(operation)), Some(Json::String(holder))) => {
                let holder = Fingerprint::from_hex(holder)?;
                if holder != Fingerprint::of_canonical(operation, payload.json.as_bytes()) {
                    // Checked before the state is read: whatever the other request's work
                    // did, none of it is this payload's.
                    state.get("state")?.as_str()?;
                    return Some(KeyState::BoundToAnotherRequest);
                }
            }
            _ => return None,
        }
        let number = |name: &str| state.get(name).and_then(Json::as_u64);
        match state.get("state")?.as_str()? {
            "in_flight" => Some(KeyState::InFlight {
                lease_age_ms: number("lease_age_ms")?,
                lease_left_ms: number("lease_left_ms")?,
            }),
            "released" => Some(KeyState::Released),
            "done" => {
                let status = u16::try_from(number("status")?).ok()?;
                let body = match (state.get("body"), state.get("body_base64")) {
                    (Some(Json::String(text)), _) => text.clone().into_bytes(),
                    (_, Some(Json::String(encoded))) => decode_base64(encoded)?,
                    _ => return None,
                };
                Some(KeyState::Done { status, body })
            }
            _ => None,
        }
    }
}

/// Standard base64 (RFC 4648 §4, `=` padding optional); `None` for anything else.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let padding = bytes.iter().rev().take_while(|&&b| b == b'=').count();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in bytes.iter().take(bytes.len() - padding) {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    // A lone 6-bit group cannot end a valid encoding.
    (bits < 6).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload() -> CanonicalPayload {
        CanonicalPayload::from_canonical(r#"{"cart":"c1"}"#.to_owned())
    }

    #[test]
    fn reads_each_state_of_idem_servers_answer() {
        // As idem-server's `GET /api/keys/{key}` writes them (crates/server/README.md).
        let done = br#"{"state":"done","key":"k","status":201,"content_type":"application/json","headers":[["Location","/api/orders/12"]],"body":"{\"order\":12,\"status\":\"paid\"}","created_at":1,"expires_at":2}"#;
        assert_eq!(
            KeyState::from_reply(200, done, &payload()),
            Some(KeyState::Done {
                status: 201,
                body: br#"{"order":12,"status":"paid"}"#.to_vec()
            })
        );
        let in_flight = br#"{"state":"in_flight","key":"k","lease_age_ms":850,"lease_left_ms":9150,"created_at":1}"#;
        assert_eq!(
            KeyState::from_reply(200, in_flight, &payload()),
            Some(KeyState::InFlight {
                lease_age_ms: 850,
                lease_left_ms: 9150
            })
        );
        let released = br#"{"state":"released","key":"k","created_at":1,"expires_at":86400001}"#;
        assert_eq!(
            KeyState::from_reply(200, released, &payload()),
            Some(KeyState::Released)
        );
        let problem = br#"{"type":"https://idem.dev/problems/not-found","status":404}"#;
        assert_eq!(
            KeyState::from_reply(404, problem, &payload()),
            Some(KeyState::NotFound)
        );
        let binary = br#"{"state":"done","status":200,"body_base64":"AP8Q"}"#;
        assert_eq!(
            KeyState::from_reply(200, binary, &payload()),
            Some(KeyState::Done {
                status: 200,
                body: vec![0, 255, 16]
            })
        );
    }

    #[test]
    fn anything_else_teaches_nothing() {
        for (status, body) in [
            (401, &br#"{"status":401}"#[..]),
            (503, b""),
            (200, b"not json"),
            (200, br#"{"state":"gone"}"#),
            (200, br#"{"state":"done","status":201}"#),
            (200, br#"{"state":"done","status":70000,"body":""}"#),
            (
                200,
                br#"{"state":"in_flight","lease_age_ms":-1,"lease_left_ms":0}"#,
            ),
            (
                200,
                br#"{"state":"done","status":200,"body_base64":"A*=="}"#,
            ),
            (200, br#"[]"#),
        ] {
            assert_eq!(
                KeyState::from_reply(status, body, &payload()),
                None,
                "{status} {body:?}"
            );
        }
    }

    /// An answer naming the request that holds the key, as idem-server writes it.
    fn bound(state: &str, operation: &str, fingerprint: &Fingerprint) -> Vec<u8> {
        format!(
            r#"{{"state":{state:?},"status":201,"body":"{{}}","lease_age_ms":1,"lease_left_ms":2,"operation":{operation:?},"fingerprint":"{}"}}"#,
            fingerprint.to_hex()
        )
        .into_bytes()
    }

    #[test]
    fn an_answer_bound_to_this_payload_is_its_own() {
        let mine = Fingerprint::of_canonical("POST /api/checkout", payload().json.as_bytes());
        let answer = bound("done", "POST /api/checkout", &mine);
        assert_eq!(
            KeyState::from_reply(200, &answer, &payload()),
            Some(KeyState::Done {
                status: 201,
                body: b"{}".to_vec()
            })
        );
        // Upper-case hex names the same request.
        let upper = String::from_utf8(answer)
            .unwrap()
            .replace(&mine.to_hex(), &mine.to_hex().to_uppercase());
        assert!(matches!(
            KeyState::from_reply(200, upper.as_bytes(), &payload()),
            Some(KeyState::Done { .. })
        ));
    }

    #[test]
    fn an_answer_bound_to_another_request_is_never_this_payloads() {
        let other_body = Fingerprint::of_canonical("POST /api/checkout", br#"{"cart":"c2"}"#);
        let other_endpoint =
            Fingerprint::of_canonical("POST /api/refund", payload().json.as_bytes());
        for state in ["done", "in_flight", "released"] {
            for holder in [&other_body, &other_endpoint] {
                assert_eq!(
                    KeyState::from_reply(
                        200,
                        &bound(state, "POST /api/checkout", holder),
                        &payload()
                    ),
                    Some(KeyState::BoundToAnotherRequest),
                    "{state}"
                );
            }
        }
        // The operation is part of the rule: this payload's body under the answer's other
        // operation is another request.
        let mine_elsewhere =
            Fingerprint::of_canonical("POST /api/refund", payload().json.as_bytes());
        assert_eq!(
            KeyState::from_reply(
                200,
                &bound("done", "POST /api/checkout", &mine_elsewhere),
                &payload()
            ),
            Some(KeyState::BoundToAnotherRequest)
        );
    }

    #[test]
    fn a_malformed_binding_teaches_nothing() {
        for body in [
            &br#"{"state":"done","status":201,"body":"","operation":"POST /x"}"#[..],
            br#"{"state":"done","status":201,"body":"","fingerprint":"00"}"#,
            br#"{"state":"done","status":201,"body":"","operation":"POST /x","fingerprint":"zz"}"#,
            br#"{"state":"done","status":201,"body":"","operation":1,"fingerprint":"00"}"#,
        ] {
            assert_eq!(
                KeyState::from_reply(200, body, &payload()),
                None,
                "{body:?}"
            );
        }
    }

    #[test]
    fn base64_agrees_with_the_rfc_vectors() {
        // RFC 4648 §10.
        for (encoded, plain) in [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
        ] {
            assert_eq!(decode_base64(encoded).as_deref(), Some(plain.as_bytes()));
        }
        assert_eq!(decode_base64("Z"), None);
        assert_eq!(decode_base64("Zm9v!"), None);
    }
}
