package catalog

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/devkit/authtest"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// authEnv is the protected demo server and its authorization server.
type authEnv struct{ *authtest.Env }

func newAuthEnv(t *testing.T) *authEnv { return &authEnv{authtest.Start(t)} }

// factory makes clients with a non-interactive OAuth handler: Connect
// never opens the courier; Authorize (the handler's Login) does.
func (a *authEnv) factory(t *testing.T) Factory { return a.factoryWith(t, nil) }

// factoryWith is factory with the grants kept in store (nil: one store
// per client).
func (a *authEnv) factoryWith(t *testing.T, store oauth.Store) Factory {
	return func(id string, sc ServerConfig, events func(mcpclient.Event)) (Server, error) {
		hc := &http.Client{Transport: http.DefaultTransport, Timeout: patience}
		h, err := oauth.New(oauth.Config{
			ResourceURL: sc.URL, HTTPClient: hc, RedirectURL: authtest.RedirectURL, ClientName: "catalog test",
			Registry: a.Registry, Courier: a.Courier(), AuthTimeout: patience, Store: store,
		})
		if err != nil {
			return nil, err
		}
		c, err := mcpclient.New(sc.URL, mcpclient.Options{Auth: h, HTTPClient: hc, OnEvent: events})
		if err != nil {
			return nil, err
		}
		return FromClient(c, mcpclient.ConnectOptions{}), nil
	}
}

// Against the real protected server: Tools never opens a sign-in; the
// server is needs_auth, fires authrequired once and is left out; the host's
// Authorize signs in and its tools join with one toolschanged.
func TestNeedsAuthProtectedServer(t *testing.T) {
	a := newAuthEnv(t)
	plain := startDemo(t)
	cat, ev := newCatalog(t, Config{Servers: servers("secure", a.URL, "plain", plain.URL), Factory: a.factory(t)})
	ctx := ctxT(t)
	for range 3 {
		tools, err := cat.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != 7 || tools[0].ServerID != "plain" {
			t.Fatalf("tools = %v; want plain's 7", names(tools))
		}
	}
	if got := ev.of(EventAuthRequired); len(got) != 1 || got[0].Data != (AuthRequired{ID: "secure"}) {
		t.Errorf("authrequired events = %+v; want one for secure", got)
	}
	if a.Opened.Load() != 0 {
		t.Fatal("Tools opened a sign-in")
	}
	st, _ := cat.Status("secure")
	if st.State != string(mcpclient.StateNeedsAuth) || st.Error == nil || st.Error.Code != mcperr.AuthRequired {
		t.Errorf("status = %+v; want needs_auth with an auth_required error", st)
	}
	r, _ := cat.ModelCall(ctx, "secure_echo", `{"text":"x"}`, CallOptions{})
	if r.Text != say(textNeedsAuth, "secure", "secure_echo") {
		t.Errorf("call = %q", r.Text)
	}

	ev.reset()
	if err := cat.Authorize(ctx, "secure"); err != nil {
		t.Fatal(err)
	}
	if a.Opened.Load() != 1 {
		t.Errorf("sign-ins opened = %d; want 1", a.Opened.Load())
	}
	tools, _ := cat.Tools(ctx)
	if len(tools) != 14 {
		t.Errorf("tools after Authorize = %v; want 14", names(tools))
	}
	if diff := cmp.Diff([]ToolsChanged{{IDs: []string{"secure"}}}, toolsChanged(ev)); diff != "" {
		t.Errorf("toolschanged (-want +got):\n%s", diff)
	}
	r, _ = cat.ModelCall(ctx, "secure_echo", `{"text":"signed in"}`, CallOptions{})
	if r.Text != "signed in" {
		t.Errorf("call after sign-in = %q", r.Text)
	}
}

// With AuthWait, a call to a server that needs a sign-in asks the host once
// and waits: the host signs in and the call goes through; the user declines
// and the call says so; nobody acts and the wait ends with the needs-sign-in
// text.
func TestAuthWait(t *testing.T) {
	tests := []struct {
		name    string
		act     string // what the host does when asked: "authorize", "decline", "nothing"
		wait    time.Duration
		want    string
		isError bool
	}{
		{"host signs in", "authorize", patience, "waited", false},
		{"user declines", "decline", patience, say(textDeclined, "secure", "secure_echo"), true},
		{"nobody acts", "nothing", 50 * time.Millisecond, say(textNeedsAuth, "secure", "secure_echo"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAuthEnv(t)
			a.Decline.Store(tt.act == "decline")
			cat, _ := newCatalog(t, Config{Servers: servers("secure", a.URL), Factory: a.factory(t)})
			ctx := ctxT(t)
			var asked atomic.Int32
			var pending atomic.Bool
			authErr := make(chan error, 1)
			r, err := cat.ModelCall(ctx, "secure_echo", `{"text":"waited"}`, CallOptions{
				AuthWait: tt.wait,
				OnAuthRequired: func(ar AuthRequired) {
					id := ar.ID
					asked.Add(1)
					st, _ := cat.Status(id)
					pending.Store(st.PendingSignIn)
					if ar != (AuthRequired{ID: "secure"}) {
						t.Errorf("OnAuthRequired(%+v)", ar)
					}
					if tt.act != "nothing" {
						go func() { authErr <- cat.Authorize(ctx, id) }()
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != tt.want || r.IsError != tt.isError {
				t.Errorf("call = %q (isError %v); want %q", r.Text, r.IsError, tt.want)
			}
			if asked.Load() != 1 {
				t.Errorf("OnAuthRequired calls = %d; want 1", asked.Load())
			}
			if !pending.Load() {
				t.Error("the status said no sign-in pending while the call waited")
			}
			if st, _ := cat.Status("secure"); st.PendingSignIn {
				t.Errorf("status after the call = %+v; want no sign-in pending", st)
			}
			if tt.act == "decline" {
				wantCode(t, <-authErr, mcperr.Declined)
				if st, _ := cat.Status("secure"); st.State != string(mcpclient.StateDeclined) {
					t.Errorf("status after decline = %s", st.State)
				}
			}
		})
	}
}

// TestEnableServerWaitsForSignIn: the model's catalog_enable_server on a
// server that needs a sign-in asks the host (with AuthWait) and answers
// only once the host signed in, with the conditional statement; without a
// sign-in it says the server needs one, never that it is on.
func TestEnableServerWaitsForSignIn(t *testing.T) {
	for _, signIn := range []bool{true, false} {
		t.Run(fmt.Sprint("signIn=", signIn), func(t *testing.T) {
			a := newAuthEnv(t)
			cat, _ := newCatalog(t, Config{Servers: servers("secure", a.URL), Factory: a.factory(t), ServerTools: true})
			ctx := ctxT(t)
			if _, err := cat.Tools(ctx); err != nil {
				t.Fatal(err)
			}
			var asked atomic.Int32
			r, err := cat.ModelCall(ctx, MetaEnableServer, `{"id":"secure"}`, CallOptions{
				AuthWait: map[bool]time.Duration{true: patience, false: 50 * time.Millisecond}[signIn],
				OnAuthRequired: func(ar AuthRequired) {
					asked.Add(1)
					if signIn {
						go func() { _ = cat.Authorize(ctx, ar.ID) }()
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			want := say(textNeedsAuth, "secure", MetaEnableServer)
			if signIn {
				want = say(textEnabled, "secure", "secure")
			}
			if r.Text != want || asked.Load() != 1 {
				t.Errorf("catalog_enable_server = %q (asked %d times); want %q, asked once", r.Text, asked.Load(), want)
			}
		})
	}
}

// A sign-in elsewhere in the page (another client of the same server, such
// as a panel that explores one server) connects the catalog's client too;
// its tools then join the list by themselves, with one toolschanged, with
// no Tools call to prompt it.
func TestSignInElsewhereJoinsTools(t *testing.T) {
	a := newAuthEnv(t)
	store := oauth.NewMemoryStore() // the page's storage, as IndexedDB is
	cat, ev := newCatalog(t, Config{Servers: servers("secure", a.URL), Factory: a.factoryWith(t, store)})
	ctx := ctxT(t)
	if tools, err := cat.Tools(ctx); err != nil || len(tools) != 0 {
		t.Fatalf("Tools = %v, %v; want none before a sign-in", names(tools), err)
	}
	ev.reset()
	other, err := a.factoryWith(t, store)("other", ServerConfig{URL: a.URL}, func(mcpclient.Event) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if err := other.Authorize(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the catalog's server lists its tools", func() bool {
		st, _ := cat.Status("secure")
		return st.State == string(mcpclient.StateConnected) && st.Tools == 7
	})
	// Events are delivered after the catalog's lock is released: the
	// status can be read a moment before toolschanged arrives.
	waitFor(t, "toolschanged", func() bool { return len(toolsChanged(ev)) > 0 })
	if diff := cmp.Diff([]ToolsChanged{{IDs: []string{"secure"}}}, toolsChanged(ev)); diff != "" {
		t.Errorf("toolschanged (-want +got):\n%s", diff)
	}
}
