//go:build js && wasm

package main

import (
	"context"
	"encoding/json"

	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// What an MCP App view keeps in its storage (apps.render's stateKey): the
// page's apps/host.js gives the view a localStorage of its own and keeps
// what the view writes there, sealed in IndexedDB, under the page's
// stateKey and the view's server.

// maxViewStorage bounds one view's storage as the JSON of its names and
// values: the view's localStorage holds at most 1 Mi UTF-16 code units
// (apps/viewstorage.js), which JSON can make up to six bytes each.
const maxViewStorage = 8 << 20

// maxViewKey bounds a view state's key (the page's stateKey, of at most
// 1024 characters, and the server's URL).
const maxViewKey = 8192

// viewState is a view's kept storage, as stored.
type viewState struct {
	Storage map[string]string `json:"storage"`
}

func checkViewKey(key string) error {
	if key == "" || len(key) > maxViewKey {
		return mcperr.New(mcperr.InvalidArgument, "apps: a view state's key must be 1 to %d bytes", maxViewKey)
	}
	return nil
}

// opViewState reads the storage kept under args.Key: {storage}, or nil.
func (a *app) opViewState(ctx context.Context, args jsapi.ViewStateRef, _ jsCall) (any, error) {
	if err := checkViewKey(args.Key); err != nil {
		return nil, err
	}
	data, found, err := a.idb.GetViewState(ctx, args.Key)
	if err != nil || !found {
		return nil, err
	}
	var st viewState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, mcperr.Wrap(mcperr.Storage, err, "apps: a view's kept storage is not readable; forget it (apps.forgetState) and the view starts afresh")
	}
	return st, nil
}

// opKeepViewState keeps a view's storage under args.Key.
func (a *app) opKeepViewState(ctx context.Context, args jsapi.KeepViewState, _ jsCall) (any, error) {
	if err := checkViewKey(args.Key); err != nil {
		return nil, err
	}
	if args.Storage == nil {
		args.Storage = map[string]string{}
	}
	data, err := json.Marshal(viewState{Storage: args.Storage})
	if err != nil {
		return nil, mcperr.Wrap(mcperr.InvalidArgument, err, "apps: a view's storage must be names and string values")
	}
	if len(data) > maxViewStorage {
		return nil, mcperr.New(mcperr.InvalidArgument, "apps: a view's storage is %d bytes of JSON, over the %d a view may keep", len(data), maxViewStorage)
	}
	return nil, a.idb.PutViewState(ctx, args.Key, data)
}

// opForgetViewStates deletes the views' storage kept under keys that start
// with args.Prefix, and resolves how many.
func (a *app) opForgetViewStates(ctx context.Context, args jsapi.ForgetViewStates, _ jsCall) (any, error) {
	return a.idb.DeleteViewStates(ctx, args.Prefix)
}
