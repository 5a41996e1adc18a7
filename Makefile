# idem: two commands on a fresh machine.
#
#   make serve   install what is missing (pinned), then run the demo on http://127.0.0.1:8080,
#                with idem-server and PayCo for its real-server mode (scripts/serve.sh)
#   make test    install what is missing (pinned, Chromium included), then run every test tier
#   make bench   install what is missing (valgrind, twiggy too), measure, write BENCHMARKS.md
#
# Every install step is skipped when the tool is already there at the right version
# (scripts/tools.sh), so a second run costs seconds.
#
# `make test` prints each step's wall time as it ends (scripts/step.sh) and the table of all of
# them at the end, also when a step fails (the first failing step ends the run, and `make test`
# fails). A fresh machine can be tried with a fresh CARGO_HOME: tools install into its bin/.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
# One step after another, so each step's time is its own.
.NOTPARALLEL:
# Where cargo installs trunk and wasm-bindgen-cli: ${CARGO_HOME:-$HOME/.cargo}/bin.
export PATH := $(CURDIR)/node_modules/.bin:$(or $(CARGO_HOME),$(HOME)/.cargo)/bin:$(PATH)
export CHROMEDRIVER ?= /usr/bin/chromedriver
# Tests and builds never download a browser or a tool at run time.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1
export TRUNK_SKIP_VERSION_CHECK := true

WASM_TARGET := wasm32-unknown-unknown

STEP := scripts/step.sh
# The tools a build step makes sure of first: `make test` has installed the test set up front,
# so its builds ask for that one again (already done) instead of timing a second round of checks.
TOOLS ?= tools

.PHONY: serve test tools tools-test tools-bench build sdk server build-native test-native build-wasm \
	test-wasm test-e2e bench lint vite-app

## The demo (dist/, built when its inputs changed) and idem-server + PayCo + receipts (demo faults on, SQLite in target/serve/, CORS
## for the demo's origin), until Ctrl-C stops all of them.
serve: tools
	scripts/serve.sh

## The tools, lint, then the three tiers; the table of every step's wall time at the end.
test: export IDEM_STEPS_LOG := $(CURDIR)/target/steps.tsv
test:
	@mkdir -p target && : > "$$IDEM_STEPS_LOG"
	@trap '$(STEP) --summary' EXIT; \
	  $(MAKE) --no-print-directory TOOLS=tools-test tools-test lint test-native test-wasm test-e2e

tools:
	scripts/tools.sh build

tools-test:
	scripts/tools.sh test

tools-bench:
	scripts/tools.sh bench

## Release build of the demo into dist/ (wasm-opt runs: see Trunk.toml).
build: $(TOOLS)
	$(STEP) "build: demo (trunk, release wasm32)" trunk build --release
	@touch dist/.built # what `make serve` checks before building again (scripts/serve.sh)

## The idem-client npm-style package (wasm-bindgen --target web, wasm-opt, package.json, README).
sdk: $(TOOLS)
	$(STEP) "build: SDK package (release wasm32)" crates/client/scripts/package.sh target/sdk-pkg

## idem-server with its own profile (opt-level 3, panic = "unwind"): target/server/idem-server.
server:
	cargo build --profile server -p idem-server --locked

## The native test binaries (dev profile), idem-server's binary among them: target/debug/idem-server,
## which the e2e tier runs too (tests/e2e/client/real-server.ts). The same command as the native
## tier's, so the tier builds nothing more and the e2e tier reuses the binary as it is.
build-native:
	$(STEP) "build: native tests (dev)" cargo test --workspace --locked --no-run

## Tier 1: native unit, integration and property tests of every crate.
test-native: build-native
	$(STEP) "tier: native" cargo test --workspace --locked

WASM_TESTS := --locked --target $(WASM_TARGET) -p idem-store -p idem-checkout -p idem-client -p idem-sim

build-wasm:
	$(STEP) "build: wasm tests (dev, wasm32)" cargo test $(WASM_TESTS) --no-run

## Tier 2: the sans-IO crates' tests compiled to wasm32, in headless Chromium.
test-wasm: build-wasm
	$(STEP) "tier: wasm (headless Chromium)" cargo test $(WASM_TESTS)

## Tier 3: the SDK's TypeScript declarations checked by compiling the TypeScript example
## against them; Playwright in Debian's Chromium against the release demo, and the SDK package
## against idem-server (page and API on one origin, then on two), one project after another.
## The packed SDK installed into a Vite + TypeScript app, type-checked and built
## (tests/e2e/vite-app/dist: tests/e2e/client/vite.spec.ts).
vite-app: sdk
	$(STEP) "build: the SDK in a Vite app (npm pack, tsc, vite build)" scripts/vite-app.sh

test-e2e: build sdk vite-app build-native
	$(STEP) "tier: e2e, TypeScript declarations (tsc)" tsc -p examples/checkout/typescript
	$(STEP) "tier: e2e, Playwright demo" npx playwright test --project demo
	$(STEP) "tier: e2e, Playwright client" npx playwright test --project client
	$(STEP) "tier: e2e, Playwright client-cross-origin" npx playwright test --project client-cross-origin

## Speed and size against their budgets, as ratios measured in one run: writes BENCHMARKS.md
## (bench/run.sh). Timings, so never part of `make test`.
## The demo is built as `make build` does, into its own folder so a parallel `make build` or
## `make test` cannot swap dist/ under the measurement.
bench: tools-bench
	trunk build --release --dist target/bench/dist
	$(MAKE) --no-print-directory sdk
	bench/run.sh

## Formatting, clippy, and no import cycle between sibling modules (ARCHITECTURE.md,
## "Layering"; the script lists every cycle and fails on one).
lint:
	$(STEP) "lint: module cycles" python3 scripts/module_cycles.py
	$(STEP) "lint: rustfmt" cargo fmt --all -- --check
	$(STEP) "lint: clippy" cargo clippy --workspace --all-targets --locked -- -D warnings
	$(STEP) "lint: rustdoc links" env RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps \
	  -p idem-store -p idem-checkout -p idem-client -p idem-sim -p idem-axum -p idem-server \
	  -p idem-check
