#!/usr/bin/env bash
# test-messages.sh: from go test -v output on stdin (its lines may carry a
# "[pass] " prefix, as e2e's does), the "--- FAIL" lines
# and the tests' file:line messages, once each, without the servers' and
# pages' traces that the e2e scenarios log after a failure and without
# e2e's recap of its failures ("[pass] ! "): what a summary shows of what
# failed. make e2e ends with its own recap of what failed ("e2e: what
# failed"): where there is one, that recap is the summary.
input=$(cat)
recap=$(sed -n '/^e2e: what failed$/,$p' <<<"$input" | tail -n +2)
if [ -n "$recap" ]; then
  printf '%s\n' "$recap"
  exit 0
fi
printf '%s\n' "$input" |
grep -E -- '--- FAIL: |^(\[[^]]+\] )?[[:space:]]+[A-Za-z0-9_./-]+_test\.go:[0-9]+: ' |
  grep -vE "_test\.go:[0-9]+: (the servers' last|window [0-9]+ |page errors in window)|^\[[^]]+\] ! " |
  awk '!seen[$0]++'
