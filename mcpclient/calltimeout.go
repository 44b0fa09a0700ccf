package mcpclient

import (
	"context"
	"sync"
	"time"
)

// WithCallTimeout returns a context for [Client.CallTool] whose timeout d
// stops running while the call waits for the user: while the Client's
// elicitation handler answers a request of the call's server that belongs
// to the call, its clock is paused, because the time a person takes to
// answer a form is not the server's. When it runs out, Err is
// context.DeadlineExceeded, as for context.WithTimeout. Cancel releases
// its timer; call it when the call ends.
//
// A request belongs to the call whose context it arrives in (a 2026-07-28
// server's input_required result, or a -32042 retry, both fulfilled
// within the call), else (a 2025-11-25 server's elicitation/create, which
// go-sdk does not tie to the call it serves) to the earliest call with
// such a timeout still running at that Client.
func WithCallTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	p := newPausable(parent, d)
	return p, p.stop
}

// clockKey finds a call's [pausable] in its context and the contexts
// derived from it.
type clockKey struct{}

// pausable is a call's context with a timeout that can stop running.
type pausable struct {
	context.Context // the parent's child that the timeout cancels
	cancel          context.CancelFunc
	// done closes after Context's Done: a channel of its own makes the
	// contexts derived from this one take their Err from this one's Err
	// (DeadlineExceeded), not from the cancellation underneath.
	done chan struct{}

	mu      sync.Mutex
	timer   *time.Timer
	left    time.Duration // of the timeout, when paused
	started time.Time     // when it last resumed
	paused  int
	expired bool
}

func newPausable(parent context.Context, d time.Duration) *pausable {
	ctx, cancel := context.WithCancel(parent)
	p := &pausable{Context: ctx, cancel: cancel, done: make(chan struct{}), left: d, started: time.Now()}
	p.timer = time.AfterFunc(d, p.expire)
	go func() {
		<-ctx.Done()
		close(p.done)
	}()
	return p
}

func (p *pausable) Done() <-chan struct{} { return p.done }

func (p *pausable) Value(key any) any {
	if key == (clockKey{}) {
		return p
	}
	return p.Context.Value(key)
}

func (p *pausable) expire() {
	p.mu.Lock()
	if p.paused > 0 {
		p.mu.Unlock()
		return
	}
	p.expired = true
	p.mu.Unlock()
	p.cancel()
}

func (p *pausable) Err() error {
	err := p.Context.Err()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil && p.expired {
		return context.DeadlineExceeded
	}
	return err
}

// pause stops the clock until the returned function is called.
func (p *pausable) pause() (resume func()) {
	p.mu.Lock()
	p.paused++
	if p.paused == 1 && p.timer.Stop() {
		p.left -= time.Since(p.started)
	}
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.paused--
			if p.paused == 0 && !p.expired {
				p.started = time.Now()
				p.timer.Reset(max(p.left, 0))
			}
		})
	}
}

// stop releases the timer.
func (p *pausable) stop() {
	p.timer.Stop()
	p.cancel()
}

// callClocks are the timeouts of the calls running at a Client, earliest
// first, for pausing the one a server's request belongs to.
type callClocks struct {
	mu      sync.Mutex
	running []*pausable
}

// track registers the clock of ctx, if it has one, for the time the call
// runs; the returned function ends that.
func (cc *callClocks) track(ctx context.Context) (untrack func()) {
	p, ok := ctx.Value(clockKey{}).(*pausable)
	if !ok {
		return func() {}
	}
	cc.mu.Lock()
	cc.running = append(cc.running, p)
	cc.mu.Unlock()
	return func() {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		for i, x := range cc.running {
			if x == p {
				cc.running = append(cc.running[:i:i], cc.running[i+1:]...)
				return
			}
		}
	}
}

// pause stops the clock of the call a request that arrived in ctx belongs
// to (see [WithCallTimeout]) until the returned function is called.
func (cc *callClocks) pause(ctx context.Context) (resume func()) {
	own, _ := ctx.Value(clockKey{}).(*pausable)
	cc.mu.Lock()
	var p *pausable
	for _, x := range cc.running {
		if x == own {
			p = x
			break
		}
	}
	if p == nil && len(cc.running) > 0 {
		p = cc.running[0]
	}
	cc.mu.Unlock()
	if p == nil {
		return func() {}
	}
	return p.pause()
}
