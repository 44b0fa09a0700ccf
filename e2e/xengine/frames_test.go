package xengine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// framesProxy is the sandbox proxy's page (origin B): it makes the view,
// a sandboxed srcdoc frame with an opaque origin, whose button counts its
// clicks and tells the proxy by postMessage; the proxy shows the last
// count it got in its title.
const framesProxy = `<!doctype html><meta charset="utf-8"><title>proxy</title><body><script>
const f = document.createElement("iframe");
f.id = "view";
f.setAttribute("sandbox", "allow-scripts allow-forms");
f.srcdoc = '<!doctype html><meta charset="utf-8"><body><button id="b">more</button> <span id="n">0</span> <span id="act"></span>' +
  '<script>let n = 0; document.getElementById("b").addEventListener("click", () => {' +
  ' n++; document.getElementById("n").textContent = String(n);' +
  ' document.getElementById("act").textContent = String(navigator.userActivation ? navigator.userActivation.isActive : "unknown");' +
  ' parent.postMessage({ n }, "*"); });<\/script>';
addEventListener("message", (e) => { if (e.source === f.contentWindow) document.title = "got " + e.data.n; });
document.body.append(f);
</script>`

// TestFramesReachANestedSandboxedView reads and clicks inside a frame two
// levels down, as an MCP Apps host's tests must: the page (origin A)
// embeds the sandbox proxy (origin B), which embeds the view (sandboxed
// srcdoc, opaque origin).
func TestFramesReachANestedSandboxedView(t *testing.T) {
	eitherRuntime(t)
	html := func(body string) http.HandlerFunc {
		return func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			rw.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(rw, body)
		}
	}
	originB := serve(t, html(framesProxy))
	originA := serve(t, html(`<!doctype html><meta charset="utf-8"><title>host</title><body><iframe id="proxy" src="`+originB.URL+`/proxy.html"></iframe>`))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	win, err := browser.NewWindow(ctx)
	if err != nil {
		t.Fatalf("opening a window: %v", err)
	}
	defer win.Close()
	if err := win.Navigate(ctx, originA.URL+"/"); err != nil {
		t.Fatal(err)
	}
	proxy, view := []string{"#proxy"}, []string{"#proxy", "#view"}
	// waitIn polls EvalIn until expr gives want (the frames may not be
	// there yet).
	waitIn := func(frames []string, expr, want string) {
		t.Helper()
		var got string
		var err error
		for {
			if err = win.EvalIn(ctx, frames, expr, &got); err == nil && got == want {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("EvalIn(%q, %s) = %q, %v; want %q", frames, expr, got, err, want)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	waitIn(view, `document.getElementById("n").textContent`, "0")

	var origin string
	if err := win.EvalIn(ctx, proxy, `location.origin`, &origin); err != nil || origin != originB.URL {
		t.Errorf("EvalIn(#proxy, location.origin) = %q, %v; want %q", origin, err, originB.URL)
	}
	if err := win.EvalIn(ctx, view, `location.origin`, &origin); err != nil || origin != "null" {
		t.Errorf("EvalIn(#proxy #view, location.origin) = %q, %v; want the opaque origin \"null\"", origin, err)
	}

	if err := win.ClickIn(ctx, view, "#b"); err != nil {
		t.Fatalf("ClickIn: %v", err)
	}
	waitIn(view, `document.getElementById("n").textContent`, "1")
	waitIn(proxy, `document.title`, "got 1")
	var act string
	if err := win.EvalIn(ctx, view, `document.getElementById("act").textContent`, &act); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: the view's click handler saw user activation: %s", browser.Name(), act)
	if act == "false" {
		t.Errorf("the click in the view had no user activation")
	}

	// A frame that is not there is an error, and the window is still
	// usable at its top afterwards (classic WebDriver switches back).
	var ignored any
	if err := win.EvalIn(ctx, []string{"#proxy", "#nothing"}, `1`, &ignored); err == nil {
		t.Errorf("EvalIn into a missing frame: no error")
	} else {
		t.Logf("EvalIn into a missing frame: %v", err)
	}
	var js *engine.JSError
	if err := win.EvalIn(ctx, view, `Promise.reject(new Error("boom"))`, &ignored); err == nil || !errors.As(err, &js) {
		t.Errorf("EvalIn of a rejection = %v; want a JSError", err)
	}
	if err := win.Eval(ctx, `location.origin`, &origin); err != nil || origin != originA.URL {
		t.Errorf("Eval(location.origin) after the frames = %q, %v; want %q", origin, err, originA.URL)
	}
}
