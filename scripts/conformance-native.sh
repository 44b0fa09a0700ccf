#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in conformance/package.json) against cmd/conformance-client, the
# native client built on package oauth: the auth suite plus the 2025-03-26
# back-compat and draft auth scenarios.
#
# Installs what it needs (Node 22 from npm's "node" package and the suite,
# into conformance/node_modules) on first use; later runs reuse it.
# Prints one PASS/FAIL line per scenario and "N passed, N failed"; exits
# non-zero when a scenario not listed in conformance/expected-failures.yml fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
conf="$root/conformance"
cd "$conf"

# Install (idempotent): only when node_modules does not match the lock file.
stamp="node_modules/.mcpwasm-installed"
if [[ ! -x node_modules/.bin/conformance || ! -x node_modules/.bin/node || ! -f "$stamp" || package-lock.json -nt "$stamp" ]]; then
  echo "conformance: installing pinned tools (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  touch "$stamp"
fi
export PATH="$conf/node_modules/.bin:$PATH"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if (( node_major < 22 )); then
  echo "conformance: need Node >= 22, got $(node --version)" >&2
  exit 1
fi

bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
(cd "$root" && go build -o "$bindir/conformance-client" ./cmd/conformance-client)

scenarios=(
  # --suite auth
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
# Every scenario of the auth suite must be in the list above.
for s in $(conformance list --client | sed -n 's/^  - \(auth\/[^ ]*\).*/\1/p'); do
  case "$s" in auth/client-credentials-*|auth/cross-app-*) continue ;; esac  # extensions (not this client)
  if [[ ! " ${scenarios[*]} " == *" $s "* ]]; then
    echo "conformance: scenario $s is not covered; add it to $0" >&2
    exit 1
  fi
done

expected=" $(sed -n 's/^[[:space:]]*-[[:space:]]*\([^#[:space:]]*\).*/\1/p' expected-failures.yml | tr '\n' ' ') "
outdir="$bindir/results"
passed=0 failed=0 xfail=0
for s in "${scenarios[@]}"; do
  log="$bindir/$(echo "$s" | tr '/' '_').log"
  if conformance client --command "$bindir/conformance-client" --scenario "$s" --timeout 30000 -o "$outdir" >"$log" 2>&1 \
     && grep -q "OVERALL: PASSED" "$log"; then
    echo "PASS $s $(grep -o 'Passed: [0-9]*/[0-9]*' "$log" | head -1)"
    passed=$((passed + 1))
  elif [[ "$expected" == *" $s "* ]]; then
    echo "XFAIL $s (listed in conformance/expected-failures.yml)"
    xfail=$((xfail + 1))
  else
    echo "FAIL $s"
    sed 's/^/    /' "$log" | grep -v '^\s*$' | tail -25
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed${xfail:+, $xfail expected failures}"
(( failed == 0 ))
