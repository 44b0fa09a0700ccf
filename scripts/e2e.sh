#!/usr/bin/env bash
# make e2e: the e2e suite in each runtime mode of load() (MCPWASM_E2E_RUNTIME),
# "auto" and "main" by default (E2E_MODES="auto main"), the passes at once:
# one test binary and one web bundle serve them all. Each pass's output is
# printed when it ends, its lines prefixed with its mode (a pass that passed
# prints only its slowest tests); the last lines say which modes passed,
# and the exit status is non-zero when any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

modes=${E2E_MODES:-"auto main"}
GO=${GO:-go}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpwasm-e2e.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)
"$GO" test -c -o "$tmp/e2e.test" ./e2e || { echo "e2e: the test binary does not build"; exit 1; }
mkdir "$tmp/web"
(cd e2e && MCPWASM_E2E_BUILD="$tmp/web" "$tmp/e2e.test") || { echo "e2e: the web bundle does not build"; exit 1; }
echo "e2e: built the test binary and the web bundle in $(( $(date +%s) - start ))s; running modes: $modes"

declare -A pids
for mode in $modes; do
  (
    cd e2e
    s=$(date +%s)
    MCPWASM_E2E_RUNTIME=$mode MCPWASM_E2E_WEB="$tmp/web" "$tmp/e2e.test" -test.v -test.count=1 -test.timeout=40m "$@" >"$tmp/$mode.log" 2>&1
    status=$?
    echo "$status $(( $(date +%s) - s ))" >"$tmp/$mode.status"
    exit $status
  ) &
  pids[$mode]=$!
done

failed=0
declare -a summary
for mode in $modes; do
  wait "${pids[$mode]}"
  read -r status secs <"$tmp/$mode.status" || { status=1; secs=0; }
  if [ "$status" -eq 0 ]; then
    # A pass that passed: its slowest tests, not its verbose log.
    echo "[e2e $mode] passed; the slowest tests:"
    sed -n 's/^--- PASS: \([^ ]*\) (\([0-9.]*\)s)$/\2 \1/p' "$tmp/$mode.log" | sort -rn | head -12 | sed "s/^/[e2e $mode]   /"
  else
    sed "s/^/[e2e $mode] /" "$tmp/$mode.log"
    # The log can be long and is often read from its end: repeat what failed.
    echo "[e2e $mode] what failed (repeated from above):"
    grep -E -B25 -A2 '^\s*--- FAIL|^panic:|^FAIL\s|test timed out' "$tmp/$mode.log" | head -300 | sed "s/^/[e2e $mode] ! /"
  fi
  if [ "$status" -eq 0 ]; then
    summary+=("$(printf '  e2e runtime=%-6s passed  %4dm%02ds' "$mode" $((secs / 60)) $((secs % 60)))")
  else
    summary+=("$(printf '  e2e runtime=%-6s FAILED  %4dm%02ds  (exit %d; its lines above start with [e2e %s])' "$mode" $((secs / 60)) $((secs % 60)) "$status" "$mode")")
    failed=1
  fi
done
echo
printf '%s\n' "${summary[@]}"
exit $failed
