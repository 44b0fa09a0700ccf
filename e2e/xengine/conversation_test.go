package xengine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// chatRequests records the stand-in model's chat requests.
type chatRequests struct {
	mu   sync.Mutex
	list []string
}

func (c *chatRequests) add(b []byte) { c.mu.Lock(); c.list = append(c.list, string(b)); c.mu.Unlock() }

func (c *chatRequests) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.list) == 0 {
		return ""
	}
	return c.list[len(c.list)-1]
}

// storedConversation is a conversation as the page reads it.
type storedConversation struct {
	ID             string `json:"id"`
	Title          string `json:"title"`
	Summary        string `json:"summary"`
	Revision       int    `json:"revision"`
	CompactedTurns int    `json:"compactedTurns"`
	// TokenScale: the stand-in model counts a token per 4 bytes of its
	// request, so it is close to 1.
	TokenScale float64 `json:"tokenScale"`
	Messages   []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

func (c storedConversation) users() []string {
	var out []string
	for _, m := range c.Messages {
		if m.Role == "user" {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestConversationLastsAcrossAReload: a conversation stored by an agent
// is there after the page reloads (in this engine and runtime): listed
// with its title, its messages as the first page left them, and a new
// turn continues it (the model gets the earlier turn). Past its token
// budget, the next turn first replaces its oldest turns by the model's
// summary (a compaction event), and the model gets that summary. The
// model's API key never reaches the store, and a deleted conversation is
// gone from the list.
func TestConversationLastsAcrossAReload(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	reqs := &chatRequests{}
	srv := serve(t, model.New(model.Options{OnRequest: reqs.add}))
	const key = "sk-conv-Zq7Xv9Lm2Np4Rs6Tu8Wy"
	// The first page keeps the whole conversation; the second one bounds
	// it to budget tokens, which the first page's two turns pass.
	const budget = 150
	setup := func(compact string) string {
		return fmt.Sprintf(`
		const cat = mcp.catalog({ servers: { demo: { url: %q } } });
		const agent = cat.agent({ model: mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin", apiKey: %q })%s });`,
			w.OpenURL, srv.URL+"/v1", key, compact)
	}

	// The first page: two turns and a title.
	var first struct {
		Texts []string           `json:"texts"`
		Conv  storedConversation `json:"conv"`
	}
	w.eval(`(async () => {`+setup("")+`
		const conv = await agent.conversation("trip");
		const texts = [];
		texts.push((await conv.run("add 2 and 40").done).text);
		texts.push((await conv.run("echo `+key+`").done).text);
		await conv.rename("Trip planning");
		await cat.close();
		return { texts, conv: { ...conv } };
	})()`, &first)
	if first.Texts[0] != "Results: 2 + 40 = 42" || len(first.Conv.Messages) != 8 || first.Conv.Title != "Trip planning" {
		t.Fatalf("first page: answers %q, %d messages, title %q; want the sum, 8 messages, the title", first.Texts, len(first.Conv.Messages), first.Conv.Title)
	}

	// The reloaded page finds it, continues it, and compacts it.
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	var second struct {
		List []struct {
			ID       string `json:"id"`
			Title    string `json:"title"`
			Messages int    `json:"messages"`
		} `json:"list"`
		Loaded     storedConversation `json:"loaded"`
		Compaction []json.RawMessage  `json:"compaction"`
		Conv       storedConversation `json:"conv"`
		Raw        string             `json:"raw"`
		WithOther  string             `json:"withOther"`
		AfterList  int                `json:"afterList"`
		Runtime    string             `json:"runtime"`
	}
	w.eval(`(async () => {`+setup(fmt.Sprintf(", compact: { maxTokens: %d }", budget))+`
		const list = await agent.conversations();
		const conv = await agent.conversation("trip");
		const loaded = { ...conv, messages: [...conv.messages] };
		const compaction = [];
		await conv.run("reverse hello", { onEvent: (ev) => { if (ev.type === "compaction") compaction.push(ev); } }).done;
		await conv.run("add 1 and 1", { onEvent: (ev) => { if (ev.type === "compaction") compaction.push(ev); } }).done;
		// What IndexedDB holds, read past the library: sealed records only.
		const db = await new Promise((res, rej) => { const r = indexedDB.open("mcpwasm"); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
		const rows = await new Promise((res, rej) => { const r = db.transaction("conversations").objectStore("conversations").getAll(); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
		db.close();
		const raw = JSON.stringify(rows.map((r) => ({ k: r.k, keys: Object.keys(r), ct: new TextDecoder().decode(r.ct) })));
		const other = await agent.conversation("scratch");
		await other.rename("Scratch");
		const withOther = (await agent.conversations()).map((c) => c.id).sort().join(",");
		await other.delete();
		const afterList = (await agent.conversations()).length;
		await cat.close();
		return { list, loaded, compaction, conv: { ...conv }, raw, withOther, afterList, runtime: mcp.runtime };
	})()`, &second)
	lb, _ := json.Marshal(second.Loaded.Messages)
	cb, _ := json.Marshal(second.Conv.Messages)
	t.Logf("runtime %s; compaction %s; summary %q; tokens loaded %d, now %d", second.Runtime, second.Compaction, second.Conv.Summary, len(lb)/4, len(cb)/4)

	if len(second.List) != 1 || second.List[0].ID != "trip" || second.List[0].Title != "Trip planning" || second.List[0].Messages != 8 {
		t.Errorf("after the reload the list is %+v; want the trip, titled, 8 messages", second.List)
	}
	if got, want := strings.Join(second.Loaded.users(), "|"), strings.Join(first.Conv.users(), "|"); got != want || second.Loaded.Revision != first.Conv.Revision {
		t.Errorf("after the reload: user messages %q revision %d; want %q revision %d", got, second.Loaded.Revision, want, first.Conv.Revision)
	}
	for _, m := range second.Loaded.Messages {
		if strings.Contains(m.Content, key) || strings.Contains(m.Content, key[8:20]) {
			t.Errorf("a stored message holds the API key: %q", m.Content)
		}
	}
	if strings.Contains(second.Raw, key) || strings.Contains(second.Raw, "Trip planning") || strings.Contains(second.Raw, "add 2 and 40") {
		t.Errorf("IndexedDB holds the conversation in plaintext: %s", second.Raw)
	}

	// Compaction: once, when the budget was passed, the oldest turns into
	// the model's summary; the model then got the summary.
	if len(second.Compaction) != 1 {
		t.Fatalf("compaction events %s; want one", second.Compaction)
	}
	var ev struct {
		Turns, TokensBefore, TokensAfter int
		Scale                            float64
	}
	_ = json.Unmarshal(second.Compaction[0], &ev)
	if ev.Turns < 1 || ev.TokensBefore <= budget || ev.TokensAfter > budget {
		t.Errorf("compaction %+v; want turns replaced, from over the budget (%d) to within it", ev, budget)
	}
	c := second.Conv
	if ev.Scale < 0.8 || ev.Scale > 1.5 || c.TokenScale < 0.8 || c.TokenScale > 1.5 {
		t.Errorf("compaction scale %v, stored tokenScale %v; want both near 1 (the stand-in counts bytes / 4)", ev.Scale, c.TokenScale)
	}
	if !strings.Contains(c.Summary, `"add 2 and 40"`) || c.CompactedTurns != ev.Turns {
		t.Errorf("summary %q, compacted turns %d; want the first turn in the summary, %d turns", c.Summary, c.CompactedTurns, ev.Turns)
	}
	if users := c.users(); len(users) == 0 || users[len(users)-1] != "add 1 and 1" || strings.Contains(strings.Join(users, "|"), "add 2 and 40") {
		t.Errorf("stored user messages %q; want the newest turns only", users)
	}
	var last struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(reqs.last()), &last); err != nil || len(last.Messages) == 0 {
		t.Fatalf("the model's last request: %v", err)
	}
	if m := last.Messages[0]; m.Role != "system" || !strings.Contains(m.Content, c.Summary) {
		t.Errorf("the model's last request starts with %+v; want the summary", m)
	}
	if second.WithOther != "scratch,trip" {
		t.Errorf("with a second conversation stored the list is %q; want scratch,trip", second.WithOther)
	}
	if second.AfterList != 1 {
		t.Errorf("after deleting a second conversation the list has %d; want 1", second.AfterList)
	}
}

// TestConversationStoreUpgradesAnOlderDatabase: a database the previous
// schema (version 2) made, with a record in it, is upgraded when the
// agent first stores a conversation: the record stays, and the
// conversation is stored beside it.
func TestConversationStoreUpgradesAnOlderDatabase(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Version int      `json:"version"`
		Stores  []string `json:"stores"`
		Kept    string   `json:"kept"`
		Titles  []string `json:"titles"`
		Runtime string   `json:"runtime"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const openDB = (version, upgrade) => new Promise((res, rej) => {
			const r = version ? indexedDB.open("mcpwasm", version) : indexedDB.open("mcpwasm");
			if (upgrade) r.onupgradeneeded = () => upgrade(r.result);
			r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error);
		});
		const req = (r) => new Promise((res, rej) => { r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
		const old = await openDB(2, (db) => {
			for (const name of ["grants", "clients", "metadata", "pending", "keys", "dpop"]) db.createObjectStore(name, { keyPath: "k" });
		});
		const tx = old.transaction("metadata", "readwrite");
		tx.objectStore("metadata").put({ k: "https://kept.example", json: "{\"kept\":true}" });
		await new Promise((res, rej) => { tx.oncomplete = res; tx.onerror = () => rej(tx.error); });
		old.close();

		const cat = mcp.catalog({ servers: { demo: { url: %q } } });
		const agent = cat.agent({ model: async () => ({ role: "assistant", content: "ok" }) });
		const conv = await agent.conversation("after-upgrade");
		await conv.rename("Upgraded");
		const titles = (await agent.conversations()).map((c) => c.title);
		await cat.close();

		const db = await openDB();
		const kept = await req(db.transaction("metadata").objectStore("metadata").get("https://kept.example"));
		const out = { version: db.version, stores: [...db.objectStoreNames], kept: kept?.json ?? "", titles, runtime: mcp.runtime };
		db.close();
		return out;
	})()`, w.OpenURL), &got)
	t.Logf("runtime %s: version %d, stores %v", got.Runtime, got.Version, got.Stores)
	if got.Version != 5 || !slices.Contains(got.Stores, "conversations") || !slices.Contains(got.Stores, "tasks") || !slices.Contains(got.Stores, "views") || !slices.Contains(got.Stores, "dpop") {
		t.Errorf("after the upgrade: version %d, stores %v; want 5 with conversations, tasks and views beside the others", got.Version, got.Stores)
	}
	if got.Kept != `{"kept":true}` {
		t.Errorf("the older database's record reads %q after the upgrade; want it kept", got.Kept)
	}
	if len(got.Titles) != 1 || got.Titles[0] != "Upgraded" {
		t.Errorf("conversations after the upgrade: %q; want the one stored", got.Titles)
	}
}

// TestConversationSummaryByThePage: compact.summarize as a page function
// (called across the worker boundary in the worker runtimes) gets the
// replaced turns and the previous summary, and its summary is what the
// model reads next; a summarize that rejects ends the turn before the
// model is asked, with the conversation unchanged.
func TestConversationSummaryByThePage(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Calls []struct {
			Previous string   `json:"previous"`
			Users    []string `json:"users"`
		} `json:"calls"`
		Summary   string `json:"summary"`
		FirstSeen string `json:"firstSeen"`
		Failed    string `json:"failed"`
		Asked     int    `json:"asked"`
		Same      bool   `json:"same"`
		Runtime   string `json:"runtime"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const cat = mcp.catalog({ servers: { demo: { url: %q } } });
		const seen = [];
		let fail = false;
		const calls = [];
		const model = async ({ messages }) => {
			seen.push(messages);
			return { role: "assistant", content: "noted: " + messages.at(-1).content + " " + "x".repeat(200) };
		};
		const summarize = async (messages, { previous }) => {
			if (fail) throw new Error("summarizer is down");
			calls.push({ previous, users: messages.filter((m) => m.role === "user").map((m) => m.content) });
			return "page summary " + calls.length;
		};
		const agent = cat.agent({ model, compact: { maxTokens: 60, summarize } });
		const conv = await agent.conversation("by-page");
		for (const text of ["first", "second", "third"]) await conv.run(text).done;
		const summary = conv.summary;
		const firstSeen = seen.at(-1)[0]?.content ?? "";
		const before = { ...conv, messages: conv.messages.length };
		fail = true;
		const asked = seen.length;
		let failed = "";
		try { await conv.run("fourth").done; } catch (e) { failed = e.code + ": " + e.message; }
		const same = conv.revision === before.revision && conv.messages.length === before.messages;
		await cat.close();
		return { calls, summary, firstSeen, failed, asked: seen.length - asked, same, runtime: mcp.runtime };
	})()`, w.OpenURL), &got)
	t.Logf("runtime %s: summarize calls %+v; summary %q", got.Runtime, got.Calls, got.Summary)
	if len(got.Calls) == 0 || got.Calls[0].Previous != "" || len(got.Calls[0].Users) == 0 || got.Calls[0].Users[0] != "first" {
		t.Fatalf("summarize calls %+v; want the first with no previous summary and the oldest turn", got.Calls)
	}
	if n := len(got.Calls); n < 2 || got.Calls[n-1].Previous != fmt.Sprintf("page summary %d", n-1) {
		t.Errorf("summarize call %d got previous %q; want the summary before it", n, got.Calls[n-1].Previous)
	}
	if got.Summary != fmt.Sprintf("page summary %d", len(got.Calls)) || !strings.Contains(got.FirstSeen, got.Summary) {
		t.Errorf("summary %q, the model's first message %q; want the page's last summary, given to the model", got.Summary, got.FirstSeen)
	}
	if !strings.Contains(got.Failed, "summarizer is down") || got.Asked != 0 || !got.Same {
		t.Errorf("a failing summarize: error %q, model asked %d times, conversation unchanged %v; want its error, no model request, nothing changed", got.Failed, got.Asked, got.Same)
	}
}
