package xengine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestSyncErrorsMatchAcrossRuntimes: client() and catalog.add() throw the
// same invalid_argument errors, synchronously, whether Go runs on the main
// thread or in a worker, and they are Go's: the same input given to Go in
// wasm directly (the main thread's operations) is refused with the same
// sentence.
func TestSyncErrorsMatchAcrossRuntimes(t *testing.T) {
	withWorkers(t)
	w := blankWorld(t, devserver.AuthConfig{})
	w.loadRuntime(w.win, "onMain", "main")
	w.loadRuntime(w.win, "inWorker", "worker")
	bad := []string{
		`["not a url"]`,
		`["ftp://example.com/mcp"]`,
		`["http:///mcp"]`,
		`[URL, 5]`,
		`[URL, { colour: "blue" }]`,
		`[URL, { scopes: "a b" }]`,
		`[URL, { scopes: [1] }]`,
		`[URL, { headers: { "X-A": 1 } }]`,
		`[URL, { headers: { "bad name": "v" } }]`,
		`[URL, { headers: { "X-A": "caf\u00e9" } }]`,
		`[URL, { headers: { "Mcp-Session-Id": "x" } }]`,
		`[URL, { storage: "disk" }]`,
		`[URL, { authMode: "tab" }]`,
		`[URL, { transport: "ws" }]`,
		`[URL, { authTimeoutMs: 0 }]`,
		`[URL, { severedPopupTimeoutMs: -1 }]`,
		`[URL, { dpop: "yes" }]`,
		`[URL, { interactive: "yes" }]`,
		`[URL, { authMode: "redirect", storage: "memory" }]`,
		`[URL, { clientSecret: "s" }]`,
		`[URL, { grant: "client_credentials" }]`,
		`[URL, { grant: "workload_identity" }]`,
		`[URL, { grant: "password" }]`,
		`[URL, { idpIssuer: "https://idp.example" }]`,
		`[URL, { identityAssertion: async () => "t", accessToken: async () => "t" }]`,
		`[URL, { identityAssertion: async () => "t" }]`,
		`[URL, { identityAssertion: async () => "t", idpIssuer: "https://idp.example" }]`,
		`[URL, { identityAssertion: async () => "t", idpIssuer: "https://idp.example", idpClientId: "a" }]`,
		`[URL, { identityAssertion: async () => "t", idpIssuer: "https://idp.example", idpClientId: "a", clientId: "b", clientMetadataUrl: "https://x.example/m" }]`,
		`[URL, { accessToken: "t" }]`,
		`[{ url: URL }]`,
	}
	type outcome struct {
		Main   string `json:"main"`
		Worker string `json:"worker"`
		Go     string `json:"go"`
	}
	var got []outcome
	w.eval(fmt.Sprintf(`(() => {
		const URL = %q;
		const cases = [%s];
		const attempt = (m, args) => {
			try { m.client(...args); return "no error"; }
			catch (e) { return e.code + ": " + e.message; }
		};
		// What mcp.js sends Go: functions as true, the redirect URI resolved.
		const RU = new globalThis.URL("/oauth/callback.html", location.href).href;
		const sent = (o) => JSON.parse(JSON.stringify(o, (k, v) => typeof v === "function" ? true : v));
		let n = 0;
		const direct = (args) => {
			if (typeof args[0] !== "string" || (args[1] !== undefined && (typeof args[1] !== "object" || args[1] === null))) return "page only";
			try { onMain._invokeSync("client.new", { id: "direct-" + ++n, url: args[0], options: { redirectUri: RU, ...sent(args[1] ?? {}) } }); return "no error"; }
			catch (e) { return e.code + ": " + e.message; }
		};
		return cases.map((args) => ({ main: attempt(onMain, args), worker: attempt(inWorker, args), go: direct(args) }));
	})()`, w.OpenURL, strings.Join(bad, ",\n")), &got)
	if len(got) != len(bad) {
		t.Fatalf("got %d results for %d cases", len(got), len(bad))
	}
	for i, g := range got {
		if !strings.HasPrefix(g.Main, "invalid_argument: ") {
			t.Errorf("%s on the main thread: %s; want invalid_argument", bad[i], g.Main)
		}
		if g.Main != g.Worker || (g.Go != "page only" && g.Go != g.Main) {
			t.Errorf("%s:\n  main:   %s\n  worker: %s\n  go:     %s", bad[i], g.Main, g.Worker, g.Go)
		}
	}

	// catalog.add(id, config) is synchronous too: a catalog holding "one"
	// (maxServers 2) in each runtime, and the same bad entries added.
	badAdd := []string{
		`["local", { command: "npx", args: ["-y", "x"] }]`,
		`["local", { type: "stdio", url: URL }]`,
		`["t", { url: URL, type: "ws" }]`,
		`["t", { url: URL, transport: 5 }]`,
		`["t", { url: URL, disabled: "yes" }]`,
		`["t", { url: URL, enabled: 1 }]`,
		`["t", { url: URL, title: 5 }]`,
		`["t", { url: URL, allowTools: "a*" }]`,
		`["t", { url: URL, denyTools: ["[a-"] }]`,
		`["t", { url: URL, allowTools: ["x\\"] }]`,
		`["t", {}]`,
		`["t", { url: "ftp://example.com/mcp" }]`,
		`["t", { serverUrl: "not a url" }]`,
		`["one", { url: URL }]`,
		`["t", { url: URL, storage: "disk" }]`,
		`["t", { url: URL, colour: "blue" }]`,
		`["t", { url: URL, headers: { "Mcp-Session-Id": "x" } }]`,
	}
	got = nil
	w.eval(fmt.Sprintf(`(() => {
		const URL = %q;
		const cases = [%s];
		const cats = [onMain, inWorker].map((m) => m.catalog({ servers: { one: { url: URL } }, maxServers: 2 }));
		const attempt = (c, args) => {
			try { c.add(...args); return "no error"; }
			catch (e) { return e.code + ": " + e.message; }
		};
		const RU = new globalThis.URL("/oauth/callback.html", location.href).href;
		onMain._invokeSync("catalog.new", { id: "direct", options: { servers: { one: { url: URL, redirectUri: RU } }, maxServers: 2 } });
		const direct = (args) => {
			try { onMain._invokeSync("catalog.add", { id: "direct", server: args[0], config: { redirectUri: RU, ...args[1] } }); return "no error"; }
			catch (e) { return e.code + ": " + e.message; }
		};
		const out = cases.map((args) => ({ main: attempt(cats[0], args), worker: attempt(cats[1], args), go: direct(args) }));
		// Full: the third server is one too many.
		for (const c of cats) c.add("two", { url: URL });
		direct(["two", { url: URL }]);
		out.push({ main: attempt(cats[0], ["three", { url: URL }]), worker: attempt(cats[1], ["three", { url: URL }]), go: direct(["three", { url: URL }]) });
		return out;
	})()`, w.OpenURL, strings.Join(badAdd, ",\n")), &got)
	badAdd = append(badAdd, "a third server (maxServers 2)")
	if len(got) != len(badAdd) {
		t.Fatalf("got %d results for %d catalog.add cases", len(got), len(badAdd))
	}
	for i, g := range got {
		if !strings.HasPrefix(g.Main, "invalid_argument: ") {
			t.Errorf("catalog.add%s on the main thread: %s; want invalid_argument", badAdd[i], g.Main)
		}
		if g.Main != g.Worker || g.Go != g.Main {
			t.Errorf("catalog.add%s:\n  main:   %s\n  worker: %s\n  go:     %s", badAdd[i], g.Main, g.Worker, g.Go)
		}
	}
}
