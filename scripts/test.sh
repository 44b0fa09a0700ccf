#!/usr/bin/env bash
# make test: every stage runs, even after one fails; then one summary line
# per stage (passed or failed, and how long it took), and the exit status is
# non-zero when any stage failed. STAGES="vet unit" runs only those.
# A failed stage's summary also names its failed tests and their first
# messages: CI keeps only the output's ends, and a stage's own report of
# what failed can be thousands of lines above the last one.
set -uo pipefail
cd "$(dirname "$0")/.."

# Stages joined by "+" run at once: unit, fuzz and conformance-native
# leave most of two cores idle alone (unit's longest packages wait on
# clocks and servers; fuzz and conformance-native are bounded by time),
# so they share them; their outputs are printed whole, one after another,
# as each group ends. e2e fills both cores until its last passes: beside
# it, conformance-browser waits until every pass has started and a place
# in e2e's pool is free (E2E_SLOT_FILE), then runs beside the last ones.
stages=${STAGES:-"deps vet types unit+fuzz+conformance-native wasmtest e2e+conformance-browser"}
declare -a summary
failed=0
total_start=$(date +%s)
logs=$(mktemp -d "${TMPDIR:-/tmp}/mcpwasm-test.XXXXXX")
trap 'rm -rf "$logs"' EXIT

# failures prints what a failed stage's output (file $1) says failed.
failures() {
  scripts/test-messages.sh <"$1" | head -n 14 | cut -c1-300 | sed 's/^/      /'
}

# run_stage runs one stage into its log and writes "status secs" beside it;
# a stage that runs beside e2e waits for a free place in its pool (or its
# end) first, and its time counts from then.
run_stage() {
  local stage=$1 start status
  if [ "$stage" != e2e ] && [ -n "${E2E_SLOT_FILE:-}" ]; then
    while [ ! -e "$E2E_SLOT_FILE" ] && [ ! -e "$logs/e2e.status" ]; do sleep 1; done
  fi
  start=$(date +%s)
  # deps ran as its own stage: the others do not repeat it.
  if [ "$stage" = deps ]; then
    make --no-print-directory deps >"$logs/$stage" 2>&1
  else
    make --no-print-directory -o deps "$stage" >"$logs/$stage" 2>&1
  fi
  status=$?
  echo "$status $(( $(date +%s) - start ))" >"$logs/$stage.status"
}

for group in $stages; do
  IFS=+ read -r -a members <<<"$group"
  if [ "${#members[@]}" -eq 1 ]; then
    # Alone, a stage's output is shown as it comes.
    echo
    echo "=== make $group"
    start=$(date +%s)
    if [ "$group" = deps ]; then
      make --no-print-directory deps 2>&1 | tee "$logs/$group"
    else
      make --no-print-directory -o deps "$group" 2>&1 | tee "$logs/$group"
    fi
    echo "${PIPESTATUS[0]} $(( $(date +%s) - start ))" >"$logs/$group.status"
  else
    case "+$group+" in
      *+e2e+*) export E2E_SLOT_FILE="$logs/e2e-slot" ;;
      *) unset E2E_SLOT_FILE ;;
    esac
    for stage in "${members[@]}"; do run_stage "$stage" & done
    wait
    unset E2E_SLOT_FILE
  fi
  for stage in "${members[@]}"; do
    read -r status secs <"$logs/$stage.status"
    beside=""
    if [ "${#members[@]}" -gt 1 ]; then
      echo
      echo "=== make $stage (beside the others of $group)"
      cat "$logs/$stage"
      beside="  (beside the others of $group)"
    fi
    if [ "$status" -eq 0 ]; then
      summary+=("$(printf '  %-20s passed  %4dm%02ds%s' "$stage" $((secs / 60)) $((secs % 60)) "$beside")")
    else
      summary+=("$(printf '  %-20s FAILED  %4dm%02ds%s  (exit %d; its output is above)' "$stage" $((secs / 60)) $((secs % 60)) "$beside" "$status")")
      while IFS= read -r l; do summary+=("$l"); done < <(failures "$logs/$stage")
      failed=1
    fi
  done
done

secs=$(( $(date +%s) - total_start ))
echo
echo "=== make test: summary"
printf '%s\n' "${summary[@]}"
printf '  %-20s %s  %4dm%02ds\n' "all" "$([ $failed -eq 0 ] && echo passed || echo FAILED)" $((secs / 60)) $((secs % 60))
exit $failed
