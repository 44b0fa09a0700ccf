//go:build js && wasm && mcpwasm_client

package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// The client-only module (build tag mcpwasm_client) leaves out the
// catalog, the agent, the model adapters and the WebMCP glue. make bench
// builds it to measure what those features cost (BENCHMARKS.md, the size
// section); make build does not ship it.

// features is empty: this module keeps no catalogs or agents.
type features struct{}

func newFeatures() features { return features{} }

// featureHandlers answers each catalog and agent operation of jsapi.Ops
// with an error that names the module to load instead.
func (a *app) featureHandlers() map[string]handler {
	hs := map[string]handler{}
	for _, o := range jsapi.Ops {
		if !strings.HasPrefix(o.Name, "catalog.") && !strings.HasPrefix(o.Name, "agent.") {
			continue
		}
		what, _, _ := strings.Cut(o.Name, ".")
		hs[o.Name] = handler{
			args: reflect.TypeOf(o.Args),
			run: func(context.Context, json.RawMessage, jsCall) (any, error) {
				return nil, mcperr.New(mcperr.InvalidArgument, "mcp: this is the client-only module (built with -tags=mcpwasm_client), which has no %s; load the full module (make build)", what)
			},
		}
	}
	return hs
}
