// Command idlebench measures what a catalog of many servers keeps open over
// a long session, with and without closing idle sessions
// (catalog.Config.IdleTimeout): open TCP connections and requests at the
// servers, and the client's Go heap. The servers run in a child process so
// that the heap is the client's alone.
//
//	go run ./cmd/idlebench -servers 20 -for 30m -idle 10m
//	go run ./cmd/idlebench -servers 20 -for 30m -idle 0   # never close (before)
//
// Every server is called once at the start (the model touched them all),
// then one of them every -every (the one in use); a line is printed per
// -sample.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/mcpclient"
)

func main() {
	serve := flag.Int("serve", 0, "internal: serve this many demo servers and their counters")
	n := flag.Int("servers", 20, "servers in the catalog")
	length := flag.Duration("for", 30*time.Minute, "how long the session lasts")
	idle := flag.Duration("idle", catalog.DefaultIdleTimeout, "the catalog's IdleTimeout; 0 never closes")
	every := flag.Duration("every", 2*time.Minute, "how often the server in use is called")
	sample := flag.Duration("sample", time.Minute, "how often a line is printed")
	flag.Parse()
	if *serve > 0 {
		serveDemos(*serve)
		return
	}
	if err := run(*n, *length, *idle, *every, *sample); err != nil {
		log.Fatal(err)
	}
}

// counters are what the servers report.
type counters struct {
	Conns    int64 `json:"conns"`    // open TCP connections
	Requests int64 `json:"requests"` // requests being answered (GET streams stay)
}

// serveDemos serves n demo MCP servers on loopback, prints their URLs and
// then a counters URL, and serves until stdin closes.
func serveDemos(n int) {
	var c counters
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			log.Fatal(err)
		}
		h := demo.Handler(demo.Options{})
		srv := &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				atomic.AddInt64(&c.Requests, 1)
				defer atomic.AddInt64(&c.Requests, -1)
				h.ServeHTTP(w, r)
			}),
			ConnState: func(_ net.Conn, s http.ConnState) {
				switch s {
				case http.StateNew:
					atomic.AddInt64(&c.Conns, 1)
				case http.StateClosed, http.StateHijacked:
					atomic.AddInt64(&c.Conns, -1)
				}
			},
		}
		go srv.Serve(l)
		fmt.Printf("server http://%s%s\n", l.Addr(), demo.StreamablePath)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(counters{Conns: atomic.LoadInt64(&c.Conns), Requests: atomic.LoadInt64(&c.Requests)})
	}))
	fmt.Printf("counters http://%s/\n", l.Addr())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

func run(n int, length, idle, every, sample time.Duration) error {
	child := exec.Command(os.Args[0], "-serve", fmt.Sprint(n))
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		return err
	}
	defer stdin.Close()
	out, err := child.StdoutPipe()
	if err != nil {
		return err
	}
	if err := child.Start(); err != nil {
		return err
	}
	defer child.Process.Kill()
	servers := map[string]catalog.ServerConfig{}
	var countersURL string
	sc := bufio.NewScanner(out)
	for countersURL == "" && sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "server":
			servers[fmt.Sprintf("s%02d", len(servers))] = catalog.ServerConfig{URL: f[1]}
		case len(f) == 2 && f[0] == "counters":
			countersURL = f[1]
		}
	}
	if countersURL == "" {
		return fmt.Errorf("the servers did not start")
	}
	timeout := idle
	if idle == 0 {
		timeout = -1
	}
	cat, err := catalog.New(catalog.Config{
		Servers:     servers,
		MaxServers:  n,
		IdleTimeout: timeout,
		Factory: func(id string, sc catalog.ServerConfig, events func(mcpclient.Event)) (catalog.Server, error) {
			c, err := mcpclient.New(sc.URL, mcpclient.Options{OnEvent: events, HTTPClient: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}})
			if err != nil {
				return nil, err
			}
			return catalog.FromClient(c, mcpclient.ConnectOptions{}), nil
		},
	})
	if err != nil {
		return err
	}
	defer cat.Close()
	ctx := context.Background()
	call := func(id string) error {
		r, err := cat.ModelCall(ctx, id+"_echo", `{"text":"hi"}`, catalog.CallOptions{})
		if err == nil && r.Text != "hi" {
			err = fmt.Errorf("%s_echo answered %q", id, r.Text)
		}
		return err
	}
	if _, err := cat.Tools(ctx); err != nil {
		return err
	}
	for id := range servers {
		if err := call(id); err != nil {
			return err
		}
	}
	fmt.Printf("%d servers, idle timeout %v, the session %v, s00 called every %v\n", n, idle, length, every)
	fmt.Println("minute\tconnections\trequests open\tidle servers\tclient heap (KiB)")
	start := time.Now()
	nextCall, nextSample := start.Add(every), start
	for now := start; now.Sub(start) <= length; now = time.Now() {
		if !now.Before(nextCall) {
			if err := call("s00"); err != nil {
				return err
			}
			nextCall = nextCall.Add(every)
		}
		if !now.Before(nextSample) {
			c, err := readCounters(countersURL)
			if err != nil {
				return err
			}
			idleN := 0
			for _, st := range cat.Statuses() {
				if st.Idle {
					idleN++
				}
			}
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			fmt.Printf("%.0f\t%d\t%d\t%d\t%d\n", now.Sub(start).Minutes(), c.Conns, c.Requests, idleN, m.HeapInuse/1024)
			nextSample = nextSample.Add(sample)
		}
		time.Sleep(time.Second)
	}
	return nil
}

func readCounters(url string) (counters, error) {
	var c counters
	resp, err := http.Get(url)
	if err != nil {
		return c, err
	}
	defer resp.Body.Close()
	return c, json.NewDecoder(resp.Body).Decode(&c)
}
