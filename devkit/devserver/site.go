package devserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/mcpwasm/mcpwasm/devkit/webserve"
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

// PageFrameSrc is the frame-src directive of the demo page's
// Content-Security-Policy as web/demo/index.html has it: the page frames
// nothing. The dev server, serving the page with a sandbox origin, puts
// that origin in its place ([FramingSandbox]): the page may then frame the
// MCP Apps sandbox proxy and nothing else.
const PageFrameSrc = "frame-src 'none'"

// sandboxOrigin is an http(s) origin as a CSP source: scheme, host and
// port only, nothing a policy would read as another source or directive.
var sandboxOrigin = regexp.MustCompile(`^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$`)

// FramingSandbox returns site with the [PageFrameSrc] of its index.html
// (the demo page at the root) replaced by "frame-src <origin>", the origin
// of sandboxURL: the only widening of the page's policy, to exactly the
// sandbox proxy's origin, whatever port it got. It is an error for
// sandboxURL not to be an http(s) URL with a plain host. The page's
// precompressed siblings (index.html.br, .gz) are hidden so that they
// cannot be served instead.
func FramingSandbox(site fs.FS, sandboxURL string) (fs.FS, error) {
	u, err := url.Parse(sandboxURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("devserver: the sandbox URL %q is not an http(s) URL", sandboxURL)
	}
	origin := u.Scheme + "://" + u.Host
	if !sandboxOrigin.MatchString(origin) {
		return nil, fmt.Errorf("devserver: the sandbox URL %q has a host that cannot be a Content-Security-Policy source", sandboxURL)
	}
	return framing{FS: site, directive: []byte("frame-src " + origin)}, nil
}

// framing is [FramingSandbox]'s file system.
type framing struct {
	fs.FS
	directive []byte
}

func (f framing) Open(name string) (fs.File, error) {
	switch name {
	case "index.html.br", "index.html.gz":
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case "index.html":
	default:
		return f.FS.Open(name)
	}
	file, err := f.FS.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return f.FS.Open(name)
	}
	b, err := io.ReadAll(file)
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, []byte(PageFrameSrc), f.directive)
	return &memFile{Reader: bytes.NewReader(b), info: sized{fi, int64(len(b))}}, nil
}

// memFile is a file's rewritten content: a ReadSeeker, so that webserve
// serves it with ranges and ETags as any other file.
type memFile struct {
	*bytes.Reader
	info fs.FileInfo
}

func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }
func (m *memFile) Close() error               { return nil }

// sized is a file's info with the size of its rewritten content.
type sized struct {
	fs.FileInfo
	size int64
}

func (s sized) Size() int64 { return s.size }

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
