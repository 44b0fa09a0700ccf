// Package devserver wires the dev server: the page origin (web/ through
// [webserve]) and, in demo mode, the demo MCP server, its OAuth
// authorization server, a second demo MCP server without sign-in and a
// scripted stand-in model, each on its own origin; and, demo or not, the
// MCP Apps sandbox proxy (web/apps/) on an origin of its own. It is a
// package of its own so that the e2e tests start exactly what `go run ./cmd/devserver`
// starts, on loopback ports of their choosing. Each origin is one [Origin]
// in [Handlers].
package devserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/devkit/webserve"
	"github.com/mcpwasm/mcpwasm/relay"
)

// ConfigPath is where the page origin serves the dev server's [PageConfig]
// as JSON, so the demo page and the e2e tests can find the demo MCP server
// whatever port it got.
const ConfigPath = "/devserver/config.json"

// RelayPath is where the page origin serves the relay (see [RelayConfig]).
const RelayPath = "/mcp-relay"

// SandboxPath is the MCP Apps sandbox proxy page on the "sandbox" origin
// (web/apps/sandbox.html; see [SandboxSite]).
const SandboxPath = "/sandbox.html"

// Config configures the dev server.
type Config struct {
	// Web is the web directory (web/): its demo page is served at the
	// root of the page origin, over the files beside it (see [Site]).
	Web fs.FS

	// WebAddr is the page origin's listen address (host:port).
	WebAddr string

	// Demo also runs the demo MCP server on MCPAddr.
	Demo bool

	// MCPAddr is the demo MCP server's listen address.
	MCPAddr string

	// MCP2Addr is the second demo MCP server's listen address (demo mode).
	MCP2Addr string

	// ModelAddr is the stand-in model's listen address (demo mode): an
	// OpenAI-compatible endpoint that answers by fixed rules, so the chat
	// demo works offline.
	ModelAddr string

	// SandboxAddr is the listen address of the MCP Apps sandbox proxy's
	// origin (web/apps/), demo or not; empty: none. It must differ from
	// the page origin: the proxy isolates a server's view from the page.
	SandboxAddr string

	// DemoOptions configures the demo MCP server (test hooks, CORS).
	DemoOptions demo.Options

	// MCPRestart, when set, lets a test restart the demo MCP server
	// (restart.go).
	MCPRestart *Restarter

	// Auth protects the demo MCP server with the demo authorization server
	// (demo mode only).
	Auth AuthConfig

	// Relay mounts a relay (package relay) on the page origin.
	Relay RelayConfig

	// NoCORS makes the demo MCP server and its authorization server send
	// no CORS headers at all, as servers that never expected a browser
	// (a test switch: the servers the relay is for).
	NoCORS bool

	// Busy makes the demo MCP servers and the authorization server's
	// token endpoint answer 429 or 503 when a test says so (demo mode).
	Busy BusyConfig

	// AllowRemote permits listen addresses that are not loopback.
	AllowRemote bool

	// Logger receives request errors. Nil discards them.
	Logger *slog.Logger
}

// AuthConfig configures the demo authorization server and how the demo MCP
// server is protected by it. The switches exist to test clients against
// awkward but real deployments.
type AuthConfig struct {
	// Enabled protects the demo MCP server (OAuth 2.1, MCP authorization).
	Enabled bool
	// Addr is the authorization server's listen address.
	Addr string
	// COOP makes the authorization server's pages send
	// Cross-Origin-Opener-Policy: same-origin, which severs window.opener.
	COOP bool
	// HideWWWAuthenticate leaves WWW-Authenticate out of the MCP server's
	// CORS-exposed headers, so the page cannot read the 401 challenge.
	HideWWWAuthenticate bool
	// ScopedTool, when set, is a tool that needs the extra scope
	// mcp:admin: calling it with a token that lacks it answers 403
	// insufficient_scope (step-up).
	ScopedTool string
	// TokenTTL is the access-token lifetime; zero means one hour.
	TokenTTL time.Duration
	// AutoApprove skips the consent page (benchmarks; never a person).
	AutoApprove bool
	// DPoP makes the authorization server issue DPoP-bound tokens only and
	// the MCP server take them only with valid proofs (RFC 9449), both
	// with server nonces.
	DPoP bool
	// Now is the authorization server's clock; nil means time.Now. For
	// tests that move time (a computer that slept past a token's expiry).
	Now func() time.Time
	// NoMetadata: neither the MCP server nor the authorization server
	// publishes OAuth metadata (RFC 9728, RFC 8414, OpenID), as behind
	// some gateways; a page signs in only with the authorization server's
	// endpoints and a pre-registered client given by hand. Not with DPoP.
	NoMetadata bool
	// Clients are the authorization server's pre-registered clients (a
	// page passes one's ID as the client option clientId), besides those
	// it registers dynamically.
	Clients []authserver.Client
}

// RelayConfig configures the dev server's relay, served at [RelayPath] on
// the page origin as a host would mount it in its own backend, for pages
// of the page origin only.
type RelayConfig struct {
	// Enabled mounts the relay.
	Enabled bool
	// Targets are origins the relay forwards to besides the demo MCP
	// server's and authorization server's, which it always may.
	Targets []string
}

// PageConfig is what the page origin serves at [ConfigPath].
type PageConfig struct {
	// MCPURL is the demo server's Streamable HTTP endpoint, "" without demo.
	MCPURL string `json:"mcpURL,omitempty"`
	// SSEURL is the demo server's legacy HTTP+SSE endpoint.
	SSEURL string `json:"sseURL,omitempty"`
	// ASURL is the demo authorization server's issuer, "" without auth.
	ASURL string `json:"asURL,omitempty"`
	// MCP2URL is the second demo server's Streamable HTTP endpoint.
	MCP2URL string `json:"mcp2URL,omitempty"`
	// ModelURL is the stand-in model's OpenAI-compatible base URL.
	ModelURL string `json:"modelURL,omitempty"`
	// SandboxURL is the MCP Apps sandbox proxy page (sandbox.html) on the
	// "sandbox" origin, "" without one.
	SandboxURL string `json:"sandboxURL,omitempty"`
	// RelayURL is the relay on the page origin, "" without one.
	RelayURL string `json:"relayURL,omitempty"`
}

// Origin is one HTTP origin of the dev server.
type Origin struct {
	Name    string // "page", "mcp", "as", "mcp2", "model", "sandbox"
	Handler http.Handler
	// AuthServer is the authorization server behind the "as" origin, for
	// tests that count its requests.
	AuthServer *authserver.Server
}

// Handlers returns the handlers of the page origin and, when cfg.Demo is
// set, of the demo origins page names: the demo MCP server ("mcp"), its
// authorization server ("as", with cfg.Auth), the second demo server
// ("mcp2") and the stand-in model ("model"); and, demo or not, when
// page.SandboxURL is set, the MCP Apps sandbox proxy ("sandbox", the files
// of cfg.Web's apps/ at its root: [SandboxHandler]), last; the demo page's
// policy then lets it frame that origin and no other ([FramingSandbox]). page describes
// where the page finds the other origins; it is served at [ConfigPath].
//
// Tests that serve these handlers with httptest start the MCP origin first
// and pass its URL in page. A configuration the demo authorization server
// refuses is an error, and so is a page.SandboxURL that is not an http(s)
// URL.
func Handlers(cfg Config, page PageConfig) ([]Origin, error) {
	site := Site(cfg.Web)
	if page.SandboxURL != "" {
		var err error
		if site, err = FramingSandbox(site, page.SandboxURL); err != nil {
			return nil, err
		}
	}
	web := http.NewServeMux()
	web.Handle("/", webserve.Handler(site))
	body, _ := json.Marshal(page)
	web.HandleFunc("GET "+ConfigPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(body)
	})
	if page.RelayURL != "" {
		h, err := newRelay(cfg, page)
		if err != nil {
			return nil, err
		}
		web.Handle(RelayPath, h)
	}
	origins := []Origin{{Name: "page", Handler: web}}
	if cfg.Demo {
		mcp, err := protected(cfg, page)
		if err != nil {
			return nil, err
		}
		origins = append(origins, mcp...)
		if page.MCP2URL != "" {
			origins = append(origins, Origin{Name: "mcp2", Handler: cfg.Busy.MCP2.wrap(demo.SecondHandler(cfg.DemoOptions), cfg.DemoOptions.CORS, busyMCP)})
		}
		if page.ModelURL != "" {
			origins = append(origins, Origin{Name: "model", Handler: model.New(model.Options{CORS: cfg.DemoOptions.CORS, ChunkDelay: 15 * time.Millisecond})})
		}
	}
	if page.SandboxURL != "" {
		origins = append(origins, Origin{Name: "sandbox", Handler: SandboxHandler(cfg.Web)})
	}
	return origins, nil
}

// newRelay is the relay of page.RelayURL: for the pages of its origin, to
// the demo servers and cfg.Relay.Targets.
func newRelay(cfg Config, page PageConfig) (http.Handler, error) {
	pageOrigin, err := originOf(page.RelayURL)
	if err != nil {
		return nil, fmt.Errorf("devserver: the relay URL: %w", err)
	}
	targets := append([]string{}, cfg.Relay.Targets...)
	for _, u := range []string{page.MCPURL, page.ASURL} {
		if u != "" {
			o, err := originOf(u)
			if err != nil {
				return nil, err
			}
			targets = append(targets, o)
		}
	}
	h, err := relay.New(relay.Config{Targets: targets, PageOrigins: []string{pageOrigin}})
	if err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	return h, nil
}

func originOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

// protected returns the demo MCP origin and, with auth, the authorization
// server's.
func protected(cfg Config, page PageConfig) ([]Origin, error) {
	if cfg.NoCORS {
		cfg.DemoOptions.CORS.Disabled = true
	}
	if !cfg.Auth.Enabled || page.ASURL == "" {
		return []Origin{{Name: "mcp", Handler: cfg.Busy.MCP.wrap(cfg.MCPRestart.wrap(func() http.Handler { return demo.Handler(cfg.DemoOptions) }), cfg.DemoOptions.CORS, busyMCP)}}, nil
	}
	as, err := authserver.New(authserver.Config{
		Issuer:         page.ASURL,
		Resources:      []string{page.MCPURL},
		COOP:           cfg.Auth.COOP,
		AutoApprove:    cfg.Auth.AutoApprove,
		AccessTokenTTL: cfg.Auth.TokenTTL,
		DPoP:           cfg.Auth.DPoP,
		Now:            cfg.Auth.Now,
		Clients:        cfg.Auth.Clients,
		NoMetadata:     cfg.Auth.NoMetadata,
		CORS:           cfg.DemoOptions.CORS,
		Logger:         cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("devserver: the demo authorization server: %w", err)
	}
	p := demo.Protection{
		Issuer:              as.Issuer(),
		Verifier:            as.Verifier(page.MCPURL),
		Resource:            page.MCPURL,
		Scopes:              []string{authserver.ScopeTools},
		HideWWWAuthenticate: cfg.Auth.HideWWWAuthenticate,
		DPoP:                cfg.Auth.DPoP,
		NoMetadata:          cfg.Auth.NoMetadata,
	}
	if cfg.Auth.ScopedTool != "" {
		p.ToolScopes = map[string]string{cfg.Auth.ScopedTool: authserver.ScopeAdmin}
	}
	return []Origin{
		{Name: "mcp", Handler: cfg.Busy.MCP.wrap(cfg.MCPRestart.wrap(func() http.Handler { return demo.ProtectedHandler(cfg.DemoOptions, p) }), cfg.DemoOptions.CORS, busyMCP)},
		{Name: "as", Handler: cfg.Busy.Token.wrap(as.Handler(), cfg.DemoOptions.CORS, busyToken), AuthServer: as},
	}, nil
}

// CheckLoopback returns an error unless addr's host is a loopback IP
// address or "localhost". An empty host (":8080") listens on every
// interface and is refused.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("devserver: bad address %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("devserver: %q is not a loopback address; pass -allow-remote to listen on it", addr)
}

// Running is a started dev server.
type Running struct {
	// PageURL is the page origin's root URL, ending in "/".
	PageURL string
	// Page is what the page origin serves at ConfigPath.
	Page PageConfig
	// AuthServer is the demo authorization server, nil without auth.
	AuthServer *authserver.Server

	servers []*http.Server
	errc    chan error
	once    sync.Once
}

// Start listens on the configured addresses (port 0 picks a free port),
// then serves every origin in the background. It refuses non-loopback
// addresses unless cfg.AllowRemote is set.
func Start(cfg Config) (*Running, error) {
	type origin struct{ name, addr string }
	want := []origin{{"page", cfg.WebAddr}}
	if cfg.Demo {
		want = append(want, origin{"mcp", cfg.MCPAddr})
		if cfg.Auth.Enabled {
			want = append(want, origin{"as", cfg.Auth.Addr})
		}
		if cfg.MCP2Addr != "" {
			want = append(want, origin{"mcp2", cfg.MCP2Addr})
		}
		if cfg.ModelAddr != "" {
			want = append(want, origin{"model", cfg.ModelAddr})
		}
	}
	if cfg.SandboxAddr != "" {
		want = append(want, origin{"sandbox", cfg.SandboxAddr})
	}
	if !cfg.AllowRemote {
		for _, o := range want {
			if err := CheckLoopback(o.addr); err != nil {
				return nil, err
			}
		}
	}
	lns := map[string]net.Listener{}
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	for _, o := range want {
		ln, err := net.Listen("tcp", o.addr)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("devserver: %s origin: %w", o.name, err)
		}
		lns[o.name] = ln
	}

	r := &Running{PageURL: baseURL(lns["page"]) + "/", errc: make(chan error, len(lns))}
	if ln := lns["mcp"]; ln != nil {
		r.Page.MCPURL, r.Page.SSEURL = baseURL(ln)+demo.StreamablePath, baseURL(ln)+demo.SSEPath
	}
	if ln := lns["as"]; ln != nil {
		r.Page.ASURL = baseURL(ln)
	}
	if ln := lns["mcp2"]; ln != nil {
		r.Page.MCP2URL = baseURL(ln) + demo.StreamablePath
	}
	if ln := lns["model"]; ln != nil {
		r.Page.ModelURL = baseURL(ln) + "/v1"
	}
	if ln := lns["sandbox"]; ln != nil {
		r.Page.SandboxURL = baseURL(ln) + SandboxPath
	}
	if cfg.Relay.Enabled {
		r.Page.RelayURL = baseURL(lns["page"]) + RelayPath
	}
	origins, err := Handlers(cfg, r.Page)
	if err != nil {
		closeAll()
		return nil, err
	}
	for _, o := range origins {
		if o.AuthServer != nil {
			r.AuthServer = o.AuthServer
		}
		srv := &http.Server{
			Handler:           o.Handler,
			ReadHeaderTimeout: 10 * time.Second,
		}
		if cfg.Logger != nil {
			srv.ErrorLog = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)
		}
		r.servers = append(r.servers, srv)
		go func(ln net.Listener, name string) {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				r.errc <- fmt.Errorf("devserver: %s origin: %w", name, err)
			}
		}(lns[o.Name], o.Name)
	}
	return r, nil
}

// baseURL is http://host:port of a listener, with the host as the user
// would type it.
func baseURL(ln net.Listener) string {
	return "http://" + ln.Addr().String()
}

// Err reports a server that stopped on its own.
func (r *Running) Err() <-chan error { return r.errc }

// Shutdown stops accepting connections and waits for requests in flight
// until ctx is done; then it closes whatever is left (event streams never
// finish by themselves).
func (r *Running) Shutdown(ctx context.Context) error {
	var errs []error
	r.once.Do(func() {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, srv := range r.servers {
			wg.Go(func() {
				err := srv.Shutdown(ctx)
				if err != nil {
					err = errors.Join(err, srv.Close())
				}
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			})
		}
		wg.Wait()
	})
	if err := errors.Join(errs...); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
