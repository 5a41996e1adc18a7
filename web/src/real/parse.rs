//! idem-server's JSON as real mode reads it: one event of the tenant's stream, `GET /api/demo`
//! and `GET /api/demo/ledger` (their shapes: crates/server/README.md, "Demo mode"), with the
//! reader idem-client already carries ([`Json`]), so the page links no second parser.
//!
//! Whatever the server (or anything answering on its port) sends, these return `None` for what
//! they cannot read: the controller shows a message and carries on, never a panic.

use idem_client::Json;

use crate::model::real::{ServerEvent, ServerEventKind};
use crate::model::view::{ledger_order, ClaimRow, ClaimStatus, LedgerRow};
use crate::projection::claims::status_text;

/// One event's `data:` line: `{"seq", "at", "scope", "key", "kind": {"type", ...}}`.
pub fn event(data: &str) -> Option<ServerEvent> {
    let e = Json::parse(data)?;
    let kind = e.get("kind")?;
    let n = |name: &str| kind.get(name).and_then(Json::as_u64);
    let status = || n("status").and_then(|s| u16::try_from(s).ok());
    let kind = match kind.get("type")?.as_str()? {
        "claimed" => ServerEventKind::Claimed(n("token")?),
        "taken_over" => ServerEventKind::TakenOver(n("old_token")?, n("new_token")?),
        "saved" => ServerEventKind::Saved(n("token")?, status()?),
        "released" => ServerEventKind::Released(n("token")?),
        "fenced" => ServerEventKind::Fenced(n("token")?),
        "replayed" => ServerEventKind::Replayed(status()?),
        "rejected" => ServerEventKind::Rejected(status()?),
        "pruned" => ServerEventKind::Pruned,
        "note" => ServerEventKind::Note(kind.get("text")?.as_str()?.to_owned()),
        _ => return None,
    };
    Some(ServerEvent {
        seq: e.get("seq")?.as_u64()?,
        at: e.get("at")?.as_u64()?,
        // `null` when the request had no valid key.
        key: e
            .get("key")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned(),
        kind,
    })
}

/// `GET /api/demo`'s `lock_ms`, and that the answer is demo mode's (it names the tenant).
pub fn demo(body: &str, tenant: &str) -> Option<u64> {
    let d = Json::parse(body)?;
    (d.get("tenant")?.as_str()? == tenant).then_some(())?;
    d.get("lock_ms")?.as_u64()
}

/// `GET /api/demo/ledger`: PayCo's rows of the tenant's orders (oldest first, as the server
/// sends them), as the ledger panel shows them (`ledger_order`): charges per order, double
/// charges first, then the newest order first. Declines move no money: they are left out.
pub fn ledger(body: &str) -> Option<Vec<LedgerRow>> {
    let Json::Array(rows) = Json::parse(body)? else {
        return None;
    };
    let mut by: Vec<LedgerRow> = Vec::new();
    for r in &rows {
        let order = ["#", &r.get("order")?.as_u64()?.to_string()].concat();
        let amount = r.get("amount")?.as_u64()?;
        if r.get("outcome")?.as_str()? != "charged" {
            continue;
        }
        match by.iter_mut().find(|row| row.order == order) {
            Some(row) => row.charges += 1,
            None => by.push(LedgerRow {
                order,
                amount,
                charges: 1,
                last_at: 0,
            }),
        }
    }
    Some(ledger_order(by))
}

/// `GET /api/claims`: the tenant's claim table as the server holds it (durable: it survives a
/// restart, which the event stream's history does not), as rows with server times (ms since the
/// epoch). Rows past retention (`"expired": true`) are left out.
pub fn claims(body: &str) -> Option<Vec<ClaimRow>> {
    let Json::Array(rows) = Json::parse(body)? else {
        return None;
    };
    let mut out = Vec::new();
    for r in &rows {
        if matches!(r.get("expired"), Some(Json::Bool(true))) {
            continue;
        }
        let n = |name: &str| r.get(name).and_then(Json::as_u64);
        let status = match r.get("state")?.as_str()? {
            "in_flight" | "stale" => ClaimStatus::InFlight,
            "released" => ClaimStatus::Released,
            "done" => ClaimStatus::Done,
            _ => return None,
        };
        let response = match n("response_status").and_then(|s| u16::try_from(s).ok()) {
            Some(s) if status == ClaimStatus::Done => status_text(s),
            _ => String::new(),
        };
        let live = status == ClaimStatus::InFlight;
        out.push(ClaimRow {
            scope: r.get("scope")?.as_str()?.to_owned(),
            key: r.get("key")?.as_str()?.to_owned(),
            fingerprint: r.get("fingerprint")?.as_str()?.to_owned(),
            status,
            response,
            locked_at: n("locked_at").filter(|_| live),
            token: n("token"),
            lease_until: None,
            created_at: n("created_at")?,
        });
    }
    Some(out)
}

/// What PayCo said, as a `payco: …` note of idem-server's words it (`checkout/create.rs` `payco_note`):
/// "charged ch_1 for order 1 (2590 cents)", "declined order 1", "no clear answer for order 1: …".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaycoSaid<'a> {
    /// Charged: the charge id.
    Charged(&'a str),
    /// Declined: nothing charged.
    Declined,
    /// No clear answer: whether PayCo got the call is not known.
    Unclear,
}

/// Reads the text after `payco: `.
pub fn payco_said(said: &str) -> PaycoSaid<'_> {
    match said.strip_prefix("charged ") {
        Some(rest) => PaycoSaid::Charged(rest.split(' ').next().unwrap_or_default()),
        None if said.starts_with("declined") => PaycoSaid::Declined,
        None => PaycoSaid::Unclear,
    }
}

/// The fault a `fault: <name>: …` note says fired.
pub fn fired_fault(note: &str) -> Option<&str> {
    let rest = note.strip_prefix("fault: ")?;
    rest.split(':').next()
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_servers_claim_table_as_rows() {
        let body = r#"[
            {"scope":"demo-a","key":"k1","fingerprint":"0a1b2c3d4e5f","state":"done","on_error":"release_claim","token":2,"locked_at":null,"lease_left_ms":null,"response_status":201,"response":"201 application/json, 57 B","created_at":1000,"expires_at":9000,"expired":false},
            {"scope":"demo-a","key":"k2","fingerprint":"0a1b2c3d4e5f","state":"stale","on_error":"release_claim","token":1,"locked_at":1500,"lease_left_ms":0,"response_status":null,"response":null,"created_at":1400,"expires_at":9000,"expired":false},
            {"scope":"demo-a","key":"k3","fingerprint":"0a1b2c3d4e5f","state":"released","on_error":"release_claim","token":4,"locked_at":1600,"lease_left_ms":null,"response_status":null,"response":null,"created_at":1450,"expires_at":9000,"expired":false},
            {"scope":"demo-a","key":"old","fingerprint":"0a1b2c3d4e5f","state":"done","on_error":"release_claim","token":1,"locked_at":null,"lease_left_ms":null,"response_status":201,"response":null,"created_at":1,"expires_at":2,"expired":true}
        ]"#;
        let rows = claims(body).expect("rows");
        let got: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.key.as_str(),
                    r.status,
                    r.response.as_str(),
                    r.locked_at,
                    r.created_at,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("k1", ClaimStatus::Done, "201 Created", None, 1000),
                ("k2", ClaimStatus::InFlight, "", Some(1500), 1400),
                ("k3", ClaimStatus::Released, "", None, 1450),
            ]
        );
        for bad in ["{}", "[{\"key\":\"k\"}]", "[{\"scope\":\"s\",\"key\":\"k\",\"fingerprint\":\"f\",\"state\":\"gone\",\"created_at\":1}]"] {
            assert_eq!(claims(bad), None, "{bad}");
        }
    }

    use super::*;

    #[test]
    fn reads_every_event_kind_as_the_server_writes_it() {
        // As crates/server/README.md's example session shows them.
        let e = |kind: &str| {
            event(
                &[
                    r#"{"seq":3,"at":1796154652694,"scope":"demo-1","key":"k-1","kind":"#,
                    kind,
                    "}",
                ]
                .concat(),
            )
        };
        let kinds = [
            (
                r#"{"type":"claimed","token":1}"#,
                ServerEventKind::Claimed(1),
            ),
            (
                r#"{"type":"taken_over","old_token":1,"new_token":2}"#,
                ServerEventKind::TakenOver(1, 2),
            ),
            (
                r#"{"type":"saved","token":2,"status":201}"#,
                ServerEventKind::Saved(2, 201),
            ),
            (
                r#"{"type":"released","token":2}"#,
                ServerEventKind::Released(2),
            ),
            (r#"{"type":"fenced","token":1}"#, ServerEventKind::Fenced(1)),
            (
                r#"{"type":"replayed","status":201}"#,
                ServerEventKind::Replayed(201),
            ),
            (
                r#"{"type":"rejected","status":409,"reason":{"in_flight":{"retry_after_ms":900}}}"#,
                ServerEventKind::Rejected(409),
            ),
            (
                r#"{"type":"rejected","status":422,"reason":"mismatch"}"#,
                ServerEventKind::Rejected(422),
            ),
            (r#"{"type":"pruned"}"#, ServerEventKind::Pruned),
            (
                r#"{"type":"note","text":"payco: charged ch_1 for order 1 (4200 cents)"}"#,
                ServerEventKind::Note("payco: charged ch_1 for order 1 (4200 cents)".into()),
            ),
        ];
        for (json, kind) in kinds {
            let got = e(json).unwrap_or_else(|| panic!("{json}"));
            assert_eq!(
                (got.seq, got.at, got.key.as_str()),
                (3, 1796154652694, "k-1")
            );
            assert_eq!(got.kind, kind);
        }
        let keyless = event(
            r#"{"seq":1,"at":2,"scope":"s","key":null,"kind":{"type":"rejected","status":400,"reason":{"invalid":"x"}}}"#,
        );
        assert_eq!(keyless.map(|e| e.key), Some(String::new()));
    }

    #[test]
    fn bad_json_is_refused_never_a_panic() {
        for data in [
            "",
            "not json",
            "[]",
            "{}",
            r#"{"seq":1,"at":2,"key":"k"}"#,
            r#"{"seq":1,"at":2,"key":"k","kind":{"type":"claimed"}}"#,
            r#"{"seq":1,"at":2,"key":"k","kind":{"type":"claimed","token":-1}}"#,
            r#"{"seq":1,"at":2,"key":"k","kind":{"type":"saved","token":1,"status":70000}}"#,
            r#"{"seq":1,"at":2,"key":"k","kind":{"type":"exploded"}}"#,
            r#"{"seq":"1","at":2,"key":"k","kind":{"type":"pruned"}}"#,
            r#"{"seq":1,"at":2.5,"key":"k","kind":{"type":"pruned"}}"#,
            r#"{"seq":1,"at":2,"key":"k","kind":{"type":"note","text":7}}"#,
            "{\"seq\":1,\"at\":2,\"key\":\"k\",\"kind\":{\"type\":\"note\",\"text\":\"\u{1}\"}}",
            &"[".repeat(10_000),
        ] {
            assert_eq!(event(data), None, "{data:.60}");
        }
        for body in [
            "",
            "null",
            "{}",
            r#"{"tenant":"other","lock_ms":1}"#,
            r#"{"tenant":"t","lock_ms":-5}"#,
        ] {
            assert_eq!(demo(body, "t"), None, "{body}");
        }
        assert_eq!(
            demo(r#"{"tenant":"t","lock_ms":10000,"faults":[]}"#, "t"),
            Some(10_000)
        );
        for body in [
            "",
            "{}",
            r#"[{"order":1}]"#,
            r#"[{"order":1,"amount":5,"outcome":3}]"#,
            r#"[{"order":"1","amount":5,"outcome":"charged"}]"#,
            "[1]",
        ] {
            assert_eq!(ledger(body), None, "{body}");
        }
    }

    #[test]
    fn the_ledger_counts_charges_per_order_double_charges_first() {
        let body = r#"[
            {"id":1,"merchant":"shop","key":"charge:1","order":1,"amount":2590,"outcome":"charged"},
            {"id":2,"merchant":"shop","key":"charge:2","order":2,"amount":2590,"outcome":"charged"},
            {"id":3,"merchant":"shop","key":"charge:3","order":3,"amount":2590,"outcome":"declined"},
            {"id":4,"merchant":"shop","key":"charge:1","order":1,"amount":2590,"outcome":"charged"},
            {"id":5,"merchant":"shop","key":"charge:4","order":4,"amount":100,"outcome":"charged"}
        ]"#;
        let rows = ledger(body).unwrap();
        let got: Vec<(&str, u32, u64)> = rows
            .iter()
            .map(|r| (r.order.as_str(), r.charges, r.amount))
            .collect();
        assert_eq!(got, [("#1", 2, 2590), ("#4", 1, 100), ("#2", 1, 2590)]);
        assert_eq!(ledger("[]"), Some(Vec::new()));
    }

    #[test]
    fn fault_notes_name_their_fault() {
        assert_eq!(
            fired_fault("fault: drop-response: committed; the connection is closed unanswered"),
            Some("drop-response")
        );
        assert_eq!(fired_fault("payco: charged ch_1"), None);
    }
}
