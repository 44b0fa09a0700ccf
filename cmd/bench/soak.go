package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/faultrig"
)

// The soak scenario (-only soak runs it alone; -soak-duration 0 leaves it
// out of a full run): five demo MCP servers, two of them behind sign-in
// with the demo authorization server and short-lived tokens, each behind
// a Toxiproxy proxy (devkit/faultrig); three tabs of one page (runtime
// auto: one SharedWorker in Chromium), each with a catalog of the five
// and a Go agent that runs a turn every few seconds against the scripted
// stand-in model, one call per server a turn; faults injected at random
// meanwhile. What it counts is in soakcount.go.

//go:embed pages/soak.js
var soakHarnessJS string

// defaultSoakDuration is how long the faults and turns run by default.
const defaultSoakDuration = 10 * time.Minute

// The soak's fixed settings: the access tokens' lifetime (refreshed after
// half of it), a turn's pause (±25%), the catalog's call timeout (also
// the agent's wait for a sign-in, which nobody gives here) and breaker
// cooldown, and how long a turn may take before it counts as never
// settled (past the call timeout and the client's reconnect waits).
const (
	soakTokenTTL    = 20 * time.Second
	soakInterval    = 3 * time.Second
	soakCallTimeout = 10 * time.Second
	soakCooldown    = 5 * time.Second
	soakTurnBound   = 90 * time.Second
	soakTabs        = 3
)

// soakPrompt asks the stand-in for one call per server (each server
// offers one tool: soakServers' tool); {n} is the turn.
const soakPrompt = "weather in Paris and add 2 and 40 and reverse t{n} and slow 1 and echo turn {n}"

// soakServer is one of the five servers, as the page reaches it: through
// its proxy, with its switches.
type soakServer struct {
	ID      string               `json:"id"`
	Tool    string               `json:"tool"` // the one tool the catalog offers of it
	URL     string               `json:"url"`  // through the proxy
	proxy   *faultrig.Proxy      //
	busy    *devserver.Busy      // its MCP endpoint's 429/503 switch
	restart *devserver.Restarter // nil: no restart switch (a second demo server)
	as      *authserver.Server   // nil: no sign-in
	token   *devserver.Busy      // the authorization server's token endpoint switch
}

// soakServers are the page origin, the stand-in model and the five
// servers.
type soakServers struct {
	PageURL, ModelURL string
	list              []*soakServer
	close             []func()
}

func (s *soakServers) Close() {
	for _, f := range s.close {
		f()
	}
}

// serve serves h on ln until Close.
func (s *soakServers) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	s.close = append(s.close, func() { srv.Close() })
}

// proxied opens a listener for a server and a faultrig proxy in front of
// it; the page reaches the server at the proxy's URL.
func (s *soakServers) proxied() (net.Listener, *faultrig.Proxy, string, error) {
	lns, err := listenLoopback(1)
	if err != nil {
		return nil, nil, "", err
	}
	p, err := faultrig.Open(lns[0].Addr().String())
	if err != nil {
		lns[0].Close()
		return nil, nil, "", err
	}
	s.close = append(s.close, p.Close)
	return lns[0], p, "http://" + p.Addr() + demo.StreamablePath, nil
}

// origin is the origin named name of list.
func origin(list []devserver.Origin, name string) devserver.Origin {
	for _, o := range list {
		if o.Name == name {
			return o
		}
	}
	panic("devserver gave no " + name + " origin")
}

// startSoakServers starts the servers: alpha and beta are demo servers
// behind sign-in (each its own authorization server), gamma a demo
// server without, delta and epsilon second demo servers; alpha, beta and
// gamma can be restarted.
func startSoakServers(webDir string) (_ *soakServers, err error) {
	s := &soakServers{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	lns, err := listenLoopback(2)
	if err != nil {
		return nil, err
	}
	pageLn, modelLn := lns[0], lns[1]
	s.PageURL, s.ModelURL = "http://"+pageLn.Addr().String(), "http://"+modelLn.Addr().String()+"/v1"
	s.serve(modelLn, model.New(model.Options{}))
	web := os.DirFS(webDir)
	for i, id := range []string{"alpha", "beta"} {
		ln, p, front, err := s.proxied()
		if err != nil {
			return nil, err
		}
		asLn, err := listenLoopback(1)
		if err != nil {
			return nil, err
		}
		sv := &soakServer{ID: id, Tool: []string{demo.ToolEcho, demo.ToolAdd}[i], URL: front, proxy: p,
			busy: &devserver.Busy{}, token: &devserver.Busy{}, restart: &devserver.Restarter{}}
		origins, err := devserver.Handlers(devserver.Config{Web: web, Demo: true, MCPRestart: sv.restart,
			Busy: devserver.BusyConfig{MCP: sv.busy, Token: sv.token},
			Auth: devserver.AuthConfig{Enabled: true, AutoApprove: true, TokenTTL: soakTokenTTL}},
			devserver.PageConfig{MCPURL: front, ASURL: "http://" + asLn[0].Addr().String()})
		if err != nil {
			return nil, err
		}
		if i == 0 {
			s.serve(pageLn, origin(origins, "page").Handler)
		}
		s.serve(ln, origin(origins, "mcp").Handler)
		as := origin(origins, "as")
		sv.as = as.AuthServer
		s.serve(asLn[0], as.Handler)
		s.list = append(s.list, sv)
	}
	// gamma and delta: one dev server's demo and second servers.
	gLn, gp, gURL, err := s.proxied()
	if err != nil {
		return nil, err
	}
	dLn, dp, dURL, err := s.proxied()
	if err != nil {
		return nil, err
	}
	gamma := &soakServer{ID: "gamma", Tool: demo.ToolSlow, URL: gURL, proxy: gp, busy: &devserver.Busy{}, restart: &devserver.Restarter{}}
	delta := &soakServer{ID: "delta", Tool: demo.ToolReverse, URL: dURL, proxy: dp, busy: &devserver.Busy{}}
	origins, err := devserver.Handlers(devserver.Config{Web: web, Demo: true, MCPRestart: gamma.restart,
		Busy: devserver.BusyConfig{MCP: gamma.busy, MCP2: delta.busy}},
		devserver.PageConfig{MCPURL: gURL, MCP2URL: dURL})
	if err != nil {
		return nil, err
	}
	s.serve(gLn, origin(origins, "mcp").Handler)
	s.serve(dLn, origin(origins, "mcp2").Handler)
	// epsilon: another dev server's second server.
	eLn, ep, eURL, err := s.proxied()
	if err != nil {
		return nil, err
	}
	epsilon := &soakServer{ID: "epsilon", Tool: demo.ToolWeather, URL: eURL, proxy: ep, busy: &devserver.Busy{}}
	origins, err = devserver.Handlers(devserver.Config{Web: web, Demo: true, Busy: devserver.BusyConfig{MCP2: epsilon.busy}},
		devserver.PageConfig{MCPURL: gURL, MCP2URL: eURL})
	if err != nil {
		return nil, err
	}
	s.serve(eLn, origin(origins, "mcp2").Handler)
	s.list = append(s.list, gamma, delta, epsilon)
	return s, nil
}

// soakFault is one fault injected.
type soakFault struct {
	At     time.Duration // since the soak started
	Server string
	Kind   string // faultKinds
	For    time.Duration
}

// The kinds of fault: the network down and up, connections reset,
// latency, answers cut after some bytes (faultrig), the server busy (429
// or 503 with Retry-After, or its token endpoint) or restarted (the dev
// server's switches).
const (
	faultDown      = "down"
	faultReset     = "reset_peer"
	faultLatency   = "latency"
	faultLimitData = "limit_data"
	faultBusy      = "busy"
	faultTokenBusy = "token_busy"
	faultRestart   = "restart"
)

// netFaults are the kinds that end connections, after which a client
// that was using the server reconnects.
var netFaults = map[string]bool{faultDown: true, faultReset: true, faultLimitData: true, faultRestart: true}

// injectFaults injects a fault at a random server every few seconds until
// ctx ends: each lasts 2–5 s, then the server is healthy for 2–6 s.
func injectFaults(ctx context.Context, servers []*soakServer, rng *rand.Rand) []soakFault {
	return injectFaultsEvery(ctx, servers, rng, time.Second)
}

// injectFaultsEvery is injectFaults with its times in units of unit: the
// faults last 2–5 units, the pauses between them 2–6; the latency is
// 300–1500 ms of a unit of 1 s.
func injectFaultsEvery(ctx context.Context, servers []*soakServer, rng *rand.Rand, unit time.Duration) []soakFault {
	start := time.Now()
	var faults []soakFault
	pause := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	for pause(between(2*unit, 6*unit)) {
		sv := servers[rng.IntN(len(servers))]
		kinds := []string{faultDown, faultReset, faultLatency, faultLimitData, faultBusy}
		if sv.restart != nil {
			kinds = append(kinds, faultRestart)
		}
		if sv.token != nil {
			kinds = append(kinds, faultTokenBusy)
		}
		f := soakFault{At: time.Since(start), Server: sv.ID, Kind: kinds[rng.IntN(len(kinds))], For: between(2*unit, 5*unit)}
		heal := func() {}
		switch f.Kind {
		case faultDown:
			sv.proxy.Down()
			heal = sv.proxy.Up
		case faultReset:
			heal = sv.proxy.ResetPeer(0)
		case faultLatency:
			heal = sv.proxy.Latency(between(3*unit/10, 15*unit/10))
		case faultLimitData:
			heal = sv.proxy.LimitData(int64(500 + rng.IntN(4000)))
		case faultBusy, faultTokenBusy:
			sw := sv.busy
			if f.Kind == faultTokenBusy {
				sw = sv.token
			}
			status := []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}[rng.IntN(2)]
			sw.Set(1+rng.IntN(3), status, rng.IntN(3)-1) // Retry-After 0 or 1 s, or none
			heal = func() { sw.Set(0, 0, 0) }
		case faultRestart:
			sv.restart.Restart()
			f.For = 0
		}
		faults = append(faults, f)
		pause(f.For)
		heal()
	}
	return faults
}

// soakTab is one tab of the page.
type soakTab struct {
	ctx        context.Context
	name       string
	start, end heapUse
}

// soakResultSet is the scenario's figures.
type soakResultSet struct {
	duration  time.Duration
	at        time.Time
	load      [2]string
	servers   []*soakServer
	tabs      []*soakTab
	tallies   []soakTally
	states    map[string]map[string]soakState // tab → server → its status changes
	faults    []soakFault
	refresh   map[string]refreshFigures
	tokenBusy map[string]int // server → token requests answered busy
	worker    [2]heapUse     // the shared worker(s) at the start and the end
	workers   int
	final     []string // per tab: the last turn after the faults, "5/5 ok" or what failed
	problems  []string
	cfg       config
}

// soakState is what a tab saw of one server's states.
type soakState struct {
	Changes     map[string]int `json:"changes"`     // entries into each state
	Reconnected int            `json:"reconnected"` // reconnecting → connected
}

// soakOpen opens one tab of the page in ctx and sets up its catalog and
// agent.
func soakOpen(ctx context.Context, srv *soakServers) error {
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.PageURL+"/soak.html?runtime=auto")); err != nil {
		return err
	}
	if _, err := eval[float64](ctx, waitReady); err != nil {
		return err
	}
	if _, err := eval[bool](ctx, soakHarnessJS); err != nil {
		return err
	}
	setup, _ := json.Marshal(map[string]any{"servers": srv.list, "modelURL": srv.ModelURL, "model": model.ModelID,
		"prompt": soakPrompt, "intervalMs": soakInterval.Milliseconds(), "turnBoundMs": soakTurnBound.Milliseconds(),
		"callTimeoutMs": soakCallTimeout.Milliseconds(), "cooldownMs": soakCooldown.Milliseconds()})
	_, err := eval[bool](ctx, "SOAK.setup("+string(setup)+")")
	return err
}

// soakSignIn signs in to server id in the tab (authorize() opens its
// popup, so it runs as a user gesture; the demo authorization server
// approves by itself).
func soakSignIn(ctx context.Context, id string) error {
	q, _ := json.Marshal(id)
	gesture := func(p *runtime.EvaluateParams) { t := true; p.UserGesture = &t }
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any]("void SOAK.authorize("+string(q)+")", gesture)); err != nil && err != chromedp.ErrJSUndefined {
		return fmt.Errorf("starting the sign-in to %s: %v", id, err)
	}
	res, err := eval[string](ctx, "window.__auth")
	if err != nil {
		return err
	}
	if res != "ok" {
		return fmt.Errorf("the sign-in to %s: %s", id, res)
	}
	return nil
}

// soakCheckTurn runs one turn in the tab and says how its calls went:
// "" when every server answered without error.
func soakCheckTurn(ctx context.Context, n int) (string, error) {
	t, err := eval[soakTurn](ctx, "SOAK.turn()")
	if err != nil {
		return "", err
	}
	tl := tallyTurns("", []soakTurn{t}, n)
	if tl.OK == n {
		return "", nil
	}
	return fmt.Sprintf("%d/%d calls ok (failed: %v; lost: %q; error: %q)", tl.OK, n, tl.FailedBy, tl.Lost, t.Error), nil
}

// runSoak runs the scenario in br.
func (b *browser) runSoak(webDir string, cfg config) (*soakResultSet, error) {
	srv, err := startSoakServers(webDir)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	res := &soakResultSet{duration: cfg.soakDuration, servers: srv.list, cfg: cfg,
		states: map[string]map[string]soakState{}, refresh: map[string]refreshFigures{}, tokenBusy: map[string]int{}}
	limit := cfg.soakDuration + 5*time.Minute
	first, closeFirst := b.tabWithin(limit, chromedp.WithNewBrowserContext())
	defer closeFirst()
	for i := range soakTabs {
		ctx := first
		if i > 0 {
			var closeTab context.CancelFunc
			ctx, closeTab = chromedp.NewContext(first) // a tab in the same browser context
			defer closeTab()
		}
		tab := &soakTab{ctx: ctx, name: fmt.Sprintf("tab %d", i+1)}
		if err := soakOpen(ctx, srv); err != nil {
			return nil, fmt.Errorf("soak: opening %s: %v", tab.name, err)
		}
		if i == 0 {
			for _, sv := range srv.list {
				if sv.as != nil {
					if err := soakSignIn(ctx, sv.ID); err != nil {
						return nil, fmt.Errorf("soak: %v", err)
					}
				}
			}
		}
		// A first turn before any fault: every server answers, the later
		// tabs with the grants the first one stored.
		bad, err := soakCheckTurn(ctx, len(srv.list))
		if err == nil && bad != "" {
			err = errors.New(bad)
		}
		if err != nil {
			return nil, fmt.Errorf("soak: the first turn in %s, before any fault: %v", tab.name, err)
		}
		res.tabs = append(res.tabs, tab)
	}
	if err := res.measure(b, 0); err != nil {
		return nil, err
	}
	res.at, res.load[0] = time.Now(), loadAvg()
	logf("soak: %d tabs, %d servers, a turn every %s per tab, faults for %s", soakTabs, len(srv.list), soakInterval, cfg.soakDuration)
	for _, t := range res.tabs {
		if _, err := eval[bool](t.ctx, "SOAK.start()"); err != nil {
			return nil, err
		}
	}
	ctx, stop := context.WithTimeout(context.Background(), cfg.soakDuration)
	res.faults = injectFaults(ctx, srv.list, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 29)))
	stop()
	for _, sv := range srv.list {
		if err := sv.proxy.Err(); err != nil {
			return nil, fmt.Errorf("soak: %s's proxy: %v", sv.ID, err)
		}
	}
	logf("soak: %d faults injected; stopping the turns", len(res.faults))
	for _, t := range res.tabs {
		out, err := eval[struct {
			Turns  []soakTurn           `json:"turns"`
			States map[string]soakState `json:"states"`
		}](t.ctx, fmt.Sprintf("SOAK.stop(%d)", soakTurnBound.Milliseconds()))
		if err != nil {
			return nil, fmt.Errorf("soak: stopping %s: %v", t.name, err)
		}
		res.tallies = append(res.tallies, tallyTurns(t.name, out.Turns, len(srv.list)))
		res.states[t.name] = out.States
	}
	// The servers are well again: after the breakers' cooldown, one more
	// turn per tab says whether each tab came back.
	time.Sleep(soakCooldown + time.Second)
	for _, t := range res.tabs {
		bad, err := soakCheckTurn(t.ctx, len(srv.list))
		if err != nil {
			return nil, fmt.Errorf("soak: the last turn in %s: %v", t.name, err)
		}
		if bad == "" {
			bad = fmt.Sprintf("%d/%d calls ok", len(srv.list), len(srv.list))
		}
		res.final = append(res.final, t.name+": "+bad)
	}
	if err := res.measure(b, 1); err != nil {
		return nil, err
	}
	res.load[1] = loadAvg()
	for _, sv := range srv.list {
		if sv.as == nil {
			continue
		}
		res.refresh[sv.ID] = countRefreshes(sv.as.Events(), soakTokenTTL)
		for _, h := range sv.token.Hits() {
			if h.Status != 0 {
				res.tokenBusy[sv.ID]++
			}
		}
	}
	res.problems = soakProblems(res.tallies, res.refresh)
	return res, nil
}

// measure reads every tab's memory and the shared workers' (at 0: the
// start, 1: the end).
func (res *soakResultSet) measure(b *browser, at int) error {
	for _, t := range res.tabs {
		u, err := memOf(t.ctx)
		if err != nil {
			return fmt.Errorf("soak: the memory of %s: %v", t.name, err)
		}
		if at == 0 {
			t.start = u
		} else {
			t.end = u
		}
	}
	m, err := b.measureTabs([]context.Context{res.tabs[0].ctx})
	if err != nil {
		return err
	}
	res.worker[at], res.workers = m.Worker, m.Workers
	return nil
}
