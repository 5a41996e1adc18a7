// The package's wasm and JS glue, after wasm-bindgen and before wasm-opt (scripts/package.sh):
// short import names in both, and the glue minified. What each saves: README.pkg.md, "Size".
//
//   node crates/client/scripts/shrink-glue.mjs <out-dir>/idem_client_bg.wasm <out-dir>/idem_client.js
//
// 1. wasm-bindgen names each import `__wbg_<method>_<16 hex digits>`, spells it in full in the
//    wasm's import section and as a key of the glue's import object, and hex digits do not
//    compress. Both are renamed to short names here (and the import module, which the glue names
//    once, to a short one). The exports too, all but `memory`: wasm-bindgen's allocator, externref
//    table and start function, the class's method shims and the closures' entry points
//    (`wasm_bindgen__convert__closures_____invoke__h<16 hex digits>`), which only the glue calls;
//    `InitOutput` in `idem_client.d.ts` (what `init()` and `initSync()` return) and
//    `idem_client_bg.wasm.d.ts` declare them, and are renamed alike (three that the glue never
//    reads are not exported at all, below). binaryen's
//    `--minify-imports-and-exports-and-modules` (which the demo's scripts/shrink-glue.mjs uses)
//    renames both, and its `--minify-imports` renames only imports from `env`, so the import
//    section is rewritten here, a few lines of the format's own encoding.
// 2. terser (pinned in the root package.json) minifies the glue: no comments or indentation,
//    short local names. `IdempotentClient`, `initSync` and the default export keep their names
//    (`.name` is part of what a page sees); the `@ts-self-types` comment stays (Deno reads it).
//
// An import key the glue does not spell exactly once where expected, an export the glue calls
// or a declaration names other than this script expects, or a wasm this reader does not
// understand, stops the build: a wasm-bindgen whose output this script does not know fails
// here, not in a page. The package's Playwright specs run against this output.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { minify } from 'terser';

const fail = (why) => {
  throw new Error(`shrink-glue: ${why}`);
};
const [wasmPath, jsPath] = process.argv.slice(2);
if (!wasmPath || !jsPath) fail('usage: shrink-glue.mjs <wasm> <glue.js>');

// --- the wasm's import section ---------------------------------------------------------------------

const wasm = readFileSync(wasmPath);
const leb = (at) => {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    const byte = wasm[at++];
    if (byte === undefined) fail('truncated LEB128');
    value |= BigInt(byte & 0x7f) << shift;
    shift += 7n;
    if (byte < 0x80) return [Number(value), at];
  }
};
const encodeLeb = (n) => {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return Buffer.from(out);
};
const name = (s) => {
  const bytes = Buffer.from(s, 'utf8');
  return Buffer.concat([encodeLeb(bytes.length), bytes]);
};

if (wasm.readUInt32LE(0) !== 0x6d736100 || wasm.readUInt32LE(4) !== 1) fail(`${wasmPath} is not a wasm module`);
// Short names: identifiers a, b, ..., z, A, ..., Z, aa, ab, ... (never `__proto__`, the import
// object's one other key).
const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const short = (i) => (i < letters.length ? letters[i] : short(Math.floor(i / letters.length) - 1) + letters[i % letters.length]);
const renaming = new Map(); // long import name -> short one
// Every export but `memory` (wasm-bindgen's allocator, externref table, start function, the
// class's method shims and the closures' entry points, `..._invoke__h<16 hex digits>` with a new
// hash in each build) gets a short name too: the glue is their one caller. `InitOutput` in
// `idem_client.d.ts` (what `init()` resolves to) and `idem_client_bg.wasm.d.ts` declare them, so
// both files are renamed alike; `memory` keeps its name there.
const exported = new Map(); // long export name -> short one
// Exports the glue never reads are not exported at all: wasm-bindgen's `__abort_handler` and
// `__instance_terminated` globals and `__wbindgen_free` (the glue frees nothing: the wasm frees
// what it was passed). The wasm keeps using them inside; their declaration goes too (−27 B).
const unused = new Set(['__abort_handler', '__instance_terminated', '__wbindgen_free']);
const dropped = [];
const exportSection = (start, end) => {
  let [count, p] = leb(start);
  const out = [];
  for (let i = 0; i < count; i++) {
    const [len, from] = leb(p);
    let field = wasm.toString('utf8', from, from + len);
    p = from + len;
    const descStart = p;
    p++; // kind
    [, p] = leb(p); // index
    if (unused.has(field)) {
      dropped.push(field);
      continue;
    }
    if (field !== 'memory') {
      if (exported.has(field)) fail(`export ${field} twice`);
      exported.set(field, short(exported.size));
      field = exported.get(field);
    }
    out.push(name(field), wasm.subarray(descStart, p));
  }
  if (p !== end) fail('the export section has bytes this reader does not know');
  const body = Buffer.concat([encodeLeb(count - dropped.length), ...out]);
  return Buffer.concat([Buffer.from([7]), encodeLeb(body.length), body]);
};
let module;
const parts = [wasm.subarray(0, 8)];
let at = 8;
while (at < wasm.length) {
  const id = wasm[at];
  const [size, start] = leb(at + 1);
  const end = start + size;
  if (id === 7) {
    parts.push(exportSection(start, end));
    at = end;
    continue;
  }
  if (id !== 2) {
    parts.push(wasm.subarray(at, end));
    at = end;
    continue;
  }
  let [count, p] = leb(start);
  const out = [encodeLeb(count)];
  for (let i = 0; i < count; i++) {
    const strings = [];
    for (let s = 0; s < 2; s++) {
      const [len, from] = leb(p);
      strings.push(wasm.toString('utf8', from, from + len));
      p = from + len;
    }
    const descStart = p;
    const kind = wasm[p++];
    const limits = () => {
      const flags = wasm[p++];
      if (flags & ~0x07) fail(`unknown limits flags ${flags}`);
      [, p] = leb(p);
      if (flags & 1) [, p] = leb(p);
    };
    if (kind === 0x00) [, p] = leb(p); // function: type index
    else if (kind === 0x01) (p++, limits()); // table: reference type, limits
    else if (kind === 0x02) limits(); // memory
    else if (kind === 0x03) p += 2; // global: value type, mutability
    else fail(`unknown import kind ${kind}`);
    const [from, field] = strings;
    if (module === undefined) module = from;
    if (from !== module) fail(`imports from ${module} and ${from}: expected one module`);
    if (renaming.has(field)) fail(`import ${field} twice`);
    renaming.set(field, short(renaming.size));
    out.push(name('a'), name(renaming.get(field)), wasm.subarray(descStart, p));
  }
  if (p !== end) fail('the import section has bytes this reader does not know');
  const body = Buffer.concat(out);
  parts.push(Buffer.from([2]), encodeLeb(body.length), body);
  at = end;
}
if (module === undefined) fail('no imports found');
writeFileSync(wasmPath, Buffer.concat(parts));

// --- the glue ------------------------------------------------------------------------------------

let js = readFileSync(jsPath, 'utf8');
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const replaceOnce = (re, by, what) => {
  const hits = js.match(re)?.length ?? 0;
  if (hits !== 1) fail(`${what} is found ${hits} times in the glue, not once`);
  js = js.replace(re, by);
};
replaceOnce(new RegExp(`"${escape(module)}": import0,`, 'g'), '"a": import0,', 'the import module');
for (const [long, to] of renaming) {
  replaceOnce(new RegExp(`^(\\s+)${escape(long)}: `, 'gm'), (_, indent) => `${indent}${to}: `, `import ${long}`);
}
// Each export is a `wasm.<name>` property in the glue (the closures' entry points also name a
// wrapper function, which terser renames anyway; `__wbindgen_free` it never calls); none may be
// left under its long name.
for (const [long, to] of exported) {
  const re = new RegExp(`\\bwasm\\.${escape(long)}\\b`, 'g');
  js = js.replace(re, `wasm.${to}`);
}
const left = [...js.matchAll(/\bwasm\.([A-Za-z_$][\w$]*)/g)].map((m) => m[1]);
for (const long of dropped) {
  if (js.includes(long)) fail(`the glue names ${long}, which is not exported any more`);
}
for (const name of left) {
  if (name !== 'memory' && ![...exported.values()].includes(name)) fail(`the glue calls wasm.${name}, no export`);
}
for (const declarations of ['idem_client.d.ts', 'idem_client_bg.wasm.d.ts']) {
  const path = join(dirname(jsPath), declarations);
  let text = readFileSync(path, 'utf8');
  for (const long of dropped) {
    const re = new RegExp(`^\\s*(?:readonly|export const) ${escape(long)}:.*\\n`, 'gm');
    const hits = text.match(re)?.length ?? 0;
    if (hits > 1 || (hits === 0 && text.includes(long))) fail(`export ${long} is declared ${hits} times in ${declarations}`);
    text = text.replace(re, '');
  }
  for (const [long, to] of exported) {
    const re = new RegExp(`^(\\s*(?:readonly|export const) )${escape(long)}:`, 'gm');
    const hits = text.match(re)?.length ?? 0;
    // Not declared at all (wasm-bindgen's `__abort_handler`, which the glue never calls): fine.
    if (hits === 0 && !text.includes(long)) continue;
    if (hits !== 1) fail(`export ${long} is declared ${hits} times in ${declarations}, not once`);
    text = text.replace(re, `$1${to}:`);
  }
  writeFileSync(path, text);
}

// ecma 2020 (wasm-bindgen's glue already needs an ES2020 engine: `import.meta`, BigInt), with
// function expressions that use neither `this` nor `arguments` made arrows and object members
// made methods (`unsafe_*` only because neither can be called with `new`; the wasm's imports
// and the glue's helpers never are): −39 B gzip.
const min = await minify(js, {
  module: true,
  ecma: 2020,
  compress: { passes: 2, ecma: 2020, unsafe_arrows: true, unsafe_methods: true },
  mangle: true,
  keep_classnames: true,
  keep_fnames: /^(initSync|__wbg_init)$/,
  format: { comments: /@ts-self-types/, ecma: 2020 },
});
if (!min.code) fail('terser produced nothing');
writeFileSync(jsPath, min.code);
console.log(`[package] shrink-glue: ${renaming.size} imports and ${exported.size} exports renamed; glue minified to ${Buffer.byteLength(min.code)} B`);
