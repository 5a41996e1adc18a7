//! What the checkout answers, as idem-store's wire values: the 201 receipt of a paid order,
//! the declined card's 402 and the 502 of a charge whose outcome is unknown. The simulator and
//! idem-server send these bytes; the simulator's checker and pages read the receipt back with
//! [`Receipt::from_body`].

use idem_store::http::{self, HttpResponse};
use idem_store::json::Json;
use serde::{Deserialize, Serialize};

/// Problem `type` of a declined card (402): final for this key.
pub const PAYMENT_DECLINED: &str = "/problems/payment-declined";

/// The 201 body of a paid checkout. Two executions of one key that both answered would differ
/// in `served_at`, so a replay that is not the first answer byte for byte shows.
///
/// The derived `Serialize` writes the body ([`Receipt::to_body`]); the derived `Deserialize` is
/// serde's reading of it, which [`Receipt::from_body`] matches without serde_json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The order, created or resumed; PayCo's key for it is `charge:<order>`.
    pub order: i64,
    /// `paid`.
    pub status: String,
    /// PayCo's charge id (`ch_<n>`).
    pub charge: String,
    /// Amount charged, in cents.
    pub amount: i64,
    /// When the work settled the order, ms (the server's wall clock, the simulator's virtual
    /// time).
    pub served_at: u64,
}

impl Receipt {
    /// A paid order's receipt.
    pub fn paid(order: i64, charge: &str, amount: i64, served_at: u64) -> Receipt {
        Receipt {
            order,
            status: "paid".to_owned(),
            charge: charge.to_owned(),
            amount,
            served_at,
        }
    }

    /// The JSON body: `{"order":7,"status":"paid","charge":"ch_1","amount":4200,"served_at":9}`.
    pub fn to_body(&self) -> Vec<u8> {
        // A struct of strings and integers always serialises.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A body written by [`Receipt::to_body`], or any JSON object with its five fields, each
    /// once and of its type (`order` and `amount` integers that fit an `i64`, `served_at` one
    /// that fits a `u64`, `status` and `charge` strings), in any order, other members ignored;
    /// `None` for any other body.
    ///
    /// What `serde_json::from_slice` with the derived `Deserialize` reads (the tests compare
    /// both), through idem-store's [`Json`] reader instead: serde_json's number parsing, floats
    /// included, was 19 KB of the demo's 284 KB gzip, which reads every simulated 201 with this.
    /// Two differences, both bodies that are not a JSON object with these fields: serde reads a
    /// struct from an array of its five values too, and skips an ignored member's value
    /// without checking its strings' UTF-8 and escapes or its depth, where [`Json`] reads the
    /// whole body as RFC 8259 JSON.
    pub fn from_body(body: &[u8]) -> Option<Receipt> {
        let json = Json::parse(core::str::from_utf8(body).ok()?)?;
        let field = |name| json.get_once(name);
        Some(Receipt {
            order: field("order")?.as_i64()?,
            status: field("status")?.as_str()?.to_owned(),
            charge: field("charge")?.as_str()?.to_owned(),
            amount: field("amount")?.as_i64()?,
            served_at: field("served_at")?.as_u64()?,
        })
    }

    /// The first answer of a paid checkout: 201, the receipt, `Location` of the order.
    pub fn answer(&self) -> HttpResponse {
        HttpResponse {
            status: 201,
            headers: vec![
                (http::CONTENT_TYPE.to_owned(), "application/json".to_owned()),
                ("Location".to_owned(), format!("/api/orders/{}", self.order)),
            ],
            body: self.to_body(),
        }
    }
}

/// The first answer of a declined checkout: 402, final for this key.
pub fn declined(order: i64) -> HttpResponse {
    http::problem(
        402,
        PAYMENT_DECLINED,
        "Payment declined",
        &format!(
            "the card was declined for order {order}; paying again with another card is a new \
             checkout with a new idempotency key"
        ),
        None,
    )
}

/// The answer when PayCo's outcome is unknown (no answer in time, or none it could read):
/// 502 with `Retry-After: 1`. Nothing is saved: the retry resumes the order and asks PayCo
/// again under the same key, and PayCo's answer settles it.
pub fn outcome_unknown(reason: &str) -> HttpResponse {
    http::bad_gateway(reason, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_receipt_round_trips_and_its_answer_names_the_order() {
        let r = Receipt::paid(12, "ch_3", 4200, 1_234_567);
        let body = r.to_body();
        assert_eq!(
            body,
            br#"{"order":12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1234567}"#
        );
        assert_eq!(Receipt::from_body(&body), Some(r.clone()));
        assert_eq!(Receipt::from_body(br#"{"type":"conflict"}"#), None);
        let answer = r.answer();
        assert_eq!(answer.status, 201);
        assert_eq!(answer.header("location"), Some("/api/orders/12"));
        assert_eq!(answer.body, body);
    }

    /// serde's reading of `body`: what `from_body` was before it read with [`Json`].
    fn reference(body: &[u8]) -> Option<Receipt> {
        serde_json::from_slice(body).ok()
    }

    /// Whether `body` is a JSON object by serde_json's full (strict) reading.
    fn strict_object(body: &[u8]) -> bool {
        matches!(
            serde_json::from_slice::<serde_json::Value>(body),
            Ok(serde_json::Value::Object(_))
        )
    }

    /// `from_body` agrees with serde on `body`, or `body` is one of the two documented
    /// differences (not a strict JSON object, and serde found a receipt in it anyway).
    fn check(body: &[u8]) {
        let ours = Receipt::from_body(body);
        let theirs = reference(body);
        if ours != theirs {
            assert!(
                ours.is_none() && !strict_object(body),
                "{:?}: ours {ours:?}, serde's {theirs:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    const BODY: &str =
        r#"{"order":12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1234567}"#;

    fn receipt(order: i64, status: &str, charge: &str, amount: i64, served_at: u64) -> Receipt {
        Receipt {
            order,
            status: status.to_owned(),
            charge: charge.to_owned(),
            amount,
            served_at,
        }
    }

    #[test]
    fn reads_receipts_in_any_layout() {
        let r = receipt(12, "paid", "ch_3", 4200, 1_234_567);
        let spaced = " \t\r\n{ \"served_at\" :\n1234567 , \"amount\":4200,\"charge\" : \"ch_3\",\r\n\t\"status\":\"paid\",\"order\":12 }\n ";
        for body in [
            BODY,
            spaced,
            // Other members, of every kind, are ignored (floats and big numbers included).
            r#"{"x":1.5e300,"order":12,"y":[{"z":null},-0,true,"s"],"status":"paid","charge":"ch_3","amount":4200,"served_at":1234567,"big":123456789012345678901234567890,"w":-1e-7}"#,
            // A repeated unknown member is no error.
            r#"{"x":1,"x":2,"order":12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1234567}"#,
            // Escapes in names and strings.
            r#"{"ord\u0065r":12,"st\u0061tus":"p\u0061id","charge":"ch\u005f3","amount":4200,"served\/at":1,"served_at":1234567}"#,
        ] {
            assert_eq!(
                Receipt::from_body(body.as_bytes()),
                Some(r.clone()),
                "{body}"
            );
            check(body.as_bytes());
        }
        let strings = r#"{"order":1,"status":"p\"a\\i/d\n\t\u00e9\ud83d\ude00€","charge":"","amount":0,"served_at":0}"#;
        assert_eq!(
            Receipt::from_body(strings.as_bytes()),
            Some(receipt(1, "p\"a\\i/d\n\té😀€", "", 0, 0))
        );
        check(strings.as_bytes());
    }

    #[test]
    fn integers_at_their_limits() {
        let with = |order: &str, amount: &str, served_at: &str| {
            format!(
                r#"{{"order":{order},"status":"paid","charge":"ch_1","amount":{amount},"served_at":{served_at}}}"#
            )
        };
        let max = u64::MAX.to_string();
        assert_eq!(
            Receipt::from_body(
                with("-9223372036854775808", "9223372036854775807", &max).as_bytes()
            ),
            Some(receipt(i64::MIN, "paid", "ch_1", i64::MAX, u64::MAX))
        );
        assert_eq!(
            Receipt::from_body(with("-1", "-42", "0").as_bytes()),
            Some(receipt(-1, "paid", "ch_1", -42, 0))
        );
        let numbers = [
            "0",
            "-0",
            "1",
            "-1",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "-18446744073709551616",
            "99999999999999999999999999",
            "1.0",
            "1e2",
            "1E2",
            "-0.0",
            "0.5",
            "01",
            "+1",
            "1.",
            ".1",
            "1e",
            "0x10",
            "\"7\"",
            "null",
            "true",
            "[]",
            "{}",
        ];
        for n in numbers {
            for body in [with(n, "1", "1"), with("1", n, "1"), with("1", "1", n)] {
                check(body.as_bytes());
            }
        }
        assert_eq!(Receipt::from_body(with("-0", "1", "1").as_bytes()), None);
        assert_eq!(Receipt::from_body(with("1", "1", "-1").as_bytes()), None);
        assert_eq!(Receipt::from_body(with("1", "1.0", "1").as_bytes()), None);
        assert_eq!(
            Receipt::from_body(with("9223372036854775808", "1", "1").as_bytes()),
            None
        );
        assert_eq!(
            Receipt::from_body(with("1", "1", "18446744073709551616").as_bytes()),
            None
        );
    }

    #[test]
    fn what_is_not_a_receipt_is_none() {
        let cases: &[&[u8]] = &[
            b"",
            b"   ",
            b"null",
            b"42",
            b"\"paid\"",
            b"[]",
            b"{}",
            br#"{"type":"conflict"}"#,
            // A field missing, repeated, null or of another type.
            br#"{"order":12,"status":"paid","charge":"ch_3","amount":4200}"#,
            br#"{"order":12,"order":12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1}"#,
            br#"{"order":12,"status":"paid","charge":"ch_3","charge":"ch_3","amount":4200,"served_at":1}"#,
            br#"{"order":12,"status":null,"charge":"ch_3","amount":4200,"served_at":1}"#,
            br#"{"order":12,"status":"paid","charge":3,"amount":4200,"served_at":1}"#,
            br#"{"order":"12","status":"paid","charge":"ch_3","amount":4200,"served_at":1}"#,
            br#"{"order":12,"status":["paid"],"charge":"ch_3","amount":4200,"served_at":1}"#,
            // Malformed around a valid receipt.
            br#"{"order":12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1,}"#,
            br#"{"order":12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1} x"#,
            br#"{"order":12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1}}"#,
            br#"{"order":12 "status":"paid","charge":"ch_3","amount":4200,"served_at":1}"#,
            br#"{order:12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1}"#,
            br#"{'order':12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1}"#,
            br#"{"order":12,"status":"pa\id","charge":"ch_3","amount":4200,"served_at":1}"#,
            br#"{"order":12,"status":"\ud800","charge":"ch_3","amount":4200,"served_at":1}"#,
            b"{\"order\":12,\"status\":\"pa\nid\",\"charge\":\"ch_3\",\"amount\":4200,\"served_at\":1}",
            b"{\"order\":12,\"status\":\"pa\xffid\",\"charge\":\"ch_3\",\"amount\":4200,\"served_at\":1}",
            b"\xef\xbb\xbf{\"order\":12,\"status\":\"paid\",\"charge\":\"ch_3\",\"amount\":4200,\"served_at\":1}",
        ];
        for body in cases {
            assert_eq!(
                Receipt::from_body(body),
                None,
                "{:?}",
                String::from_utf8_lossy(body)
            );
            assert_eq!(reference(body), None, "serde agrees");
        }
        // Every cut of a receipt short of its end.
        for end in 0..BODY.len() {
            assert_eq!(Receipt::from_body(&BODY.as_bytes()[..end]), None, "{end}");
        }
    }

    #[test]
    fn the_documented_differences_from_serde() {
        // A struct from an array of its values: serde reads one, this is not an object.
        let array = br#"[12,"paid","ch_3",4200,1234567]"#;
        assert!(reference(array).is_some());
        assert_eq!(Receipt::from_body(array), None);
        // An ignored member serde skips without reading its string or its depth.
        let tail = r#""order":12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1}"#;
        let deep = format!(r#"{{"x":{}{},{tail}"#, "[".repeat(200), "]".repeat(200));
        for body in [
            format!(r#"{{"x":"\ud800",{tail}"#).into_bytes(),
            [br#"{"x":""#.as_slice(), b"\xff", br#"","#, tail.as_bytes()].concat(),
            deep.into_bytes(),
        ] {
            assert!(reference(&body).is_some() && !strict_object(&body));
            assert_eq!(Receipt::from_body(&body), None);
        }
    }

    #[test]
    fn mutated_receipts_read_as_serde_reads_them() {
        // Seeded edits of a valid body (xorshift64*, so the run is the same everywhere):
        // each body is the receipt with one to four bytes or pieces deleted, replaced or
        // inserted.
        const PIECES: &[&[u8]] = &[
            b"{",
            b"}",
            b"[",
            b"]",
            b",",
            b":",
            b"\"",
            b"\\",
            b"-",
            b"0",
            b"1",
            b"9",
            b".",
            b"e",
            b"E",
            b"+",
            b" ",
            b"\n",
            b"\t",
            b"a",
            b"u",
            b"n",
            b"null",
            b"true",
            b"\\u0041",
            b"\\ud83d\\ude00",
            b"\xc3\xa9",
            b"\xff",
            b"\x01",
            b"18446744073709551616",
            b"\"order\":1,",
            b"\"x\":1.5,",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |bound: usize| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % bound
        };
        let mut read = 0;
        for _ in 0..5000 {
            let mut body = BODY.as_bytes().to_vec();
            for _ in 0..1 + next(4) {
                let at = next(body.len() + 1);
                match next(3) {
                    0 if at < body.len() => {
                        body.remove(at);
                    }
                    1 if at < body.len() => body[at] = PIECES[next(PIECES.len())][0],
                    _ => {
                        let piece = PIECES[next(PIECES.len())];
                        body.splice(at..at, piece.iter().copied());
                    }
                }
            }
            check(&body);
            read += usize::from(Receipt::from_body(&body).is_some());
        }
        // Many edits keep a receipt (whitespace, other values, a digit more), most do not.
        assert!((250..2500).contains(&read), "{read}");
    }

    #[test]
    fn failures_are_problems_with_relative_types() {
        for (answer, status, kind) in [
            (declined(3), 402, PAYMENT_DECLINED),
            (outcome_unknown("timeout"), 502, http::problem::BAD_GATEWAY),
        ] {
            assert_eq!(answer.status, status);
            assert_eq!(answer.header(http::CONTENT_TYPE), Some(http::PROBLEM_JSON));
            let p: http::Problem = serde_json::from_slice(&answer.body).unwrap();
            assert_eq!((p.kind.as_str(), p.status), (kind, status));
            assert!(kind.starts_with("/problems/"), "{kind}");
        }
        assert_eq!(outcome_unknown("x").header(http::RETRY_AFTER), Some("1"));
    }
}
