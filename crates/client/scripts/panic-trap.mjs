// The package's wasm, after wasm-bindgen (run with --keep-debug, so function names are there) and
// before wasm-opt (scripts/package.sh): std's panic runtime replaced by the trap it ends in.
//
//   node crates/client/scripts/panic-trap.mjs <out-dir>/idem_client_bg.wasm
//
// With `panic = "abort"` on wasm32-unknown-unknown, every panic ends in `unreachable` (a
// `RuntimeError` in the page) after std has run its hook: it boxes the message, formats it with
// `core::fmt` and writes it to stderr, which on this target goes nowhere. Nightly's
// `-Zbuild-std` with `panic_immediate_abort` drops that machinery; stable cannot, so the entry
// points into it are given the body `unreachable` here (binaryen's JS API, the `binaryen` package
// that provides wasm-opt) and wasm-opt then removes what only they reached. A panic still traps
// at the same call, with the same `RuntimeError`; nothing else changes. What it saves:
// README.pkg.md, "Size".
//
// Only functions that never return are rewritten: core's `panicking::*` (the `#[panic_handler]`
// entry `panic_fmt`, `panic`, bounds, `assert_*`, `panic_const_*`), the other `-> !` helpers
// that only format a message and panic (slice index and copy length, `RefCell` borrow,
// `LazyCell` poison, `unwrap` and `expect` on `None`/`Err`, capacity overflow, allocation
// failure, and std's out-of-memory handler, which reports to the same nowhere and aborts),
// std's `panic_with_hook` (where `panic!` and the panic handler meet) and the panic payloads'
// methods, which only that runtime calls through their vtables. The two entry points must be
// found, or the build stops: a toolchain that renamed them fails here instead of shipping the
// package unshrunk.
import { readFileSync, writeFileSync } from 'node:fs';
import binaryen from 'binaryen';

const fail = (why) => {
  throw new Error(`panic-trap: ${why}`);
};
const [wasmPath] = process.argv.slice(2);
if (!wasmPath) fail('usage: panic-trap.mjs <wasm>');

// Names as rustc's name section spells them (`core[<hash>]::...` for the standard library).
const diverging = [
  /^core\[[0-9a-f]+\]::panicking::/,
  /^std\[[0-9a-f]+\]::panicking::panic_with_hook$/,
  /^<std\[[0-9a-f]+\]::panicking::(panic_handler::(FormatStringPayload|StaticStrPayload)|begin_panic::Payload<[^>]*>) as /,
  /^core\[[0-9a-f]+\]::ptr::drop_in_place::<std\[[0-9a-f]+\]::panicking::panic_handler::FormatStringPayload>$/,
  /^core\[[0-9a-f]+\]::slice::index::slice_index_fail$/,
  /^core\[[0-9a-f]+\]::cell::panic_already_(mutably_)?borrowed$/,
  /^core\[[0-9a-f]+\]::cell::lazy::panic_poisoned$/,
  /^core\[[0-9a-f]+\]::(option|result)::(unwrap|expect)_failed$/,
  /^core\[[0-9a-f]+\]::slice::copy_from_slice_impl::len_mismatch_fail$/,
  /^alloc\[[0-9a-f]+\]::alloc::handle_alloc_error$/,
  /^alloc\[[0-9a-f]+\]::raw_vec::(handle_error|capacity_overflow)$/,
  /^std\[[0-9a-f]+\]::alloc::rust_oom$/,
  /^__rustc\[[0-9a-f]+\]::(__rust_alloc_error_handler|rust_panic)$/,
];
const required = [/::panicking::panic_fmt$/, /::panicking::panic_with_hook$/];

// core::fmt's machinery, which only the panic runtime above reaches in this package: the
// functions and vtable methods that format a panic's message (`fmt::write`, padding, the
// integer and `&str` formatters, `RefCell`'s borrow errors, and `String`'s `fmt::Write` methods
// that a message is written into). The package's own code formats nothing (no `format!`, `to_string` or `{}`:
// its messages are concatenated `&str`s and its numbers go through `json::write_u64`), and this
// is checked, not assumed: each of these functions may be called directly only by one another
// or by the panic functions above (a `format!` would add `alloc::fmt::format` as a caller of
// `fmt::write`, a `to_string()` its `Display` impl as a caller of `Formatter::pad`), or the
// build stops. Their remaining way in is the function table (the vtables of a panic's
// arguments), which the panic functions no longer use.
const formatting = [
  /^core\[[0-9a-f]+\]::fmt::write$/,
  /^<core\[[0-9a-f]+\]::fmt::Formatter>::pad(_integral)?$/,
  /^<core\[[0-9a-f]+\]::fmt::Arguments as core\[[0-9a-f]+\]::fmt::Display>::fmt$/,
  /^<alloc\[[0-9a-f]+\]::string::String as core\[[0-9a-f]+\]::fmt::Write>::write_(fmt|str|char)$/,
  /^<(u32|&usize|&str|core\[[0-9a-f]+\]::cell::BorrowMutError|core\[[0-9a-f]+\]::cell::BorrowError) as core\[[0-9a-f]+\]::fmt::(Display|Debug)>::fmt$/,
  /^<&dyn core\[[0-9a-f]+\]::fmt::Debug as core\[[0-9a-f]+\]::fmt::Debug>::fmt$/,
];

await binaryen.ready;
binaryen.setDebugInfo(true); // keep the name section for wasm-opt's --strip-debug to drop
const module = binaryen.readBinary(readFileSync(wasmPath));

// Who calls (or takes a reference to) whom, from the text form: `(func $name` opens a function.
const unquote = (n) => (n.startsWith('$"') ? n.slice(2, -1) : n.slice(1));
const callers = new Map(); // callee -> set of callers
const exported = new Set();
let current;
for (const line of module.emitText().split('\n')) {
  const func = /^ \(func (\$"[^"]*"|\$[^\s()]+)/.exec(line);
  if (func) current = unquote(func[1]);
  else if (/^ \(/.test(line)) current = undefined;
  const exp = /^ \(export "[^"]*" \(func (\$"[^"]*"|\$[^\s()]+)\)/.exec(line);
  if (exp) exported.add(unquote(exp[1]));
  if (!current) continue;
  for (const m of line.matchAll(/\((?:call|return_call|ref\.func) (\$"[^"]*"|\$[^\s()]+)/g)) {
    const callee = unquote(m[1]);
    if (!callers.has(callee)) callers.set(callee, new Set());
    callers.get(callee).add(current);
  }
}

const defined = [];
for (let i = 0; i < module.getNumFunctions(); i++) {
  const f = module.getFunctionByIndex(i);
  const info = binaryen.getFunctionInfo(f);
  if (!info.module) defined.push([f, info.name]); // not an import
}
const matches = (list, name) => list.some((re) => re.test(name));
const panics = new Set(defined.filter(([, n]) => matches(diverging, n)).map(([, n]) => n));
const formats = new Set(defined.filter(([, n]) => matches(formatting, n)).map(([, n]) => n));
for (const re of required) {
  if (![...panics].some((name) => re.test(name))) fail(`no function matches ${re}: has the toolchain renamed it?`);
}
for (const name of formats) {
  if (exported.has(name)) fail(`${name} is exported`);
  for (const caller of callers.get(name) ?? []) {
    if (!panics.has(caller) && !formats.has(caller)) {
      fail(`${caller} calls ${name}: the package formats text outside a panic, so core::fmt must stay`);
    }
  }
}
for (const [f, name] of defined) {
  if (panics.has(name) || formats.has(name)) binaryen.Function.setBody(f, module.unreachable());
}
if (!module.validate()) fail('the rewritten module does not validate');
writeFileSync(wasmPath, module.emitBinary());
module.dispose();
console.log(`[package] panic-trap: ${panics.size} panic and ${formats.size} formatting functions now trap at once`);
