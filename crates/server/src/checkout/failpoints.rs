//! `GET /api/failpoints` and `PUT /api/failpoints/{step}` (body: the action), mounted only when
//! the server was started with failpoints enabled (loopback only).

use axum::{body::Bytes, extract::State, response::Response};

use super::Checkout;
use crate::{
    failpoint::Action,
    problems,
    request::PathParam,
    wire::{json, to_response},
};

/// Every step's action.
pub async fn list(State(app): State<Checkout>) -> Response {
    let actions: Vec<_> = app
        .failpoints
        .actions()
        .into_iter()
        .map(|(step, action)| serde_json::json!({ "step": step, "action": action }))
        .collect();
    to_response(json(200, &actions, &[]))
}

/// Set one step's action.
pub async fn set(
    State(app): State<Checkout>,
    PathParam(step): PathParam<String>,
    body: Bytes,
) -> Response {
    let parsed = step.parse().and_then(|step| {
        let action: Action = String::from_utf8_lossy(&body).trim().parse()?;
        app.failpoints.set(step, action).map(|()| (step, action))
    });
    to_response(match parsed {
        Ok((step, action)) => json(
            200,
            &serde_json::json!({ "step": step, "action": action }),
            &[],
        ),
        Err(e) => problems::invalid_parameters(&e.to_string()),
    })
}
