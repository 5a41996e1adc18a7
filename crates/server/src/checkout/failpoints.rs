//! `GET /api/failpoints` and `PUT /api/failpoints/{point}` (body: the verdict): the
//! process-wide [`checkpoint`](super::checkpoint)s, mounted only when the server was started
//! with failpoints enabled (loopback only). The checkout and the receipts service both mount
//! them, over their own [`Checkpoints`].

use axum::{body::Bytes, extract::State, response::Response};

use super::checkpoint::{Checkpoints, Verdict};
use crate::{
    problems,
    request::PathParam,
    wire::{json, to_response},
};

/// Every point's verdict (as `step` and `action`, the names this endpoint has always used).
pub async fn list<S: AsRef<Checkpoints>>(State(app): State<S>) -> Response {
    let settings: Vec<_> = app
        .as_ref()
        .settings()
        .into_iter()
        .map(|(point, verdict)| serde_json::json!({ "step": point, "action": verdict }))
        .collect();
    to_response(json(200, &settings, &[]))
}

/// Set one point's verdict.
pub async fn set<S: AsRef<Checkpoints>>(
    State(app): State<S>,
    PathParam(point): PathParam<String>,
    body: Bytes,
) -> Response {
    let parsed = point.parse().and_then(|point| {
        let verdict: Verdict = String::from_utf8_lossy(&body).trim().parse()?;
        app.as_ref().set(point, verdict).map(|()| (point, verdict))
    });
    to_response(match parsed {
        Ok((point, verdict)) => json(
            200,
            &serde_json::json!({ "step": point, "action": verdict }),
            &[],
        ),
        Err(e) => problems::invalid_parameters(&e.to_string()),
    })
}
