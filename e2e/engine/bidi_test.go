package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestBiDiCallGivenUpKeepsTheConnection: a command whose caller's context
// has ended (a test that gave up) fails alone; the connection, which
// every window shares, still carries the next command.
func TestBiDiCallGivenUpKeepsTheConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			_, data, err := ws.Read(r.Context())
			if err != nil {
				return
			}
			var m struct {
				ID int64 `json:"id"`
			}
			_ = json.Unmarshal(data, &m)
			b, _ := json.Marshal(map[string]any{"type": "success", "id": m.ID, "result": map[string]any{}})
			if ws.Write(r.Context(), websocket.MessageText, b) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := dialBiDi(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for i := range 20 {
		gone, stop := context.WithCancel(ctx)
		stop()
		_ = c.call(gone, "session.status", map[string]any{}, nil)
		if err := c.call(ctx, "session.status", map[string]any{}, nil); err != nil {
			t.Fatalf("after a command whose context had ended (%d): %v; want the connection still open", i, err)
		}
	}
}
