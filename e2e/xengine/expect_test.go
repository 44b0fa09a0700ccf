package xengine

import (
	"fmt"
	"strings"
	"testing"
)

// expectation is a failure an engine is known to have in a runtime mode,
// written down where the engine truly differs: the scenario must still
// fail this way (if it passes, the test says to remove the entry).
type expectation struct {
	Engine, Runtime, Scenario string
	// Code and Contains identify the failure: the MCPError code and a
	// piece of its message.
	Code, Contains string
	Reason         string
}

// expectedFailures is every engine × runtime × scenario that fails by
// design of the engine, and how. None does today: WebKit's SharedWorker
// cannot store a CryptoKey, and load() then runs Go in a dedicated Worker
// (docs/JSAPI.md, Runtimes).
var expectedFailures = []expectation{}

func expectedFor(t *testing.T) *expectation {
	name := t.Name()
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i]
	}
	for i, e := range expectedFailures {
		if e.Engine == browser.Name() && e.Runtime == runtimeMode() && e.Scenario == name {
			return &expectedFailures[i]
		}
	}
	return nil
}

// loginResult is how authorize() settled.
type loginResult struct {
	OK    bool   `json:"ok"`
	State string `json:"state"`
	Error *jsErr `json:"error"`
}

func (r loginResult) String() string {
	if r.Error != nil {
		return fmt.Sprintf("state %s, error %s: %s", r.State, r.Error.Code, r.Error.Message)
	}
	return fmt.Sprintf("ok=%v state %s", r.OK, r.State)
}

// signedIn checks a sign-in's outcome against expectedFailures: true when
// it signed in as it should; false when the scenario must stop there
// because this engine fails as written down (the test passes, and says
// so); the test fails otherwise.
func (w *world) signedIn(r loginResult) bool {
	w.t.Helper()
	exp := expectedFor(w.t)
	ok := r.OK && r.State == "connected"
	switch {
	case exp == nil && ok:
		return true
	case exp == nil:
		w.t.Fatalf("sign-in: %s; want connected", r)
	case ok:
		w.t.Errorf("sign-in now works in %s, runtime %s: remove %s from expectedFailures (it said: %s)", exp.Engine, exp.Runtime, exp.Scenario, exp.Reason)
		return true
	case r.Error != nil && r.Error.Code == exp.Code && strings.Contains(r.Error.Message, exp.Contains):
		w.t.Logf("EXPECTED FAILURE in %s, runtime %s: %s (%s); the scenario stops here", exp.Engine, exp.Runtime, r, exp.Reason)
	default:
		w.t.Fatalf("sign-in: %s; want the expected failure %s %q (%s)", r, exp.Code, exp.Contains, exp.Reason)
	}
	return false
}
