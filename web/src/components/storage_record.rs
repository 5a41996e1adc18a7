//! The browser's real localStorage record of the current checkout, as idem-client wrote it
//! before the first attempt left.

use yew::prelude::*;

use crate::model::view::View;

/// The storage record panel (a function, not a component: see `help`).
pub fn storage_record(view: &View) -> Html {
    let body = match &view.storage {
        None => html! {
            <p class="empty" data-testid="storage-empty">
                { "Nothing stored. In same-key mode, Pay writes the key here before the first attempt leaves." }
            </p>
        },
        Some(r) => html! {
            <dl class="kv">
                <dt>{ "localStorage item" }</dt><dd><code data-testid="storage-item">{ &r.storage_key }</code></dd>
                <dt>{ "Idempotency-Key" }</dt><dd><code class="key" data-testid="storage-key">{ &r.key }</code></dd>
                <dt>{ "payload" }</dt><dd><code data-testid="storage-payload">{ &r.payload }</code></dd>
                <dt>{ "attempts" }</dt><dd data-testid="storage-attempts">{ r.attempts }</dd>
                <dt>{ "state" }</dt><dd data-testid="storage-state">{ &r.state }</dd>
            </dl>
        },
    };
    let key = view
        .storage
        .as_ref()
        .map(|r| r.key.clone())
        .unwrap_or_default();
    let attempts = view.storage.as_ref().map(|r| r.attempts).unwrap_or(0);
    html! {
        <section class="panel storage" aria-labelledby="h-storage" data-testid="storage-record"
            data-key={key} data-attempts={attempts.to_string()} data-present={view.storage.is_some().to_string()}>
            <h2 id="h-storage">{ "Browser storage" } <span class="sub">{ "window.localStorage, real" }</span></h2>
            { body }
        </section>
    }
}
