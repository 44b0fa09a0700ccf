package catalog

import "time"

// The states of a server's circuit breaker, as [Status.Breaker] shows them.
const (
	BreakerClosed   = "closed"    // requests flow; consecutive failures are counted
	BreakerOpen     = "open"      // requests fail fast until the cooldown ends
	BreakerHalfOpen = "half_open" // one probe request decides: closed or open again
)

// breaker is a circuit breaker in the shape of sony/gobreaker (closed, open,
// half-open; consecutive failure counts; generations so that a late report
// from before a transition cannot move the new state), with time taken from
// an injected [Clock] so that tests control the cooldown. gobreaker reads
// time.Now itself, which is why it is not used here.
//
// It is not safe for concurrent use: the catalog guards it with its mutex.
type breaker struct {
	threshold int
	cooldown  time.Duration

	state       string
	generation  uint64
	consecutive int       // consecutive counted failures while closed
	retryAt     time.Time // when an open breaker lets a probe through
	probing     bool      // half-open: the probe is running
}

func newBreaker(cfg BreakerConfig) *breaker {
	return &breaker{threshold: cfg.Failures, cooldown: cfg.Cooldown, state: BreakerClosed}
}

// permit is what allow hands out: report it back exactly once.
type permit struct {
	generation uint64
	probe      bool
}

// allow asks to send a request at now. When it may, the returned permit
// must be reported with report. An open breaker whose cooldown has ended
// becomes half-open and lets exactly one probe through.
func (b *breaker) allow(now time.Time) (permit, bool) {
	switch b.state {
	case BreakerOpen:
		if now.Before(b.retryAt) {
			return permit{}, false
		}
		b.transition(BreakerHalfOpen, now)
		fallthrough
	case BreakerHalfOpen:
		if b.probing {
			return permit{}, false
		}
		b.probing = true
		return permit{generation: b.generation, probe: true}, true
	}
	return permit{generation: b.generation}, true
}

// The outcomes a request reports to its breaker.
type outcomeKind int

const (
	neutral outcomeKind = iota // neither success nor a counted failure (auth, bad arguments, aborted)
	success
	failure // transport, 5xx, timeout, network, closed
)

// report records the outcome of a request allowed with p.
func (b *breaker) report(p permit, k outcomeKind, now time.Time) {
	if p.generation != b.generation {
		return // allowed before a transition: stale
	}
	switch b.state {
	case BreakerClosed:
		switch k {
		case success:
			b.consecutive = 0
		case failure:
			b.consecutive++
			if b.consecutive >= b.threshold {
				b.transition(BreakerOpen, now)
			}
		}
	case BreakerHalfOpen:
		if !p.probe {
			return
		}
		b.probing = false
		switch k {
		case success:
			b.transition(BreakerClosed, now)
		case failure:
			b.transition(BreakerOpen, now)
		}
	}
}

// reset closes the breaker (a user asked for the server again).
func (b *breaker) reset(now time.Time) {
	if b.state != BreakerClosed || b.consecutive != 0 {
		b.transition(BreakerClosed, now)
	}
}

func (b *breaker) transition(to string, now time.Time) {
	b.state = to
	b.generation++
	b.consecutive = 0
	b.probing = false
	b.retryAt = time.Time{}
	if to == BreakerOpen {
		b.retryAt = now.Add(b.cooldown)
	}
}
