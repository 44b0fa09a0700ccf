package devserver

import (
	"errors"
	"io/fs"
	"net/http"
	"strings"

	"github.com/mcpwasm/mcpwasm/internal/webserve"
)

// Site is what the page origin serves from a web directory laid out as in
// this repository: the demo page (web/demo/) at the root, over the files an
// embedder ships (web/: mcp.js, mcp.wasm, oauth/callback.html, …), which
// the demo page imports from beside it.
func Site(web fs.FS) fs.FS {
	demo, err := fs.Sub(web, "demo")
	if err != nil {
		return web
	}
	return overlay{top: demo, bottom: web}
}

// overlay opens a name in top, else in bottom.
type overlay struct{ top, bottom fs.FS }

func (o overlay) Open(name string) (fs.File, error) {
	f, err := o.top.Open(name)
	if err == nil {
		if fi, serr := f.Stat(); serr == nil && !fi.IsDir() {
			return f, nil
		}
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return o.bottom.Open(name)
}

// SandboxSite is what the "sandbox" origin serves from a web directory laid
// out as in this repository: the files of web/apps/ (the MCP Apps sandbox
// proxy, sandbox.html and sandbox.js) at its root, and nothing else of it.
func SandboxSite(web fs.FS) fs.FS {
	apps, err := fs.Sub(web, "apps")
	if err != nil {
		panic(err) // fs.Sub fails only on an invalid name
	}
	return apps
}

// SandboxHandler serves [SandboxSite] of web: GET and HEAD only (405
// otherwise), a file of apps/ at its own clean path only (404 for anything
// else: no directory, no index page, no other file of web/), with the
// content types, nosniff, no-cache and ETags of [webserve], Referrer-Policy:
// no-referrer, and no cookies.
//
// It sends no Content-Security-Policy and no X-Frame-Options (nor
// frame-ancestors): the page, on another origin, must be able to frame the
// proxy; and a CSP on sandbox.html would be inherited by the srcdoc iframe
// the proxy renders a server's view in, which gets its own CSP from a meta
// tag the proxy writes into it: an inherited policy would apply on top of
// that one and break views the view's own policy allows.
func SandboxHandler(web fs.FS) http.Handler {
	site := SandboxSite(web)
	files := webserve.Handler(site, webserve.WithHeader("Referrer-Policy", "no-referrer"))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			// A valid name has no "", "." or ".." element, so "/"+name is
			// clean: "/../x", "//x", "/x/" and "/" are all refused here.
			name, ok := strings.CutPrefix(r.URL.Path, "/")
			if !ok || name == "." || !fs.ValidPath(name) || !regular(site, name) {
				h := w.Header()
				h.Set("X-Content-Type-Options", "nosniff")
				h.Set("Referrer-Policy", "no-referrer")
				http.NotFound(w, r)
				return
			}
		}
		files.ServeHTTP(w, r) // 405 for other methods
	})
}

// regular reports whether name is a regular file of fsys.
func regular(fsys fs.FS, name string) bool {
	fi, err := fs.Stat(fsys, name)
	return err == nil && fi.Mode().IsRegular()
}
