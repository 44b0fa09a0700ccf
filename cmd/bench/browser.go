package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/devkit/headless"
)

//go:embed pages/harness.js
var harnessJS string

// browser is one headless Chromium for the whole run; every visit is a tab.
type browser struct {
	*headless.Browser
	ctx     context.Context
	Version string
}

func startBrowser() (*browser, error) {
	return startBrowserWith("--expose-gc")
}

// startBrowserWith starts a browser like startBrowser's with jsFlags as
// V8's flags (they must include --expose-gc).
func startBrowserWith(jsFlags string) (*browser, error) {
	b, err := headless.Start(context.Background(),
		// performance.memory without quantization, and gc() before reading it.
		chromedp.Flag("enable-precise-memory-info", true),
		chromedp.Flag("js-flags", jsFlags),
	)
	if err != nil {
		return nil, err
	}
	return &browser{Browser: b, ctx: b.Ctx, Version: b.Version}, nil
}

// tab opens a new tab; close it with the returned func. A tab in a new
// browser context has its own empty HTTP cache, CORS preflight cache and
// connection pool, as on a first visit.
func (b *browser) tab(opts ...chromedp.ContextOption) (context.Context, func()) {
	return b.tabWithin(3*time.Minute, opts...)
}

// tabWithin is tab with a time limit of d for everything done in it.
func (b *browser) tabWithin(d time.Duration, opts ...chromedp.ContextOption) (context.Context, func()) {
	tab, cancel := chromedp.NewContext(b.ctx, opts...)
	ctx, cancelT := context.WithTimeout(tab, d)
	return ctx, func() { cancelT(); cancel() }
}

func eval[T any](ctx context.Context, expr string) (T, error) {
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%v\n  in: %.200s", err, expr)
	}
	return v, nil
}

// waitReady resolves with performance.now() at the moment the page's client
// was ready (mcp.js load() resolved, or the TS bundle evaluated): the time
// from navigation start to ready.
const waitReady = `(async () => { while (!window.__readyP) await new Promise((r) => setTimeout(r, 2)); return await window.__readyP; })()`

// visit is what one page visit cost.
type visit struct {
	ReadyMs    float64
	AssetBody  int64  // body bytes of the client asset (mcp.wasm or ts-client.js) on the wire
	AssetHow   string // "200", "304", "disk cache", …
	TotalBytes int64  // every response of the visit, headers included
}

type reqInfo struct {
	url       string
	status    int64
	cached    bool
	headerLen float64
	total     float64
	done      bool
}

// visitPage opens pageURL in a new tab, after clearing the HTTP cache when
// cold, and measures navigation → ready and the bytes received (CDP
// Network events). asset is the file name whose body bytes are reported.
func (b *browser) visitPage(pageURL, asset string, cold bool) (visit, error) {
	ctx, closeTab := b.tab()
	defer closeTab()
	if err := chromedp.Do(ctx); err != nil { // open the tab
		return visit{}, err
	}
	if cold {
		err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, network.ClearBrowserCache, cdp.Empty{})
			return err
		}))
		if err != nil {
			return visit{}, err
		}
	}
	var mu sync.Mutex
	reqs := map[network.RequestID]*reqInfo{}
	get := func(id network.RequestID) *reqInfo {
		r := reqs[id]
		if r == nil {
			r = &reqInfo{}
			reqs[id] = r
		}
		return r
	}
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			get(ev.RequestID).url = ev.Request.URL
		case *network.EventResponseReceived:
			r := get(ev.RequestID)
			r.url = ev.Response.URL
			r.status = ev.Response.Status
			r.cached = r.cached || ev.Response.FromDiskCache || ev.Response.FromPrefetchCache || ev.Response.FromServiceWorker
			r.headerLen = ev.Response.EncodedDataLength
		case *network.EventRequestServedFromCache:
			get(ev.RequestID).cached = true
		case *network.EventLoadingFinished:
			r := get(ev.RequestID)
			r.total = ev.EncodedDataLength
			r.done = true
		}
	})
	if err != nil {
		return visit{}, err
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		return visit{}, err
	}
	ready, err := eval[float64](ctx, waitReady)
	if err != nil {
		return visit{}, err
	}
	// Let the last loadingFinished events arrive.
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		pending := false
		for _, r := range reqs {
			if strings.HasSuffix(r.url, "/"+asset) && !r.done {
				pending = true
			}
		}
		mu.Unlock()
		if !pending || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	v := visit{ReadyMs: ready}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range reqs {
		v.TotalBytes += int64(r.total)
		if !strings.HasSuffix(r.url, "/"+asset) {
			continue
		}
		switch {
		case r.cached:
			v.AssetHow = "cache"
		default:
			v.AssetHow = fmt.Sprint(r.status)
			if r.status == 200 {
				v.AssetBody += int64(r.total - r.headerLen)
				if r.total-r.headerLen == 0 {
					// CDP shows a revalidated response as the cached 200.
					v.AssetHow = "304 (revalidated, no body)"
				}
			}
		}
	}
	return v, nil
}

// session is what one connect-and-call run of a client measured.
type session struct {
	ConnectMs, ReconnectMs float64
	ConnectN, ReconnectN   map[string]int
	Calls                  []float64 // ms per sequential call
	ConcMs                 float64   // wall time of the concurrent run
	WasmMem, Heap          float64   // bytes after the call run
}

type memInfo struct {
	Wasm float64 `json:"wasm"`
	Heap float64 `json:"heap"`
}

// runBrowserClient loads pageURL in a new tab and runs the harness: connect
// (counted), close, connect again (a reconnect in the same page), warm-up,
// sequential calls, concurrent calls, memory.
func (b *browser) runBrowserClient(pageURL, mcpURL string, srv *servers, cfg config) (session, error) {
	var s session
	ctx, closeTab := b.tab(chromedp.WithNewBrowserContext())
	defer closeTab()
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		return s, err
	}
	if _, err := eval[float64](ctx, waitReady); err != nil {
		return s, err
	}
	if _, err := eval[bool](ctx, harnessJS); err != nil {
		return s, err
	}
	u, _ := json.Marshal(mcpURL)
	connect := func() (float64, map[string]int, error) {
		srv.MCP.reset()
		ms, err := eval[float64](ctx, "B.connect("+string(u)+")")
		if err != nil {
			return 0, nil, err
		}
		time.Sleep(settle) // requests a client sends right after connect resolves
		return ms, srv.MCP.snapshot(), nil
	}
	var err error
	if s.ConnectMs, s.ConnectN, err = connect(); err != nil {
		return s, err
	}
	if _, err := eval[bool](ctx, "B.closeAll().then(() => true)"); err != nil {
		return s, err
	}
	if s.ReconnectMs, s.ReconnectN, err = connect(); err != nil {
		return s, err
	}
	if s.Calls, err = eval[[]float64](ctx, fmt.Sprintf("B.seq(%d, %d)", cfg.calls, cfg.warmCalls)); err != nil {
		return s, err
	}
	if s.ConcMs, err = eval[float64](ctx, fmt.Sprintf("B.conc(%d, %d)", cfg.workers, cfg.concCalls)); err != nil {
		return s, err
	}
	m, err := eval[memInfo](ctx, "B.mem()")
	if err != nil {
		return s, err
	}
	s.WasmMem, s.Heap = m.Wasm, m.Heap
	_, err = eval[bool](ctx, "B.closeAll().then(() => true)")
	return s, err
}

// settle is how long after connect resolves requests are still counted.
const settle = 200 * time.Millisecond
