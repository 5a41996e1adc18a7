//! `GET /api/events`: the store's event log as server-sent events, for a live view of the
//! claim table. Only the caller's tenant's events are sent. Each event's SSE `id` is its
//! sequence number, so a reconnecting `EventSource` resumes after the last one it saw
//! (`Last-Event-ID`); a gap in the numbers means the bounded log dropped events.

use std::{convert::Infallible, sync::Arc, time::Duration};

use axum::{
    extract::{Request, State},
    response::{
        sse::{Event as Sse, KeepAlive},
        IntoResponse, Response,
    },
};
use futures_util::stream;

use super::{views::scope, Checkout};
use crate::wire::to_response;

/// How often the stream looks for new events.
const POLL: Duration = Duration::from_millis(250);
/// Most events read per poll.
const BATCH: usize = 256;

/// The handler.
pub async fn events(State(app): State<Checkout>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let scope = match scope(&app, &parts) {
        Ok(scope) => scope,
        Err(refused) => return to_response(refused),
    };
    let from = parts
        .headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(0, |seen| seen.saturating_add(1));
    let state = Cursor {
        app,
        scope,
        next: from,
        ready: Vec::new(),
    };
    let events = stream::unfold(state, |mut cursor| async move {
        loop {
            if let Some(event) = cursor.ready.pop() {
                return Some((Ok::<_, Infallible>(event), cursor));
            }
            cursor.fill().await;
            if cursor.ready.is_empty() {
                tokio::time::sleep(POLL).await;
            }
        }
    });
    axum::response::Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

struct Cursor {
    app: Checkout,
    scope: Arc<str>,
    next: u64,
    /// Encoded events not sent yet, last first.
    ready: Vec<Sse>,
}

impl Cursor {
    async fn fill(&mut self) {
        let events = match self.app.db.events_since(self.next, BATCH).await {
            Ok(events) => events,
            Err(e) => {
                // The database is away: say so on the stream and try again next poll.
                tracing::debug!(error = %e, "event stream: storage unavailable");
                tokio::time::sleep(POLL).await;
                self.ready
                    .push(Sse::default().event("unavailable").data(e.to_string()));
                return;
            }
        };
        for event in events.iter().rev() {
            self.next = self.next.max(event.seq().saturating_add(1));
            if event.scope() != &*self.scope {
                continue;
            }
            match Sse::default()
                .id(event.seq().to_string())
                .event("store")
                .json_data(event)
            {
                Ok(sse) => self.ready.push(sse),
                Err(e) => tracing::warn!(error = %e, "event not encodable"),
            }
        }
    }
}
