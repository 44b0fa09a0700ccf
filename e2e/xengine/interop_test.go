package xengine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// startNode runs a script of e2e/node (its packages pinned in package.json)
// and returns the ports it prints as "<NAME> <port>" lines, once every name
// in want has been printed.
func startNode(t *testing.T, want []string, args ...string) map[string]string {
	t.Helper()
	dir := filepath.Join(repo, "e2e", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol")); err != nil {
		t.Fatalf("the pinned MCP servers are not installed in %s: run scripts/install-deps.sh (make deps)", dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errOut, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node: %v", err)
	}
	// What the server said is shown when the scenario fails: its own
	// view of the sessions and requests the page's trace cannot see.
	said := &nodeTail{start: time.Now()}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node %s, its last lines:\n%s", strings.Join(args, " "), said)
		}
	})
	go said.read("stderr: ", errOut)
	ports := make(chan map[string]string, 1)
	go func() {
		got := map[string]string{}
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			said.add("", sc.Text())
			if got == nil {
				continue
			}
			if name, port, ok := strings.Cut(sc.Text(), " "); ok {
				got[name] = port
			}
			done := true
			for _, w := range want {
				done = done && got[w] != ""
			}
			if done {
				ports <- got
				got = nil
			}
		}
	}()
	select {
	case p := <-ports:
		return p
	case <-time.After(30 * time.Second):
		t.Fatalf("node %s did not start within 30s", strings.Join(args, " "))
	}
	return nil
}

// nodeTail keeps the last lines a node server printed, each with the time
// since it started.
type nodeTail struct {
	start time.Time
	mu    sync.Mutex
	lines []string
}

const nodeTailLines = 60

func (n *nodeTail) add(prefix, line string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, fmt.Sprintf("%6.2fs %s%s", time.Since(n.start).Seconds(), prefix, line))
	if len(n.lines) > nodeTailLines {
		n.lines = n.lines[len(n.lines)-nodeTailLines:]
	}
}

func (n *nodeTail) read(prefix string, r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		n.add(prefix, sc.Text())
	}
}

func (n *nodeTail) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return "        " + strings.Join(n.lines, "\n        ")
}

// startEverything runs the pinned @modelcontextprotocol/server-everything
// (e2e/node) in Streamable HTTP mode on loopback and returns its MCP URL.
func startEverything(t *testing.T) string {
	t.Helper()
	p := startNode(t, []string{"LISTENING"}, "run-everything.mjs", "streamableHttp")
	return "http://127.0.0.1:" + p["LISTENING"] + "/mcp"
}

// interopInGoCore is why an interop test runs in one runtime pass of
// each engine: servers of other authors differ in protocol, which the Go
// core handles the same in every runtime; the engine's fetch, CORS and
// streams differ, so each engine runs them.
const interopInGoCore = "servers of other authors differ in protocol, handled by the Go core the same in every runtime"

// TestInteropServerEverything talks to a server nobody here wrote: the
// reference TypeScript server, over its own CORS.
func TestInteropServerEverything(t *testing.T) {
	if runtimeMode() != "auto" {
		t.Skipf("runs in each engine's auto pass (this is %s): %s", runtimeMode(), interopInGoCore)
	}
	url := startEverything(t)
	e := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Server   string   `json:"server"`
		Version  string   `json:"version"`
		Tools    []string `json:"tools"`
		Echo     string   `json:"echo"`
		URI      string   `json:"uri"`
		Contents int      `json:"contents"`
		Text     string   `json:"text"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		const tools = (await c.listTools()).map((t) => t.name);
		const echo = await c.callTool("echo", { message: "hello from wasm" });
		const res = await c.listResources();
		const read = await c.readResource(res[0].uri);
		await c.close();
		return { server: c.serverInfo.name, version: c.protocolVersion, tools, echo: echo.content[0].text,
			uri: res[0].uri, contents: read.contents.length, text: read.contents[0].text ?? read.contents[0].blob ?? "" };
	})()`, url), &got)
	t.Logf("server-everything: %s, protocol %s, %d tools", got.Server, got.Version, len(got.Tools))
	if len(got.Tools) < 5 {
		t.Errorf("tools = %v; want the everything server's tool list", got.Tools)
	}
	if !strings.Contains(got.Echo, "hello from wasm") {
		t.Errorf("echo = %q", got.Echo)
	}
	if got.Contents < 1 || got.Text == "" {
		t.Errorf("readResource(%s): %d contents, text %q", got.URI, got.Contents, got.Text)
	}
}

// interopServer is one row of the interop matrix: a server from another
// author over one transport, and what to ask it.
type interopServer struct {
	name  string
	start func(t *testing.T) (mcpURL, statsURL string)
	sse   bool // the URL is a legacy HTTP+SSE endpoint

	tools      []string        // some of the tools it lists
	structured [2]string       // tool and arguments (JSON) of a call with structured output
	structKey  string          // a key of that structuredContent
	progress   [2]string       // a call that reports progress (3 steps) before its result
	long       [2]string       // a call with progress that runs long (aborted at its first progress)
	slow       [2]string       // a call that runs long without progress (timed out)
	fail       [2]string       // a call whose result has isError: true
	endSeen    string          // the /stats counter that counts requests the server saw end
	resource   string          // a static resource URI ("" = the first listed)
	template   [2]string       // a template it lists, and a URI it expands to
	prompt     [3]string       // a prompt, its arguments (JSON) and text its first message holds
	caps       map[string]bool // capability paths it declares ("tools.listChanged")
}

func v1Row(name string, sse, python bool) interopServer {
	return interopServer{
		name: name,
		sse:  sse,
		start: func(t *testing.T) (string, string) {
			args := []string{"interop-v1.mjs"}
			if python {
				args = append(args, "--python")
			}
			base := "http://127.0.0.1:" + startNode(t, []string{"LISTENING"}, args...)["LISTENING"]
			if sse {
				return base + "/sse", base + "/stats"
			}
			return base + "/mcp", base + "/stats"
		},
		tools:      []string{"add", "count", "fail", "slow"},
		structured: [2]string{"add", `{"a": 2, "b": 3}`},
		structKey:  "sum",
		progress:   [2]string{"count", `{"n": 3}`},
		long:       [2]string{"count", `{"n": 40, "delayMs": 500}`},
		slow:       [2]string{"slow", `{"ms": 30000}`},
		fail:       [2]string{"fail", `{}`},
		endSeen:    "ended",
		resource:   "greeting://hello",
		template:   [2]string{"users://{id}/profile", "users://7/profile"},
		prompt:     [3]string{"greet", `{"name": "Ada"}`, "Ada"},
		caps:       map[string]bool{"tools.listChanged": true, "resources.listChanged": true, "prompts.listChanged": true},
	}
}

func everythingRow(name, transport string) interopServer {
	return interopServer{
		name: name,
		sse:  transport == "sse",
		start: func(t *testing.T) (string, string) {
			p := startNode(t, []string{"LISTENING", "STATS"}, "run-everything.mjs", transport)
			path := "/mcp"
			if transport == "sse" {
				path = "/sse"
			}
			return "http://127.0.0.1:" + p["LISTENING"] + path, "http://127.0.0.1:" + p["STATS"] + "/"
		},
		tools:      []string{"echo", "get-structured-content", "trigger-long-running-operation"},
		structured: [2]string{"get-structured-content", `{"location": "Chicago"}`},
		structKey:  "temperature",
		progress:   [2]string{"trigger-long-running-operation", `{"duration": 0.3, "steps": 3}`},
		long:       [2]string{"trigger-long-running-operation", `{"duration": 30, "steps": 30}`},
		slow:       [2]string{"trigger-long-running-operation", `{"duration": 30, "steps": 1}`},
		fail:       [2]string{"echo", `{}`},
		endSeen:    "cancelled",
		template:   [2]string{"demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/text/1"},
		prompt:     [3]string{"args-prompt", `{"city": "Oslo"}`, "Oslo"},
		caps:       map[string]bool{"tools.listChanged": true, "resources.subscribe": true, "resources.listChanged": true},
	}
}

var interopServers = []interopServer{
	func() interopServer {
		r := v1Row("sdk-v2/streamable", false, false)
		r.start = func(t *testing.T) (string, string) {
			base := "http://127.0.0.1:" + startNode(t, []string{"LISTENING"}, "interop-v2.mjs")["LISTENING"]
			return base + "/mcp", base + "/stats"
		}
		return r
	}(),
	func() interopServer {
		r := v1Row("sdk-v2-strict-notifications/streamable", false, false)
		r.start = func(t *testing.T) (string, string) {
			base := "http://127.0.0.1:" + startNode(t, []string{"LISTENING"}, "interop-v2.mjs", "--strict-notifications")["LISTENING"]
			return base + "/mcp", base + "/stats"
		}
		return r
	}(),
	v1Row("sdk-v1/streamable", false, false),
	v1Row("sdk-v1/sse", true, false),
	v1Row("sdk-v1-python-sessions/streamable", false, true),
	everythingRow("everything/streamable", "streamableHttp"),
	everythingRow("everything/sse", "sse"),
}

// interopChecks are the matrix's columns, in order; they share one client.
var interopChecks = []string{"connect", "capabilities", "list", "structured", "progress", "error tool",
	"abort", "after abort", "timeout", "resource", "unknown resource", "template", "prompt", "ping", "close", "no session left"}

// TestInterop runs the interop matrix: servers written by others (the
// TypeScript SDK v2 server on protocol 2026-07-28, the v1 SDK server, the
// reference server-everything), each over its transports, through
// transport "auto" as a new user would, in each engine. The matrix is logged
// as a table.
func TestInterop(t *testing.T) {
	if runtimeMode() != "main" {
		t.Skipf("runs in each engine's main pass (this is %s): %s", runtimeMode(), interopInGoCore)
	}
	results := map[string]map[string]string{}
	for _, s := range interopServers {
		res := map[string]string{}
		results[s.name] = res
		t.Run(strings.ReplaceAll(s.name, "/", "_"), func(t *testing.T) {
			mcpURL, statsURL := s.start(t)
			e := newWorld(t, devserver.AuthConfig{})
			for _, check := range interopChecks {
				err := runInteropCheck(e, s, check, mcpURL, statsURL)
				if err != nil {
					res[check] = "FAIL: " + err.Error()
					t.Errorf("%s: %s: %v", s.name, check, err)
				} else if res[check] == "" {
					res[check] = "pass"
				}
				if check == "connect" && err != nil {
					break
				}
			}
		})
	}
	var b strings.Builder
	b.WriteString("\n| check |")
	for _, s := range interopServers {
		b.WriteString(" " + s.name + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(interopServers)) + "\n")
	for _, c := range interopChecks {
		b.WriteString("| " + c + " |")
		for _, s := range interopServers {
			v := results[s.name][c]
			if v == "" {
				v = "—"
			}
			b.WriteString(" " + strings.ReplaceAll(v, "|", "/") + " |")
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}

// interopResult is what a check's JavaScript returns.
type interopResult struct {
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		RPCCode *int64 `json:"rpcCode"`
		Status  int    `json:"status"`
	} `json:"error"`
	Value json.RawMessage `json:"value"`
}

// js runs body (an async function body using window.c) and returns its
// value, or the MCPError it threw.
func interopJS(e *world, body string) (json.RawMessage, error) {
	var r interopResult
	err := e.win.Eval(e.ctx, `(async () => { try { return { value: await (async () => { `+body+` })() }; } catch (e) {
		return { error: { code: e.code ?? e.name, message: e.message, rpcCode: e.rpcCode, status: e.status } }; } })()`, &r)
	if err != nil {
		return nil, err
	}
	if r.Error != nil {
		msg := fmt.Sprintf("rejected %s: %s", r.Error.Code, r.Error.Message)
		if r.Error.RPCCode != nil {
			msg += fmt.Sprintf(" (rpcCode %d)", *r.Error.RPCCode)
		}
		if r.Error.Status != 0 {
			msg += fmt.Sprintf(" (HTTP %d)", r.Error.Status)
		}
		return nil, &jsRejection{code: r.Error.Code, rpcCode: r.Error.RPCCode, msg: msg}
	}
	return r.Value, nil
}

type jsRejection struct {
	code    string
	rpcCode *int64
	msg     string
}

func (r *jsRejection) Error() string { return r.msg }

// serverStats reads the server's counters.
func serverStats(statsURL string) (map[string]float64, error) {
	resp, err := http.Get(statsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

// awaitStats polls the server's counters until ok holds (or 15 s pass:
// the check then fails with the counters it saw).
func awaitStats(statsURL string, ok func(map[string]float64) bool) (map[string]float64, bool) {
	var m map[string]float64
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var err error
		if m, err = serverStats(statsURL); err == nil && ok(m) {
			return m, true
		}
	}
	return m, false
}

func interopCall(tool [2]string, opts string) string {
	return fmt.Sprintf(`c.callTool(%q, %s, %s)`, tool[0], tool[1], opts)
}

func runInteropCheck(e *world, s interopServer, check, mcpURL, statsURL string) error {
	switch check {
	case "connect":
		v, err := interopJS(e, fmt.Sprintf(`window.c = mcp.client(%q); await c.connect();
			return { state: c.state, version: c.protocolVersion, server: c.serverInfo?.name };`, mcpURL))
		if err != nil {
			return err
		}
		var got struct{ State, Version, Server string }
		_ = json.Unmarshal(v, &got)
		if got.State != "connected" {
			return fmt.Errorf("state %q after connect", got.State)
		}
		e.t.Logf("%s: %s, protocol %s", s.name, got.Server, got.Version)
		return nil
	case "capabilities":
		v, err := interopJS(e, `return c.capabilities;`)
		if err != nil {
			return err
		}
		var caps map[string]map[string]any
		_ = json.Unmarshal(v, &caps)
		var missing []string
		for path := range s.caps {
			group, field, _ := strings.Cut(path, ".")
			if caps[group][field] != true {
				missing = append(missing, path)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			return fmt.Errorf("client.capabilities = %s; lacks %s, which the server declares", v, strings.Join(missing, ", "))
		}
		return nil
	case "list":
		v, err := interopJS(e, `return (await c.listTools()).map((t) => t.name);`)
		if err != nil {
			return err
		}
		var names []string
		_ = json.Unmarshal(v, &names)
		for _, want := range s.tools {
			if !strings.Contains(","+strings.Join(names, ",")+",", ","+want+",") {
				return fmt.Errorf("listTools = %v; lacks %s", names, want)
			}
		}
		return nil
	case "structured":
		v, err := interopJS(e, `const r = await `+interopCall(s.structured, "{}")+`; return r.structuredContent ?? null;`)
		if err != nil {
			return err
		}
		var sc map[string]any
		_ = json.Unmarshal(v, &sc)
		if _, ok := sc[s.structKey]; !ok {
			return fmt.Errorf("structuredContent = %s; want a %q", v, s.structKey)
		}
		return nil
	case "progress":
		v, err := interopJS(e, `const ev = []; const r = await `+interopCall(s.progress, `{ onProgress: (p) => ev.push(p) }`)+`;
			return { atResult: ev.length, ev, isError: r.isError ?? false };`)
		if err != nil {
			return err
		}
		var got struct {
			AtResult int              `json:"atResult"`
			Ev       []map[string]any `json:"ev"`
		}
		_ = json.Unmarshal(v, &got)
		if got.AtResult != 3 {
			return fmt.Errorf("%d progress events before the result; want 3", got.AtResult)
		}
		for _, p := range got.Ev {
			if _, ok := p["progressToken"]; ok {
				return fmt.Errorf("progress event %v carries progressToken, which mcp.d.ts does not declare", p)
			}
		}
		return nil
	case "error tool":
		v, err := interopJS(e, `const r = await `+interopCall(s.fail, "{}")+`; return r.isError ?? false;`)
		if err != nil {
			return err
		}
		if string(v) != "true" {
			return fmt.Errorf("isError = %s; want true", v)
		}
		return nil
	case "abort":
		before, err := serverStats(statsURL)
		if err != nil {
			return err
		}
		_, err = interopJS(e, `const ac = new AbortController();
			await `+interopCall(s.long, `{ signal: ac.signal, onProgress: () => ac.abort() }`)+`; return "resolved";`)
		if r, ok := err.(*jsRejection); !ok || r.code != "aborted" {
			return fmt.Errorf("the aborted call: %v; want rejected aborted", err)
		}
		m, ok := awaitStats(statsURL, func(m map[string]float64) bool { return m[s.endSeen] > before[s.endSeen] })
		if !ok {
			return fmt.Errorf("the server did not see the request end (%s: %v before, %v after)", s.endSeen, before[s.endSeen], m[s.endSeen])
		}
		v, _ := interopJS(e, `return c.protocolVersion;`)
		if string(v) >= `"2026-07-28"` && m["cancelled"] != before["cancelled"] {
			return fmt.Errorf("on protocol %s the client sent notifications/cancelled, which that version does not define over Streamable HTTP", v)
		}
		return nil
	case "after abort", "ping":
		body := `await ` + interopCall(s.structured, "{}") + `; return c.state;`
		if check == "ping" {
			body = `await c.ping(); return c.state;`
		}
		v, err := interopJS(e, body)
		if err != nil {
			st, _ := interopJS(e, `return c.state;`)
			return fmt.Errorf("%v (client state %s)", err, st)
		}
		if string(v) != `"connected"` {
			return fmt.Errorf("state %s; want connected", v)
		}
		return nil
	case "timeout":
		_, err := interopJS(e, `await `+interopCall(s.slow, `{ timeoutMs: 300 }`)+`; return "resolved";`)
		if r, ok := err.(*jsRejection); !ok || r.code != "timeout" {
			return fmt.Errorf("the call with timeoutMs 300: %v; want rejected timeout", err)
		}
		v, err := interopJS(e, `await `+interopCall(s.structured, "{}")+`; return c.state;`)
		if err != nil || string(v) != `"connected"` {
			return fmt.Errorf("the next call: %v, state %s", err, v)
		}
		return nil
	case "resource":
		v, err := interopJS(e, fmt.Sprintf(`const list = await c.listResources(); const uri = %q || list[0].uri;
			if (!list.some((r) => r.uri === uri)) throw new Error(uri + " not listed");
			const r = await c.readResource(uri);
			return { keys: Object.keys(r), text: r.contents[0].text ?? r.contents[0].blob ?? "", cacheScope: r.cacheScope ?? null, ttlMs: r.ttlMs ?? null };`, s.resource))
		if err != nil {
			return err
		}
		var got struct {
			Keys       []string `json:"keys"`
			Text       string   `json:"text"`
			CacheScope *string  `json:"cacheScope"`
			TTL        *float64 `json:"ttlMs"`
		}
		_ = json.Unmarshal(v, &got)
		switch {
		case got.Text == "":
			return fmt.Errorf("readResource: no contents (%s)", v)
		case got.CacheScope != nil && *got.CacheScope == "":
			return fmt.Errorf(`readResource result has cacheScope: "" (keys %v), which no server sends`, got.Keys)
		case got.TTL != nil && got.CacheScope == nil:
			return fmt.Errorf("readResource result has ttlMs %v without a cacheScope (keys %v): invented", *got.TTL, got.Keys)
		}
		return nil
	case "unknown resource":
		_, err := interopJS(e, `await c.readResource("nope://missing"); return "resolved";`)
		r, ok := err.(*jsRejection)
		if !ok {
			return fmt.Errorf("reading an unknown resource: %v; want a rejection", err)
		}
		want := "protocol"
		if r.rpcCode != nil && *r.rpcCode == -32602 {
			want = "invalid_argument"
		}
		if r.rpcCode == nil || r.code != want {
			return fmt.Errorf("%s; want the server's JSON-RPC error (rpcCode) as %s", r.msg, want)
		}
		e.t.Logf("%s: unknown resource: %s", s.name, r.msg)
		return nil
	case "template":
		v, err := interopJS(e, fmt.Sprintf(`const list = await c.listResourceTemplates();
			if (!list.some((t) => t.uriTemplate === %q)) throw new Error("template not listed: " + JSON.stringify(list.map((t) => t.uriTemplate)));
			const r = await c.readResource(%q); return r.contents.length;`, s.template[0], s.template[1]))
		if err != nil {
			return err
		}
		if string(v) == "0" {
			return fmt.Errorf("no contents for %s", s.template[1])
		}
		return nil
	case "prompt":
		v, err := interopJS(e, fmt.Sprintf(`const list = await c.listPrompts();
			if (!list.some((p) => p.name === %q)) throw new Error("prompt not listed");
			const r = await c.getPrompt(%q, %s); return r.messages[0].content.text;`, s.prompt[0], s.prompt[0], s.prompt[1]))
		if err != nil {
			return err
		}
		if !strings.Contains(string(v), s.prompt[2]) {
			return fmt.Errorf("prompt text %s; want it to name %s", v, s.prompt[2])
		}
		return nil
	case "close":
		v, err := interopJS(e, `await c.close(); return c.state;`)
		if err != nil {
			return err
		}
		if string(v) != `"closed"` {
			return fmt.Errorf("state %s after close", v)
		}
		return nil
	case "no session left":
		m, ok := awaitStats(statsURL, func(m map[string]float64) bool { return m["sessions"] == 0 && m["orphans"] == 0 })
		if !ok {
			return fmt.Errorf("after close the server still holds %v sessions and %v orphaned probe sessions", m["sessions"], m["orphans"])
		}
		if s.sse && m["ssePosts"] > 1 {
			return fmt.Errorf("transport auto POSTed %v times to the SSE URL before falling back", m["ssePosts"])
		}
		return nil
	}
	return fmt.Errorf("unknown check %q", check)
}
