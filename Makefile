# mcpwasm: build the wasm module, run the demo, run every test.
# `make run` serves the demo; `make test` installs what it needs and runs all tests.

GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
WASM      := web/mcp.wasm
# The build tags of mcp.wasm (devkit/webbuild.Tags, which the tests and the
# bench build with): nethttpomithttp2 leaves out net/http's HTTP/2 client,
# which the module never runs (every request goes through the browser's fetch).
WASMTAGS  := nethttpomithttp2
WASMFLAGS := -trimpath -tags=$(WASMTAGS) -ldflags="-s -w -X main.version=$(VERSION)"
GOSRC     := $(shell find . -name '*.go' -not -path './e2e/*' -not -path './node_modules/*' 2>/dev/null) go.mod go.sum
ADDR      ?= 127.0.0.1:8080
MCP_ADDR  ?= 127.0.0.1:8081
AS_ADDR   ?= 127.0.0.1:8082
MCP2_ADDR ?= 127.0.0.1:8083
MODEL_ADDR ?= 127.0.0.1:8084
SANDBOX_ADDR ?= 127.0.0.1:8085

.PHONY: all build generate dist run test unit wasmtest fuzz e2e deps vet types conformance conformance-native conformance-browser bench clean

all: build

## build: the wasm module, wasm_exec.js and precompressed variants in web/, and the module's
## content-hashed copy mcp-<hash>.wasm (with its variants) that web/wasmurl.js names for mcp.js
build: web/jsapi.js $(WASM) web/wasm_exec.js web/wasmurl.js

## generate: web/jsapi.js from the Go it carries (jsapi, with hostpolicy's checks and sentences,
## mcperr's, catalog's and mcpclient's); make vet fails when the file is stale
generate: web/jsapi.js

web/jsapi.js: $(GOSRC)
	$(GO) run ./jsapi/gen -out $@

# mcp-<hash>.wasm (and its .gz, .br): the module under a name that changes
# with its content, served as immutable; wasmurl.js tells mcp.js that name.
web/wasmurl.js: $(WASM) devkit/webbuild/hashname.go devkit/hashname/hashname.go
	$(GO) run ./cmd/npmdist -stamp web

# Go's wasm_exec.js as an ES module that exports Go and sets no global.
web/wasm_exec.js: $(GOROOT)/lib/wasm/wasm_exec.js devkit/webbuild/webbuild.go
	$(GO) run ./cmd/npmdist -wasm-exec $@

## dist: the npm package in dist/npm/ (package.json, the modules and their types, mcp-<hash>.wasm with .br/.gz,
## the callback page) and its tarball from npm pack (dist/npm/mcpwasm-<version>.tgz)
dist: build
	$(GO) run ./cmd/npmdist -out dist/npm -wasm-dir web -version "$(VERSION)"
	cd dist/npm && npm pack --silent

$(WASM): $(GOSRC)
	GOOS=js GOARCH=wasm $(GO) build $(WASMFLAGS) -o $@ ./wasm
	gzip -9 -k -f $@
	if command -v brotli >/dev/null; then brotli -q 11 -f -o $@.br $@; else rm -f $@.br; echo "brotli not installed: serving gzip only"; fi

## run: build, then serve the demo page and the demo MCP server
run: build
	$(GO) run ./cmd/devserver -addr $(ADDR) -mcp-addr $(MCP_ADDR) -as-addr $(AS_ADDR) -mcp2-addr $(MCP2_ADDR) -model-addr $(MODEL_ADDR) -sandbox-addr $(SANDBOX_ADDR)

## deps: install what the tests need (Chromium, brotli, gcc, Node packages)
deps:
	scripts/install-deps.sh

## test: everything: vet, types, native unit tests (race), wasm tests, fuzz, e2e in every engine, both conformance runs;
## every stage runs even when one fails (unit, fuzz and conformance-native at once; conformance-browser beside e2e's last passes), then a summary line per stage (scripts/test.sh; STAGES="…" picks some)
test:
	scripts/test.sh

# The packages that build for the browser (e2e and the commands drive Chromium natively).
JSPKGS    := ./jsbridge/... ./wasm/... ./storage/... ./mcpclient/... ./oauth/... ./catalog/... ./agent/... ./jsapi/... ./internal/httpguard/... ./relay/...
STATICCHECK := .tools/staticcheck
STATICCHECK_VERSION := v0.8.2

## vet: go vet, gofmt, go mod tidy -diff and staticcheck (pinned), natively and as built for GOOS=js
vet: $(STATICCHECK)
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet $(JSPKGS)
	GOOS=js GOARCH=wasm $(GO) vet -tags=mcpwasm_client ./wasm
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) mod tidy -diff
	$(STATICCHECK) ./...
	GOOS=js GOARCH=wasm $(STATICCHECK) $(JSPKGS)
	$(GO) test -count=1 ./jsapi/

# staticcheck, pinned, built natively (it checks GOOS=js code when run with GOOS=js).
$(STATICCHECK):
	GOBIN=$(CURDIR)/.tools $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# Everything that runs a test needs the installed tools (also under make -j).
vet types unit wasmtest fuzz e2e conformance-native conformance-browser: deps

## types: web/mcp.d.ts type-checks the documented usage (e2e/types)
types:
	e2e/node/node_modules/.bin/tsc -p e2e/types

unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /e2e) ./e2e/engine
	node --test e2e/node/*.test.mjs

wasmtest:
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$(GOROOT)/lib/wasm/go_js_wasm_exec" ./jsbridge/... ./wasm/ ./storage/indexeddb/
	GOOS=js GOARCH=wasm $(GO) test -count=1 -tags=mcpwasm_client -exec="$(GOROOT)/lib/wasm/go_js_wasm_exec" ./wasm/

## fuzz: a short run of each fuzz target (seeds in */testdata/fuzz); FUZZTIME=5m for longer
FUZZTIME ?= 8s
FUZZTARGETS := oauth:FuzzParseCallback oauth:FuzzValidateAuthServerMeta oauth:FuzzValidateResourceMeta \
	oauth:FuzzParseTokenResponse oauth:FuzzParseChallenge mcpclient:FuzzSSETap mcpclient:FuzzCheckMessage
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz.sh $(FUZZTARGETS)

## e2e: every browser scenario (e2e/xengine) in Chromium, Firefox and WebKitGTK, each in runtime auto and main
## (scripts/e2e.sh; ENGINES="firefox" E2E_MODES="main" JOBS=1 pick; the last lines list what failed and every skip with its reason)
e2e:
	GO=$(GO) scripts/e2e.sh

## conformance-native: every client scenario of the official MCP conformance suite against oauth/ and go-sdk, natively
conformance-native:
	scripts/conformance-native.sh

## conformance-browser: every client scenario against the wasm client in headless Chromium
conformance-browser:
	scripts/conformance-browser.sh

## conformance: both conformance runs
conformance: conformance-native conformance-browser

## bench: payload, start-up, connect and call latency vs the TypeScript SDK and native go-sdk, agent step overhead vs a JS loop, in Chromium; writes BENCHMARKS.md
## (BENCH_ONLY=agent: only the agent scenario; perf: only the start-up breakdown and memory; runtime: only load()'s runtime modes;
## engines: only the per-call cost of each runtime in Chromium, Firefox and WebKit; npm: only the React example from the npm package against the demo page;
## soak: only the soak, three tabs of agent turns over five servers under random faults for BENCH_SOAK_DURATION, 10m by default, 0 leaves it out;
## size: only the size section, what each feature and package costs and the change since the last run, no browser)
bench:
	scripts/bench.sh

clean:
	rm -f web/mcp.wasm web/mcp.wasm.gz web/mcp.wasm.br web/wasm_exec.js web/wasmurl.js web/mcp-*.wasm web/mcp-*.wasm.gz web/mcp-*.wasm.br web/mcp-*.wasm.sha256
	rm -rf dist
