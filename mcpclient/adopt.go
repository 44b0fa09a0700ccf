package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
)

// adoption is a kept session (see [keptTask]) that a connect goes on in
// instead of starting one: its initialize is answered here with the
// session's own initialize result and id, and its
// notifications/initialized is not sent (the server had it). If the
// server no longer knows the session, its first request is answered 404
// and the client starts a new session as after any server restart.
type adoption struct {
	s        *keptSession
	answered atomic.Bool
}

type adoptionKey struct{}

func withAdoption(ctx context.Context, a *adoption) context.Context {
	return context.WithValue(ctx, adoptionKey{}, a)
}

func adoptionFrom(ctx context.Context) *adoption {
	a, _ := ctx.Value(adoptionKey{}).(*adoption)
	return a
}

// answer returns the response to the connect's request out, or nil when
// it goes to the server: the initialize once, and the
// notifications/initialized that follows it.
func (a *adoption) answer(req *http.Request, out outgoing) *http.Response {
	if a == nil || req.Method != http.MethodPost {
		return nil
	}
	switch out.method {
	case "initialize":
		if a.answered.Swap(true) {
			return nil
		}
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": out.id, "result": a.s.Init})
		if err != nil {
			return nil
		}
		return answered(req, http.StatusOK, http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {a.s.ID}}, body)
	case "notifications/initialized":
		if a.answered.Load() {
			return accepted(req)
		}
	}
	return nil
}

// sessionKept answers a DELETE of a session that a kept task of this
// client still runs in (see [Client.Leave]) as the server would, without
// sending it: the server keeps such a task only while its session lives.
func (t *roundTripper) sessionKept(req *http.Request) *http.Response {
	if req.Method != http.MethodDelete || t.keeps == nil || !t.keeps(req.Context(), req.Header.Get("Mcp-Session-Id")) {
		return nil
	}
	return answered(req, http.StatusNoContent, nil, nil)
}
