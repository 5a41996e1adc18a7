#!/usr/bin/env bash
# Installs what `make serve` and `make test` need, at pinned versions, skipping whatever is already
# there. Each step checks before it installs, so a second run costs seconds.
#
#   scripts/tools.sh build   wasm32 target, trunk, wasm-bindgen-cli, npm packages (wasm-opt)
#   scripts/tools.sh test    all of the above, plus Debian's Chromium and chromedriver, and
#                            Debian's PostgreSQL server binaries (idem-server's tests start their own)
#   scripts/tools.sh bench   all of the above, plus valgrind (callgrind) and twiggy, for `make bench`
#
# Each install is a step of `make test`'s table: scripts/step.sh times it, run as
# `scripts/tools.sh ensure NAME` in a process of its own (so `set -e` holds inside it).
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
# wasm-bindgen-cli must equal the wasm-bindgen crate in Cargo.lock, or Trunk tries a download.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)

say() { printf '[tools] %s\n' "$*"; }

ensure_wasm_target() {
  if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "wasm32-unknown-unknown target: present"
  else
    say "adding wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
  fi
}

# The two build tools compile unoptimised and without debug info (`--debug`,
# CARGO_PROFILE_DEV_DEBUG=0): their work is spawning cargo, wasm-opt and node and a few hashes,
# so their own speed does not show, while trunk's release profile (fat LTO, one codegen unit)
# made its install the longest step of a fresh machine's `make test`. Measured side by side on 2
# cores, 2026-12-02: trunk 7:51 (release, default features) → 3:04; wasm-bindgen-cli about
# 2:00 → 1:02; the demo's `trunk build --release` 27 s with either binary, byte-identical
# output; the SDK package and the wasm tier unchanged.
cargo_install_debug() { CARGO_PROFILE_DEV_DEBUG=0 cargo install --debug "$@"; }

ensure_trunk() {
  if trunk --version 2>/dev/null | grep -q "trunk $TRUNK_VERSION\$"; then
    say "trunk $TRUNK_VERSION: present"
  else
    # No default features: they are trunk's own update check (off here, TRUNK_SKIP_VERSION_CHECK)
    # and TLS for `trunk serve --tls` and tool downloads, neither of which idem uses.
    say "installing trunk $TRUNK_VERSION (about 3 minutes on 2 cores)"
    cargo_install_debug --locked trunk --version "$TRUNK_VERSION" --no-default-features
  fi
}

ensure_wasm_bindgen() {
  if wasm-bindgen --version 2>/dev/null | grep -q "wasm-bindgen $WASM_BINDGEN_VERSION"; then
    say "wasm-bindgen-cli $WASM_BINDGEN_VERSION: present"
  else
    # Not --locked: the CLI's own lock file names a crate version the registry no longer serves.
    say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 1 minute on 2 cores)"
    cargo_install_debug wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
  fi
}

ensure_npm_packages() {
  # package-lock.json pins binaryen (wasm-opt) and @playwright/test; node_modules/.stamp records
  # which lock file the installed tree came from.
  if [ -f node_modules/.stamp ] && cmp -s package-lock.json node_modules/.stamp; then
    say "npm packages: present"
  else
    say "installing npm packages (npm ci)"
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
    cp package-lock.json node_modules/.stamp
  fi
}

ensure_vite_app() {
  # The Vite + TypeScript app the e2e tier builds around the packed SDK (scripts/vite-app.sh),
  # pinned by its own lock file; node_modules/.stamp as for the root's packages.
  local app=tests/e2e/vite-app
  if [ -f "$app/node_modules/.stamp" ] && cmp -s "$app/package-lock.json" "$app/node_modules/.stamp"; then
    say "vite app packages: present"
  else
    say "installing the vite app's packages (npm ci)"
    (cd "$app" && npm ci --no-audit --no-fund && cp package-lock.json node_modules/.stamp)
  fi
}

ensure_express_peer() {
  # express with express-idempotency, the peer idem-check is measured against
  # (crates/check/tests/express_peer.rs), pinned by its own lock file.
  local peer=tests/peers/express
  if [ -f "$peer/node_modules/.stamp" ] && cmp -s "$peer/package-lock.json" "$peer/node_modules/.stamp"; then
    say "express peer packages: present"
  else
    say "installing the express peer's packages (npm ci)"
    (cd "$peer" && npm ci --no-audit --no-fund && cp package-lock.json node_modules/.stamp)
  fi
}

ensure_chromium() {
  if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    say "chromium and chromedriver: present"
  else
    say "installing Debian's chromium and chromium-driver"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver
  fi
}

ensure_postgresql() {
  # idem-server's tests start throwaway clusters with these binaries (initdb, pg_ctl, postgres),
  # run as the `postgres` user the package creates; nothing needs to be running beforehand.
  if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null && id postgres >/dev/null 2>&1; then
    say "postgresql server binaries: present"
  else
    say "installing Debian's postgresql"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
  fi
}

TWIGGY_VERSION=0.8.0

ensure_valgrind() {
  if command -v valgrind >/dev/null; then
    say "valgrind: present"
  else
    say "installing Debian's valgrind"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y valgrind
  fi
}

ensure_twiggy() {
  if twiggy --version 2>/dev/null | grep -q " $TWIGGY_VERSION\$"; then
    say "twiggy $TWIGGY_VERSION: present"
  else
    say "installing twiggy $TWIGGY_VERSION (about 2 minutes on 2 cores)"
    cargo install --locked twiggy --version "$TWIGGY_VERSION"
  fi
}

# Each install timed as a step (scripts/step.sh), in a process of its own.
install() { scripts/step.sh "install: $1" scripts/tools.sh ensure "$1"; }

build_tools() { install wasm_target; install trunk; install wasm_bindgen; install npm_packages; }
test_tools() { build_tools; install vite_app; install express_peer; install chromium; install postgresql; }

case "${1:-build}" in
  build) build_tools ;;
  test) test_tools ;;
  bench) test_tools; install valgrind; install twiggy ;;
  # One install, as `install` above runs it.
  ensure) "ensure_${2:?ensure what}" ;;
  *) echo "usage: $0 [build|test|bench]" >&2; exit 2 ;;
esac
