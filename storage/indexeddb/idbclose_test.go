//go:build js && wasm

package indexeddb

import (
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/jsbridge"
)

// TestWatchCloseHearsTheBrowser: a connection the browser closes itself
// (close: storage evicted or cleared in its settings) and one another
// page wants gone (versionchange: deleted, or upgraded by a newer build)
// each tell the store, which then drops its DPoP key copies
// (TestStoreDropsKeyCopies). Node has no IndexedDB: the connection here
// is a plain object that receives the event handlers.
func TestWatchCloseHearsTheBrowser(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fire      func(db jsbridge.Value) error
		newer     bool // closed hears a newer build's error
		closeCall bool // the connection closes itself first
	}{
		{"close", func(db jsbridge.Value) error { _, err := db.Call("onclose"); return err }, false, false},
		{"versionchange deleted", func(db jsbridge.Value) error {
			ev, _ := jsbridge.NewObject(map[string]any{"newVersion": nil})
			_, err := db.Call("onversionchange", ev)
			return err
		}, false, true},
		{"versionchange upgraded", func(db jsbridge.Value) error {
			ev, _ := jsbridge.NewObject(map[string]any{"newVersion": 9})
			_, err := db.Call("onversionchange", ev)
			return err
		}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := jsbridge.NewObject(map[string]any{"closes": 0})
			if err != nil {
				t.Fatal(err)
			}
			closeFn, _ := jsbridge.Func(func([]jsbridge.Value) (any, error) {
				n, _ := db.Get("closes")
				c, _ := n.Int()
				return nil, db.Set("closes", c+1)
			})
			t.Cleanup(closeFn.Release)
			_ = db.Set("close", closeFn)
			var heard []error
			watchClose(db, func(newer error) { heard = append(heard, newer) })
			if err := tc.fire(db); err != nil {
				t.Fatalf("firing %s: %v", tc.name, err)
			}
			if len(heard) != 1 {
				t.Fatalf("closed heard %d times; want once", len(heard))
			}
			if got := heard[0] != nil && strings.Contains(heard[0].Error(), "newer version"); got != tc.newer {
				t.Errorf("closed heard %v; want a newer build's error: %v", heard[0], tc.newer)
			}
			n, _ := db.Get("closes")
			if c, _ := n.Int(); (c == 1) != tc.closeCall {
				t.Errorf("the connection's close() ran %d times; want it to run: %v", c, tc.closeCall)
			}
		})
	}
}
