package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// FirefoxPath is the Firefox to run: $FIREFOX, else Debian's firefox-esr.
func FirefoxPath() string {
	if p := os.Getenv("FIREFOX"); p != "" {
		return p
	}
	return "/usr/bin/firefox-esr"
}

// firefoxPrefs keep a test profile off the network and quiet: no updates,
// telemetry, captive-portal or connectivity checks, remote settings, safe
// browsing lists, first-run pages. The popup blocker stays on: a sign-in
// popup must come from a user activation, as for a person.
var firefoxPrefs = map[string]any{
	"app.update.auto":                                 false,
	"app.update.checkInstallTime":                     false,
	"app.update.disabledForTesting":                   true,
	"browser.shell.checkDefaultBrowser":               false,
	"browser.startup.homepage_override.mstone":        "ignore",
	"browser.startup.page":                            0,
	"browser.newtabpage.enabled":                      false,
	"browser.aboutwelcome.enabled":                    false,
	"browser.safebrowsing.malware.enabled":            false,
	"browser.safebrowsing.phishing.enabled":           false,
	"browser.safebrowsing.downloads.enabled":          false,
	"browser.safebrowsing.blockedURIs.enabled":        false,
	"browser.safebrowsing.provider.mozilla.updateURL": "",
	"datareporting.healthreport.uploadEnabled":        false,
	"datareporting.policy.dataSubmissionEnabled":      false,
	"toolkit.telemetry.enabled":                       false,
	"toolkit.telemetry.unified":                       false,
	"toolkit.telemetry.server":                        "",
	"network.captive-portal-service.enabled":          false,
	"network.connectivity-service.enabled":            false,
	"services.settings.server":                        "",
	"extensions.update.enabled":                       false,
	"extensions.getAddons.cache.enabled":              false,
	"extensions.blocklist.enabled":                    false,
	"browser.region.network.url":                      "",
	"browser.search.update":                           false,
	"media.gmp-manager.url":                           "",
	"network.dns.disablePrefetch":                     true,
	"network.prefetch-next":                           false,
	"dom.disable_open_during_load":                    true,
}

// firefox drives Firefox over WebDriver BiDi.
type firefox struct {
	cmd     *exec.Cmd
	profile string
	version string
	bidi    *bidiConn
	// windows serializes making and closing tabs and user contexts:
	// Firefox has refused a tab while another window closed, and has
	// died when two windows were made as a third went away.
	windows sync.Mutex
	mu      sync.Mutex
	said    []string // Firefox's last lines on stderr
}

// lastWords says how Firefox ended, with its last lines on stderr, for
// an error about a lost connection.
func (f *firefox) lastWords() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	state := "still running"
	if err := f.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		state = "gone (" + err.Error() + ")"
	}
	return fmt.Sprintf("Firefox is %s; its last lines:\n%s", state, strings.Join(f.said, "\n"))
}

func startFirefox(ctx context.Context) (Browser, error) {
	path := FirefoxPath()
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("engine: Firefox not found at %s (set FIREFOX, or run scripts/install-deps.sh)", path)
	}
	profile, err := os.MkdirTemp("", "mcpwasm-firefox-")
	if err != nil {
		return nil, err
	}
	var prefs strings.Builder
	for k, v := range firefoxPrefs {
		b, _ := json.Marshal(v)
		fmt.Fprintf(&prefs, "user_pref(%q, %s);\n", k, b)
	}
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(prefs.String()), 0o600); err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	cmd := exec.Command(path, "--headless", "--no-remote", "--remote-debugging-port=0", "--profile", profile, "about:blank")
	cmd.Env = append(os.Environ(), "MOZ_CRASHREPORTER_DISABLE=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(profile)
		return nil, fmt.Errorf("engine: starting %s: %w", path, err)
	}
	f := &firefox{cmd: cmd, profile: profile}
	// Firefox says where its BiDi server listens on stderr.
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, "WebDriver BiDi listening on "); i >= 0 {
				select {
				case found <- strings.TrimSpace(line[i+len("WebDriver BiDi listening on "):]):
				default:
				}
			} else {
				f.mu.Lock()
				if f.said = append(f.said, line); len(f.said) > 30 {
					f.said = f.said[1:]
				}
				f.mu.Unlock()
				if os.Getenv("MCPWASM_E2E_DEBUG") != "" {
					fmt.Fprintln(os.Stderr, "firefox:", line)
				}
			}
		}
	}()
	var url string
	select {
	case url = <-found:
	case <-time.After(60 * time.Second):
		f.Close()
		return nil, fmt.Errorf("engine: Firefox did not open its WebDriver BiDi port within 60s")
	}
	f.bidi, err = dialBiDi(ctx, url+"/session")
	if err != nil {
		f.Close()
		return nil, err
	}
	f.bidi.lastWords = f.lastWords
	var sess struct {
		Capabilities struct {
			BrowserName    string `json:"browserName"`
			BrowserVersion string `json:"browserVersion"`
		} `json:"capabilities"`
	}
	if err := f.bidi.call(ctx, "session.new", map[string]any{"capabilities": map[string]any{}}, &sess); err != nil {
		f.Close()
		return nil, err
	}
	f.version = sess.Capabilities.BrowserName + " " + sess.Capabilities.BrowserVersion
	if err := f.bidi.call(ctx, "session.subscribe", map[string]any{
		"events": []string{"browsingContext.contextCreated", "log.entryAdded"},
	}, nil); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (f *firefox) Name() string    { return "firefox" }
func (f *firefox) Version() string { return f.version }

func (f *firefox) Close() error {
	if f.bidi != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = f.bidi.call(ctx, "browser.close", map[string]any{}, nil)
		cancel()
		f.bidi.close()
	}
	done := make(chan struct{})
	go func() { _ = f.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = f.cmd.Process.Kill()
		<-done
	}
	return os.RemoveAll(f.profile)
}

func (f *firefox) NewWindow(ctx context.Context) (Window, error) {
	f.windows.Lock()
	defer f.windows.Unlock()
	var uc struct {
		UserContext string `json:"userContext"`
	}
	if err := f.bidi.call(ctx, "browser.createUserContext", map[string]any{}, &uc); err != nil {
		return nil, err
	}
	w, err := f.open(ctx, uc.UserContext)
	if err != nil {
		return nil, err
	}
	w.ownsUC = true
	return w, nil
}

func (f *firefox) open(ctx context.Context, uc string) (*bidiWindow, error) {
	var c struct {
		Context string `json:"context"`
	}
	// Each window is a browser window of its own rather than a tab: a new
	// foreground tab makes Firefox wait until the tab it hides reports
	// itself hidden, and a busy or navigating page in another test's tab
	// has left that wait, and the create, unanswered. A window waits
	// only on itself, and every test's page stays visible.
	create := func() error {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return f.bidi.call(actx, "browsingContext.create", map[string]any{"type": "window", "userContext": uc}, &c)
	}
	err := create()
	if err != nil && ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "DiscardedBrowsingContextError")) {
		// Firefox refuses a new window now and then while another one
		// closes at the same moment, or leaves the ask unanswered; a
		// second ask is answered. A window from the lost ask closes
		// with its user context.
		err = create()
	}
	if err != nil {
		return nil, err
	}
	return f.window(c.Context, uc), nil
}

func (f *firefox) window(id, uc string) *bidiWindow {
	w := &bidiWindow{f: f, id: id, uc: uc}
	f.bidi.onLog(id, w.addErr)
	return w
}

// bidiWindow is a top-level browsing context in a user context.
type bidiWindow struct {
	f      *firefox
	id, uc string
	ownsUC bool
	mu     sync.Mutex
	errs   []string
}

func (w *bidiWindow) addErr(s string) {
	w.mu.Lock()
	w.errs = append(w.errs, s)
	w.mu.Unlock()
}

func (w *bidiWindow) Preload(ctx context.Context, src string) error {
	return w.f.bidi.call(ctx, "script.addPreloadScript", map[string]any{
		"functionDeclaration": "() => {\n" + src + "\n}",
		"userContexts":        []string{w.uc},
	}, nil)
}

func (w *bidiWindow) Navigate(ctx context.Context, url string) error {
	return w.f.bidi.call(ctx, "browsingContext.navigate", map[string]any{"context": w.id, "url": url, "wait": "complete"}, nil)
}

func (w *bidiWindow) Reload(ctx context.Context) error {
	return w.f.bidi.call(ctx, "browsingContext.reload", map[string]any{"context": w.id, "wait": "complete"}, nil)
}

// scriptResult is script.evaluate's and script.callFunction's result.
type scriptResult struct {
	Type   string `json:"type"`
	Result struct {
		Type  string  `json:"type"`
		Value *string `json:"value"`
	} `json:"result"`
	ExceptionDetails struct {
		Text string `json:"text"`
	} `json:"exceptionDetails"`
}

func (w *bidiWindow) Eval(ctx context.Context, expr string, out any) error {
	return w.evalIn(ctx, w.id, expr, out)
}

// EvalIn evaluates in the browsing context of the frame.
func (w *bidiWindow) EvalIn(ctx context.Context, frames []string, expr string, out any) error {
	id, err := w.frame(ctx, frames)
	if err != nil {
		return err
	}
	return w.evalIn(ctx, id, expr, out)
}

// evalIn evaluates expr in the browsing context id.
func (w *bidiWindow) evalIn(ctx context.Context, id, expr string, out any) error {
	var r scriptResult
	if err := w.f.bidi.call(ctx, "script.evaluate", map[string]any{
		"expression":      jsonWrap(expr),
		"target":          map[string]any{"context": id},
		"awaitPromise":    true,
		"resultOwnership": "none",
	}, &r); err != nil {
		return err
	}
	if r.Type == "exception" {
		return &JSError{Text: r.ExceptionDetails.Text}
	}
	if r.Result.Type == "undefined" {
		return nil
	}
	return decode(r.Result.Value, out)
}

// frame resolves frames to a browsing context, one level at a time: in
// the parent's context, the iframe's contentWindow serializes as a remote
// window whose value names its browsing context (cross-origin too: a
// WindowProxy needs no access to be serialized).
func (w *bidiWindow) frame(ctx context.Context, frames []string) (string, error) {
	id := w.id
	for i, sel := range frames {
		var r struct {
			Type   string `json:"type"`
			Result struct {
				Type  string `json:"type"`
				Value struct {
					Context string `json:"context"`
				} `json:"value"`
			} `json:"result"`
			ExceptionDetails struct {
				Text string `json:"text"`
			} `json:"exceptionDetails"`
		}
		err := w.f.bidi.call(ctx, "script.callFunction", map[string]any{
			"functionDeclaration":  "(s) => document.querySelector(s)?.contentWindow ?? null",
			"arguments":            []any{map[string]any{"type": "string", "value": sel}},
			"target":               map[string]any{"context": id},
			"awaitPromise":         false,
			"resultOwnership":      "none",
			"serializationOptions": map[string]any{"maxObjectDepth": 0},
		}, &r)
		where := strings.Join(frames[:i+1], " > ")
		switch {
		case err != nil:
			return "", fmt.Errorf("engine: frame %s: %w", where, err)
		case r.Type == "exception":
			return "", fmt.Errorf("engine: frame %s: %w", where, &JSError{Text: r.ExceptionDetails.Text})
		case r.Result.Type != "window" || r.Result.Value.Context == "":
			return "", fmt.Errorf("engine: frame %s: no iframe with a window there (got a %s)", where, r.Result.Type)
		}
		id = r.Result.Value.Context
	}
	return id, nil
}

func (w *bidiWindow) callActivated(ctx context.Context, id, fn string, args ...any) error {
	var r scriptResult
	if err := w.f.bidi.call(ctx, "script.callFunction", map[string]any{
		"functionDeclaration": fn,
		"arguments":           args,
		"target":              map[string]any{"context": id},
		"awaitPromise":        false,
		"userActivation":      true,
		"resultOwnership":     "none",
	}, &r); err != nil {
		return err
	}
	if r.Type == "exception" {
		return &JSError{Text: r.ExceptionDetails.Text}
	}
	return nil
}

func (w *bidiWindow) Gesture(ctx context.Context, expr string) error {
	return w.callActivated(ctx, w.id, "() => { void (\n"+expr+"\n); }")
}

// ExpectPopup takes the popup from the contextCreated event, or from the
// list of top-level contexts, polled, should the event not come: a popup
// that opened is found either way.
func (w *bidiWindow) ExpectPopup(ctx context.Context) (Popup, error) {
	ch, forget := w.f.bidi.nextContext(w.uc)
	before, err := w.f.bidi.topContexts(ctx, w.uc)
	if err != nil {
		forget()
		return nil, err
	}
	return func(ctx context.Context) (Window, error) {
		defer forget()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case id := <-ch:
				return w.f.window(id, w.uc), nil
			case <-tick.C:
				now, err := w.f.bidi.topContexts(ctx, w.uc)
				if err != nil {
					continue
				}
				for id := range now {
					if !before[id] {
						return w.f.window(id, w.uc), nil
					}
				}
			case <-ctx.Done():
				return nil, fmt.Errorf("engine: no popup opened: %w", ctx.Err())
			}
		}
	}, nil
}

func (w *bidiWindow) Click(ctx context.Context, selector string) error {
	return w.ClickIn(ctx, nil, selector)
}

// ClickIn waits until the frames resolve and the element is rendered in
// the loaded document of the last, then clicks it from a script call with
// user activation.
func (w *bidiWindow) ClickIn(ctx context.Context, frames []string, selector string) error {
	sel, _ := json.Marshal(selector)
	var id string
	for {
		var ok bool
		var err error
		if id, err = w.frame(ctx, frames); err == nil {
			err = w.evalIn(ctx, id, `!!`+renderedElement+`(document, `+string(sel)+`)`, &ok)
		}
		if err == nil && ok {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("engine: waiting for %s: %w (last: %v)", strings.Join(append(append([]string(nil), frames...), selector), " > "), ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return w.callActivated(ctx, id, "(s) => { document.querySelector(s).click(); }", map[string]any{"type": "string", "value": selector})
}

func (w *bidiWindow) Press(ctx context.Context, key string) error {
	c, err := keyCode(key)
	if err != nil {
		return err
	}
	return w.f.bidi.call(ctx, "input.performActions", map[string]any{"context": w.id, "actions": keyActions(c)}, nil)
}

func (w *bidiWindow) NewTab(ctx context.Context) (Window, error) {
	w.f.windows.Lock()
	defer w.f.windows.Unlock()
	return w.f.open(ctx, w.uc)
}

func (w *bidiWindow) Errors(context.Context) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.errs...), nil
}

func (w *bidiWindow) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.f.windows.Lock()
	defer w.f.windows.Unlock()
	err := w.f.bidi.call(ctx, "browsingContext.close", map[string]any{"context": w.id}, nil)
	if w.ownsUC {
		// Closes the tabs left in it, and forgets its storage.
		err = w.f.bidi.call(ctx, "browser.removeUserContext", map[string]any{"userContext": w.uc}, nil)
	}
	return err
}

// bidiConn is a WebDriver BiDi session over a websocket.
type bidiConn struct {
	ws      *websocket.Conn
	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan bidiMsg
	logs    map[string]func(string)
	waiters []ctxWaiter
	known   map[string]bool
	err     error
	// lastWords, when set, says what became of the browser, for an error
	// about a lost connection.
	lastWords func() string
}

type ctxWaiter struct {
	uc string
	ch chan string
}

type bidiMsg struct {
	Type    string          `json:"type"`
	ID      int64           `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

func dialBiDi(ctx context.Context, url string) (*bidiConn, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("engine: connecting to WebDriver BiDi at %s: %w", url, err)
	}
	ws.SetReadLimit(64 << 20)
	c := &bidiConn{ws: ws, pending: map[int64]chan bidiMsg{}, logs: map[string]func(string){}, known: map[string]bool{}}
	go c.read()
	return c, nil
}

func (c *bidiConn) read() {
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			c.mu.Lock()
			c.err = err
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
		var m bidiMsg
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		switch m.Type {
		case "success", "error":
			c.mu.Lock()
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case "event":
			c.event(m.Method, m.Params)
		}
	}
}

func (c *bidiConn) event(method string, params json.RawMessage) {
	switch method {
	case "browsingContext.contextCreated":
		var p struct {
			Context     string  `json:"context"`
			Parent      *string `json:"parent"`
			UserContext string  `json:"userContext"`
		}
		if json.Unmarshal(params, &p) != nil || p.Parent != nil {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.known[p.Context] {
			return
		}
		c.known[p.Context] = true
		for i, w := range c.waiters {
			if w.uc == p.UserContext {
				w.ch <- p.Context
				c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
				return
			}
		}
	case "log.entryAdded":
		var p struct {
			Level      string `json:"level"`
			Type       string `json:"type"`
			Text       string `json:"text"`
			StackTrace *struct {
				CallFrames []struct {
					URL  string `json:"url"`
					Line int    `json:"lineNumber"`
				} `json:"callFrames"`
			} `json:"stackTrace"`
			Source struct {
				Context string `json:"context"`
			} `json:"source"`
		}
		if json.Unmarshal(params, &p) != nil || p.Level != "error" {
			return
		}
		line := p.Type + ": " + p.Text
		if p.StackTrace != nil && len(p.StackTrace.CallFrames) > 0 {
			f := p.StackTrace.CallFrames[0]
			line += fmt.Sprintf(" (%s:%d)", f.URL, f.Line+1)
		}
		c.mu.Lock()
		fn := c.logs[p.Source.Context]
		c.mu.Unlock()
		if fn != nil {
			fn(line)
		}
	}
}

// nextContext returns a channel that yields the next top-level context
// created in user context uc, and forget, which stops the wait: a waiter
// left behind would take the next popup of uc from its own waiter.
func (c *bidiConn) nextContext(uc string) (<-chan string, func()) {
	ch := make(chan string, 1)
	c.mu.Lock()
	c.waiters = append(c.waiters, ctxWaiter{uc: uc, ch: ch})
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.waiters = slices.DeleteFunc(c.waiters, func(w ctxWaiter) bool { return w.ch == ch })
	}
}

// topContexts lists the top-level contexts of user context uc.
func (c *bidiConn) topContexts(ctx context.Context, uc string) (map[string]bool, error) {
	var r struct {
		Contexts []struct {
			Context     string `json:"context"`
			UserContext string `json:"userContext"`
		} `json:"contexts"`
	}
	if err := c.call(ctx, "browsingContext.getTree", map[string]any{"maxDepth": 0}, &r); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, b := range r.Contexts {
		if b.UserContext == uc {
			out[b.Context] = true
		}
	}
	return out, nil
}

func (c *bidiConn) onLog(context string, fn func(string)) {
	c.mu.Lock()
	c.logs[context] = fn
	c.known[context] = true
	c.mu.Unlock()
}

// whatBecame is lastWords on a line of its own, or nothing.
func (c *bidiConn) whatBecame() string {
	if c.lastWords == nil {
		return ""
	}
	return "\n" + c.lastWords()
}

// bidiWriteTimeout bounds sending one command: a Firefox that has not
// read it by then is stuck, and the connection is closed.
const bidiWriteTimeout = 30 * time.Second

// call sends a command and decodes its result into out.
func (c *bidiConn) call(ctx context.Context, method string, params any, out any) error {
	id := c.nextID.Add(1)
	ch := make(chan bidiMsg, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return fmt.Errorf("engine: WebDriver BiDi connection lost: %w%s", c.err, c.whatBecame())
	}
	c.pending[id] = ch
	c.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	// The websocket closes itself when the context of a write in progress
	// ends, and the connection is every window's: a test that gives up
	// (its context cancelled) must not end it for the others, so a write
	// is bounded by its own timeout instead of the caller's context.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bidiWriteTimeout)
	err := c.ws.Write(wctx, websocket.MessageText, msg)
	cancel()
	if err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("engine: %s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("engine: %s: WebDriver BiDi connection lost%s", method, c.whatBecame())
		}
		if m.Type == "error" {
			return fmt.Errorf("engine: %s: %s: %s", method, m.Error, m.Message)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("engine: %s: %w", method, ctx.Err())
	}
}

func (c *bidiConn) close() { _ = c.ws.Close(websocket.StatusNormalClosure, "") }
