package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// WebKit's paths: $WEBKIT_WEBDRIVER and $MINIBROWSER, else Debian's
// webkit2gtk-driver and the MiniBrowser of libwebkit2gtk-4.1.
func webkitPaths() (driver, browser string) {
	driver, browser = os.Getenv("WEBKIT_WEBDRIVER"), os.Getenv("MINIBROWSER")
	if driver == "" {
		driver = "/usr/bin/WebKitWebDriver"
	}
	if browser == "" {
		browser = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
	}
	return driver, browser
}

// elementKey is the W3C WebDriver web element identifier.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// webkit drives WebKitGTK's MiniBrowser through WebKitWebDriver (W3C
// classic WebDriver), on an Xvfb display of its own. Each NewWindow is a
// session of its own: a MiniBrowser with its own (ephemeral) storage. A
// WebKitWebDriver holds one session at a time, so windows open at once
// each get a driver process of their own, kept for the next window once
// its session ends.
type webkit struct {
	xvfb    *exec.Cmd
	display string // Xvfb's display number
	browser string
	http    *http.Client

	mu      sync.Mutex
	version string
	idle    []*wdDriver // drivers without a session
	all     []*wdDriver
}

// wdDriver is one WebKitWebDriver process.
type wdDriver struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:port
	http *http.Client
}

func startWebKit(ctx context.Context) (Browser, error) {
	driverPath, browserPath := webkitPaths()
	for _, p := range []string{driverPath, browserPath} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("engine: %s not found (set WEBKIT_WEBDRIVER and MINIBROWSER, or run scripts/install-deps.sh for webkit2gtk-driver)", p)
		}
	}
	w := &webkit{browser: browserPath, http: &http.Client{}}
	// Xvfb picks a free display and writes its number to fd 3.
	r, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	w.xvfb = exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x900x24", "-nolisten", "tcp")
	w.xvfb.ExtraFiles = []*os.File{wr}
	if err := w.xvfb.Start(); err != nil {
		return nil, fmt.Errorf("engine: starting Xvfb (install xvfb): %w", err)
	}
	wr.Close()
	display := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		display <- strings.TrimSpace(line)
		r.Close()
	}()
	var d string
	select {
	case d = <-display:
	case <-time.After(30 * time.Second):
	}
	if d == "" {
		w.Close()
		return nil, fmt.Errorf("engine: Xvfb did not start a display within 30s")
	}
	w.display = d
	// One driver at once: a missing or broken WebKitWebDriver shows here,
	// not in the first scenario.
	dr, err := w.startDriver()
	if err != nil {
		w.Close()
		return nil, err
	}
	w.idle = append(w.idle, dr)
	return w, nil
}

// startDriver starts a WebKitWebDriver on the display and waits until it
// is ready.
func (w *webkit) startDriver() (*wdDriver, error) {
	driverPath, _ := webkitPaths()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	d := &wdDriver{base: fmt.Sprintf("http://127.0.0.1:%d", port), http: w.http}
	d.cmd = exec.Command(driverPath, fmt.Sprintf("--port=%d", port), "--host=127.0.0.1")
	d.cmd.Env = append(os.Environ(), "DISPLAY=:"+w.display)
	// Its own process group: a restart takes its MiniBrowser down too.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Getenv("MCPWASM_E2E_DEBUG") != "" {
		d.cmd.Stderr = os.Stderr
	}
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("engine: starting %s: %w", driverPath, err)
	}
	w.mu.Lock()
	w.all = append(w.all, d)
	w.mu.Unlock()
	for i := 0; ; i++ {
		var st struct {
			Ready bool `json:"ready"`
		}
		if err := d.do(context.Background(), "GET", "/status", nil, &st); err == nil && st.Ready {
			return d, nil
		}
		if i > 300 {
			d.stop()
			return nil, fmt.Errorf("engine: %s not ready within 30s", driverPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the WebKitWebDriver and the MiniBrowser it started.
func (d *wdDriver) stop() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	_ = d.cmd.Wait()
	d.cmd = nil
}

// driver takes an idle driver, or starts one.
func (w *webkit) driver() (*wdDriver, error) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		d := w.idle[n-1]
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		return d, nil
	}
	w.mu.Unlock()
	return w.startDriver()
}

// release gives a driver whose session ended back for the next window.
func (w *webkit) release(d *wdDriver) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.idle = append(w.idle, d)
}

func (w *webkit) Name() string { return "webkit" }

func (w *webkit) Version() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.version
}

func (w *webkit) Close() error {
	w.mu.Lock()
	all := w.all
	w.all, w.idle = nil, nil
	w.mu.Unlock()
	for _, d := range all {
		d.stop()
	}
	if w.xvfb != nil && w.xvfb.Process != nil {
		_ = w.xvfb.Process.Kill()
		_ = w.xvfb.Wait()
	}
	return nil
}

// wdError is a WebDriver error response.
type wdError struct {
	Status  int
	Code    string `json:"error"`
	Message string `json:"message"`
}

func (e *wdError) Error() string {
	return fmt.Sprintf("engine: WebDriver %d %s: %s", e.Status, e.Code, e.Message)
}

// do sends a WebDriver command and decodes its value into out.
func (d *wdDriver) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.http.Do(req)
	if err != nil {
		return fmt.Errorf("engine: WebDriver %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("engine: WebDriver %s %s: %d %.200s", method, path, resp.StatusCode, data)
	}
	if resp.StatusCode != http.StatusOK {
		e := &wdError{Status: resp.StatusCode}
		_ = json.Unmarshal(env.Value, e)
		return e
	}
	if out != nil {
		return json.Unmarshal(env.Value, out)
	}
	return nil
}

func (w *webkit) NewWindow(ctx context.Context) (Window, error) {
	var r struct {
		SessionID    string `json:"sessionId"`
		Capabilities struct {
			BrowserName    string `json:"browserName"`
			BrowserVersion string `json:"browserVersion"`
		} `json:"capabilities"`
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "MiniBrowser",
		"webkitgtk:browserOptions": map[string]any{
			"binary": w.browser,
			"args":   []string{"--automation"},
		},
	}}}
	d, err := w.driver()
	if err != nil {
		return nil, err
	}
	// Starting MiniBrowser under load now and then hangs the driver for
	// minutes (4 times in one make test with two busy loops): a session
	// that is not created in time restarts the driver (and says so);
	// launching the browser is not what the tests test.
	for attempt := 1; ; attempt++ {
		sctx, cancel := context.WithTimeout(ctx, sessionTimeout)
		began := time.Now()
		err = d.do(sctx, "POST", "/session", caps, &r)
		cancel()
		if took := time.Since(began); err == nil && took > sessionTimeout/4 {
			fmt.Fprintf(os.Stderr, "engine: WebKitWebDriver took %s to create a session\n", took.Round(100*time.Millisecond))
		}
		if err == nil {
			break
		}
		if attempt == 3 || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			w.release(d)
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "engine: WebKitWebDriver created no session within %s; restarting it\n", sessionTimeout)
		d.stop()
		if d, err = w.startDriver(); err != nil {
			return nil, err
		}
	}
	w.mu.Lock()
	w.version = r.Capabilities.BrowserName + " (WebKitGTK " + r.Capabilities.BrowserVersion + ")"
	w.mu.Unlock()
	s := &wdSession{w: w, d: d, id: r.SessionID}
	if err := s.do(ctx, "POST", "/timeouts", map[string]any{"script": 120000, "pageLoad": 60000}, nil); err != nil {
		s.delete()
		return nil, err
	}
	var h string
	if err := s.do(ctx, "GET", "/window", nil, &h); err != nil {
		s.delete()
		return nil, err
	}
	s.current = h
	return &wdWindow{s: s, handle: h, main: true}, nil
}

// sessionTimeout bounds the creation of a session (a MiniBrowser's
// start): 0.6 s is usual, with two busy loops on 2 cores too; a driver
// that has not answered in 20 s has hung, and waiting longer for it
// only costs the pass.
const sessionTimeout = 20 * time.Second

// wdSession is one WebDriver session; commands go to its current window,
// so each is sent after switching to the window it is for.
type wdSession struct {
	w       *webkit
	d       *wdDriver // the driver holding the session
	id      string
	mu      sync.Mutex
	current string
}

func (s *wdSession) do(ctx context.Context, method, path string, body, out any) error {
	return s.d.do(ctx, method, "/session/"+s.id+path, body, out)
}

// delete ends the session; its driver takes the next window's session,
// or, when the session would not end, is stopped.
func (s *wdSession) delete() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.do(ctx, "DELETE", "", nil, nil); err != nil {
		s.d.stop()
		return
	}
	s.w.release(s.d)
}

// wdWindow is a window (a handle) of a session.
type wdWindow struct {
	s      *wdSession
	handle string
	main   bool // closing it ends the session
}

// in runs f with the session switched to this window.
func (w *wdWindow) in(ctx context.Context, f func() error) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.s.current != w.handle {
		if err := w.s.do(ctx, "POST", "/window", map[string]any{"handle": w.handle}, nil); err != nil {
			return err
		}
		w.s.current = w.handle
	}
	return f()
}

func (w *wdWindow) Preload(context.Context, string) error { return ErrNoPreload }

func (w *wdWindow) Navigate(ctx context.Context, url string) error {
	return w.in(ctx, func() error { return w.s.do(ctx, "POST", "/url", map[string]any{"url": url}, nil) })
}

func (w *wdWindow) Reload(ctx context.Context) error {
	return w.in(ctx, func() error { return w.s.do(ctx, "POST", "/refresh", map[string]any{}, nil) })
}

func (w *wdWindow) Eval(ctx context.Context, expr string, out any) error {
	return w.EvalIn(ctx, nil, expr, out)
}

// EvalIn switches the session into the frames, one level at a time,
// evaluates there and switches back to the top.
func (w *wdWindow) EvalIn(ctx context.Context, frames []string, expr string, out any) error {
	var v *string
	err := w.inFrames(ctx, frames, func() (err error) {
		v, err = w.eval(ctx, expr)
		return err
	})
	if err != nil {
		return err
	}
	return decode(v, out)
}

// eval evaluates expr in the session's current window and frame.
func (w *wdWindow) eval(ctx context.Context, expr string) (*string, error) {
	script := `const done = arguments[arguments.length - 1];
Promise.resolve().then(() => ` + jsonWrap(expr) + `).then(
  (v) => done({ ok: true, v }),
  (e) => done({ ok: false, e: String(e && e.stack ? e + "\n" + e.stack : e) }));`
	var r struct {
		OK bool    `json:"ok"`
		V  *string `json:"v"`
		E  string  `json:"e"`
	}
	if err := w.s.do(ctx, "POST", "/execute/async", map[string]any{"script": script, "args": []any{}}, &r); err != nil {
		return nil, err
	}
	if !r.OK {
		return nil, &JSError{Text: r.E}
	}
	return r.V, nil
}

// inFrames runs f with the session switched to this window and, in it,
// into frames (each an iframe's CSS selector in the frame before); the
// session is back at the window's top frame afterwards, even when
// switching or f failed, since every other command expects it there.
func (w *wdWindow) inFrames(ctx context.Context, frames []string, f func() error) error {
	return w.in(ctx, func() error {
		if len(frames) == 0 {
			return f()
		}
		defer func() {
			// Not ctx: the switch back must happen when ctx has ended too.
			c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_ = w.s.do(c, "POST", "/frame", map[string]any{"id": nil}, nil)
		}()
		for i, sel := range frames {
			var el map[string]string
			if err := w.s.do(ctx, "POST", "/element", map[string]any{"using": "css selector", "value": sel}, &el); err != nil {
				return fmt.Errorf("engine: frame %s: %w", strings.Join(frames[:i+1], " > "), err)
			}
			if el[elementKey] == "" {
				return fmt.Errorf("engine: frame %s: no element reference (%v)", strings.Join(frames[:i+1], " > "), el)
			}
			if err := w.s.do(ctx, "POST", "/frame", map[string]any{"id": map[string]string{elementKey: el[elementKey]}}, nil); err != nil {
				return fmt.Errorf("engine: switching to frame %s: %w", strings.Join(frames[:i+1], " > "), err)
			}
		}
		return f()
	})
}

// Gesture puts a button over the page whose click handler runs expr, and
// clicks it with Element Click: the one way classic WebDriver gives a
// script transient user activation.
func (w *wdWindow) Gesture(ctx context.Context, expr string) error {
	script := `const b = document.createElement("button");
b.id = "__e2e_gesture";
b.textContent = "e2e gesture";
b.style.cssText = "position:fixed;left:0;top:0;width:120px;height:40px;z-index:2147483647";
b.addEventListener("click", () => { b.remove(); void (
` + expr + `
); }, { once: true });
document.documentElement.append(b);`
	return w.in(ctx, func() error {
		if err := w.s.do(ctx, "POST", "/execute/sync", map[string]any{"script": script, "args": []any{}}, nil); err != nil {
			return err
		}
		var el map[string]string
		if err := w.s.do(ctx, "POST", "/element", map[string]any{"using": "css selector", "value": "#__e2e_gesture"}, &el); err != nil {
			return err
		}
		if el[elementKey] == "" {
			return fmt.Errorf("engine: the gesture button is not in the page (%v)", el)
		}
		return w.s.do(ctx, "POST", "/element/"+el[elementKey]+"/click", map[string]any{}, nil)
	})
}

func (w *wdWindow) handles(ctx context.Context) ([]string, error) {
	var hs []string
	err := w.s.do(ctx, "GET", "/window/handles", nil, &hs)
	return hs, err
}

func (w *wdWindow) ExpectPopup(ctx context.Context) (Popup, error) {
	before, err := w.handles(ctx)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, h := range before {
		known[h] = true
	}
	return func(ctx context.Context) (Window, error) {
		for {
			hs, err := w.handles(ctx)
			if err != nil {
				return nil, err
			}
			for _, h := range hs {
				if !known[h] {
					return &wdWindow{s: w.s, handle: h}, nil
				}
			}
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("engine: no popup opened: %w", ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}, nil
}

func (w *wdWindow) Click(ctx context.Context, selector string) error {
	return w.ClickIn(ctx, nil, selector)
}

// ClickIn finds the element and clicks it with Element Click (which gives
// user activation), both in the frame, retrying until the frames and the
// element are there.
func (w *wdWindow) ClickIn(ctx context.Context, frames []string, selector string) error {
	for {
		found := false
		err := w.inFrames(ctx, frames, func() error {
			var el map[string]string
			if err := w.s.do(ctx, "POST", "/element", map[string]any{"using": "css selector", "value": selector}, &el); err != nil {
				return err
			}
			if el[elementKey] == "" {
				return fmt.Errorf("engine: no element reference (%v)", el)
			}
			found = true
			return w.s.do(ctx, "POST", "/element/"+el[elementKey]+"/click", map[string]any{}, nil)
		})
		if found {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("engine: waiting for %s: %w (last: %v)", strings.Join(append(append([]string(nil), frames...), selector), " > "), ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (w *wdWindow) Press(ctx context.Context, key string) error {
	c, err := keyCode(key)
	if err != nil {
		return err
	}
	return w.in(ctx, func() error {
		return w.s.do(ctx, "POST", "/actions", map[string]any{"actions": keyActions(c)}, nil)
	})
}

func (w *wdWindow) NewTab(ctx context.Context) (Window, error) {
	var r struct {
		Handle string `json:"handle"`
	}
	if err := w.s.do(ctx, "POST", "/window/new", map[string]any{"type": "tab"}, &r); err != nil {
		return nil, err
	}
	return &wdWindow{s: w.s, handle: r.Handle}, nil
}

// Errors returns what the page's own collector (window.__e2eErrors, set
// by the page the suite serves) recorded since the page loaded: classic
// WebDriver has no log of page errors.
func (w *wdWindow) Errors(ctx context.Context) ([]string, error) {
	var errs []string
	err := w.Eval(ctx, `globalThis.__e2eErrors ?? []`, &errs)
	return errs, err
}

func (w *wdWindow) Close() error {
	if w.main {
		w.s.delete()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return w.in(ctx, func() error {
		err := w.s.do(ctx, "DELETE", "/window", nil, nil)
		w.s.current = ""
		return err
	})
}
