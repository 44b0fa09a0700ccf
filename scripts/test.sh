#!/usr/bin/env bash
# make test: every stage runs, even after one fails; then one summary line
# per stage (passed or failed, and how long it took), and the exit status is
# non-zero when any stage failed. STAGES="vet unit" runs only those.
# A failed stage's summary also names its failed tests and their first
# messages: CI keeps only the output's ends, and a stage's own report of
# what failed can be thousands of lines above the last one.
set -uo pipefail
cd "$(dirname "$0")/.."

stages=${STAGES:-"deps vet types unit wasmtest fuzz e2e conformance-native conformance-browser"}
declare -a summary
failed=0
total_start=$(date +%s)
logs=$(mktemp -d "${TMPDIR:-/tmp}/mcpwasm-test.XXXXXX")
trap 'rm -rf "$logs"' EXIT

# failures prints what a failed stage's output (file $1) says failed.
failures() {
  scripts/test-messages.sh <"$1" | head -n 14 | cut -c1-300 | sed 's/^/      /'
}

for stage in $stages; do
  echo
  echo "=== make $stage"
  start=$(date +%s)
  # deps ran as its own stage: the others do not repeat it.
  if [ "$stage" = deps ]; then
    make --no-print-directory deps 2>&1 | tee "$logs/$stage"
  else
    make --no-print-directory -o deps "$stage" 2>&1 | tee "$logs/$stage"
  fi
  status=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - start ))
  if [ $status -eq 0 ]; then
    summary+=("$(printf '  %-20s passed  %4dm%02ds' "$stage" $((secs / 60)) $((secs % 60)))")
  else
    summary+=("$(printf '  %-20s FAILED  %4dm%02ds  (exit %d; its output is above)' "$stage" $((secs / 60)) $((secs % 60)) $status)")
    while IFS= read -r l; do summary+=("$l"); done < <(failures "$logs/$stage")
    failed=1
  fi
done

secs=$(( $(date +%s) - total_start ))
echo
echo "=== make test: summary"
printf '%s\n' "${summary[@]}"
printf '  %-20s %s  %4dm%02ds\n' "all" "$([ $failed -eq 0 ] && echo passed || echo FAILED)" $((secs / 60)) $((secs % 60))
exit $failed
