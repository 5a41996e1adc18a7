//! The claim table: the store's rows as the table shows them.

use std::rc::Rc;

use idem_sim::World;
use idem_store::RowState;

use crate::model::view::{merge_claims, ClaimRow, ClaimStatus, ShownClaim};

/// The claim rows, rebuilt only when the store decided something or `lock_ms` changed.
#[derive(Default)]
pub struct Claims {
    /// Store-event cursor and `lock_ms` the rows were built at.
    built: Option<(u64, u64)>,
    rows: Rc<Vec<Rc<ShownClaim>>>,
}

impl Claims {
    /// The table now: the same `Rc` (and the same row `Rc`s) for what did not change.
    pub fn rows(&mut self, world: &World) -> Rc<Vec<Rc<ShownClaim>>> {
        let store = world.store();
        let lock_ms = store.config().lock_ms;
        let stamp = (store.next_event_seq(), lock_ms);
        // Rows change only through store decisions (each logs an event) or a new lock_ms.
        if self.built == Some(stamp) {
            return self.rows.clone();
        }
        let rows = world
            .rows()
            .into_iter()
            .map(|r| ClaimRow {
                status: match r.state {
                    RowState::Done => ClaimStatus::Done,
                    RowState::Released => ClaimStatus::Released,
                    RowState::InFlight | RowState::Stale => ClaimStatus::InFlight,
                },
                scope: r.scope,
                key: r.key,
                fingerprint: r.fingerprint.chars().take(8).collect(),
                response: r.response_status.map(status_text).unwrap_or_default(),
                locked_at: r.locked_at,
                token: r.token,
                // A released row's lease counts down no more.
                lease_until: r
                    .locked_at
                    .filter(|_| r.state != RowState::Released)
                    .map(|at| at + lock_ms),
                created_at: r.created_at,
            })
            .collect();
        self.rows = merge_claims(&self.rows, rows, world.now());
        self.built = Some(stamp);
        self.rows.clone()
    }
}

/// `201` → `"201 Created"`.
pub fn status_text(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        402 => "Payment Required",
        409 => "Conflict",
        422 => "Unprocessable",
        500 => "Server Error",
        502 => "Bad Gateway",
        _ => "",
    };
    let mut text = status.to_string();
    if !reason.is_empty() {
        text.push(' ');
        text.push_str(reason);
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn status_texts() {
        assert_eq!(super::status_text(201), "201 Created");
        assert_eq!(super::status_text(418), "418");
    }
}
