#!/usr/bin/env bash
# `make bench`: every measurement in one run, then BENCHMARKS.md. Expects the tools from
# `scripts/tools.sh bench`, the demo built into target/bench/dist (`trunk build --release
# --dist target/bench/dist`) and the SDK package from `make sdk` (target/sdk-pkg); the
# Makefile's `bench` target provides all three. Fails on the first error.
#
#   bench/run.sh                         all steps, then the report
#   IDEM_BENCH_STEPS="store ui" bench/run.sh   only these steps (the report names the missing ones)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

STEPS=${IDEM_BENCH_STEPS:-store sim bundle ui sdk server}
say() { printf '[bench] %s\n' "$*"; }

rm -rf target/bench/results
mkdir -p target/bench/results
for step in $STEPS; do
  if [ "$step" = ui ]; then
    say "building the minimal Yew baseline (bench/minimal-yew, trunk build --release)"
    (cd bench/minimal-yew && trunk build --release)
  fi
  say "step: $step"
  start=$SECONDS
  node "bench/steps/$step.mjs"
  say "step $step: $((SECONDS - start)) s"
done
node bench/report.mjs BENCHMARKS.md
