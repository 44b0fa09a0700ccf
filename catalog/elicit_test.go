package catalog

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// elicitingFactory makes real clients whose elicitation requests go to
// *cat's Elicit (the catalog does not exist yet when the Factory first
// runs, so it is looked up when a request comes).
func elicitingFactory(cat **Catalog) Factory {
	return func(id string, sc ServerConfig, events func(mcpclient.Event)) (Server, error) {
		c, err := mcpclient.New(sc.URL, mcpclient.Options{HTTPClient: &http.Client{Transport: http.DefaultTransport}, OnEvent: events})
		if err != nil {
			return nil, err
		}
		return FromClient(c, mcpclient.ConnectOptions{Elicitation: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return (*cat).Elicit(ctx, id, p)
		}}), nil
	}
}

// A tool that asks the user (the demo's ask_user, a 2026-07-28
// input_required result) reaches Config.Elicit with the server's request;
// the call hears of it first, under the same id; the answer, accept with
// content or a decline, reaches the server as given.
func TestElicitThroughACall(t *testing.T) {
	d := startDemo(t)
	for _, tt := range []struct {
		name   string
		answer *mcp.ElicitResult
		want   string
	}{
		{"accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, "The user answered: color: blue, name: Ada, subscribe: false"},
		{"decline", &mcp.ElicitResult{Action: "decline"}, "The user declined to answer."},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, "The user cancelled the request."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cat *Catalog
			var mu sync.Mutex
			var asked, heard []ElicitationRequest
			cat, _ = newCatalog(t, Config{
				Servers: servers("demo", d.URL),
				Factory: elicitingFactory(&cat),
				Elicit: func(_ context.Context, req ElicitationRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req)
					mu.Unlock()
					return tt.answer, nil
				},
			})
			r, err := cat.ModelCall(ctxT(t), "demo_ask_user", `{"message":"Who are you?"}`, CallOptions{
				OnElicitation: func(req ElicitationRequest) {
					mu.Lock()
					heard = append(heard, req)
					mu.Unlock()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if r.IsError || r.Text != tt.want {
				t.Errorf("ask_user = %q (isError %v); want %q", r.Text, r.IsError, tt.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || len(heard) != 1 {
				t.Fatalf("Elicit asked %d times, the call heard %d; want 1 and 1", len(asked), len(heard))
			}
			a, h := asked[0], heard[0]
			if a.ServerID != "demo" || a.Mode() != "form" || a.Params.Message != "Who are you?" || a.Params.RequestedSchema == nil {
				t.Errorf("Elicit got %+v (params %+v); want demo's form with its message and schema", a, a.Params)
			}
			if h.ElicitationID != a.ElicitationID || h.ElicitationID == "" || h.ServerID != "demo" {
				t.Errorf("the call heard %q of %q; Elicit was asked %q: want one id", h.ElicitationID, h.ServerID, a.ElicitationID)
			}
		})
	}
}

// Without Config.Elicit the Factory sets no handler: the server is told
// elicitation is not supported, and nothing waits.
func TestNoElicitTellsTheServer(t *testing.T) {
	d := startDemo(t)
	cat, _ := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t)})
	r, err := cat.ModelCall(ctxT(t), "demo_ask_user", `{}`, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text, "does not handle elicitation") {
		t.Errorf("ask_user without a handler = %q; want the server's answer that the client cannot elicit", r.Text)
	}
	if _, err := cat.Elicit(ctxT(t), "demo", &mcp.ElicitParams{Message: "x"}); err == nil {
		t.Error("Elicit without Config.Elicit succeeded; want an error")
	}
}

// A request that arrives outside any call's context (a 2025-11-25
// server's elicitation/create) belongs to the earliest call running at
// that server; a call of another server, or one that has ended, hears
// nothing.
func TestElicitAttribution(t *testing.T) {
	cat, _ := newCatalog(t, Config{
		Servers: servers("a", "https://a.example/mcp", "b", "https://b.example/mcp"),
		Factory: func(string, ServerConfig, func(mcpclient.Event)) (Server, error) { return &fakeServer{}, nil },
		Elicit: func(context.Context, ElicitationRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	var heard []string
	note := func(who string) CallOptions {
		return CallOptions{OnElicitation: func(r ElicitationRequest) { heard = append(heard, who+":"+r.ElicitationID) }}
	}
	ctx := context.Background()
	ctxA1, doneA1 := cat.track(ctx, "a", time.Minute, note("a1"))
	_, doneA2 := cat.track(ctx, "a", time.Minute, note("a2"))
	ctxB, doneB := cat.track(ctx, "b", time.Minute, note("b"))
	defer doneA2()
	defer doneB()
	ask := func(ctx context.Context, server string) {
		t.Helper()
		if res, err := cat.Elicit(ctx, server, &mcp.ElicitParams{Message: "?"}); err != nil || res.Action != "decline" {
			t.Fatalf("Elicit = %+v, %v; want the handler's decline", res, err)
		}
	}
	ask(ctx, "a")   // no call context: the earliest at a
	ask(ctxB, "b")  // b's own
	ask(ctxA1, "b") // a1's context but b's request: b's call
	doneA1()
	ask(ctxA1, "a") // a1 ended: the next at a
	want := []string{"a1:elicitation-1", "b:elicitation-2", "b:elicitation-3", "a2:elicitation-4"}
	if strings.Join(heard, " ") != strings.Join(want, " ") {
		t.Errorf("heard %v; want %v", heard, want)
	}
}

// The call's timeout does not run while the user answers: a call with a
// 500 ms timeout whose server asks a question answered after 1.5 s
// completes; the same call whose server does not answer in time still
// times out.
func TestElicitPausesTheCallTimeout(t *testing.T) {
	d := startDemo(t)
	var cat *Catalog
	cat, _ = newCatalog(t, Config{
		Servers: servers("demo", d.URL),
		Factory: elicitingFactory(&cat),
		Elicit: func(ctx context.Context, req ElicitationRequest) (*mcp.ElicitResult, error) {
			select {
			case <-time.After(1500 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	ctx := ctxT(t)
	if _, err := cat.Tools(ctx); err != nil { // connected before the clock starts
		t.Fatal(err)
	}
	r, err := cat.ModelCall(ctx, "demo_ask_user", `{}`, CallOptions{Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError || r.Text != "The user declined to answer." {
		t.Errorf("ask_user with a slow answer = %q (isError %v); want the decline", r.Text, r.IsError)
	}
	r, err = cat.ModelCall(ctx, "demo_slow", `{"steps":3,"delayMs":400}`, CallOptions{Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || !strings.Contains(r.Text, "did not finish within 500 ms") {
		t.Errorf("slow past its timeout = %q (isError %v); want a timeout", r.Text, r.IsError)
	}
}

// A tool refused with -32042 (URL elicitation required) asks Config.Elicit
// with the server's URL; once accepted and completed (the catalog's
// elicitationcomplete event names the server and its elicitation id), the
// model gets the retried call's answer.
func TestURLElicitationRequiredThroughACall(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bank", Version: "1"}, nil)
	var mu sync.Mutex
	linked := false
	var session *mcp.ServerSession
	mcp.AddTool(s, &mcp.Tool{Name: "balance"}, func(ctx context.Context, r *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		defer mu.Unlock()
		session = r.Session
		if !linked {
			return nil, nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", ElicitationID: "bank-link", URL: "https://bank.example/link", Message: "Link your bank account"}})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "42 EUR"}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)

	var cat *Catalog
	var asked []ElicitationRequest
	cat, ev := newCatalog(t, Config{
		Servers: servers("bank", srv.URL),
		Factory: elicitingFactory(&cat),
		Elicit: func(_ context.Context, req ElicitationRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req)
			linked = true
			ss := session
			mu.Unlock()
			go func() {
				_ = ss.NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: req.Params.ElicitationID})
			}()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	r, err := cat.ModelCall(ctxT(t), "bank_balance", `{}`, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError || r.Text != "42 EUR" {
		t.Errorf("balance = %q (isError %v); want the retried call's answer", r.Text, r.IsError)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0].ServerID != "bank" || asked[0].Mode() != "url" || asked[0].Params.URL != "https://bank.example/link" {
		t.Errorf("Elicit asked %+v; want bank's URL once", asked)
	}
	mu.Unlock()
	waitFor(t, "elicitationcomplete", func() bool { return ev.count(EventElicitationComplete) == 1 })
	if got := ev.of(EventElicitationComplete)[0].Data.(ElicitationComplete); got != (ElicitationComplete{ID: "bank", ElicitationID: "bank-link"}) {
		t.Errorf("elicitationcomplete = %+v", got)
	}
}
