#!/usr/bin/env bash
# A sampling profile of the checkout server alone under keyed first requests: the bench's
# stack (checkout + in-process PayCo stub + database) served by one process, the load from
# another, `perf record` (cpu-clock: works in VMs without hardware counters; DWARF call graphs,
# the server profile keeps frame info in .eh_frame) on the server process only, then the
# samples sorted by component (classify.mjs). Debian: `apt-get install linux-perf`.
#
#   bench/server/profile/run.sh sqlite|postgres [SECONDS]
#
# Builds bench/server first (server profile, target/bench, as `make bench` does). Prints the
# load's result and the table; leaves perf.data in target/bench/profile-BACKEND.data.
set -euo pipefail
cd "$(dirname "$0")/../../.."
backend=${1:?sqlite or postgres}
seconds=${2:-5}
export CARGO_TARGET_DIR=target/bench
cargo build --locked --profile server -p idem-bench-server
bin=target/bench/server/idem-bench-server
data=target/bench/profile-$backend.data
dir=$(mktemp -d)
# The server runs until its stdin closes: a fifo held open by this script.
mkfifo "$dir/stdin"
"$bin" serve "$backend" < "$dir/stdin" > "$dir/url" &
server=$!
exec 3> "$dir/stdin"
cleanup() { exec 3>&-; wait "$server" 2> /dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 1 100); do
  grep -q '^http://' "$dir/url" 2> /dev/null && break
  sleep 0.2
done
url=$(grep '^http://' "$dir/url")
"$bin" load "$url" 1000 16 > /dev/null # warm: connections, prepared statements
perf record -e cpu-clock -F 299 --call-graph dwarf,65528 -p "$server" -o "$data" -- sleep "$seconds" 2> /dev/null &
recorder=$!
sleep 0.3
"$bin" load "$url" $((2500 * seconds)) 16
wait "$recorder"
perf script -i "$data" -F comm,ip,sym,dso 2> /dev/null | node bench/server/profile/classify.mjs
