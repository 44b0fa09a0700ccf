package webserve_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing/fstest"

	"github.com/mcpwasm/mcpwasm/devkit/webserve"
)

func ExampleHandler() {
	web := fstest.MapFS{
		"index.html":  {Data: []byte("<!doctype html>")},
		"mcp.wasm":    {Data: []byte("\x00asm\x01\x00\x00\x00")},
		"mcp.wasm.br": {Data: []byte("(brotli bytes)")},
	}
	srv := httptest.NewServer(webserve.Handler(web))
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/mcp.wasm", nil)
	req.Header.Set("Accept-Encoding", "gzip, br")
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"), resp.Header.Get("Cache-Control"))
	// Output: application/wasm br no-cache
}
