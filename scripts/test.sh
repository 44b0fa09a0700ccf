#!/usr/bin/env bash
# make test: every stage runs, even after one fails; then one summary line
# per stage (passed or failed, and how long it took), and the exit status is
# non-zero when any stage failed. STAGES="vet unit" runs only those.
# A failed stage's summary also names its failed tests and their first
# messages: CI keeps only the output's ends, and a stage's own report of
# what failed can be thousands of lines above the last one.
#
# The stages in BESIDE_E2E (default "fuzz conformance-native
# conformance-browser") run one after another beside e2e, not after it:
# e2e's browser passes leave part of the CPUs idle (waits for a token to
# expire, a window to open, a server to start), and these stages share no
# state with it (their own servers, ports and browser profile). Their
# output is printed when e2e has ended. BESIDE_E2E= runs every stage in turn.
set -uo pipefail
cd "$(dirname "$0")/.."

stages=${STAGES:-"deps vet types unit wasmtest fuzz e2e conformance-native conformance-browser"}
beside=${BESIDE_E2E-"fuzz conformance-native conformance-browser"}
failed=0
total_start=$(date +%s)
logs=$(mktemp -d "${TMPDIR:-/tmp}/mcpwasm-test.XXXXXX")
trap 'rm -rf "$logs"' EXIT

has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }
# Beside e2e only when e2e runs too.
has "$stages" e2e || beside=""
chain=()
for s in $beside; do has "$stages" "$s" && chain+=("$s"); done

# run_stage STAGE: runs it, its output to $logs/STAGE (and to the terminal
# when $2 is "tee"), its exit status and seconds to $logs/STAGE.status.
run_stage() {
  local stage=$1 show=${2:-} start status
  start=$(date +%s)
  # deps ran as its own stage: the others do not repeat it.
  local cmd=(make --no-print-directory -o deps "$stage")
  [ "$stage" = deps ] && cmd=(make --no-print-directory deps)
  if [ "$show" = tee ]; then
    "${cmd[@]}" 2>&1 | tee "$logs/$stage"
    status=${PIPESTATUS[0]}
  else
    "${cmd[@]}" >"$logs/$stage" 2>&1
    status=$?
  fi
  echo "$status $(( $(date +%s) - start ))" >"$logs/$stage.status"
}

# failures prints what a failed stage's output (file $1) says failed.
failures() {
  scripts/test-messages.sh <"$1" | head -n 14 | cut -c1-300 | sed 's/^/      /'
}

for stage in $stages; do
  has "${chain[*]}" "$stage" && continue
  echo
  echo "=== make $stage"
  if [ "$stage" = e2e ] && [ ${#chain[@]} -gt 0 ]; then
    echo "(beside it, one after another: ${chain[*]}; their output follows e2e's)"
    ( for s in "${chain[@]}"; do run_stage "$s"; done ) &
    beside_pid=$!
    run_stage e2e tee
    wait "$beside_pid"
    for s in "${chain[@]}"; do
      echo
      echo "=== make $s (ran beside e2e)"
      cat "$logs/$s"
    done
  else
    run_stage "$stage" tee
  fi
done

secs=$(( $(date +%s) - total_start ))
echo
echo "=== make test: summary"
for stage in $stages; do
  read -r status s <"$logs/$stage.status" 2>/dev/null || { status=1; s=0; }
  note=""
  has "${chain[*]}" "$stage" && note=" (beside e2e)"
  if [ "$status" -eq 0 ]; then
    printf '  %-20s passed  %4dm%02ds%s\n' "$stage" $((s / 60)) $((s % 60)) "$note"
  else
    printf '  %-20s FAILED  %4dm%02ds%s  (exit %d; its output is above)\n' "$stage" $((s / 60)) $((s % 60)) "$note" "$status"
    failures "$logs/$stage"
    failed=1
  fi
done
printf '  %-20s %s  %4dm%02ds\n' "all" "$([ $failed -eq 0 ] && echo passed || echo FAILED)" $((secs / 60)) $((secs % 60))
exit $failed
