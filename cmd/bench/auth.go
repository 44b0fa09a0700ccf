package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// authServers are the dev server in auth mode: the page origin, the
// protected demo MCP server and the demo authorization server (consent
// auto-approved, since no person clicks in a benchmark), requests to the
// last two counted together.
type authServers struct {
	PageURL, MCPURL string
	Count           *counter
	close           []func()
}

func startAuthServers(webDir string) (*authServers, error) {
	s := &authServers{Count: &counter{}}
	lns, err := listenLoopback(3)
	if err != nil {
		return nil, err
	}
	base := func(ln net.Listener) string { return "http://" + ln.Addr().String() }
	s.PageURL, s.MCPURL = base(lns[0]), base(lns[1])+demo.StreamablePath
	origins, err := devserver.Handlers(devserver.Config{
		Web: os.DirFS(webDir), Demo: true,
		Auth: devserver.AuthConfig{Enabled: true, AutoApprove: true},
	}, devserver.PageConfig{MCPURL: s.MCPURL, ASURL: base(lns[2])})
	if err != nil {
		return nil, err
	}
	for i, o := range origins {
		h := o.Handler
		if o.Name != "page" {
			h = s.Count.wrap(h)
		}
		srv := &http.Server{Handler: h}
		go srv.Serve(lns[i])
		s.close = append(s.close, func() { srv.Close() })
	}
	return s, nil
}

func (s *authServers) Close() {
	for _, f := range s.close {
		f()
	}
}

// authSession is one run of the OAuth phase.
type authSession struct {
	LoginMs, StoredMs float64
	LoginN, StoredN   map[string]int
}

// runStoredGrant signs in once in a fresh browser context (popup, PKCE,
// registration, token), then reloads the page and measures connect() with
// the grant from IndexedDB.
func (b *browser) runStoredGrant(srv *authServers) (authSession, error) {
	var s authSession
	ctx, closeTab := b.tab(chromedp.WithNewBrowserContext()) // empty IndexedDB
	defer closeTab()
	page := srv.PageURL + "/wasm.html"
	u, _ := json.Marshal(srv.MCPURL)
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		return s, err
	}
	if _, err := eval[float64](ctx, waitReady); err != nil {
		return s, err
	}
	srv.Count.reset()
	// authorize() opens its popup, so it must run as a user gesture.
	gesture := func(p *runtime.EvaluateParams) { t := true; p.UserGesture = &t }
	start := `void (window.__login = (async () => {
		const t0 = performance.now();
		const c = window.__mcp.client(` + string(u) + `);
		await c.authorize();
		await c.close();
		return performance.now() - t0;
	})())`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](start, gesture)); err != nil && err != chromedp.ErrJSUndefined {
		return s, fmt.Errorf("starting the sign-in: %v", err)
	}
	var err error
	if s.LoginMs, err = eval[float64](ctx, `window.__login`); err != nil {
		return s, fmt.Errorf("sign-in: %v", err)
	}
	s.LoginN = srv.Count.snapshot()

	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		return s, err
	}
	if _, err := eval[float64](ctx, waitReady); err != nil {
		return s, err
	}
	srv.Count.reset()
	if s.StoredMs, err = eval[float64](ctx, `(async () => {
		const t0 = performance.now();
		const c = window.__mcp.client(`+string(u)+`);
		await c.connect();
		const ms = performance.now() - t0;
		await c.close();
		return ms;
	})()`); err != nil {
		return s, fmt.Errorf("connect with the stored grant: %v", err)
	}
	s.StoredN = srv.Count.snapshot()
	return s, nil
}
