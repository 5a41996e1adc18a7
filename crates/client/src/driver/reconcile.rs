//! Reconciling an open operation over `fetch`: one `GET` to the server's key-state endpoint,
//! read by [`KeyState::from_reply`], settled by
//! [`Operation::handle_key_state`](crate::Operation::handle_key_state). The JS bindings'
//! `reconcile(name)` and the demo's real-server mode both come through here.

use super::{fetch, now_ms, MathRandom};
use crate::journal::Journal;
use crate::json::u64_string;
use crate::operation::Operation;
use crate::reconcile::KeyState;

/// Asks `url` (the key-state endpoint with `op`'s key in it; `headers` name the same tenant as
/// the attempts) what became of the key, aborting at `deadline`, and settles `op` from the
/// answer: a [`KeyState::Done`] (or [`KeyState::BoundToAnotherRequest`]) finishes it and, if the journal still holds the record asked
/// about (another tab or a running call may have settled or discarded it meanwhile), replaces
/// that record by a settled entry. The key's state, or why none was learned, in words (no
/// answer, or an answer that is no key state: a 401, a 5xx, a body of something else).
pub async fn reconcile(
    op: &mut Operation,
    url: &str,
    headers: &[(String, String)],
    journal: &mut dyn Journal,
    deadline: u64,
) -> Result<KeyState, String> {
    let reply = fetch::get(url, headers, deadline).await?;
    let state = KeyState::from_reply(reply.status, &reply.body, op.payload())
        .ok_or_else(|| ["answered ", &u64_string(u64::from(reply.status))].concat())?;
    let now = now_ms();
    if op.handle_key_state(now, &state)
        && matches!(journal.load(op.name()), Ok(Some(r)) if Some(r.key) == op.key())
    {
        // The next poll settles the journal.
        let _ = op.poll(now, journal, &mut MathRandom);
    }
    Ok(state)
}
