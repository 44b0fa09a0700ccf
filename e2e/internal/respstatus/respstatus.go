// Package respstatus lets a test's handler wrapper learn the status a
// response was answered with, event streams and upgrades included.
package respstatus

import (
	"bufio"
	"net"
	"net/http"
)

// Writer passes everything on to ResponseWriter and keeps the status the
// handler answered with (0 until it wrote anything).
type Writer struct {
	http.ResponseWriter
	Status int
}

func (w *Writer) WriteHeader(code int) {
	if w.Status == 0 {
		w.Status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *Writer) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes a flush on: event streams need it.
func (w *Writer) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *Writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }
