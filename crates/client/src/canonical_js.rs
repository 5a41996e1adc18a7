//! Canonical JSON (RFC 8785) of a JavaScript value, in JavaScript terms (wasm32 only).
//!
//! RFC 8785 was written around ECMAScript: its number serialisation *is* `Number.prototype
//! .toString` (what `JSON.stringify` writes for a finite number), its string escaping is
//! `JSON.stringify`'s (which is also serde_json's), and members are sorted by UTF-16 code units.
//! So the browser package canonicalizes with the browser's own number formatting instead of
//! shipping serde_json and serde_json_canonicalizer, and hands the bytes to the same
//! [`Operation`](crate::Operation) as an `OperationSpec<CanonicalPayload>`. The native path (and the simulator) keeps serde_json_canonicalizer;
//! the wasm tests check that both give the same bytes.
//!
//! JS values map as they did when the payload went through `serde_wasm_bindgen` into a
//! `serde_json::Value`: `null` and `undefined` are `null`; non-finite numbers are `null` (as in
//! `JSON.stringify`); a BigInt within `i64::MIN..=u64::MAX` is the number it rounds to; arrays
//! are arrays; `Map`s with string keys and other non-iterable objects are objects of their own
//! enumerable members; functions, symbols, byte arrays, other iterables (`Set`...) and nesting
//! deeper than 128 are errors.

use js_sys::{Array, Object, Reflect, JSON};
use wasm_bindgen::{JsCast, JsValue};

use crate::error::StartError;
use crate::json::{sort_by, utf16_less, write_str};
use crate::payload::CanonicalPayload;

/// How deep a payload may nest (serde_json's default limit).
const MAX_DEPTH: usize = 128;

impl CanonicalPayload {
    /// Canonicalizes a JavaScript value (RFC 8785) with the browser's own number formatting; the
    /// same bytes [`CanonicalPayload::new`] gives for the equivalent `serde_json::Value`.
    pub fn from_js(value: &JsValue) -> Result<Self, StartError> {
        let mut json = String::new();
        write_value(&mut json, value, MAX_DEPTH)
            .map_err(|message| StartError::Payload(message.to_owned()))?;
        Ok(CanonicalPayload::from_canonical(json))
    }
}

fn write_value(out: &mut String, value: &JsValue, depth: usize) -> Result<(), &'static str> {
    if value.is_null() || value.is_undefined() {
        out.push_str("null");
    } else if let Some(b) = value.as_bool() {
        out.push_str(if b { "true" } else { "false" });
    } else if let Some(s) = value.as_string() {
        write_str(out, &s);
    } else if value.as_f64().is_some() {
        write_number(out, value)?;
    } else if value.is_bigint() {
        // As serde_json_canonicalizer writes an i64 / u64: the double it rounds to.
        let number = match i64::try_from(value.clone()) {
            Ok(n) => n as f64,
            Err(value) => {
                u64::try_from(value).map_err(|_| "a BigInt outside i64::MIN..u64::MAX")? as f64
            }
        };
        write_number(out, &JsValue::from_f64(number))?;
    } else if value.is_object() {
        // Arrays and objects share one writing loop: an array's items as members without names.
        let depth = depth.checked_sub(1).ok_or("nested too deeply")?;
        let array = Array::is_array(value);
        let mut members: Vec<(String, JsValue)> = Vec::new();
        if array {
            for item in value.unchecked_ref::<Array>().iter() {
                members.push((String::new(), item));
            }
        } else {
            let entries = if let Some(map) = value.dyn_ref::<js_sys::Map>() {
                Array::from(&map.entries())
            } else if is_bytes(value)
                || Reflect::has(value, &js_sys::Symbol::iterator()).unwrap_or(true)
            {
                return Err("unsupported value (byte array or iterable)");
            } else {
                Object::entries(value.unchecked_ref())
            };
            for entry in entries.iter() {
                let entry: Array = entry.unchecked_into();
                let name = entry.get(0).as_string().ok_or("a non-string key")?;
                members.push((name, entry.get(1)));
            }
            // RFC 8785 §3.2.3: sorted by UTF-16 code units.
            sort_by(&mut members, |a, b| utf16_less(&a.0, &b.0));
        }
        out.push(if array { '[' } else { '{' });
        for (i, (name, item)) in members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if !array {
                write_str(out, name);
                out.push(':');
            }
            write_value(out, item, depth)?;
        }
        out.push(if array { ']' } else { '}' });
    } else {
        return Err("unsupported value (function or symbol)");
    }
    Ok(())
}

/// A number as ECMAScript writes it (`JSON.stringify`: `null` for NaN and the infinities).
fn write_number(out: &mut String, number: &JsValue) -> Result<(), &'static str> {
    let text = JSON::stringify(number).map_err(|_| "unserializable number")?;
    out.push_str(&String::from(text));
    Ok(())
}

/// What serde_wasm_bindgen read as bytes: an `ArrayBuffer` or a `Uint8Array`.
fn is_bytes(value: &JsValue) -> bool {
    value.is_instance_of::<js_sys::ArrayBuffer>() || value.is_instance_of::<js_sys::Uint8Array>()
}
