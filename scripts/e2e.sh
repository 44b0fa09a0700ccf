#!/usr/bin/env bash
# make e2e: the browser scenarios (e2e/xengine) in each engine
# (ENGINES="chromium firefox webkit") and runtime mode of load()
# (E2E_MODES="auto main"), the scenarios E2E_RUN (a -test.run pattern)
# picks or all: one test binary, one web bundle and one build
# of the React example app from the packed npm package serve every pass;
# JOBS passes run at once (each pass has its own browser, servers and
# profile, so they share no state; a pass also waits on windows, servers
# and token lifetimes, and the passes beside it use the CPU those waits
# leave: on 2 cores 2 at once took 27m53s and 3 25m10s, and with 3 the
# first passes (WebKit's and Firefox's, which wait the most) still left
# a tenth of the CPU idle, so 4 is the default).
# Each pass's output is printed when it ends, its lines prefixed with
# [engine mode]; the last lines give one summary per engine, and the exit
# status is non-zero when any pass failed.
#
# The plan (E2E_PLAN): "pairwise" (the default when both modes run) runs a
# scenario whose subject is not the runtime (eitherRuntime in
# e2e/xengine) in one mode per engine, both modes across the engines; the
# scenarios about the runtime run in every pass. "full" runs every
# scenario in every pass. Under pairwise, a scenario that ran in neither
# pass of an engine fails the run.
set -uo pipefail
cd "$(dirname "$0")/.."

engines=${ENGINES:-"chromium firefox webkit"}
modes=${E2E_MODES:-"auto main"}
jobs=${JOBS:-4}
plan=full
case " $modes " in *" auto "*) case " $modes " in *" main "*) plan=${E2E_PLAN:-pairwise} ;; esac ;; esac
case $plan in
  pairwise | full) ;;
  *) echo "e2e: E2E_PLAN is \"$plan\"; want pairwise or full"; exit 1 ;;
esac
GO=${GO:-go}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpwasm-xengine.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)
"$GO" test -c -o "$tmp/xengine.test" ./e2e/xengine || { echo "e2e: the test binary does not build"; exit 1; }
mkdir "$tmp/web" "$tmp/app"
(cd e2e/xengine && MCPWASM_E2E_BUILD="$tmp/web" MCPWASM_E2E_APP="$tmp/app" "$tmp/xengine.test") || { echo "e2e: the web bundle or an example app (React, AI SDK) does not build"; exit 1; }
echo "e2e: built the test binary, the web bundle and the React example app (from the packed npm package) in $(( $(date +%s) - start ))s; engines: $engines; modes: $modes; plan: $plan; $jobs at once"

# The slowest engines first, so the pool's tail is short.
passes=()
for engine in $engines; do
  for mode in $modes; do passes+=("$engine.$mode"); done
done
order=()
for e in webkit firefox chromium; do
  for p in "${passes[@]}"; do [ "${p%.*}" = "$e" ] && order+=("$p"); done
done
for p in "${passes[@]}"; do
  case " ${order[*]} " in *" $p "*) ;; *) order+=("$p") ;; esac
done

# A pass's own time limit is far above its usual length (its scenarios
# bound their own waits): with four passes sharing two slow cores one has
# taken 32 minutes, and a pass killed by its limit reports none of the
# scenarios it had left.
run_pass() {
  local engine=${1%.*} mode=${1#*.} s status
  s=$(date +%s)
  (cd e2e/xengine && MCPWASM_E2E_PLAN=$plan MCPWASM_E2E_ENGINE=$engine MCPWASM_E2E_RUNTIME=$mode MCPWASM_E2E_WEB="$tmp/web" MCPWASM_E2E_APP="$tmp/app" \
    "$tmp/xengine.test" -test.count=1 -test.v -test.timeout=80m ${E2E_RUN:+-test.run "$E2E_RUN"}) >"$tmp/$1.log" 2>&1
  status=$?
  echo "$status $(( $(date +%s) - s ))" >"$tmp/$1.status"
}

for p in "${order[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  run_pass "$p" &
done
# E2E_SLOT_FILE: touched once every pass has started and a place in the
# pool is free, for a stage that runs beside the last passes (make test's
# conformance-browser uses the CPU their tail leaves idle).
if [ -n "${E2E_SLOT_FILE:-}" ]; then
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  touch "$E2E_SLOT_FILE"
fi
wait

failed=0
declare -a summary
failures=()
for engine in $engines; do
  line=$(printf '  e2e %-8s' "$engine")
  for mode in $modes; do
    p=$engine.$mode
    read -r status secs <"$tmp/$p.status" || { status=1; secs=0; }
    sed "s/^/[$engine $mode] /" "$tmp/$p.log"
    pass=$(grep -c '^--- PASS' "$tmp/$p.log")
    fail=$(grep -c '^--- FAIL' "$tmp/$p.log")
    expected=$(grep -c 'EXPECTED FAILURE' "$tmp/$p.log")
    if [ "$status" -eq 0 ]; then
      word=passed
    else
      word=FAILED
      failed=1
    fi
    line+=$(printf '  %s: %s %d/%d' "$mode" "$word" "$pass" $((pass + fail)))
    [ "$expected" -gt 0 ] && line+=" ($expected ended at a written-down expected failure)"
    line+=$(printf ' %dm%02ds;' $((secs / 60)) $((secs % 60)))
    # CI shows the tail of the output: name what failed there, with the
    # failing test's own lines, not only above among thousands. A test
    # with failed subtests is named by its failed leaves (a subtest none
    # of whose own subtests failed), whose lines say why; each gets its
    # messages first, then the last of its lines (the servers' and pages'
    # traces it logged).
    for t in $(sed -n 's/^--- FAIL: \([^ ]*\).*/\1/p' "$tmp/$p.log"); do
      leaves=$(sed -nE 's/^ +--- FAIL: ([^ ]*).*/\1/p' "$tmp/$p.log" | awk -v t="$t" '
        index($0, t "/") == 1 {n[++c] = $0}
        END {
          for (i = 1; i <= c; i++) {
            leaf = 1
            for (j = 1; j <= c; j++) if (index(n[j], n[i] "/") == 1) leaf = 0
            if (leaf) print n[i]
          }
          if (c == 0) print t
        }')
      for leaf in $leaves; do
        failures+=("[$engine $mode] $leaf:")
        lines=$(awk -v t="$leaf" '
          $1 == "===" && ($2 == "RUN" || $2 == "CONT" || $2 == "NAME") && $3 == t {on=1; next}
          $1 == "===" {on=0}
          on && $0 ~ /^ +/ {print}' "$tmp/$p.log")
        while IFS= read -r l; do failures+=("    $l"); done < <(
          scripts/test-messages.sh <<<"$lines" | head -n 10
          echo "  …"
          tail -n 40 <<<"$lines")
      done
    done
    if [ "$status" -ne 0 ] && ! grep -q '^--- FAIL' "$tmp/$p.log"; then
      failures+=("[$engine $mode] exit $status with no failed test: the last lines were")
      while IFS= read -r l; do failures+=("    $l"); done < <(tail -n 15 "$tmp/$p.log")
    fi
  done
  summary+=("$line")
done

# Every skip, with the reason the scenario gave where it skipped, grouped
# by reason: a scenario that runs only somewhere says so in the summary.
skips() {
  awk -v pass="$1" '
    /^ *=== (RUN|CONT|NAME|PAUSE) / { cur = $3; next }
    /^ *--- SKIP: / { t = $3; print pass "\t" t "\t" (t in why ? why[t] : "(no reason given)"); next }
    /^ *--- / { next }
    /_test\.go:[0-9]+: / && cur != "" { l = $0; sub(/^ *[a-z_]+_test\.go:[0-9]+: /, "", l); why[cur] = l }
  ' "$tmp/$1.log"
}
for engine in $engines; do
  for mode in $modes; do skips "$engine.$mode"; done
done >"$tmp/skips"
# Under the pairwise plan a scenario skips one pass of each engine: it
# must have run in the other.
if [ "$plan" = pairwise ]; then
  while IFS=$'\t' read -r p t why; do
    case $why in *"its subject is not the runtime"*) ;; *) continue ;; esac
    engine=${p%.*} mode=${p#*.}
    other=auto; [ "$mode" = auto ] && other=main
    if ! grep -qE "^--- (PASS|FAIL): $t " "$tmp/$engine.$other.log"; then
      failures+=("[$engine] $t ran in neither runtime mode: the pairwise plan skipped it in $mode, and $other did not run it")
      failed=1
    fi
  done <"$tmp/skips"
fi
echo
echo "e2e: $(( $(date +%s) - start ))s in all"
printf '%s\n' "${summary[@]}"
if [ -s "$tmp/skips" ]; then
  echo "e2e: skipped, by reason (pass: tests)"
  awk -F'\t' '{
      k = $3; if (!(k in n)) order[++m] = k
      n[k]++; p = $1 ": " $2
      if (n[k] <= 6) list[k] = list[k] (n[k] > 1 ? ", " : "") p
    }
    END { for (i = 1; i <= m; i++) { k = order[i]; printf "  %s\n    %d: %s%s\n", k, n[k], list[k], (n[k] > 6 ? ", …" : "") } }' "$tmp/skips" | cut -c1-400
fi
if [ "${#failures[@]}" -gt 0 ]; then
  echo "e2e: what failed"
  printf '  %s\n' "${failures[@]}"
fi
exit $failed
