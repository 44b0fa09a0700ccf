#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in conformance/package.json)
# against cmd/conformance-client, the native client built on package oauth
# and go-sdk: every client scenario (scripts/conformance-lib.sh lists them).
# Installs what it needs on first use (scripts/conformance-lib.sh). Prints
# one PASS/FAIL line per scenario and "N passed, N failed"; exits non-zero
# when a scenario not listed in conformance/expected-failures.yml fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/conformance-lib.sh"
conformance_setup

bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
(cd "$root" && go build -o "$bindir/conformance-client" ./cmd/conformance-client)

conformance_check_covered '.' "${ALL_SCENARIOS[@]}"
# CONFORMANCE_NATIVE_OUT=dir keeps each scenario's checks.json and log there.
conformance_run "$bindir/conformance-client" "$conf/expected-failures.yml" 30000 "${CONFORMANCE_NATIVE_OUT:-$bindir/results}" "${ALL_SCENARIOS[@]}"
