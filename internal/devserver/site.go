package devserver

import (
	"errors"
	"io/fs"
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
