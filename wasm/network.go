//go:build js && wasm

package main

import (
	"context"

	"github.com/mcpwasm/mcpwasm/jsapi"
)

// opNetworkChanged hands the browser's online and offline events (the
// page's, and a worker's own) to every client of this runtime, catalogs'
// included.
func (a *app) opNetworkChanged(_ context.Context, args jsapi.NetworkChanged, _ jsCall) (any, error) {
	for _, e := range a.entries() {
		if args.Online {
			e.c.Online()
		} else {
			e.c.Offline()
		}
	}
	return nil, nil
}
