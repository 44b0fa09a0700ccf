// Package faultrig puts a real fault-injection proxy between a client and
// a server in tests: Toxiproxy (github.com/Shopify/toxiproxy/v2), used as
// a library, forwarding TCP on a loopback port of its own. [Proxy.Down]
// and [Proxy.Up] are the network going and coming back; the toxics reset
// connections, slow them, or cut a stream after some bytes. Tests use
// [Start]; the bench's soak, a program, uses [Open]. Nothing of it reaches
// the wasm module.
package faultrig

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Proxy is one Toxiproxy proxy in front of one upstream address.
type Proxy struct {
	t    testing.TB // nil for a proxy of Open
	p    *toxiproxy.Proxy
	addr string
	n    atomic.Int64
	mu   sync.Mutex
	err  error // Open's first failure
}

// Start starts a proxy on 127.0.0.1 (a free port) in front of upstream
// (host:port); the test's end stops it.
func Start(t testing.TB, upstream string) *Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "faultrig", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatalf("faultrig: starting the proxy in front of %s: %v", upstream, err)
	}
	fp := &Proxy{t: t, p: p, addr: p.Listen}
	t.Cleanup(p.Stop)
	return fp
}

// Open starts a proxy as Start does, for a program rather than a test:
// stop it with Close. A later failure (to come Up again on its address, to
// add a toxic) does not stop the program; [Proxy.Err] reports it.
func Open(upstream string) (*Proxy, error) {
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "faultrig", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("faultrig: starting the proxy in front of %s: %w", upstream, err)
	}
	return &Proxy{p: p, addr: p.Listen}, nil
}

// Close stops a proxy of Open.
func (p *Proxy) Close() { p.p.Stop() }

// Err is the first failure of a proxy of Open since it started, nil if
// none.
func (p *Proxy) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// fail fails the test, or keeps the first failure of a proxy of Open.
func (p *Proxy) fail(format string, args ...any) {
	if p.t != nil {
		p.t.Helper()
		p.t.Fatalf(format, args...)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
}

// Addr is the proxy's host:port, which a client uses instead of the
// upstream's.
func (p *Proxy) Addr() string { return p.addr }

// Front returns rawURL (an http URL of the upstream) with its host
// replaced by the proxy's.
func (p *Proxy) Front(rawURL string) string {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		p.fail("faultrig: %q is not an absolute URL", rawURL)
	}
	_, path, _ := strings.Cut(rest, "/")
	return scheme + "://" + p.addr + "/" + path
}

// Down is the network gone: the proxy stops listening (new connections
// are refused) and cuts every connection it carries.
func (p *Proxy) Down() { p.p.Stop() }

// Up is the network back, on the same address.
func (p *Proxy) Up() {
	if p.t != nil {
		p.t.Helper()
	}
	p.p.Listen = p.addr
	if err := p.p.Start(); err != nil && err != toxiproxy.ErrProxyAlreadyStarted {
		p.fail("faultrig: restarting the proxy on %s: %v", p.addr, err)
	}
}

// ResetPeer resets (TCP RST) each connection after timeout (0: at once,
// as its data arrives); the returned function removes the toxic.
func (p *Proxy) ResetPeer(timeout time.Duration) (remove func()) {
	return p.toxic("reset_peer", "upstream", map[string]any{"timeout": timeout.Milliseconds()})
}

// Latency delays the server's answers by d; the returned function
// removes the toxic.
func (p *Proxy) Latency(d time.Duration) (remove func()) {
	return p.toxic("latency", "downstream", map[string]any{"latency": d.Milliseconds()})
}

// LimitData closes each connection once n bytes of the server's answer
// went through it (a stream cut in the middle of a message); the returned
// function removes the toxic.
func (p *Proxy) LimitData(n int64) (remove func()) {
	return p.toxic("limit_data", "downstream", map[string]any{"bytes": n})
}

func (p *Proxy) toxic(kind, stream string, attrs map[string]any) func() {
	if p.t != nil {
		p.t.Helper()
	}
	name := fmt.Sprintf("%s-%d", kind, p.n.Add(1))
	b, _ := json.Marshal(map[string]any{"name": name, "type": kind, "stream": stream, "toxicity": 1.0, "attributes": attrs})
	if _, err := p.p.Toxics.AddToxicJson(strings.NewReader(string(b))); err != nil {
		p.fail("faultrig: adding the %s toxic: %v", kind, err)
	}
	ctx := context.Background()
	if p.t != nil {
		ctx = p.t.Context()
	}
	return func() { _ = p.p.Toxics.RemoveToxic(ctx, name) }
}
