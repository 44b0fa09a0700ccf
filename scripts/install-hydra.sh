#!/usr/bin/env bash
# Builds the Ory Hydra of e2e/xengine/stack_oidc_test.go (scripts/install-deps.sh
# runs it; the stacks' Node packages are installed there):
#   - Ory Hydra, built from its release module on the Go module proxy into
#     the machine's cache, ${XDG_CACHE_HOME:-~/.cache}/mcpwasm/hydra-$HYDRA_VERSION
#     (MCPWASM_HYDRA overrides the path), so every clone of the repository on
#     this machine shares one build (cgo, for its in-memory
#     SQLite: needs gcc). The release's go.mod replaces its API client
#     with a nested module the module zip leaves out, and that client's
#     matching version is not on the proxy, so the build uses the newest
#     one that is (hydra-client-go v2.2.1; only Hydra's CLI commands use it).
#     The build is about 9 CPU-minutes with an empty Go build cache (about
#     5 minutes on 2 idle cores) and gives a 57 MB binary; it is kept, so
#     only the first run pays.
# Idempotent: does nothing that is already done. NO_INSTALL=1 installs
# nothing and fails, naming what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

HYDRA_VERSION=v2.3.0 # keep in step with hydraVersion in e2e/xengine/stack_oidc_test.go
HYDRA_CLIENT_VERSION=v2.2.1

hydra="${MCPWASM_HYDRA:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpwasm/hydra-$HYDRA_VERSION}"
if [ ! -x "$hydra" ]; then
  if [ -n "${NO_INSTALL:-}" ]; then
    echo "NO_INSTALL is set: not building Ory Hydra $HYDRA_VERSION into $hydra" >&2
    exit 1
  fi
  command -v gcc >/dev/null 2>&1 || { echo "building Ory Hydra needs gcc (cgo): run scripts/install-deps.sh" >&2; exit 1; }
  echo "building Ory Hydra $HYDRA_VERSION from the Go module proxy (about 9 CPU-minutes)"
  start=$SECONDS
  src="$(go mod download -json "github.com/ory/hydra/v2@$HYDRA_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$src" ] || { echo "go mod download github.com/ory/hydra/v2@$HYDRA_VERSION gave no directory" >&2; exit 1; }
  work="$(mktemp -d)"
  trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
  cp -r "$src" "$work/hydra"
  chmod -R u+w "$work/hydra"
  mkdir -p "$(dirname "$hydra")"
  (
    cd "$work/hydra"
    go mod edit -replace "github.com/ory/hydra-client-go/v2=github.com/ory/hydra-client-go/v2@$HYDRA_CLIENT_VERSION"
    CGO_ENABLED=1 GOFLAGS=-mod=mod go build -trimpath -tags sqlite,sqlite_omit_load_extension -o "$hydra.tmp" .
  )
  mv "$hydra.tmp" "$hydra"
  echo "built $hydra ($(du -m "$hydra" | cut -f1) MB) in $((SECONDS - start))s"
fi
