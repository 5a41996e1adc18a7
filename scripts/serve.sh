#!/usr/bin/env bash
# `make serve`: the demo page and the real server its real-server mode talks to, PayCo,
# idem-server's checkout and the receipts service its outbox relay delivers to, all on
# 127.0.0.1, until Ctrl-C stops them all.
#
#   http://127.0.0.1:8080   the demo: dist/ (trunk build --release), served as files
#   http://127.0.0.1:8000   idem-server serve: demo faults on, CORS for the demo's origin, as
#                           http://127.0.0.1:8080 or http://localhost:8080 (both open the page)
#   http://127.0.0.1:9090   PayCo
#   http://127.0.0.1:9191   receipts (the consumer of the checkout's order.paid messages)
#
# The page is built only when one of its inputs changed since the last build (dist/.built, which
# `make build` writes too), so a second run with nothing changed serves it in seconds; then
# idem-server's origin is written into dist/index.html's <meta name="idem-server">, so the page
# finds the server this script started, on whatever port. The URL is printed once the page and
# idem-server both accept connections. Edit, then run it again: nothing watches the sources.
#
# Both servers are built with the `server` profile and keep their SQLite files in target/serve/,
# so a second run reuses them (each page session is a tenant of its own there, so old rows never
# mix into a new session). The page calls idem-server on its own origin, not through a proxy: a
# proxy answers a connection its upstream closed with an error response of its own, which would
# turn the lost response the demo shows into a 5xx.
#
# Ports: IDEM_DEMO_PORT (8080), IDEM_CHECKOUT_PORT (8000), IDEM_PAYCO_PORT (9090),
# IDEM_RECEIPTS_PORT (9191).
# IDEM_SERVER_BIN runs that idem-server binary instead of building the server profile's,
# IDEM_SERVE_DATA keeps the SQLite files elsewhere, IDEM_SERVE_DIST serves (and builds into)
# another folder than dist/ (tests/e2e/demo/serve.spec.ts uses all three).
set -euo pipefail
cd "$(dirname "$0")/.."

DEMO_PORT=${IDEM_DEMO_PORT:-8080}
CHECKOUT_PORT=${IDEM_CHECKOUT_PORT:-8000}
PAYCO_PORT=${IDEM_PAYCO_PORT:-9090}
RECEIPTS_PORT=${IDEM_RECEIPTS_PORT:-9191}
DATA=${IDEM_SERVE_DATA:-target/serve}
DIST=${IDEM_SERVE_DIST:-dist}
CHECKOUT_URL="http://127.0.0.1:$CHECKOUT_PORT"

say() { printf '[serve] %s\n' "$*"; }

if [ -n "${IDEM_SERVER_BIN:-}" ]; then
  BIN=$IDEM_SERVER_BIN
else
  BIN=${CARGO_TARGET_DIR:-target}/server/idem-server
  cargo build --profile server -p idem-server --locked
fi
mkdir -p "$DATA"

# What the demo's bundle is built from; any of it newer than the last build's stamp rebuilds it.
DEMO_INPUTS=(index.html Trunk.toml Cargo.toml Cargo.lock package-lock.json scripts/shrink-glue.mjs
  web crates/store crates/client crates/sim)
if [ -f "$DIST/.built" ] && [ -z "$(find "${DEMO_INPUTS[@]}" -newer "$DIST/.built" -print -quit)" ]; then
  say "demo: $DIST/ is up to date"
else
  trunk build --release --dist "$DIST"
  touch "$DIST/.built"
fi
# The server this script starts, for the page's real-server mode (web/src/real/mod.rs).
sed -i "s|<meta name=\"idem-server\" content=\"[^\"]*\"|<meta name=\"idem-server\" content=\"$CHECKOUT_URL\"|" \
  "$DIST/index.html"
grep -q "content=\"$CHECKOUT_URL\"" "$DIST/index.html" || {
  say "$DIST/index.html has no <meta name=\"idem-server\">: rebuild it (make build)"
  exit 1
}

pids=()
stop() {
  trap - EXIT INT TERM
  say "stopping"
  # SIGTERM: the servers drain and the file server exits; then wait for all of them. An idle
  # demo stops at once: a page's open event stream ends when draining starts (the servers'
  # default drain deadline, 10 s, only waits for checkouts still running).
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
}
trap stop EXIT
trap 'exit 130' INT TERM

"$BIN" payco --listen "127.0.0.1:$PAYCO_PORT" --database "sqlite:$DATA/payco.db" &
pids+=($!)
"$BIN" receipts --listen "127.0.0.1:$RECEIPTS_PORT" --database "sqlite:$DATA/receipts.db" &
pids+=($!)
"$BIN" serve --listen "127.0.0.1:$CHECKOUT_PORT" --database "sqlite:$DATA/checkout.db" \
  --payco "http://127.0.0.1:$PAYCO_PORT" --relay-to "http://127.0.0.1:$RECEIPTS_PORT" --demo-faults \
  --cors-origin "http://127.0.0.1:$DEMO_PORT" --cors-origin "http://localhost:$DEMO_PORT" &
pids+=($!)
node tests/e2e/serve.mjs "$DEMO_PORT" "/=$DIST" &
pids+=($!)

# The URL once something answers there: each port accepts a connection (bash's /dev/tcp), for
# up to 60 s; a process that exits first ends the script (its error is above).
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ready=
for _ in $(seq 1 300); do
  if listening "$DEMO_PORT" && listening "$CHECKOUT_PORT" && listening "$PAYCO_PORT" &&
    listening "$RECEIPTS_PORT"; then
    ready=1
    break
  fi
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || exit 1; done
  sleep 0.2
done
if [ -n "$ready" ]; then
  say "demo on http://127.0.0.1:$DEMO_PORT (idem-server on :$CHECKOUT_PORT, PayCo on :$PAYCO_PORT, receipts on :$RECEIPTS_PORT); Ctrl-C stops all"
else
  say "still not answering after 60 s on :$DEMO_PORT, :$CHECKOUT_PORT, :$PAYCO_PORT or :$RECEIPTS_PORT"
fi
# Until one of them exits (or Ctrl-C): then the trap stops the others.
wait -n "${pids[@]}"
