package devserver

import (
	"context"
	"net/http"
	"sync"
)

// Restarter restarts the demo MCP server in tests (Config.MCPRestart):
// [Restarter.Restart] puts a new server in place, which knows none of the
// old one's sessions (a request with an old session id gets 404), and
// ends the old one's requests in flight (its event streams), as a
// process restart would.
type Restarter struct {
	mu     sync.Mutex
	make   func() http.Handler
	h      http.Handler
	ctx    context.Context
	cancel context.CancelFunc
	n      int
}

// wrap is the handler of the demo MCP origin: make's server, remade at
// each Restart; without a Restarter, make's server as it is.
func (r *Restarter) wrap(make func() http.Handler) http.Handler {
	if r == nil {
		return make()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.make, r.h = make, make()
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// ServeHTTP serves req on the current server; a Restart ends it.
func (r *Restarter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	h, life := r.h, r.ctx
	r.mu.Unlock()
	ctx, stop := context.WithCancel(req.Context())
	defer stop()
	defer context.AfterFunc(life, stop)()
	h.ServeHTTP(w, req.WithContext(ctx))
}

// Restart replaces the server by a new one and ends the old one's
// requests.
func (r *Restarter) Restart() {
	r.mu.Lock()
	r.h = r.make()
	old := r.cancel
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.n++
	r.mu.Unlock()
	old()
}

// Restarts says how many times Restart ran.
func (r *Restarter) Restarts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}
