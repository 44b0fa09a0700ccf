#!/usr/bin/env bash
# make test: every stage runs, even after one fails; then one summary line
# per stage (passed or failed, and how long it took), and the exit status is
# non-zero when any stage failed. STAGES="vet unit" runs only those.
set -uo pipefail
cd "$(dirname "$0")/.."

stages=${STAGES:-"deps vet types unit wasmtest fuzz e2e e2e-engines conformance-native conformance-browser"}
declare -a summary
failed=0
total_start=$(date +%s)

for stage in $stages; do
  echo
  echo "=== make $stage"
  start=$(date +%s)
  # deps ran as its own stage: the others do not repeat it.
  if [ "$stage" = deps ]; then
    make --no-print-directory deps
  else
    make --no-print-directory -o deps "$stage"
  fi
  status=$?
  secs=$(( $(date +%s) - start ))
  if [ $status -eq 0 ]; then
    summary+=("$(printf '  %-20s passed  %4dm%02ds' "$stage" $((secs / 60)) $((secs % 60)))")
  else
    summary+=("$(printf '  %-20s FAILED  %4dm%02ds  (exit %d; its output is above)' "$stage" $((secs / 60)) $((secs % 60)) $status)")
    failed=1
  fi
done

secs=$(( $(date +%s) - total_start ))
echo
echo "=== make test: summary"
printf '%s\n' "${summary[@]}"
printf '  %-20s %s  %4dm%02ds\n' "all" "$([ $failed -eq 0 ] && echo passed || echo FAILED)" $((secs / 60)) $((secs % 60))
exit $failed
