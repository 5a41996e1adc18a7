//! idem-web: the demo page. A checkout retries through the simulator's lossy network against
//! idem-store compiled to WASM, with idem-client keeping the key in the browser's localStorage;
//! every panel shows what happens, live, in virtual time. Which module may use which:
//! `ARCHITECTURE.md`, "Layering" (`app` → `components` → `session` → `projection` → `model`).

mod app;
mod browser;
mod components;
mod journal;
mod model;
mod projection;
mod real;
mod session;

fn main() {
    yew::Renderer::<app::App>::new().render();
}

/// talc, not dlmalloc: smaller on wasm32 (see web/Cargo.toml); the page is single-threaded.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
