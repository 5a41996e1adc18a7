//! `GET /api/events`: the store's event log as server-sent events, for a live view of the
//! claim table. Only the caller's tenant's events are sent, and only this process's (each
//! server logs its own decisions). Each event's SSE `id` is its sequence number, so a
//! reconnecting `EventSource` resumes after the last one it saw (`Last-Event-ID`): the stream
//! first replays the held events from there, then follows new ones live. A gap in the
//! numbers means the bounded log dropped events.
//!
//! The stream ends when the service starts draining for shutdown (the request's
//! [`Draining`] extension): it would otherwise hold the shutdown for the whole drain
//! deadline, since it never finishes on its own. A browser's `EventSource` reconnects
//! (to this server after a restart, or to another) and resumes from `Last-Event-ID`.

use std::{convert::Infallible, sync::Arc};

use axum::{
    extract::{Request, State},
    response::{
        sse::{Event as Sse, KeepAlive},
        IntoResponse, Response,
    },
};
use futures_util::stream;
use idem_store::Event;
use tokio::sync::broadcast::{error::RecvError, Receiver};

use super::Checkout;
use crate::{ops::health::Draining, request::Scope};

/// The handler.
pub async fn events(
    State(app): State<Checkout>,
    Scope(scope): Scope,
    request: Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let from = parts
        .headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(0, |seen| seen.saturating_add(1));
    let draining = parts
        .extensions
        .get::<Draining>()
        .cloned()
        .unwrap_or_else(Draining::never);
    // Subscribe before reading the backlog, so nothing falls between the two.
    let live = app.db.subscribe();
    let mut backlog = app.db.events_since(from);
    backlog.reverse();
    let cursor = Cursor {
        app,
        scope,
        next: from,
        backlog,
        live,
        draining,
    };
    let events = stream::unfold(cursor, |mut cursor| async move {
        let event = cursor.next_or_drain().await?;
        Some((Ok::<_, Infallible>(event), cursor))
    });
    axum::response::Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

struct Cursor {
    app: Checkout,
    scope: Arc<str>,
    /// The lowest seq not sent yet.
    next: u64,
    /// Held events not sent yet, last first.
    backlog: Vec<Event>,
    live: Receiver<Event>,
    /// Ends the stream when the service starts draining.
    draining: Draining,
}

impl Cursor {
    /// The next event, or `None` once the service drains.
    async fn next_or_drain(&mut self) -> Option<Sse> {
        let mut draining = self.draining.clone();
        tokio::select! {
            biased;
            () = draining.started() => None,
            event = self.next_event() => event,
        }
    }

    /// The next event of this scope, or `None` when the log is gone (the server stops).
    async fn next_event(&mut self) -> Option<Sse> {
        loop {
            let event = match self.backlog.pop() {
                Some(event) => event,
                None => match self.live.recv().await {
                    Ok(event) => event,
                    // Fell behind the live channel: catch up from the log.
                    Err(RecvError::Lagged(_)) => {
                        self.backlog = self.app.db.events_since(self.next);
                        self.backlog.reverse();
                        continue;
                    }
                    Err(RecvError::Closed) => return None,
                },
            };
            if event.seq() < self.next {
                continue; // Already sent from the backlog.
            }
            self.next = event.seq().saturating_add(1);
            if event.scope() != &*self.scope {
                continue;
            }
            match Sse::default()
                .id(event.seq().to_string())
                .event("store")
                .json_data(&event)
            {
                Ok(sse) => return Some(sse),
                Err(e) => tracing::warn!(error = %e, "event not encodable"),
            }
        }
    }
}
