#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in conformance/package.json)
# against cmd/conformance-client, the native client built on package oauth
# and go-sdk: every client scenario (scripts/conformance-lib.sh lists them),
# and those the suite runs at an older wire by default again at 2026-07-28.
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
# Then once more at the 2026-07-28 wire, the scenarios the suite runs at an
# older one by default (the auth suite, tools_call, …): NAME@2026-07-28.
mapfile -t modern < <(conformance_modern_wire)
if (( ${#modern[@]} < 10 )); then
  echo "conformance: only ${#modern[@]} scenarios tagged for 2026-07-28 and an older version; did the list format change?" >&2
  exit 1
fi
# CONFORMANCE_NATIVE_OUT=dir keeps each scenario's checks.json and log there.
conformance_run "$bindir/conformance-client" "$conf/expected-failures.yml" 30000 "${CONFORMANCE_NATIVE_OUT:-$bindir/results}" "${ALL_SCENARIOS[@]}" "${modern[@]}"
