package oauth

import (
	"context"
	"sync"
	"time"
)

// Courier shows the authorization URL to the user: natively a function
// (tests fetch it; a CLI prints it), in the browser the login popup.
//
// Open returns once the page is shown; the result arrives later through
// [Registry.Deliver]. It returns [ErrPopupBlocked] (or another error) when
// the page cannot be shown, which ends the flow. ended, when not nil,
// says that the page ended before the flow did: closed (or a nil error
// sent) when the user dismissed it (closed the sign-in window), and the
// flow then ends declined at once, like a "Deny"; an error sent on it
// ends the flow with that error (in the browser, a redirect page that ran
// no callback receiver: [mcperr.UnhandledRedirect]). A result delivered
// before that still wins. ctx is cancelled when the flow ends for any
// reason (delivered, declined, aborted, timed out): a courier holding a
// window closes it then. Open may be called concurrently for different
// handlers.
type Courier interface {
	Open(ctx context.Context, authURL string) (ended <-chan error, err error)
}

// CourierFunc adapts a function to a [Courier] whose page cannot be
// dismissed (a printed URL, a test that fetches it).
type CourierFunc func(ctx context.Context, authURL string) error

// Open calls f(ctx, authURL).
func (f CourierFunc) Open(ctx context.Context, authURL string) (<-chan error, error) {
	return nil, f(ctx, authURL)
}

// Locker provides named mutual exclusion, used to make token refresh
// single-flight per resource. Natively [NewMutexLocker]; in the browser Web
// Locks, which span tabs. Lock blocks until the lock is held or ctx is done
// (then it returns ctx's error); unlock must be called exactly once.
type Locker interface {
	Lock(ctx context.Context, name string) (unlock func(), err error)
}

// Clock tells the time, for token expiry and cache lifetimes. Only its
// wall-clock reading is used (see [wallNow]).
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// wallNow is c's time without a monotonic reading. Expiries are wall-clock
// instants (an expires_in counts in the server's real time, and stored
// grants lose the monotonic reading anyway); comparing two monotonic
// readings would be wrong after a sleep, because in a browser the
// monotonic clock is performance.now(), which some engines stop while the
// computer sleeps: a token would look valid for as long as the laptop
// slept past its expiry.
func wallNow(c Clock) time.Time { return c.Now().Round(0) }

// MutexLocker is an in-process [Locker]: one mutex per name.
type MutexLocker struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

var _ Locker = (*MutexLocker)(nil)

// NewMutexLocker returns a [MutexLocker].
func NewMutexLocker() *MutexLocker { return &MutexLocker{locks: map[string]chan struct{}{}} }

// Lock implements [Locker].
func (l *MutexLocker) Lock(ctx context.Context, name string) (func(), error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]chan struct{}{}
	}
	ch, ok := l.locks[name]
	if !ok {
		ch = make(chan struct{}, 1)
		l.locks[name] = ch
	}
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-ch }) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// State is a handler's authorization state, for a UI to show per server
// (connected, needs a sign-in, signing in, declined, failed).
type State string

// The states reported by [Event].
const (
	StateNeedsAuth   State = "needs_auth"  // a login is required
	StateAuthorizing State = "authorizing" // a flow is running
	StateAuthorized  State = "authorized"  // a grant is held
	StateDeclined    State = "declined"    // the user declined or aborted
	StateFailed      State = "failed"      // the last attempt failed; see Err
)

// EventKind tells what an [Event] reports.
type EventKind string

// The kinds of [Event].
const (
	EventState          EventKind = "state"           // State changed
	EventTokenRefreshed EventKind = "token_refreshed" // a refresh succeeded
	// EventStoreFailed: a refreshed grant could not be stored. The new
	// token is used from memory; until storage works again, another tab or
	// a reload would present a stale refresh token. Err says why.
	EventStoreFailed EventKind = "store_failed"
)

// Event reports a state change or a refresh. It never carries secrets.
type Event struct {
	Kind     EventKind
	Resource string // the MCP server URI
	State    State  // the state after the event
	Err      error  // for StateFailed/StateDeclined/StateNeedsAuth: why; secret-free
}
