# Shared by scripts/conformance-native.sh and scripts/conformance-browser.sh
# (source it): installs the pinned suite and runs scenarios.
#
# The suite is @modelcontextprotocol/conformance, pinned in
# conformance/package.json with Node 22 from npm's "node" package (the
# machine's Node may be older), installed into conformance/node_modules on
# first use; later runs reuse it.

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
conf="$root/conformance"

# The auth scenarios both runs must pass: the auth suite, the 2025-03-26
# back-compat scenarios and the draft ones the pinned version has.
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
  # draft
  auth/resource-mismatch
  auth/offline-access-scope
  auth/offline-access-not-supported
)

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
# suite upgrade cannot silently skip one. Extensions this client does not
# implement (client credentials, cross-app access) are exempt.
conformance_check_covered() {
  local pattern="$1"; shift
  local s
  for s in $(conformance list --client | sed -n 's/^  - \([^ ]*\).*/\1/p' | grep -E "$pattern"); do
    case "$s" in auth/client-credentials-*|auth/cross-app-*) continue ;; esac
    if [[ ! " $* " == *" $s "* ]]; then
      echo "conformance: scenario $s is not covered; add it to $0" >&2
      exit 1
    fi
  done
}

# conformance_run COMMAND EXPECTED_FILE TIMEOUT_MS OUTDIR SCENARIO...: runs
# each scenario, one at a time, against the client COMMAND; prints a
# PASS/FAIL/XFAIL/XPASS line each and "N passed, N failed"; returns non-zero
# when a scenario not listed in EXPECTED_FILE fails.
conformance_run() {
  local cmd="$1" expected_file="$2" timeout="$3" outdir="$4"; shift 4
  local expected t0=$SECONDS passed=0 failed=0 xfail=0 s st log
  expected=" $(sed -n 's/^[[:space:]]*-[[:space:]]*\([^#[:space:]]*\).*/\1/p' "$expected_file" | tr '\n' ' ') "
  mkdir -p "$outdir"
  for s in "$@"; do
    log="$outdir/$(echo "$s" | tr '/' '_').log"
    st=$SECONDS
    if conformance client --command "$cmd" --scenario "$s" --timeout "$timeout" -o "$outdir" >"$log" 2>&1 \
       && grep -q "OVERALL: PASSED" "$log"; then
      if [[ "$expected" == *" $s "* ]]; then
        echo "XPASS $s (listed in ${expected_file#$root/} but passed: remove it) $((SECONDS - st))s"
      else
        echo "PASS $s $(grep -o 'Passed: [0-9]*/[0-9]*' "$log" | head -1) $((SECONDS - st))s"
      fi
      passed=$((passed + 1))
    elif [[ "$expected" == *" $s "* ]]; then
      echo "XFAIL $s (listed in ${expected_file#$root/}) $((SECONDS - st))s"
      xfail=$((xfail + 1))
    else
      echo "FAIL $s $((SECONDS - st))s"
      sed 's/^/    /' "$log" | grep -v '^\s*$' | tail -40
      failed=$((failed + 1))
    fi
  done
  echo "$passed passed, $((failed + xfail)) failed"
  echo "($xfail of the failures expected; $((SECONDS - t0))s)"
  (( failed == 0 ))
}
