package mcpclient

import (
	"context"
	"encoding/json"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// input is something that happened to a client: its own connects and
// sessions, the host's requests, and its sign-in's progress. Every state
// change goes through [Client.apply], which checks the input against the
// state it arrives in (see next).
type input int

const (
	inConnect       input = iota // a connect starts
	inConnected                  // it succeeded
	inConnectFailed              // it failed (err)
	inSessionLost                // the server or the network ended the session (err)
	inDisconnect                 // the host ended the session but keeps the client
	inSignedOut                  // the host signed out: the session ends, a sign-in is needed
	inClose                      // the host closed the client for good
	inAuthNeeded                 // the sign-in side needs a sign-in (err says why)
	inAuthStarted                // a sign-in runs
	inAuthGranted                // a grant is held (new, refreshed or from another page)
	inAuthDeclined               // the person declined a sign-in (err)
	inAuthFailed                 // a sign-in failed (err)
)

var inputNames = [...]string{"connect", "connected", "connect failed", "session lost", "disconnect",
	"signed out", "close", "auth needed", "auth started", "auth granted", "auth declined", "auth failed"}

func (in input) String() string { return inputNames[in] }

// facts are what the next state depends on besides the current one.
type facts struct {
	session    bool  // a session is live
	connecting bool  // a connect runs
	wanted     bool  // the host asked for a session (Connect or Authorize) and has not ended it
	err        error // the input's error, if any
}

// step is the outcome of an input: the next state, whether the input was
// legal in the state it arrived in, and what the client must do about it.
type step struct {
	to        State
	ok        bool
	drop      bool // end the live session
	reconnect bool // start a connect, for a host still waiting for one
}

// next is the state machine of a client. An input that cannot arrive in a
// state (ok false) is a bug in this package: the state is kept, and tests
// fail on it (see illegal).
func next(from State, in input, f facts) step {
	keep := step{to: from, ok: true}
	if from == StateClosed || in == inClose {
		return step{to: StateClosed, ok: true, drop: true}
	}
	switch in {
	case inConnect:
		if f.session || f.connecting {
			return step{to: from} // Connect returns early or joins: never here
		}
		if from == StateAuthorizing || from == StateConnecting || from == StateReconnecting {
			// A sign-in on screen shows as such; a reconnect the client
			// started by itself already said connecting (or reconnecting:
			// each probe of the reconnect loop is a connect).
			return keep
		}
		return step{to: StateConnecting, ok: true}
	case inConnected:
		switch from {
		case StateConnecting, StateAuthorizing, StateNeedsAuth, StateDeclined, StateFailed, StateReconnecting:
			return step{to: StateConnected, ok: true}
		}
		return step{to: from}
	case inConnectFailed:
		if from == StateConnected {
			return step{to: from}
		}
		if from == StateIdle {
			return keep // a Disconnect ended the connect: the client stays idle
		}
		if from == StateReconnecting && f.wanted && retryable(f.err) {
			return keep // the reconnect loop probes again later
		}
		return step{to: stateFor(f.err), ok: true}
	case inSessionLost:
		if from == StateConnected || from == StateAuthorizing {
			if f.wanted {
				return step{to: StateReconnecting, ok: true, drop: true}
			}
			return step{to: StateFailed, ok: true, drop: true}
		}
		return keep
	case inDisconnect:
		return step{to: StateIdle, ok: true, drop: true}
	case inSignedOut:
		return step{to: StateNeedsAuth, ok: true, drop: true}
	case inAuthNeeded:
		switch {
		case f.connecting:
			return keep // the connect fails next, as auth_required
		case from == StateConnected:
			// The grant is gone (signed out here or elsewhere, refresh
			// refused): the session cannot go on as it was.
			return step{to: StateNeedsAuth, ok: true, drop: true}
		}
		return step{to: StateNeedsAuth, ok: true}
	case inAuthStarted:
		return step{to: StateAuthorizing, ok: true}
	case inAuthGranted:
		switch {
		case f.session:
			return step{to: StateConnected, ok: true}
		case from == StateReconnecting:
			return keep // the reconnect loop's probe (or its next) uses the grant
		case f.connecting:
			return step{to: StateConnecting, ok: true}
		case f.wanted && from != StateIdle:
			// A grant arrived (from another tab, a redirect return) while
			// the host waited for one: connect now.
			return step{to: StateConnecting, ok: true, reconnect: true}
		case from == StateAuthorizing:
			return step{to: StateIdle, ok: true}
		}
		return keep
	case inAuthDeclined, inAuthFailed:
		if f.session && from == StateAuthorizing {
			// A step-up that ended without a grant (declined, a blocked
			// window): the session goes on with the grant it had.
			return step{to: StateConnected, ok: true}
		}
		if f.session || f.connecting {
			return keep // the session goes on; a connect fails next
		}
		if in == inAuthDeclined {
			return step{to: StateDeclined, ok: true}
		}
		return step{to: StateFailed, ok: true}
	}
	return step{to: from}
}

// illegal, when set (by tests), hears of every input the state machine
// refused.
var illegal func(from State, in input)

// apply feeds one input to the state machine and acts on its step: the
// state change (with its "statechange" event), ending the session, or a
// reconnect for a host waiting for a grant.
func (c *Client) apply(in input, err error) {
	c.mu.Lock()
	after := c.applyLocked(in, err)
	c.mu.Unlock()
	after()
}

// applyLocked is apply with c.mu held: it changes the state and returns
// the rest (closing the dropped session, the event, the reconnect), for
// the caller to run once it has unlocked.
func (c *Client) applyLocked(in input, err error) (after func()) {
	from := c.state
	s := next(from, in, facts{session: c.session != nil, connecting: c.connecting != nil, wanted: c.wanted, err: err})
	if !s.ok {
		return func() {
			if illegal != nil {
				illegal(from, in)
			}
		}
	}
	var dropped *mcp.ClientSession
	if s.drop && c.session != nil {
		dropped, c.session = c.session, nil
	}
	if in == inDisconnect || in == inClose {
		c.wanted = false
	}
	var endConnect context.CancelCauseFunc
	if in == inDisconnect {
		// The running connect ends; one that starts after this waits
		// for it to finish, then runs on its own.
		endConnect, c.endConnect = c.endConnect, nil
	}
	c.state = s.to
	prevErr := c.stateErr
	c.stateErr = nil
	if s.to == StateNeedsAuth || s.to == StateDeclined || s.to == StateFailed || s.to == StateReconnecting {
		c.stateErr = err // what a call says while the client is in this state
	}
	if s.to == StateReconnecting && err == nil {
		c.stateErr = prevErr // a probe's outcome without news keeps the last reason
	}
	co := c.lastCO
	startLoop := s.to == StateReconnecting && from != StateReconnecting
	if s.to != from {
		c.re.changedLocked()
	}
	var session *SessionInfo
	if s.to == StateConnected && c.session != nil {
		session = sessionInfo(c.session.InitializeResult(), c.rawCaps)
	}
	t := transition{from: from, in: in, err: err, s: s, dropped: dropped, endConnect: endConnect, session: session, co: co, startLoop: startLoop}
	return func() { c.afterApply(t) }
}

// transition is what applyLocked decided under c.mu and leaves for
// afterApply: the input and its step, and what was taken out of the client
// for the work that must not run under the lock.
type transition struct {
	from       State
	in         input
	err        error
	s          step
	dropped    *mcp.ClientSession      // the session the input ended, to close
	endConnect context.CancelCauseFunc // the connect a disconnect ends
	session    *SessionInfo            // the live session, when the step is to StateConnected
	co         ConnectOptions          // the handlers a reconnect runs with
	startLoop  bool                    // the step entered StateReconnecting: start its loop
}

// afterApply is the part of apply that runs once c.mu is released: it ends
// the connect and closes the session applyLocked took out, tells the host
// of a state change, and starts a reconnect. None of it may run under
// c.mu: the host's event handler may call back into the client, and
// closing a session can wait on the network.
func (c *Client) afterApply(t transition) {
	if t.endConnect != nil {
		t.endConnect(errDisconnected)
	}
	if t.dropped != nil {
		_ = t.dropped.Close()
	}
	if t.s.to != t.from || (t.session != nil && t.in == inConnected) {
		ev := StateChange{State: t.s.to, Session: t.session}
		if t.err != nil && t.s.to != StateConnected {
			ev.Error = AsError(mcperr.AtServer(t.err, Host(c.url)))
		}
		c.emit("statechange", ev)
	}
	if t.s.reconnect {
		go func() { _ = c.connectOnce(c.ctx, t.co) }()
	}
	if t.startLoop {
		go c.reconnectLoop(t.co, t.err)
	}
}

// SessionInfo is what the server said when the session started.
// Capabilities is the server's capabilities object as it sent it (JSON),
// or go-sdk's reading of it when the raw object was not seen.
type SessionInfo struct {
	ServerInfo      *mcp.Implementation `json:"serverInfo"`
	Capabilities    any                 `json:"capabilities"`
	Instructions    string              `json:"instructions,omitempty"`
	ProtocolVersion string              `json:"protocolVersion"`
}

func sessionInfo(ir *mcp.InitializeResult, raw json.RawMessage) *SessionInfo {
	if ir == nil {
		return nil
	}
	var caps any = ir.Capabilities
	if raw != nil {
		caps = raw
	}
	return &SessionInfo{ServerInfo: ir.ServerInfo, Capabilities: caps, Instructions: ir.Instructions, ProtocolVersion: ir.ProtocolVersion}
}

// Session returns what the server said when the session started, or nil
// when not connected.
func (c *Client) Session() *SessionInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == nil {
		return nil
	}
	return sessionInfo(c.session.InitializeResult(), c.rawCaps)
}
