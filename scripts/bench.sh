#!/usr/bin/env bash
# Runs the benchmark (`make bench`): installs what it needs (Chromium,
# brotli and binaryen from Debian when missing; the pinned
# @modelcontextprotocol/sdk and esbuild in cmd/bench/, and Vite and React in
# examples/react-vite/), then `go run ./cmd/bench`, which builds, serves on
# loopback, drives headless Chromium, prints the table and writes
# BENCHMARKS.md. Extra arguments go to the bench program (for example
# `-runs 7`, `-quick`, `-also fetch=/path/to/other/tree`).
# BENCH_ONLY=<scenario> runs one scenario alone and replaces its section of
# BENCHMARKS.md: agent (the agent loop's step overhead), perf (the start-up
# breakdown, memory and payload), runtime (load()'s runtime modes: long
# tasks, the worker's message hop, a second tab, memory with three tabs),
# engines (where Go runs, per call, in Chromium, Firefox and WebKit;
# firefox-esr, webkit2gtk-driver and xvfb from Debian when missing) or npm
# (the React example built from the npm package against the demo page), size
# (the builds only, no browser: what each feature and package of the module
# costs and the change since the last report), or soak (three tabs of agent turns over five servers under random faults; it
# fails when a call is lost or a refresh repeated). BENCH_SOAK_DURATION
# (a Go duration, 10m by default; 0 leaves the soak out of a full run) is
# how long the soak's faults last: `BENCH_ONLY=soak BENCH_SOAK_DURATION=2m
# make bench`.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || [ -n "${CHROMIUM:-}" ] || need+=(chromium)
command -v brotli >/dev/null 2>&1 || need+=(brotli)
command -v wasm-opt >/dev/null 2>&1 || need+=(binaryen)
command -v firefox-esr >/dev/null 2>&1 || [ -n "${FIREFOX:-}" ] || need+=(firefox-esr)
command -v WebKitWebDriver >/dev/null 2>&1 || need+=(webkit2gtk-driver)
command -v Xvfb >/dev/null 2>&1 || need+=(xvfb)
if [ ${#need[@]} -gt 0 ]; then
  echo "bench: installing ${need[*]} from Debian"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ ! -f cmd/bench/node_modules/.package-lock.json ] || [ cmd/bench/package-lock.json -nt cmd/bench/node_modules/.package-lock.json ]; then
  echo "bench: installing the pinned npm packages of bench/"
  (cd cmd/bench && npm ci --no-audit --no-fund --loglevel=error)
fi

# The npm scenario builds examples/react-vite against the packed package.
if [ ! -f examples/react-vite/node_modules/.package-lock.json ] || [ examples/react-vite/package-lock.json -nt examples/react-vite/node_modules/.package-lock.json ]; then
  echo "bench: installing the pinned npm packages of examples/react-vite/"
  (cd examples/react-vite && npm ci --no-audit --no-fund --loglevel=error)
fi

exec go run ./cmd/bench -out BENCHMARKS.md "$@"
