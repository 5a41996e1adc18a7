// The package's wasm after wasm-opt (scripts/package.sh): the panic messages and the source paths
// of panic locations, which no code reads any more once panic-trap.mjs has made every panic trap
// at once, zeroed in the data section (then wasm-opt's memory packing drops them).
//
//   node crates/client/scripts/panic-strings.mjs <out-dir>/idem_client_bg.wasm
//
// rustc lays these out as read-only data: each panic location a `core::panic::Location` (a
// `&str` file path, line, column: 16 bytes) pointing at its path, each panic message a string the
// formatting call pointed at. The code that pointed at them (argument set-up for the panic
// functions) is gone, but binaryen cannot know which data no code reads, so it keeps them.
//
// A string is zeroed only if nothing can still reach it: no `i32.const` and no load or store
// offset in the code points into it, and no 4-byte word elsewhere in the data does (a pointer
// in a vtable or a static), apart from the dead locations themselves. Candidates are found by shape (the file
// paths rustc records: `/rustc/<hash>/library/...`, the registry's, the workspace's `crates/`)
// and by the panic messages of core and alloc listed below; anything not proven unreferenced
// stays. What it saves: README.pkg.md, "Size".
import { readFileSync, writeFileSync } from 'node:fs';
import binaryen from 'binaryen';

const fail = (why) => {
  throw new Error(`panic-strings: ${why}`);
};
const [wasmPath] = process.argv.slice(2);
if (!wasmPath) fail('usage: panic-strings.mjs <wasm>');
const wasm = readFileSync(wasmPath);

// --- the data section: where each segment's bytes lie in the file and in memory ----------------
const uleb = (at) => {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = wasm[at++];
    if (byte === undefined) fail('truncated LEB128');
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, at];
  }
};
const sleb32 = (at) => {
  let value = 0;
  let shift = 0;
  let byte;
  do {
    byte = wasm[at++];
    value |= (byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  if (shift < 32 && byte & 0x40) value |= -1 << shift;
  return [value >>> 0, at];
};
const segments = []; // { address, file (offset of the bytes in the file), length }
let at = 8;
while (at < wasm.length) {
  const id = wasm[at];
  const [size, start] = uleb(at + 1);
  if (id === 11) {
    let [count, p] = uleb(start);
    for (let i = 0; i < count; i++) {
      const [flags, q] = uleb(p);
      if (flags !== 0) fail(`data segment flags ${flags}: only active segments of memory 0 are read`);
      if (wasm[q] !== 0x41) fail('a data segment whose offset is not an i32.const');
      const [address, r] = sleb32(q + 1);
      if (wasm[r] !== 0x0b) fail('a data segment offset expression longer than one i32.const');
      const [length, bytes] = uleb(r + 1);
      segments.push({ address, file: bytes, length });
      p = bytes + length;
    }
  }
  at = start + size;
}
if (segments.length === 0) fail('no data section');
const byteAt = (address) => {
  for (const s of segments) if (address >= s.address && address < s.address + s.length) return wasm[s.file + address - s.address];
  return undefined;
};
const wordAt = (address) => {
  const b = [0, 1, 2, 3].map((i) => byteAt(address + i));
  return b.includes(undefined) ? undefined : (b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)) >>> 0;
};

// --- candidates: panic location paths and messages ----------------------------------------------
const messages = [
  'slice index starts at ', ' but ends at ', 'index out of bounds: the len is ', ' but the index is ',
  'range start index ', ' out of range for slice of length ', 'range end index ',
  'assertion `left ', ' right` failed: ', ' right` failed', '  left: ', '\n right: ',
  'RefCell already mutably borrowed', 'RefCell already borrowed',
  'LazyCell instance has previously been poisoned', 'attempt to divide by zero',
  'attempt to calculate the remainder with a divisor of zero', '`async fn` resumed after completion',
  'copy_from_slice: source slice length (', ') does not match destination slice length (',
  'called `Option::unwrap()` on a `None` value', 'called `Result::unwrap()` on an `Err` value',
  'capacity overflow', 'internal error: entered unreachable code',
  'attempt to join into collection with len > usize::MAX', 'Tried to shrink to a larger capacity',
  // js-sys's futures and wasm-bindgen's closures (`expect`), uuid's generator.
  'finish: callbacks should be Some', 'finish: result should be None', 'FnOnce called more than once',
  'could not retrieve random bytes for uuid',
  // core::fmt's two-digit table for integers.
  Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''),
];
const path = /(\/rustc\/[0-9a-f]{40}\/library\/|\/[^\0]*?\.cargo\/registry\/src\/[^/\0]+\/|crates\/)[A-Za-z0-9_./-]+\.rs/g;
const candidates = []; // [start, end) in memory
for (const s of segments) {
  const text = wasm.toString('latin1', s.file, s.file + s.length);
  for (const m of text.matchAll(path)) candidates.push([s.address + m.index, s.address + m.index + m[0].length]);
  for (const message of messages) {
    let from = 0;
    for (;;) {
      const i = text.indexOf(message, from);
      if (i < 0) break;
      candidates.push([s.address + i, s.address + i + message.length]);
      from = i + message.length;
    }
  }
}
// The locations pointing at a candidate path: (ptr, len, line, column), 4-byte aligned.
const paths = new Map(candidates.map(([a, b]) => [a, b - a]));
const locations = [];
for (const s of segments) {
  for (let a = (s.address + 3) & ~3; a + 16 <= s.address + s.length; a += 4) {
    const ptr = wordAt(a);
    if (paths.has(ptr) && paths.get(ptr) === wordAt(a + 4)) locations.push([a, a + 16]);
  }
}
const ranges = [...candidates, ...locations].sort((x, y) => x[0] - y[0]);
const inRange = (list, address) => list.some(([a, b]) => address >= a && address < b);

// --- what still points into data: code constants and offsets, and data words -------------------
await binaryen.ready;
const module = binaryen.readBinary(wasm);
const code = module.emitText();
module.dispose();
// Every i32 constant, and both halves of every i64 constant (LLVM stores a `&str`'s pointer and
// length as one i64).
const consts = [...new Set([
  ...[...code.matchAll(/i32\.const (-?\d+)/g)].map((m) => Number(m[1]) >>> 0),
  ...[...code.matchAll(/i64\.const (-?\d+)/g)].flatMap((m) => {
    const v = BigInt.asUintN(64, BigInt(m[1]));
    return [Number(v & 0xffffffffn), Number(v >> 32n)];
  }),
])];
const offsets = [...new Set([...code.matchAll(/offset=(\d+)/g)].map((m) => Number(m[1])))];
// A pointer reaches [start, end) if it lies in it: rustc addresses a static by its own address
// (plus a field's offset, which binaryen folds into the constant or the load's offset), and a
// `&str` into the middle of a message by that middle.
const hits = (pointer, [start, end]) => pointer >= start && pointer < end;
const byCode = (range) => consts.some((c) => hits(c, range)) || offsets.some((o) => hits(o, range));
// The data's words, each with where it lies, at every byte (a pointer in a packed struct too).
const words = [];
for (const s of segments) {
  for (let a = s.address; a + 4 <= s.address + s.length; a++) words.push([a, wordAt(a)]);
}
// Live: reached by code, or by a word outside the ranges not (yet) live; to a fixed point, since a
// live location keeps its path.
const live = new Set(ranges.filter(byCode));
for (let changed = true; changed; ) {
  changed = false;
  const deadNow = ranges.filter((r) => !live.has(r));
  const pointers = words.filter(([a]) => !inRange(deadNow, a) && !inRange(deadNow, a + 3)).map(([, w]) => w);
  for (const r of deadNow) {
    if (pointers.some((p) => hits(p, r))) {
      live.add(r);
      changed = true;
    }
  }
}
let zeroed = 0;
for (const range of ranges) {
  if (live.has(range)) continue;
  for (let address = range[0]; address < range[1]; address++) {
    const s = segments.find((s) => address >= s.address && address < s.address + s.length);
    wasm[s.file + address - s.address] = 0;
  }
  zeroed += range[1] - range[0];
}
writeFileSync(wasmPath, wasm);
console.log(`[package] panic-strings: ${zeroed} B of panic messages and locations zeroed (${ranges.length - live.size} of ${ranges.length} candidates)`);
