#!/usr/bin/env bash
# Times the steps of `make test`: each tool install, lint check, build and test tier prints its
# wall time when it ends, and `make test` ends with the table of all of them (markdown, the one
# README.md keeps for a fresh machine).
#
#   scripts/step.sh NAME COMMAND [ARG...]   runs COMMAND, prints its wall time, exits with its status;
#                                           appends "NAME<TAB>STATUS<TAB>SECONDS" to $IDEM_STEPS_LOG
#                                           when that is set (`make test` sets it)
#   scripts/step.sh --summary               prints the table of $IDEM_STEPS_LOG, with the total and
#                                           the time spent before the first test tier began

# m:ss (h:mm:ss from an hour on).
step_clock() {
  local s=$1
  if [ "$s" -ge 3600 ]; then
    printf '%d:%02d:%02d' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
  else
    printf '%d:%02d' $((s / 60)) $((s % 60))
  fi
}

step() {
  local name=$1 status=0 start
  shift
  start=$(date +%s)
  printf '[step] %s: start\n' "$name"
  "$@" || status=$?
  local took=$(($(date +%s) - start))
  if [ "$status" -eq 0 ]; then
    printf '[step] %s: %s\n' "$name" "$(step_clock "$took")"
  else
    printf '[step] %s: FAILED (exit %d) after %s\n' "$name" "$status" "$(step_clock "$took")"
  fi
  if [ -n "${IDEM_STEPS_LOG:-}" ]; then
    printf '%s\t%d\t%d\n' "$name" "$status" "$took" >>"$IDEM_STEPS_LOG"
  fi
  return "$status"
}

# The table of the log, in the order the steps ran. "Before the first test" counts every step
# before the first one named "tier: ..." (the tools, lint and the native build): on a second run
# with nothing changed that is what a developer waits for.
step_summary() {
  local log=${IDEM_STEPS_LOG:?IDEM_STEPS_LOG names the steps log}
  [ -s "$log" ] || return 0
  printf '\n| step | wall time | result |\n|---|---:|---|\n'
  awk -F'\t' '
    function clock(s) { return s >= 3600 ? sprintf("%d:%02d:%02d", s / 3600, s % 3600 / 60, s % 60) : sprintf("%d:%02d", s / 60, s % 60) }
    {
      printf "| %s | %s | %s |\n", $1, clock($3), $2 == 0 ? "ok" : "FAILED (exit " $2 ")"
      total += $3
      if ($1 ~ /^tier: / && !tiers) { before = total - $3; tiers = 1 }
      if ($2 != 0) failed = 1
    }
    END {
      printf "| **total** | **%s** | %s |\n", clock(total), failed ? "FAILED" : "ok"
      if (tiers) printf "\nBefore the first test tier: %s.\n", clock(before)
    }
  ' "$log"
}

set -uo pipefail
case "${1:-}" in
  --summary) step_summary ;;
  '' | -*) echo "usage: $0 NAME COMMAND [ARG...] | --summary" >&2; exit 2 ;;
  *) step "$@" ;;
esac
