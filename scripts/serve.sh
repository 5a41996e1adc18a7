#!/usr/bin/env bash
# `make serve`: the demo page (trunk serve) and the real server its real-server mode talks to,
# PayCo and idem-server's checkout, all on 127.0.0.1, until Ctrl-C stops all three.
#
#   http://127.0.0.1:8080   the demo (trunk serve --release)
#   http://127.0.0.1:8000   idem-server serve: demo faults on, CORS for the demo's origin, as
#                           http://127.0.0.1:8080 or http://localhost:8080 (both open the page)
#   http://127.0.0.1:9090   PayCo
#
# Both servers are built with the `server` profile and keep their SQLite files in target/serve/,
# so a second run reuses them (each page session is a tenant of its own there, so old rows never
# mix into a new session). The page calls idem-server on its own origin, not through trunk's
# proxy: trunk answers a connection its upstream closed with an error response of its own,
# which would turn the lost response the demo shows into a 5xx.
#
# Ports: IDEM_DEMO_PORT (8080), IDEM_CHECKOUT_PORT (8000), IDEM_PAYCO_PORT (9090).
set -euo pipefail
cd "$(dirname "$0")/.."

DEMO_PORT=${IDEM_DEMO_PORT:-8080}
CHECKOUT_PORT=${IDEM_CHECKOUT_PORT:-8000}
PAYCO_PORT=${IDEM_PAYCO_PORT:-9090}
DATA=target/serve
BIN=${CARGO_TARGET_DIR:-target}/server/idem-server

say() { printf '[serve] %s\n' "$*"; }

cargo build --profile server -p idem-server --locked
mkdir -p "$DATA"

pids=()
stop() {
  trap - EXIT INT TERM
  say "stopping"
  # SIGTERM: the servers drain and trunk exits; then wait for all of them. An idle demo stops
  # at once: a page's open event stream ends when draining starts (the servers' default
  # drain deadline, 10 s, only waits for checkouts still running).
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
}
trap stop EXIT
trap 'exit 130' INT TERM

"$BIN" payco --listen "127.0.0.1:$PAYCO_PORT" --database "sqlite:$DATA/payco.db" &
pids+=($!)
"$BIN" serve --listen "127.0.0.1:$CHECKOUT_PORT" --database "sqlite:$DATA/checkout.db" \
  --payco "http://127.0.0.1:$PAYCO_PORT" --demo-faults \
  --cors-origin "http://127.0.0.1:$DEMO_PORT" --cors-origin "http://localhost:$DEMO_PORT" &
pids+=($!)
trunk serve --release --port "$DEMO_PORT" &
pids+=($!)

say "demo on http://127.0.0.1:$DEMO_PORT (idem-server on :$CHECKOUT_PORT, PayCo on :$PAYCO_PORT); Ctrl-C stops all"
# Until one of them exits (or Ctrl-C): then the trap stops the others.
wait -n "${pids[@]}"
