#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in conformance/package.json) against the product in a browser:
# cmd/conformance-browser drives the wasm module and web/mcp.js in headless
# Chromium (harness page: conformance/browser/). Scenarios: every client
# scenario of the pinned suite (scripts/conformance-lib.sh lists them), and
# those the suite runs at an older wire by default again at 2026-07-28.
#
# Chromium runs with --disable-web-security for these runs only: the suite's
# test servers send no CORS headers. The e2e tests keep real CORS.
#
# Uses the same pinned tools as scripts/conformance-native.sh (Node 22 from
# npm's "node" package and the suite, in conformance/node_modules), installed
# on first use under the same stamp, so either script installs for both.
# Scenarios run CONFORMANCE_JOBS (2) at a time. Prints one PASS/FAIL line
# per scenario and "N passed, N failed"; exits non-zero when a scenario not listed in
# conformance/browser/expected-failures.yml fails. A listed scenario that
# passes prints XPASS: remove it from the file.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/conformance-lib.sh"
conformance_setup

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$chromium" ]]; then
  echo "conformance-browser: Chromium not found at $chromium (set CHROMIUM, or run scripts/install-deps.sh)" >&2
  exit 1
fi
export CHROMIUM="$chromium"

bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
(cd "$root" && go build -o "$bindir/conformance-browser" ./cmd/conformance-browser)
export MCPWASM_BROWSER_CLIENT="$bindir/conformance-browser"
# Build (or reuse) the wasm + web/ bundle now, outside the scenarios' timeouts.
"$MCPWASM_BROWSER_CLIENT" -repo "$root" -prepare >/dev/null
# One Chromium for every scenario, each in a browser context of its own:
# starting a browser was most of a scenario's time.
"$MCPWASM_BROWSER_CLIENT" -serve-browser >"$bindir/browser-url" 2>"$bindir/browser.log" &
browser_pid=$!
trap 'kill "$browser_pid" 2>/dev/null; wait "$browser_pid" 2>/dev/null; rm -rf "$bindir"' EXIT
for _ in $(seq 600); do
  [[ -s "$bindir/browser-url" ]] && break
  kill -0 "$browser_pid" 2>/dev/null || break
  sleep 0.1
done
if [[ ! -s "$bindir/browser-url" ]]; then
  echo "conformance-browser: the shared Chromium did not start:" >&2
  cat "$bindir/browser.log" >&2
  exit 1
fi
export MCPWASM_CONFORMANCE_BROWSER="$(cat "$bindir/browser-url")"
client="$conf/browser/client.sh"
if [[ "$client" == *" "* ]]; then
  echo "conformance-browser: the suite splits --command on spaces; move the checkout to a path without spaces ($client)" >&2
  exit 1
fi

scenarios=("${ALL_SCENARIOS[@]}")
conformance_check_covered '.' "${scenarios[@]}"
# Then once more at the 2026-07-28 wire, the scenarios the suite runs at an
# older one by default (the auth suite, tools_call, …): NAME@2026-07-28.
mapfile -t modern < <(conformance_modern_wire)
if (( ${#modern[@]} < 10 )); then
  echo "conformance-browser: only ${#modern[@]} scenarios tagged for 2026-07-28 and an older version; did the list format change?" >&2
  exit 1
fi
scenarios+=("${modern[@]}")

# 90 s a scenario (the driver ends itself at 80 s): starting Chromium and the
# wasm module takes tens of seconds on a loaded two-core machine.
# CONFORMANCE_BROWSER_OUT=dir keeps each scenario's checks.json and log (the
# client's log: page console, steps, popups) there.
conformance_run "$client" "$conf/browser/expected-failures.yml" 90000 "${CONFORMANCE_BROWSER_OUT:-$bindir/results}" "${scenarios[@]}"
