# Shared by scripts/conformance-native.sh and scripts/conformance-browser.sh
# (source it): installs the pinned suite and runs scenarios.
#
# The suite is @modelcontextprotocol/conformance, pinned in
# conformance/package.json with Node 22 from npm's "node" package (the
# machine's Node may be older), installed into conformance/node_modules on
# first use; later runs reuse it.

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
conf="$root/conformance"

# The client scenarios of the pinned suite, every one run by both runs
# (scripts/conformance-native.sh and scripts/conformance-browser.sh);
# conformance_check_covered fails when the suite has one not listed here.
CORE_SCENARIOS=(
  initialize
  tools_call
  elicitation-sep1034-client-defaults
  sse-retry
  # 2026-07-28
  request-metadata
  sep-2322-client-request-state
  http-standard-headers
  http-custom-headers
  http-invalid-tool-headers
  json-schema-ref-no-deref
  json-schema-2020-12-preservation
)
AUTH_SCENARIOS=(
  auth/metadata-default
  auth/metadata-var1
  auth/metadata-var2
  auth/metadata-var3
  auth/basic-cimd
  auth/scope-from-www-authenticate
  auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined
  auth/scope-step-up
  auth/scope-retry-limit
  auth/token-endpoint-auth-basic
  auth/token-endpoint-auth-post
  auth/token-endpoint-auth-none
  auth/pre-registration
  # 2025-03-26 back-compat
  auth/2025-03-26-oauth-metadata-backcompat
  auth/2025-03-26-oauth-endpoint-fallback
  # 2026-07-28
  auth/resource-mismatch
  auth/offline-access-scope
  auth/offline-access-not-supported
  auth/authorization-server-migration
  auth/iss-supported
  auth/iss-not-advertised
  auth/iss-supported-missing
  auth/iss-wrong-issuer
  auth/iss-unexpected
  auth/iss-normalized
  auth/metadata-issuer-mismatch
)
# Extensions: run too, so what is not implemented shows (each listed in the
# expected-failures files with its reason, or reported NOT RUN when every
# check is SKIPPED).
EXTENSION_SCENARIOS=(
  auth/client-credentials-jwt
  auth/client-credentials-basic
  auth/enterprise-managed-authorization
  auth/dpop
  auth/dpop-nonce
  auth/wif-jwt-bearer
  sep-2640-client-no-prefetch
  sep-2640-client-verify-digest
  sep-2640-client-verify-size
  sep-2640-client-verify-frontmatter
)
ALL_SCENARIOS=("${CORE_SCENARIOS[@]}" "${AUTH_SCENARIOS[@]}" "${EXTENSION_SCENARIOS[@]}")

# conformance_setup installs the pinned tools when node_modules does not
# match the lock file, and puts them on PATH.
conformance_setup() {
  local stamp="$conf/node_modules/.mcpwasm-installed"
  if [[ ! -x "$conf/node_modules/.bin/conformance" || ! -x "$conf/node_modules/.bin/node" || ! -f "$stamp" || "$conf/package-lock.json" -nt "$stamp" ]]; then
    echo "conformance: installing pinned tools (npm ci)" >&2
    (cd "$conf" && npm ci --no-audit --no-fund --loglevel=error >&2)
    touch "$stamp"
  fi
  export PATH="$conf/node_modules/.bin:$PATH"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  if (( major < 22 )); then
    echo "conformance: need Node >= 22, got $(node --version)" >&2
    exit 1
  fi
}

# conformance_check_covered PATTERN SCENARIO...: every client scenario of the
# pinned suite that matches PATTERN (a grep -E regex) must be listed, so a
# suite upgrade cannot silently skip one.
conformance_check_covered() {
  local pattern="$1"; shift
  local s
  for s in $(conformance list --client | sed -n 's/^  - \([^ ]*\).*/\1/p' | grep -E "$pattern"); do
    if [[ ! " $* " == *" $s "* ]]; then
      echo "conformance: scenario $s is not covered; add it to $0" >&2
      exit 1
    fi
  done
}

# conformance_checked OUTDIR SCENARIO: the number of checks of the
# scenario's newest result in OUTDIR that were evaluated (not SKIPPED or
# INFO); 0 means the scenario did not really run.
conformance_checked() {
  local dir
  dir="$(ls -dt "$1/$2"-[0-9][0-9][0-9][0-9]-*/ 2>/dev/null | head -1)"
  [[ -n "$dir" && -f "$dir/checks.json" ]] || { echo 0; return; }
  node -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(c.filter((x) => x.status !== "SKIPPED" && x.status !== "INFO").length)' "$dir/checks.json"
}

# conformance_modern_wire: the scenarios the suite runs at an older wire by
# default that 2026-07-28 also covers (tagged with it and another version),
# as NAME@2026-07-28 for conformance_run.
conformance_modern_wire() {
  conformance list --client | sed -n 's/^  - \([^ ]*\) \[\([^]]*\)\].*/\1 \2/p' |
    awk '$2 ~ /2026-07-28/ && $2 ~ /,/ {print $1 "@2026-07-28"}'
}

# conformance_run COMMAND EXPECTED_FILE TIMEOUT_MS OUTDIR SCENARIO...: runs
# each scenario against the client COMMAND (NAME@VERSION: the scenario NAME
# with --spec-version VERSION), CONFORMANCE_JOBS at a time (2 by default:
# a scenario mostly waits on its client's start, and every scenario's
# servers listen on ports of their own); prints a PASS/FAIL/XFAIL/XPASS/
# NOTRUN line each, in the order given, and "N passed, N failed, N not
# run"; returns non-zero when a scenario not listed in EXPECTED_FILE fails.
# A scenario whose checks are all SKIPPED (the client never did what it
# tests), or that the suite skips as not applicable, is NOT RUN: listed by
# name at the end, never counted as passed.
conformance_run() {
  local cmd="$1" expected_file="$2" timeout="$3" outdir="$4"; shift 4
  local jobs="${CONFORMANCE_JOBS:-2}" t0=$SECONDS passed=0 failed=0 xfail=0
  local notrun=() n=$# i=0 next=0 s verdict
  if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
    echo "conformance: CONFORMANCE_JOBS must be a positive number, not \"$jobs\"" >&2
    return 2
  fi
  local expected
  expected=" $(sed -n 's/^[[:space:]]*-[[:space:]]*\([^#[:space:]]*\).*/\1/p' "$expected_file" | tr '\n' ' ') "
  mkdir -p "$outdir"
  local scenarios=("$@")
  # Prints the finished results from $next on, in order, and counts them.
  conformance_flush() {
    while [[ $next -lt $n && -f "$outdir/$next.result" ]]; do
      cat "$outdir/$next.result"
      read -r verdict _ <"$outdir/$next.result"
      case "$verdict" in
        PASS | XPASS) passed=$((passed + 1)) ;;
        XFAIL) xfail=$((xfail + 1)) ;;
        NOTRUN) notrun+=("${scenarios[$next]}") ;;
        *) failed=$((failed + 1)) ;;
      esac
      next=$((next + 1))
    done
  }
  # Only this function's jobs count: the caller may run its own (a shared
  # browser) in the background.
  local running=() p still
  for s in "$@"; do
    while :; do
      still=()
      for p in "${running[@]}"; do
        if kill -0 "$p" 2>/dev/null; then still+=("$p"); else wait "$p" || true; fi
      done
      running=("${still[@]}")
      conformance_flush
      [[ ${#running[@]} -lt $jobs ]] && break
      sleep 0.2
    done
    (conformance_one "$cmd" "$expected" "${expected_file#$root/}" "$timeout" "$outdir/$i" "$s" >"$outdir/$i.partial" 2>&1 || true
      mv "$outdir/$i.partial" "$outdir/$i.result") &
    running+=($!)
    i=$((i + 1))
  done
  for p in "${running[@]}"; do wait "$p" || true; done
  conformance_flush
  echo "$passed passed, $((failed + xfail)) failed, ${#notrun[@]} not run"
  echo "($xfail of the failures expected; $((SECONDS - t0))s, $jobs at a time)"
  if (( ${#notrun[@]} )); then
    echo "not run (every check SKIPPED, or not applicable): ${notrun[*]}"
  fi
  [[ $failed -eq 0 && $next -eq $n ]]
}

# conformance_one COMMAND EXPECTED NAME_OF_EXPECTED_FILE TIMEOUT_MS OUTDIR
# SCENARIO: runs one scenario with its results in OUTDIR (a directory of its
# own, so a run at another wire of the same scenario is not read for it);
# prints its verdict line first, then, for an unexpected failure, the end
# of its log.
conformance_one() {
  local cmd="$1" expected="$2" expected_name="$3" timeout="$4" outdir="$5" s="$6"
  local name="${s%@*}" wire=() st=$SECONDS log
  [[ "$s" == *@* ]] && wire=(--spec-version "${s#*@}")
  mkdir -p "$outdir"
  log="$outdir/$(echo "$s" | tr '/@' '__').log"
  if conformance client --command "$cmd" --scenario "$name" "${wire[@]}" --timeout "$timeout" -o "$outdir" >"$log" 2>&1 \
     && grep -q "OVERALL: PASSED" "$log"; then
    if [[ "$(conformance_checked "$outdir" "$name")" == 0 ]]; then
      echo "NOTRUN $s (every check SKIPPED) $((SECONDS - st))s"
    elif [[ "$expected" == *" $name "* ]]; then
      echo "XPASS $s (listed in $expected_name but passed: remove it) $((SECONDS - st))s"
    else
      echo "PASS $s $(grep -o 'Passed: [0-9]*/[0-9]*' "$log" | head -1) $((SECONDS - st))s"
    fi
  elif grep -q '^SKIPPED: scenario' "$log"; then
    echo "NOTRUN $s ($(grep -m1 '^SKIPPED: scenario' "$log")) $((SECONDS - st))s"
  elif [[ "$expected" == *" $name "* ]]; then
    echo "XFAIL $s (listed in $expected_name) $((SECONDS - st))s"
  else
    echo "FAIL $s $(grep -o 'Passed: [0-9]*/[0-9]*' "$log" | head -1) $((SECONDS - st))s"
    sed 's/^/    /' "$log" | grep -v '^\s*$' | tail -40
  fi
}
