//! The tenant's event stream: an `EventSource` on idem-server's `GET /api/events`, with the
//! tenant in `?access_token=` (an `EventSource` cannot send headers). The server names its
//! events `store`; each one's `data` goes to the controller as text. The browser reconnects by
//! itself after a drop and resumes after the last id it saw (`Last-Event-ID`).

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{Event, EventSource, MessageEvent};

/// An open stream; dropping it closes the connection.
pub struct Stream {
    source: EventSource,
    _on_store: Closure<dyn FnMut(MessageEvent)>,
    _on_open: Closure<dyn FnMut(Event)>,
    _on_error: Closure<dyn FnMut(Event)>,
}

impl Stream {
    /// Opens `url`: `on_data` gets each event's data, `on_link` whether the connection is up
    /// (`false` while the browser reconnects).
    pub fn open(
        url: &str,
        mut on_data: impl FnMut(String) + 'static,
        on_link: impl Fn(bool) + 'static,
    ) -> Option<Stream> {
        let source = EventSource::new(url).ok()?;
        let on_store = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            if let Some(data) = e.data().as_string() {
                on_data(data);
            }
        });
        let on_link = std::rc::Rc::new(on_link);
        let up = on_link.clone();
        let on_open = Closure::<dyn FnMut(Event)>::new(move |_| up(true));
        let on_error = Closure::<dyn FnMut(Event)>::new(move |_| on_link(false));
        let _ = source.add_event_listener_with_callback("store", on_store.as_ref().unchecked_ref());
        source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Some(Stream {
            source,
            _on_store: on_store,
            _on_open: on_open,
            _on_error: on_error,
        })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.source.close();
    }
}
