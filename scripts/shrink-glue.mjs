// Trunk's post_build hook (Trunk.toml), release builds only: short names for what the wasm and
// its wasm-bindgen JS glue call each other, the glue minified, and index.html's integrity hashes
// redone for both files.
//
// 1. wasm-bindgen names each import `__wbg_<method>_<16 hex digits>` and its closure shims
//    `wasm_bindgen__convert__closures_____invoke__h<16 hex digits>`; the wasm and the glue both
//    spell every one in full, and the hex digits do not compress. binaryen's wasm-opt (pinned in
//    package.json, the one Trunk runs) renames the imports, their module and the exports in the
//    wasm (`--minify-imports-and-exports-and-modules`) and prints the renaming as JSON; this
//    script applies that renaming to the glue: each import is one key of the glue's import object,
//    each export a `wasm.<name>` property. The same run strips the target-features section and
//    optimizes once more (`-Oz`), which pays after the renaming.
// 2. terser (pinned in package.json) minifies the glue; its exports keep their names.
//
// What it saves is in web/README.md, "Bundle and smoothness (measured)". Any name of the renaming
// the glue does not spell where this script expects it (an import key found other than exactly
// once, a `wasm.<name>` left that is not an export) stops the build: a wasm-bindgen whose glue
// this script does not understand fails here rather than shipping a page that cannot start. The
// e2e specs (`make test-e2e`) run against this output.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { minify } from 'terser';

const fail = (why) => {
  throw new Error(`shrink-glue: ${why}`);
};

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) fail('TRUNK_STAGING_DIR is not set (run by trunk as a post_build hook)');
if (process.env.TRUNK_PROFILE !== 'release') process.exit(0);

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = readdirSync(dir);
const one = (re, what) => {
  const found = files.filter((f) => re.test(f));
  if (found.length !== 1) fail(`expected one ${what} in ${dir}, found ${found.join(', ') || 'none'}`);
  return found[0];
};
const wasmPath = join(dir, one(/_bg\.wasm$/, 'wasm'));
const jsPath = join(dir, one(/\.js$/, 'JS glue'));

// --- the wasm: binaryen renames, and prints the renaming ------------------------------------------

// The features are read from the target-features section rustc wrote, which Trunk's wasm-opt run
// keeps (index.html) so that this run can read it, and strips here. One more `-Oz` after the
// renaming finds what Trunk's converged run did not (−559 B gzip, measured: web/README.md);
// `--low-memory-unused` as in index.html (nothing of the page lives below address 1024).
const wasmOpt = join(root, 'node_modules/.bin/wasm-opt');
const printed = execFileSync(
  wasmOpt,
  [wasmPath, '--minify-imports-and-exports-and-modules', '-Oz', '--low-memory-unused', '-o', wasmPath],
  { encoding: 'utf8', maxBuffer: 16 << 20 },
);
// Then binaryen's own control flow in place of LLVM's (`--flatten --rereloop`), which `-Oz -Oz`
// shrinks further, to convergence (web/README.md, "Bundle", has the bytes). A run of its own:
// `--converge` repeats every pass of its run, the renaming above included. This run strips the
// target-features section (it still reads the features from it).
execFileSync(wasmOpt, [
  wasmPath,
  '--flatten',
  '--rereloop',
  '-Oz',
  '-Oz',
  '--converge',
  '--low-memory-unused',
  '--strip-target-features',
  '-o',
  wasmPath,
]);
const renaming = JSON.parse(printed.slice(printed.indexOf('{')));
const wasm = readFileSync(wasmPath);
const modules = new Set(WebAssembly.Module.imports(new WebAssembly.Module(wasm)).map((i) => i.module));
if (modules.size !== 1) fail(`the renamed wasm imports from ${[...modules].join(', ')}, not from one module`);
const [module] = modules;

// --- the glue --------------------------------------------------------------------------------------

let js = readFileSync(jsPath, 'utf8');
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// The import object: `"./<crate>_bg.js": import0`, and one `<name>: function(…)` key per import.
const glueModules = new Set(renaming.imports.map(([m]) => m));
if (glueModules.size !== 1) fail(`the wasm imported from ${[...glueModules].join(', ')}, not from one module`);
// binaryen's short names may hold `$`: replaced by functions, never by replacement patterns.
const replaceOnce = (re, by, what) => {
  const hits = js.match(re)?.length ?? 0;
  if (hits !== 1) fail(`${what} is found ${hits} times in the glue, not once`);
  js = js.replace(re, by);
};
replaceOnce(new RegExp(`"${escape([...glueModules][0])}": import0,`, 'g'), () => `${JSON.stringify(module)}: import0,`, 'the import module');
for (const [, name, short] of renaming.imports) {
  replaceOnce(new RegExp(`^(\\s+)${escape(name)}: `, 'gm'), (_, indent) => `${indent}${short}: `, `import ${name}`);
}

// The exports: `wasm.<name>`, where `wasm` is the instance's exports. An export the glue does not
// use (`main`, which `__wbindgen_start` calls) is simply not found; a name the glue uses must be
// one the renaming knows.
const exports = new Map(renaming.exports);
js = js.replace(/\bwasm\.([A-Za-z_$][\w$]*)/g, (whole, name) => {
  const short = exports.get(name);
  if (short === undefined) fail(`the glue uses wasm.${name}, which the wasm does not export`);
  return `wasm.${short}`;
});

const min = await minify(js, { module: true, compress: { passes: 2 }, mangle: true, format: { comments: false } });
if (!min.code) fail('terser produced nothing');
writeFileSync(jsPath, min.code);

// --- index.html: the integrity of the two rewritten files ------------------------------------------

const sri = (data) => `sha384-${createHash('sha384').update(data).digest('base64')}`;
const htmlPath = join(dir, 'index.html');
let html = readFileSync(htmlPath, 'utf8');
for (const [path, data] of [
  [wasmPath, wasm],
  [jsPath, min.code],
]) {
  const file = path.slice(dir.length + 1);
  const tag = new RegExp(`(href="[^"]*${escape(file)}"[^>]*integrity=")sha384-[^"]+(")`, 'g');
  const hits = html.match(tag)?.length ?? 0;
  if (hits !== 1) fail(`${file} has ${hits} integrity attributes in index.html, not 1`);
  html = html.replace(tag, `$1${sri(data)}$2`);
}
writeFileSync(htmlPath, html);
console.log(
  `shrink-glue: ${renaming.imports.length} imports and ${renaming.exports.length} exports renamed; glue minified to ${Buffer.byteLength(min.code)} B`,
);
