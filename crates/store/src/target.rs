//! The fingerprint of a request to any route: what it asks for is its method, the route it
//! matched, that route's path parameters, its query and its body, so the same key sent to
//! another endpoint, another resource (`/customers/cus_B` after `cus_A`) or with another query
//! is another request (422), while two spellings of one request share a fingerprint.
//!
//! [`fingerprint`](crate::fingerprint) binds one fixed operation name and a JSON body: right
//! for a route that is one operation (the example checkout's `POST /api/checkout`), wrong for
//! a layer in front of many routes. [`RequestTarget::fingerprint`] builds the operation from
//! the request itself and reads the body by its media type:
//!
//! | body | read as |
//! |---|---|
//! | empty (whatever its `Content-Type`) | nothing |
//! | `application/json`, `…+json`, or no `Content-Type` | JSON, canonical (RFC 8785); invalid JSON is a 400 |
//! | `application/x-www-form-urlencoded` | its pairs, sorted by name (a repeated name keeps its values' order) |
//! | any other media type | its bytes, with the media type |
//!
//! The query is read as form pairs the same way (`?b=2&a=1` is `?a=1&b=2`; `?a=1&a=2` is not
//! `?a=2&a=1`).
//!
//! A route may bind only some body fields ([`BodyFields`]).
//!
//! A JSON request with no path parameter, no query and every field bound has exactly the fingerprint
//! [`fingerprint`](crate::fingerprint) gives `"{METHOD} {route}"`: a route that named its
//! operation that way keeps its keys across the change. Anything more goes into the
//! operation as canonical JSON (`{"body":…,"method":…,"params":…,"query":…,"route":…}`), which
//! cannot be mistaken for a method and a route (a method never starts with `{`).

use serde_json::{json, Value};

use crate::{fingerprint::Fingerprint, RequestError};

/// What a request asks for besides its body, as the fingerprint binds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestTarget {
    /// The method, as sent (`POST`).
    pub method: String,
    /// The route it matched, as its template (`/v1/customers/{id}/notes`), or the request's
    /// path when no router matched one.
    pub route: String,
    /// The route's path parameters, in the template's order, percent-decoded.
    pub params: Vec<(String, String)>,
    /// The raw query (after `?`, still percent-encoded), if any.
    pub query: Option<String>,
    /// The `Content-Type` header's value, if any.
    pub content_type: Option<String>,
    /// Which body fields count (the route's choice; all by default).
    pub fields: BodyFields,
}

/// Which top-level members of a JSON object body, and which pairs of a form body, the
/// fingerprint binds: a route may leave out a field a retry may legitimately reword (a
/// free-text note), so a reworded retry is still the same request, not a 422 the client
/// answers with a new key and a second payment. A JSON body that is not an object, and
/// bodies of other media types, are bound whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum BodyFields {
    /// Every field.
    #[default]
    All,
    /// Only the fields of these names.
    Only(Vec<String>),
    /// Every field but these.
    Except(Vec<String>),
}

impl BodyFields {
    /// Whether the field `name` counts.
    pub fn keeps(&self, name: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(names) => names.iter().any(|n| n == name),
            Self::Except(names) => !names.iter().any(|n| n == name),
        }
    }

    /// The rule as the operation records it (names sorted: the rule, not its spelling).
    fn value(&self) -> Value {
        let sorted = |names: &[String]| {
            let mut names = names.to_vec();
            names.sort();
            names
        };
        match self {
            Self::All => Value::Null,
            Self::Only(names) => json!({ "only": sorted(names) }),
            Self::Except(names) => json!({ "except": sorted(names) }),
        }
    }
}

/// How a body is read for the fingerprint (the table above).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyForm<'a> {
    /// Empty.
    Empty,
    /// JSON.
    Json,
    /// Form pairs.
    Form,
    /// Bytes of this media type (as sent, parameters included; compared lowercase).
    Bytes(&'a str),
}

impl RequestTarget {
    /// How `body`, sent with this target's `Content-Type`, is read.
    pub fn body_form<'a>(&'a self, body: &[u8]) -> BodyForm<'a> {
        if body.is_empty() {
            return BodyForm::Empty;
        }
        let Some(content_type) = &self.content_type else {
            return BodyForm::Json;
        };
        let essence = content_type.split(';').next().unwrap_or_default().trim();
        let whole = content_type.trim();
        if essence.eq_ignore_ascii_case("application/json")
            || essence
                .rsplit_once('+')
                .is_some_and(|(_, suffix)| suffix.eq_ignore_ascii_case("json"))
        {
            BodyForm::Json
        } else if essence.eq_ignore_ascii_case("application/x-www-form-urlencoded") {
            BodyForm::Form
        } else {
            // The whole media type, parameters too: a charset changes what the bytes say.
            BodyForm::Bytes(whole)
        }
    }

    /// The fingerprint of this request with `body`. Only a JSON body can be refused (invalid
    /// JSON, duplicate member names, nesting past 128: [`RequestError::InvalidJson`]).
    pub fn fingerprint(&self, body: &[u8]) -> Result<Fingerprint, RequestError> {
        let form = self.body_form(body);
        let query = self
            .query
            .as_deref()
            .filter(|q| !q.is_empty())
            .map(|q| pairs_value(&sorted_pairs(q.as_bytes())));
        let plain = self.params.is_empty() && query.is_none() && self.fields == BodyFields::All;
        if form == BodyForm::Json && plain {
            return crate::fingerprint(&self.operation_name(), body);
        }
        let (kind, hashed): (Value, Vec<u8>) = match form {
            BodyForm::Json => {
                let mut value = crate::fingerprint::parse(body)?;
                if let Value::Object(members) = &mut value {
                    members.retain(|name, _| self.fields.keeps(name));
                }
                ("json".into(), crate::fingerprint::canonical(&value)?)
            }
            BodyForm::Empty => ("empty".into(), Vec::new()),
            BodyForm::Form => {
                let mut pairs = sorted_pairs(body);
                // A name that is not UTF-8 matches no field name: it is kept.
                pairs.retain(|(name, _)| {
                    std::str::from_utf8(name).map_or(true, |name| self.fields.keeps(name))
                });
                let canonical = serde_json_canonicalizer::to_vec(&pairs_value(&pairs));
                ("form".into(), canonical.unwrap_or_default())
            }
            BodyForm::Bytes(media) => (json!(["bytes", media.to_ascii_lowercase()]), body.to_vec()),
        };
        let operation = json!({
            "body": kind,
            "fields": self.fields.value(),
            "method": self.method,
            "params": pairs_value(&params_pairs(&self.params)),
            "query": query,
            "route": self.route,
        });
        // Writing a `Value` cannot fail.
        let operation = serde_json_canonicalizer::to_string(&operation).unwrap_or_default();
        Ok(Fingerprint::of_canonical(&operation, &hashed))
    }

    /// `"{METHOD} {route}"`: the whole operation of a JSON request with no path parameter, no
    /// query and every body field bound (the fingerprint [`crate::fingerprint`] gives it).
    pub fn operation_name(&self) -> String {
        [self.method.as_str(), " ", self.route.as_str()].concat()
    }
}

/// Form pairs (`application/x-www-form-urlencoded`, the query's syntax too), percent-decoded
/// to their bytes (`+` is a space; a pair without `=` has an empty value), sorted by name: a
/// stable sort keeps a repeated name's values in their order. Bytes, not text: two pairs that
/// differ only in bytes that are not UTF-8 (`%E9` and `%E8`) stay two requests.
fn sorted_pairs(form: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let decode = |part: &[u8]| -> Vec<u8> {
        let spaced: Vec<u8> = part
            .iter()
            .map(|&b| if b == b'+' { b' ' } else { b })
            .collect();
        percent_encoding::percent_decode(&spaced).collect()
    };
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = form
        .split(|&b| b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.iter().position(|&b| b == b'=') {
            Some(at) => (decode(&pair[..at]), decode(&pair[at + 1..])),
            None => (decode(pair), Vec::new()),
        })
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    pairs
}

/// Pairs as JSON: `[["a","1"],["b","2"]]`; a name or value that is not UTF-8 is written as
/// `{"hex": "…"}`, which no text is.
fn pairs_value(pairs: &[(Vec<u8>, Vec<u8>)]) -> Value {
    let part = |bytes: &[u8]| match std::str::from_utf8(bytes) {
        Ok(text) => Value::from(text),
        Err(_) => {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            json!({ "hex": hex })
        }
    };
    pairs
        .iter()
        .map(|(n, v)| json!([part(n), part(v)]))
        .collect()
}

/// Path parameters as pairs of bytes, for [`pairs_value`].
fn params_pairs(params: &[(String, String)]) -> Vec<(Vec<u8>, Vec<u8>)> {
    params
        .iter()
        .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(method: &str, route: &str) -> RequestTarget {
        RequestTarget {
            method: method.into(),
            route: route.into(),
            ..RequestTarget::default()
        }
    }

    fn with(mut t: RequestTarget, f: impl FnOnce(&mut RequestTarget)) -> RequestTarget {
        f(&mut t);
        t
    }

    fn fp(t: &RequestTarget, body: &str) -> Fingerprint {
        t.fingerprint(body.as_bytes()).unwrap()
    }

    #[test]
    fn a_plain_json_route_keeps_the_operation_fingerprint() {
        let t = target("POST", "/api/refunds");
        let body = r#"{"b":1,"a":[1.0,"x"]}"#;
        assert_eq!(
            fp(&t, body),
            crate::fingerprint("POST /api/refunds", body.as_bytes()).unwrap()
        );
        let json = with(t.clone(), |t| {
            t.content_type = Some("application/merchant+json; charset=utf-8".into())
        });
        assert_eq!(fp(&json, body), fp(&t, body));
    }

    #[test]
    fn another_endpoint_resource_query_or_method_is_another_request() {
        let notes = |id: &str| {
            with(target("POST", "/v1/customers/{id}/notes"), |t| {
                t.params = vec![("id".into(), id.into())]
            })
        };
        let body = r#"{"text":"hi"}"#;
        let a = fp(&notes("cus_A"), body);
        let all = [
            a,
            fp(&notes("cus_B"), body),
            fp(&target("POST", "/v2/a"), body),
            fp(&target("POST", "/v2/b"), body),
            fp(&target("PUT", "/v2/a"), body),
            fp(
                &with(notes("cus_A"), |t| t.query = Some("expand=1".into())),
                body,
            ),
            fp(
                &with(notes("cus_A"), |t| t.query = Some("expand=2".into())),
                body,
            ),
        ];
        for (i, x) in all.iter().enumerate() {
            for y in &all[i + 1..] {
                assert_ne!(x, y);
            }
        }
        assert_eq!(fp(&notes("cus_A"), body), a, "the same request again");
    }

    #[test]
    fn two_spellings_of_one_request_agree() {
        let t = |q: &str, ct: &str| {
            with(target("POST", "/v1/charges"), |t| {
                t.query = Some(q.into());
                t.content_type = Some(ct.into());
            })
        };
        let form = "application/x-www-form-urlencoded";
        let one = fp(
            &t("b=2&a=1", form),
            "amount=2590&currency=usd&metadata%5Bx%5D=a+b",
        );
        let two = fp(
            &t(
                "a=1&b=2",
                "Application/X-WWW-Form-Urlencoded; charset=utf-8",
            ),
            "currency=usd&metadata[x]=a%20b&amount=2590",
        );
        assert_eq!(one, two);
        // A repeated name's values keep their order; another value is another request.
        let a = fp(&t("", form), "tag=x&tag=y");
        assert_ne!(a, fp(&t("", form), "tag=y&tag=x"));
        assert_ne!(a, fp(&t("", form), "tag=x&tag=z"));
        // Bytes that are not UTF-8 stay apart (Latin-1 é and è), in a form and in a query.
        assert_ne!(
            fp(&t("", form), "name=Jos%E9"),
            fp(&t("", form), "name=Jos%E8")
        );
        assert_ne!(fp(&t("a=%FF", form), "x=1"), fp(&t("a=%FE", form), "x=1"));
        assert_ne!(
            fp(&t("", form), "name=%7B%22hex%22"),
            fp(&t("", form), "name=%FF")
        );
        // A charset is part of what bytes mean.
        let text = |ct: &str| {
            with(target("POST", "/v1/notes"), |t| {
                t.content_type = Some(ct.into())
            })
        };
        assert_ne!(
            fp(&text("text/plain; charset=utf-16"), "ab"),
            fp(&text("text/plain; charset=latin1"), "ab")
        );
        // An empty query is no query.
        assert_eq!(
            fp(&t("", "application/json"), "{}"),
            fp(&target("POST", "/v1/charges"), "{}")
        );
    }

    #[test]
    fn bodies_of_every_kind_stay_apart() {
        let t = |ct: Option<&str>| {
            with(target("POST", "/v1/confirm"), |t| {
                t.content_type = ct.map(Into::into)
            })
        };
        let empty = fp(&t(None), "");
        assert_eq!(
            empty,
            fp(&t(Some("application/json")), ""),
            "empty is empty"
        );
        let all = [
            empty,
            fp(&t(None), "null"),
            fp(&t(None), "\"\""),
            fp(&t(Some("application/x-www-form-urlencoded")), "a=1"),
            fp(&t(None), r#"[["a","1"]]"#),
            fp(&t(Some("text/plain")), r#"[["a","1"]]"#),
            fp(&t(Some("application/pdf")), r#"[["a","1"]]"#),
        ];
        for (i, x) in all.iter().enumerate() {
            for y in &all[i + 1..] {
                assert_ne!(x, y);
            }
        }
        // Bytes are bytes: not read as JSON, so no 400 either.
        let raw = t(Some("application/octet-stream"));
        assert!(raw.fingerprint(&[0xff, 0x00, b'{']).is_ok());
        assert_ne!(fp(&raw, "{\"a\":1}"), fp(&raw, "{ \"a\": 1 }"));
    }

    #[test]
    fn a_route_may_leave_a_rewordable_field_out() {
        let rule = |fields| with(target("POST", "/v1/charges"), |t| t.fields = fields);
        let except = rule(BodyFields::Except(vec!["note".into()]));
        let only = rule(BodyFields::Only(vec!["amount".into(), "card".into()]));
        let a = r#"{"amount":2590,"card":"tok_visa","note":"for Ann"}"#;
        let reworded = r#"{"note":"for Anne","card":"tok_visa","amount":2590}"#;
        let more = r#"{"amount":9999,"card":"tok_visa","note":"for Ann"}"#;
        for t in [&except, &only] {
            assert_eq!(fp(t, a), fp(t, reworded), "{:?}", t.fields);
            assert_ne!(fp(t, a), fp(t, more), "{:?}", t.fields);
        }
        // Every field bound: the rewording is another request.
        let all = target("POST", "/v1/charges");
        assert_ne!(fp(&all, a), fp(&all, reworded));
        // Form pairs by name too.
        let form = with(except.clone(), |t| {
            t.content_type = Some("application/x-www-form-urlencoded".into())
        });
        assert_eq!(fp(&form, "amount=1&note=x"), fp(&form, "note=y&amount=1"));
        assert_ne!(fp(&form, "amount=1&note=x"), fp(&form, "amount=2&note=x"));
        // A body that is not an object is bound whole; the rule itself is part of the request.
        assert_ne!(fp(&except, "[1]"), fp(&except, "[2]"));
        assert_ne!(fp(&except, "{}"), fp(&only, "{}"));
    }

    #[test]
    fn invalid_json_is_refused_as_before() {
        let t = with(target("POST", "/v1/items/{id}"), |t| {
            t.params = vec![("id".into(), "1".into())]
        });
        for bad in ["{", r#"{"a":1,"a":2}"#, "nope"] {
            assert!(
                matches!(
                    t.fingerprint(bad.as_bytes()),
                    Err(RequestError::InvalidJson { .. })
                ),
                "{bad}"
            );
        }
    }
}
