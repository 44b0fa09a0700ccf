package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runNative runs the same session as the browser clients with a plain
// go-sdk client in this process: the floor.
func runNative(mcpURL string, srv *servers, cfg config) (session, error) {
	var s session
	ctx := context.Background()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-go", Version: "1.0.0"}, nil)
	connect := func() (*mcp.ClientSession, float64, map[string]int, error) {
		srv.MCP.reset()
		t0 := time.Now()
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: hc}, nil)
		if err != nil {
			return nil, 0, nil, err
		}
		ms := msSince(t0)
		time.Sleep(settle)
		return cs, ms, srv.MCP.snapshot(), nil
	}
	cs, ms, n, err := connect()
	if err != nil {
		return s, err
	}
	s.ConnectMs, s.ConnectN = ms, n
	cs.Close()
	cs, s.ReconnectMs, s.ReconnectN, err = connect()
	if err != nil {
		return s, err
	}
	defer cs.Close()
	call := func(i int) error {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprint("hello ", i)}})
		if err != nil {
			return err
		}
		if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != fmt.Sprint("hello ", i) {
			return fmt.Errorf("unexpected echo result %#v", r.Content[0])
		}
		return nil
	}
	for i := 0; i < cfg.warmCalls; i++ {
		if err := call(i); err != nil {
			return s, err
		}
	}
	s.Calls = make([]float64, cfg.calls)
	for i := range s.Calls {
		t0 := time.Now()
		if err := call(i); err != nil {
			return s, err
		}
		s.Calls[i] = msSince(t0)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	t0 := time.Now()
	for w := 0; w < cfg.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= cfg.concCalls {
					return
				}
				if err := call(i); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	s.ConcMs = msSince(t0)
	return s, firstErr
}

func msSince(t time.Time) float64 { return float64(time.Since(t)) / float64(time.Millisecond) }
