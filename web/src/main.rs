//! idem-web: the demo page.
use yew::prelude::*;

#[function_component]
fn App() -> Html {
    html! {
        <main>
            <h1>{ "idem" }</h1>
            <p>{ "Retry a card charge safely: one idempotency key per checkout, kept across every retry." }</p>
        </main>
    }
}

fn main() {
    yew::Renderer::<App>::new().render();
}
