//go:build js && wasm

package main

import "testing"

// TestHandlersMatchTheTable: every operation of jsapi.Ops has a handler
// taking its argument type, and there is no handler outside the table.
func TestHandlersMatchTheTable(t *testing.T) {
	if err := checkOps((&app{}).handlers()); err != nil {
		t.Fatal(err)
	}
}
