#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in conformance/package.json)
# against cmd/conformance-client, the native client built on package oauth:
# the auth suite plus the 2025-03-26 back-compat and draft auth scenarios.
# Installs what it needs on first use (scripts/conformance-lib.sh). Prints
# one PASS/FAIL line per scenario and "N passed, N failed"; exits non-zero
# when a scenario not listed in conformance/expected-failures.yml fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/conformance-lib.sh"
conformance_setup

bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
(cd "$root" && go build -o "$bindir/conformance-client" ./cmd/conformance-client)

conformance_check_covered '^auth/' "${AUTH_SCENARIOS[@]}"
conformance_run "$bindir/conformance-client" "$conf/expected-failures.yml" 30000 "$bindir/results" "${AUTH_SCENARIOS[@]}"
