#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian machine: Chromium (for the
# e2e tests), brotli (precompressed wasm), gcc (the race detector needs cgo)
# and the pinned Node packages of e2e/node, e2e/stacks/*,
# examples/react-vite and examples/ai-sdk.
# Idempotent: does nothing that is already done. It says what it installs
# before it does; NO_INSTALL=1 installs nothing and fails, naming what is
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
command -v brotli >/dev/null 2>&1 || need+=(brotli)
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)   # go test -race needs cgo
# The cross-engine e2e suite (make e2e): Firefox ESR (WebDriver
# BiDi built in), WebKitGTK's WebDriver and MiniBrowser, and Xvfb for them.
[ -x /usr/bin/firefox-esr ] || need+=(firefox-esr)
[ -x /usr/bin/WebKitWebDriver ] || need+=(webkit2gtk-driver)
command -v Xvfb >/dev/null 2>&1 || need+=(xvfb)
if [ ${#need[@]} -gt 0 ]; then
  if [ -n "${NO_INSTALL:-}" ]; then
    echo "NO_INSTALL is set: not installing; missing Debian packages: ${need[*]}" >&2
    exit 1
  fi
  echo "installing from Debian with apt-get (as root, or with sudo): ${need[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Ory Hydra, one of the authorization stacks: built from the Go module proxy
# once per machine (scripts/install-hydra.sh), while npm downloads below.
scripts/install-hydra.sh &
hydra=$!

# e2e/node: the reference server and TypeScript; examples/react-vite: Vite
# and React for the npm package's bundler test, examples/ai-sdk: the same
# with the AI SDK (the package itself is installed from its tarball by
# those tests); e2e/stacks/*: the authorization
# stacks the e2e tests sign in to (e2e/xengine/stacks_test.go), each with its own
# pinned packages (the Cloudflare one brings wrangler and Node 22).
# The installs run beside each other, at most four jobs at once with
# Hydra's build counted while it runs (npm's cache takes concurrent
# writers; on a fresh clone they took 61 s one after another); each one's
# output is printed when it ends.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
npm_ci() {
  local dir=$1 log
  log="$logs/$(echo "$dir" | tr / _)"
  if (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
    echo "installed the pinned Node packages of $dir: $(grep -m1 '^added' "$log" || echo done)"
  else
    echo "npm ci failed in $dir:" >&2
    cat "$log" >&2
    return 1
  fi
}
installs=()
for dir in e2e/node examples/react-vite examples/ai-sdk e2e/stacks/*; do
  if [ -f $dir/package-lock.json ] && [ ! -f $dir/node_modules/.package-lock.json -o $dir/package-lock.json -nt $dir/node_modules/.package-lock.json ]; then
    if [ -n "${NO_INSTALL:-}" ]; then
      echo "NO_INSTALL is set: not installing the pinned Node packages of $dir (npm ci)" >&2
      exit 1
    fi
    echo "installing the pinned Node packages of $dir (npm ci)"
    while [ "$(jobs -rp | wc -l)" -ge 4 ]; do sleep 0.2; done # Hydra's build is one of the jobs
    npm_ci "$dir" &
    installs+=($!)
  fi
done
failed=0
for pid in "${installs[@]}"; do wait "$pid" || failed=1; done
[ $failed -eq 0 ] || { echo "an npm ci failed: its output is above" >&2; exit 1; }

wait "$hydra" || { echo "scripts/install-hydra.sh failed: its output is above" >&2; exit 1; }
