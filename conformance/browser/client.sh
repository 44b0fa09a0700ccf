#!/usr/bin/env bash
# The command the conformance suite launches for the browser run
# (scripts/conformance-browser.sh passes this file, whose path has no
# spaces, as --command). The suite appends the server URL and sets
# MCP_CONFORMANCE_SCENARIO / MCP_CONFORMANCE_CONTEXT.
#
# Runs the prebuilt cmd/conformance-browser named by MCPWASM_BROWSER_CLIENT,
# else `go run`s it (slower; for trying one scenario by hand).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [[ -n "${MCPWASM_BROWSER_CLIENT:-}" ]]; then
  exec "$MCPWASM_BROWSER_CLIENT" -repo "$root" "$@"
fi
cd "$root"
exec go run ./cmd/conformance-browser -repo "$root" "$@"
