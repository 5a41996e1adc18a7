# idem: two commands on a fresh machine.
#
#   make serve   install what is missing (pinned), then run the demo on http://127.0.0.1:8080,
#                with idem-server and PayCo for its real-server mode (scripts/serve.sh)
#   make test    install what is missing (pinned, Chromium included), then run every test tier
#   make bench   install what is missing (valgrind, twiggy too), measure, write BENCHMARKS.md
#
# Every install step is skipped when the tool is already there at the right version
# (scripts/tools.sh), so a second run costs seconds.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := $(CURDIR)/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)
export CHROMEDRIVER ?= /usr/bin/chromedriver
# Tests and builds never download a browser or a tool at run time.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1
export TRUNK_SKIP_VERSION_CHECK := true

WASM_TARGET := wasm32-unknown-unknown

.PHONY: serve test tools tools-test tools-bench build sdk server test-native test-wasm test-e2e bench lint

## The demo (trunk serve) and idem-server + PayCo (demo faults on, SQLite in target/serve/, CORS
## for the demo's origin), until Ctrl-C stops all of them.
serve: tools
	scripts/serve.sh

test: tools-test
	$(MAKE) --no-print-directory test-native
	$(MAKE) --no-print-directory test-wasm
	$(MAKE) --no-print-directory test-e2e

tools:
	scripts/tools.sh build

tools-test:
	scripts/tools.sh test

tools-bench:
	scripts/tools.sh bench

## Release build of the demo into dist/ (wasm-opt runs: see Trunk.toml).
build: tools
	trunk build --release

## The idem-client npm-style package (wasm-bindgen --target web, wasm-opt, package.json, README).
sdk: tools
	crates/client/scripts/package.sh target/sdk-pkg

## idem-server with its own profile (opt-level 3, panic = "unwind"): target/server/idem-server.
server:
	cargo build --profile server -p idem-server --locked

## Tier 1: native unit, integration and property tests of every crate.
test-native:
	cargo test --workspace --locked

## Tier 2: the sans-IO crates' tests compiled to wasm32, in headless Chromium.
test-wasm:
	cargo test --locked --target $(WASM_TARGET) -p idem-store -p idem-client -p idem-sim

## Tier 3: the SDK's TypeScript declarations checked by compiling the TypeScript example
## against them; Playwright in Debian's Chromium against the release demo, and the SDK package
## against idem-server (page and API on one origin, then on two).
test-e2e: build sdk server
	tsc -p examples/checkout/typescript
	npx playwright test --project demo --project client --project client-cross-origin

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
	python3 scripts/module_cycles.py
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
