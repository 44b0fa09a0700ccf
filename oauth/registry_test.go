package oauth

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// sharedStore is a MemoryStore that says other pages see it.
type sharedStore struct{ *MemoryStore }

func (sharedStore) Shared() bool { return true }

// announcements records what a registry announces.
type announcements struct {
	mu sync.Mutex
	cs []Change
}

func (a *announcements) add(c Change) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cs = append(a.cs, c)
}

func (a *announcements) kinds() []ChangeKind {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ks []ChangeKind
	for _, c := range a.cs {
		ks = append(ks, c.Kind)
	}
	return ks
}

// TestGrantChangesReachEveryHandler: two handlers of one resource in one
// page (two clients of the same server) share every grant change through
// the registry; changes to shared storage are announced once, and an
// announced change from another page reaches them through Apply.
func TestGrantChangesReachEveryHandler(t *testing.T) {
	e := newEnv(t)
	var ann announcements
	e.reg.Announce = ann.add
	store := sharedStore{e.store}
	ctx := context.Background()
	a := e.handler(t, func(c *Config) { c.Store = store })
	b := e.handler(t, func(c *Config) { c.Store = store })
	var bStates []State
	b.Subscribe(func(ev Event) {
		if ev.Kind == EventState {
			bStates = append(bStates, ev.State)
		}
	})

	if err := a.Login(ctx); err != nil {
		t.Fatal(err)
	}
	if b.State() != StateAuthorized {
		t.Fatalf("b after a's sign-in: %q; want authorized", b.State())
	}
	if err := connect(ctx, e.rs.url(), b); err != nil {
		t.Fatalf("b uses a's grant: %v", err)
	}
	if err := a.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	if b.State() != StateNeedsAuth {
		t.Errorf("b after a's sign-out: %q; want needs_auth", b.State())
	}
	if got := ann.kinds(); !slices.Equal(got, []ChangeKind{ChangeGranted, ChangeRevoked}) {
		t.Errorf("announced %v; want [grant logout]", got)
	}

	// Another page signed in: its announcement reaches both.
	otherReg := NewRegistry()
	other := e.handler(t, func(c *Config) {
		c.Store, c.Registry, c.Courier = store, otherReg, &testCourier{reg: otherReg}
	})
	if err := other.Login(ctx); err != nil {
		t.Fatal(err)
	}
	e.reg.Apply(ctx, Change{Kind: ChangeGranted, Resource: a.Resource()})
	if a.State() != StateAuthorized || b.State() != StateAuthorized {
		t.Errorf("after another page's sign-in: a %q, b %q; want authorized", a.State(), b.State())
	}
	_ = store.DeleteGrant(ctx, a.Resource()) // the other page clears the storage
	e.reg.Apply(ctx, Change{Kind: ChangeCleared})
	if a.State() != StateNeedsAuth || b.State() != StateNeedsAuth {
		t.Errorf("after another page cleared storage: a %q, b %q; want needs_auth", a.State(), b.State())
	}
	if !slices.Equal(bStates, []State{StateAuthorized, StateNeedsAuth, StateAuthorized, StateNeedsAuth}) {
		t.Errorf("b's states %v", bStates)
	}

	// A decline in one is a decline for the server: b does not ask again.
	e.as.deny = "access_denied"
	if err := a.Login(ctx); !errors.Is(err, ErrDeclined) {
		t.Fatalf("a's sign-in: %v; want declined", err)
	}
	calls := e.courier.calls.Load()
	if err := connect(ctx, e.rs.url(), b); !errors.Is(err, ErrDeclined) {
		t.Errorf("b after a's decline: %v; want declined without asking", err)
	}
	if n := e.courier.calls.Load(); n != calls {
		t.Errorf("b opened the sign-in page again")
	}
	if got := ann.kinds(); len(got) != 2 {
		t.Errorf("a decline was announced: %v", got)
	}

	// A closed handler hears of nothing more.
	b.Close()
	e.as.deny = ""
	if err := other.Login(ctx); err != nil {
		t.Fatal(err)
	}
	e.reg.Apply(ctx, Change{Kind: ChangeGranted, Resource: a.Resource()})
	if b.State() != StateDeclined || a.State() != StateAuthorized {
		t.Errorf("after another sign-in: closed b %q (want declined, unchanged), a %q (want authorized)", b.State(), a.State())
	}
}
