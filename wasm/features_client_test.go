//go:build js && wasm && mcpwasm_client

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// The client-only module answers a catalog or agent operation with an
// error that says what to load instead, and still serves the client's.
func TestClientOnlyModuleNamesWhatItLacks(t *testing.T) {
	hs := (&app{}).handlers()
	for _, name := range []string{"catalog.new", "agent.run"} {
		_, err := hs[name].run(context.Background(), nil, jsCall{})
		if err == nil || mcperr.CodeOf(err, "") != mcperr.InvalidArgument || !strings.Contains(err.Error(), "client-only module") || !strings.Contains(err.Error(), "load the full module") {
			t.Errorf("%s: %v; want invalid_argument naming the client-only module and what to load", name, err)
		}
	}
	if _, ok := hs["client.callTool"]; !ok {
		t.Error("the client-only module has no client.callTool")
	}
}
