// Command devserver serves the demo page, the MCP Apps sandbox proxy
// (web/apps/) and, in demo mode, the demo MCP server and its OAuth
// authorization server, each on its own loopback origin.
//
//	go run ./cmd/devserver [-addr 127.0.0.1:8080] [-web web] [-demo=true] [-mcp-addr 127.0.0.1:8081]
//	    [-auth=true] [-as-addr 127.0.0.1:8082] [-mcp2-addr 127.0.0.1:8083] [-model-addr 127.0.0.1:8084]
//	    [-sandbox-addr 127.0.0.1:8085] [-coop] [-hide-www-authenticate] [-scoped-tool add] [-token-ttl 1h] [-dpop]
//	    [-relay] [-relay-targets https://a.example,https://b.example] [-no-cors]
//
// The page origin serves the web directory (application/wasm, precompressed
// .br/.gz variants, revalidated with ETags). The demo MCP server answers
// Streamable HTTP at /mcp and the legacy HTTP+SSE transport at /sse, with
// CORS for the page. Both listen on loopback only unless -allow-remote is
// given. With -relay the page origin also serves a relay (package relay)
// at /mcp-relay, for its own pages, to the demo servers and the origins of
// -relay-targets; -no-cors makes the demo MCP server and authorization
// server send no CORS headers, as the servers a relay is for. SIGINT or
// SIGTERM shuts down gracefully.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "devserver:", err)
		}
		os.Exit(2)
	}
}

// run parses args, starts the servers, prints their URLs to stdout and
// serves until ctx is done or a signal arrives.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("devserver", flag.ContinueOnError)
	fl.SetOutput(stderr)
	addr := fl.String("addr", "127.0.0.1:8080", "listen address of the page origin")
	web := fl.String("web", "web", "directory to serve at the page origin")
	demoMode := fl.Bool("demo", true, "also run the demo MCP server on -mcp-addr")
	mcpAddr := fl.String("mcp-addr", "127.0.0.1:8081", "listen address of the demo MCP server")
	authOn := fl.Bool("auth", true, "protect the demo MCP server with the demo OAuth authorization server on -as-addr")
	asAddr := fl.String("as-addr", "127.0.0.1:8082", "listen address of the demo authorization server")
	mcp2Addr := fl.String("mcp2-addr", "127.0.0.1:8083", "listen address of the second demo MCP server (no sign-in); empty: none")
	modelAddr := fl.String("model-addr", "127.0.0.1:8084", "listen address of the scripted stand-in model (OpenAI-compatible); empty: none")
	sandboxAddr := fl.String("sandbox-addr", "127.0.0.1:8085", "listen address of the MCP Apps sandbox proxy's origin (the files of web/apps/; must differ from the page's); empty: none")
	coop := fl.Bool("coop", false, "test switch: the authorization server's pages send Cross-Origin-Opener-Policy (severs window.opener)")
	hideWWW := fl.Bool("hide-www-authenticate", false, "test switch: do not expose WWW-Authenticate to the page through CORS")
	scopedTool := fl.String("scoped-tool", "", "test switch: this tool needs the extra scope mcp:admin (403 insufficient_scope, step-up)")
	dpopOn := fl.Bool("dpop", false, "DPoP (RFC 9449): the authorization server issues DPoP-bound tokens only and the MCP server takes them only with proofs, both with nonces")
	tokenTTL := fl.Duration("token-ttl", time.Hour, "access-token lifetime at the demo authorization server")
	relayOn := fl.Bool("relay", false, "serve a relay at /mcp-relay on the page origin, for its pages, to the demo servers and -relay-targets")
	relayTargets := fl.String("relay-targets", "", "comma-separated origins the relay may forward to besides the demo servers'")
	noCORS := fl.Bool("no-cors", false, "test switch: the demo MCP server and authorization server send no CORS headers")
	allowRemote := fl.Bool("allow-remote", false, "allow listen addresses that are not loopback")
	verbose := fl.Bool("v", false, "log MCP server activity to stderr")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fl.Args())
	}

	dir, err := filepath.Abs(*web)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("web directory %s not found (run from the repository root or pass -web)", dir)
	}
	if err := checkBuilt(dir); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "demo", "index.html")); err != nil {
		fmt.Fprintf(stderr, "devserver: warning: %s has no demo/index.html yet\n", dir)
	}

	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := devserver.Config{
		Web:         os.DirFS(dir),
		WebAddr:     *addr,
		Demo:        *demoMode,
		MCPAddr:     *mcpAddr,
		MCP2Addr:    *mcp2Addr,
		ModelAddr:   *modelAddr,
		SandboxAddr: *sandboxAddr,
		AllowRemote: *allowRemote,
		Logger:      logger,
		Relay:       devserver.RelayConfig{Enabled: *relayOn, Targets: splitList(*relayTargets)},
		NoCORS:      *noCORS,
		Auth: devserver.AuthConfig{
			Enabled: *authOn, Addr: *asAddr, COOP: *coop, HideWWWAuthenticate: *hideWWW,
			ScopedTool: *scopedTool, TokenTTL: *tokenTTL, DPoP: *dpopOn,
		},
	}
	if *verbose {
		cfg.DemoOptions.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	r, err := devserver.Start(cfg)
	if err != nil {
		return err
	}

	fmt.Fprintf(stdout, "mcpwasm dev server\n")
	fmt.Fprintf(stdout, "  page:        %s   (serving %s)\n", r.PageURL, dir)
	if r.Page.MCPURL != "" {
		fmt.Fprintf(stdout, "  MCP server:  %s\n", r.Page.MCPURL)
		fmt.Fprintf(stdout, "  legacy SSE:  %s\n", r.Page.SSEURL)
	}
	if r.Page.ASURL != "" {
		fmt.Fprintf(stdout, "  OAuth:       %s   (authorization server; the MCP server needs a token)\n", r.Page.ASURL)
	}
	if r.Page.MCP2URL != "" {
		fmt.Fprintf(stdout, "  MCP server 2: %s   (no sign-in)\n", r.Page.MCP2URL)
	}
	if r.Page.ModelURL != "" {
		fmt.Fprintf(stdout, "  model:       %s   (scripted stand-in, OpenAI-compatible: not a real model)\n", r.Page.ModelURL)
	}
	if r.Page.RelayURL != "" {
		fmt.Fprintf(stdout, "  relay:       %s   (for this page's origin; client option relay)\n", r.Page.RelayURL)
	}
	if r.Page.SandboxURL != "" {
		fmt.Fprintf(stdout, "  sandbox:     %s   (MCP Apps sandbox proxy, web/apps/)\n", r.Page.SandboxURL)
	}
	fmt.Fprintf(stdout, "Press Ctrl+C to stop.\n")

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-r.Err():
	}
	stop()
	fmt.Fprintln(stdout, "shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return errors.Join(serveErr, r.Shutdown(shutCtx))
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// checkBuilt refuses a web directory whose mcp.js would fail to load: its
// import of wasmurl.js, which make build writes (a fresh clone has none),
// would end in a 404 the page's console reports with no hint of the cause.
func checkBuilt(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "mcp.js")); err != nil {
		return nil // not the library's web/: nothing imports wasmurl.js
	}
	for _, f := range []string{"wasmurl.js", "wasm_exec.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("%s has mcp.js but no %s, which mcp.js imports: run make build first (it writes mcp.wasm, mcp-<hash>.wasm, wasmurl.js and wasm_exec.js into web/)", dir, f)
		}
	}
	return nil
}
