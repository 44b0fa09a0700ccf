package webserve

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/hashname"
)

// An Option configures [Handler].
type Option func(*handler)

// WithHeader sets the response header key to value on every response the
// handler writes, for example a Content-Security-Policy for the demo page.
// It may be given several times.
func WithHeader(key, value string) Option {
	return func(h *handler) { h.extra = append(h.extra, [2]string{key, value}) }
}

// Handler returns an http.Handler that serves the files of fsys as described
// in the package documentation. Use [os.DirFS] for a directory on disk (files
// may change while serving; a changed file gets a new ETag) or an
// [embed.FS] (zero modification times are fine).
//
// The handler answers GET and HEAD; other methods get 405.
// It is safe for concurrent use.
func Handler(fsys fs.FS, opts ...Option) http.Handler {
	h := &handler{fsys: fsys, etags: make(map[string]etagEntry)}
	for _, o := range opts {
		o(h)
	}
	return h
}

type handler struct {
	fsys  fs.FS
	extra [][2]string

	mu    sync.Mutex
	etags map[string]etagEntry // file name → ETag of its current version

	hashes atomic.Int64 // number of hash computations, for tests
}

// etagEntry is the ETag of one version of one file, identified by
// modification time and size.
type etagEntry struct {
	modNano int64
	size    int64
	etag    string
	sum     []byte // SHA-256 of the bytes
}

// A precompressed encoding and the file-name suffix of its sibling.
type coding struct {
	token  string // Accept-Encoding / Content-Encoding token
	suffix string
}

// codings in order of preference when q-values tie.
var codings = []coding{{"br", ".br"}, {"gzip", ".gz"}}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	for _, kv := range h.extra {
		hdr.Set(kv[0], kv[1])
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}

	upath := r.URL.Path
	if !strings.HasPrefix(upath, "/") {
		upath = "/" + upath
	}
	clean := path.Clean(upath) // rooted: can never climb above "/"
	name := strings.TrimPrefix(clean, "/")
	if name == "" {
		name = "."
	}
	if hidden(name) || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	// A precompressed sibling is only ever a representation of its original;
	// asked for by its own name it would go out with the wrong type.
	for _, c := range codings {
		if base, ok := strings.CutSuffix(name, c.suffix); ok && base != "" {
			if fi, err := fs.Stat(h.fsys, base); err == nil && fi.Mode().IsRegular() {
				http.NotFound(w, r)
				return
			}
		}
	}

	fi, err := fs.Stat(h.fsys, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if fi.IsDir() {
		if !strings.HasSuffix(upath, "/") {
			// Relative links in index.html need the trailing slash. clean
			// is rooted and has no "//", so this stays on this origin.
			target := clean + "/"
			if q := r.URL.RawQuery; q != "" {
				target += "?" + q
			}
			hdr.Set("Location", target)
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		name = path.Join(name, "index.html")
		if fi, err = fs.Stat(h.fsys, name); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	if !fi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}

	ctype := contentType(name)
	hashed := h.contentNamed(name, fi)
	serve, enc := name, ""
	if c, ok := h.negotiate(r.Header.Get("Accept-Encoding"), name, fi); ok {
		serve, enc = name+c.suffix, c.token
		if sfi, err := fs.Stat(h.fsys, serve); hashed && (err != nil || !h.vouched(name, serve, sfi)) {
			// A sibling the build's manifest does not list may decode to
			// other bytes, which would be cached for a year under this
			// name: the original goes instead.
			serve, enc = name, ""
		}
	}

	f, err := h.fsys.Open(serve)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer f.Close()
	sfi, err := f.Stat()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	content, etag, err := h.etag(serve, f, sfi)
	if err != nil {
		h.fail(w, r, err)
		return
	}

	hdr.Add("Vary", "Accept-Encoding")
	hdr.Set("Content-Type", ctype)
	// Judged again on the bytes opened: a file replaced since the checks
	// above revalidates.
	if hashed && h.vouched(name, serve, sfi) {
		hdr.Set("Cache-Control", ImmutableCacheControl)
	} else {
		hdr.Set("Cache-Control", "no-cache")
	}
	hdr.Set("ETag", etag)
	if enc != "" {
		hdr.Set("Content-Encoding", enc)
		// The loader's download progress counts decoded bytes; the encoded
		// Content-Length would be the wrong total.
		hdr.Set(DecodedLengthHeader, strconv.FormatInt(fi.Size(), 10))
	}
	// ServeContent answers If-None-Match with 304 and no body, and handles
	// HEAD and Range.
	if enc != "" {
		// ServeContent leaves out Content-Length when Content-Encoding is
		// set; the loader needs it as the total for download progress.
		w = &lengthWriter{ResponseWriter: w, size: sfi.Size()}
	}
	http.ServeContent(w, r, name, sfi.ModTime(), content)
}

// ImmutableCacheControl is the Cache-Control of a file whose name carries
// its content hash: cached for a year and never revalidated, as another
// content gets another name.
const ImmutableCacheControl = "public, max-age=31536000, immutable"

// contentNamed reports whether the file name (described by fi) is named
// after its content (package hashname): its name's hex digits begin the
// SHA-256 of its bytes. A name that only looks hashed (a file replaced in
// place, a bundler's hash of something else) is not, and keeps
// revalidating.
func (h *handler) contentNamed(name string, fi fs.FileInfo) bool {
	if _, ok := hashname.Hash(path.Base(name)); !ok {
		return false
	}
	sum, ok := h.digest(name, fi)
	return ok && hashname.Matches(path.Base(name), sum)
}

// vouched reports whether serve, the file sent for the content-named
// name (described by sfi), is that content: name itself when its bytes
// match its hash; a precompressed sibling when the manifest beside name
// (hashname.ManifestName), which the build writes after checking that the
// sibling decodes to name's bytes, lists the sibling's SHA-256.
func (h *handler) vouched(name, serve string, sfi fs.FileInfo) bool {
	sum, ok := h.digest(serve, sfi)
	if !ok {
		return false
	}
	if serve == name {
		return hashname.Matches(path.Base(name), sum)
	}
	f, err := h.fsys.Open(hashname.ManifestName(name))
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, hashname.MaxManifest+1))
	if err != nil {
		return false
	}
	want, ok := hashname.ParseManifest(b)[path.Base(serve)]
	return ok && want == hex.EncodeToString(sum)
}

// digest returns the SHA-256 of the file name as described by fi, from
// the cache of ETags when it holds that version.
func (h *handler) digest(name string, fi fs.FileInfo) ([]byte, bool) {
	cached := func() ([]byte, bool) {
		h.mu.Lock()
		defer h.mu.Unlock()
		e, ok := h.etags[name]
		return e.sum, ok && e.modNano == fi.ModTime().UnixNano() && e.size == fi.Size()
	}
	if sum, ok := cached(); ok {
		return sum, true
	}
	f, err := h.fsys.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if _, _, err := h.etag(name, f, fi); err != nil {
		return nil, false
	}
	return cached()
}

// DecodedLengthHeader carries the size of the original file on a
// precompressed response, for download progress (web/mcp.js reads it).
const DecodedLengthHeader = "X-Decoded-Content-Length"

// lengthWriter sets Content-Length on a full 200 response that lacks one.
type lengthWriter struct {
	http.ResponseWriter
	size int64
}

func (lw *lengthWriter) WriteHeader(code int) {
	if h := lw.Header(); code == http.StatusOK && h.Get("Content-Length") == "" {
		h.Set("Content-Length", strconv.FormatInt(lw.size, 10))
	}
	lw.ResponseWriter.WriteHeader(code)
}

func (lw *lengthWriter) Write(b []byte) (int, error) {
	// ServeContent always calls WriteHeader first; this is for safety.
	return lw.ResponseWriter.Write(b)
}

func (lw *lengthWriter) Unwrap() http.ResponseWriter { return lw.ResponseWriter }

// fail answers a file-system error without revealing it.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrInvalid):
		http.NotFound(w, r)
	case errors.Is(err, fs.ErrPermission):
		http.Error(w, "403 forbidden", http.StatusForbidden)
	default:
		http.Error(w, "500 internal server error", http.StatusInternalServerError)
	}
}

// negotiate picks the precompressed sibling of name to serve for the given
// Accept-Encoding header, if any is acceptable, present and not stale.
func (h *handler) negotiate(accept, name string, orig fs.FileInfo) (coding, bool) {
	if strings.TrimSpace(accept) == "" {
		return coding{}, false
	}
	prefs := parseAcceptEncoding(accept)
	best, bestQ := coding{}, prefs.q("identity")
	found := false
	for _, c := range codings {
		q := prefs.q(c.token)
		if q <= 0 || (found && q <= bestQ) || (!found && q < bestQ) {
			// Compressed wins a tie with identity; an earlier coding wins a
			// tie with a later one.
			continue
		}
		sfi, err := fs.Stat(h.fsys, name+c.suffix)
		if err != nil || !sfi.Mode().IsRegular() || stale(sfi.ModTime(), orig.ModTime()) {
			continue
		}
		best, bestQ, found = c, q, true
	}
	return best, found
}

// stale reports whether a precompressed sibling modified at sib predates its
// original, modified at orig. Times are compared in whole seconds: the
// brotli and gzip tools copy the original's time to their output with the
// sub-second part dropped, which must not make a fresh sibling look stale.
func stale(sib, orig time.Time) bool {
	return sib.Unix() < orig.Unix()
}

// acceptEncoding is a parsed Accept-Encoding header (RFC 9110 §12.5.3).
type acceptEncoding struct {
	listed map[string]float64
	star   float64
	isStar bool
}

func parseAcceptEncoding(s string) acceptEncoding {
	a := acceptEncoding{listed: make(map[string]float64)}
	for part := range strings.SplitSeq(s, ",") {
		token, params, _ := strings.Cut(part, ";")
		token = strings.ToLower(strings.TrimSpace(token))
		if token == "" {
			continue
		}
		q := 1.0
		valid := true
		for p := range strings.SplitSeq(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || f < 0 || f > 1 {
				valid = false
				break
			}
			q = f
		}
		if !valid {
			continue // ignore malformed elements
		}
		if token == "x-gzip" {
			token = "gzip"
		}
		if token == "*" {
			a.star, a.isStar = q, true
			continue
		}
		a.listed[token] = q
	}
	return a
}

// implicitIdentity ranks identity when the header does not mention it.
const implicitIdentity = 0.0001

// q returns the quality the client assigns to coding token.
func (a acceptEncoding) q(token string) float64 {
	if q, ok := a.listed[token]; ok {
		return q
	}
	if a.isStar {
		return a.star
	}
	if token == "identity" {
		// Acceptable unless excluded (RFC 9110 §12.5.3), but below any
		// coding the client lists.
		return implicitIdentity
	}
	return 0
}

// etag returns the strong ETag of the open file f (named name, described by
// fi) and a seeker positioned at its start. The hash is computed once per
// version of the file.
func (h *handler) etag(name string, f fs.File, fi fs.FileInfo) (io.ReadSeeker, string, error) {
	mod := fi.ModTime().UnixNano()
	size := fi.Size()
	h.mu.Lock()
	e, ok := h.etags[name]
	h.mu.Unlock()
	rs, seekable := f.(io.ReadSeeker)
	if ok && e.modNano == mod && e.size == size {
		if seekable {
			return rs, e.etag, nil
		}
		b, err := io.ReadAll(f)
		return bytes.NewReader(b), e.etag, err
	}

	sum := sha256.New()
	if seekable {
		if _, err := io.Copy(sum, rs); err != nil {
			return nil, "", err
		}
		if _, err := rs.Seek(0, io.SeekStart); err != nil {
			return nil, "", err
		}
	} else {
		b, err := io.ReadAll(f)
		if err != nil {
			return nil, "", err
		}
		sum.Write(b)
		rs = bytes.NewReader(b)
	}
	h.hashes.Add(1)
	digest := sum.Sum(nil)
	tag := `"` + base64.RawURLEncoding.EncodeToString(digest[:18]) + `"`
	h.mu.Lock()
	h.etags[name] = etagEntry{modNano: mod, size: size, etag: tag, sum: digest}
	h.mu.Unlock()
	return rs, tag, nil
}

// hidden reports whether name has a path element starting with a dot, other
// than .well-known (RFC 8615).
func hidden(name string) bool {
	for elem := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(elem, ".") && elem != "." && elem != ".well-known" {
			return true
		}
	}
	return false
}

// types fixes the Content-Type of the files this project serves, whatever
// the host's MIME database says (.ts is video/mp2t in some of them).
var types = map[string]string{
	".html":        "text/html; charset=utf-8",
	".htm":         "text/html; charset=utf-8",
	".js":          "text/javascript; charset=utf-8",
	".mjs":         "text/javascript; charset=utf-8",
	".css":         "text/css; charset=utf-8",
	".json":        "application/json",
	".map":         "application/json",
	".webmanifest": "application/manifest+json",
	".wasm":        "application/wasm",
	".ts":          "text/plain; charset=utf-8",
	".txt":         "text/plain; charset=utf-8",
	".md":          "text/markdown; charset=utf-8",
	".svg":         "image/svg+xml",
	".png":         "image/png",
	".ico":         "image/x-icon",
	".woff2":       "font/woff2",
}

// contentType returns the Content-Type for a file name.
func contentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := types[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}
