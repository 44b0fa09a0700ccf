package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
)

// The soak's counting, apart from the browser so that it is unit-tested:
// what the turns of a tab say about its calls, what the demo
// authorization servers' logs say about refreshes, and the verdict.

// soakTurn is one agent turn as a tab recorded it (pages/soak.js).
type soakTurn struct {
	N       int                   `json:"n"`
	Calls   map[string]string     `json:"calls"`   // tool call id → server id (toolcall events)
	Results map[string]soakResult `json:"results"` // tool call id → its result (toolresult events)
	Text    string                `json:"text"`    // the turn's final text
	Error   string                `json:"error"`   // "code: message" when run.done rejected
	Settled bool                  `json:"settled"` // run.done settled within the page's bound
}

// soakResult is one toolresult event.
type soakResult struct {
	ServerID string `json:"serverId"`
	IsError  bool   `json:"isError"`
	Text     string `json:"text"`
}

// soakTally is what a tab's turns add up to.
type soakTally struct {
	Turns, Calls, OK, Failed int
	FailedBy                 map[string]int // failed calls by failureKind
	TurnErrors               map[string]int // rejected turns by error code
	Lost                     []string       // one sentence per lost call
	Absent                   int            // servers missing from a turn's calls (left out of its tool list)
}

// tallyTurns counts a tab's turns. wantCalls is the calls a turn asks
// for (one per server). A call is lost when its turn never settled, when
// no result came for it, or when its turn ended with a text that does not
// quote its result (the model never saw it).
func tallyTurns(tab string, turns []soakTurn, wantCalls int) soakTally {
	t := soakTally{FailedBy: map[string]int{}, TurnErrors: map[string]int{}}
	for _, turn := range turns {
		t.Turns++
		t.Calls += len(turn.Calls)
		if d := wantCalls - len(turn.Calls); d > 0 && turn.Settled {
			t.Absent += d
		}
		if turn.Error != "" {
			code, _, _ := strings.Cut(turn.Error, ":")
			t.TurnErrors[code]++
		}
		ids := make([]string, 0, len(turn.Calls))
		for id := range turn.Calls {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			server := turn.Calls[id]
			r, ok := turn.Results[id]
			switch {
			case !turn.Settled:
				t.Lost = append(t.Lost, fmt.Sprintf("%s turn %d: the call to %s never settled", tab, turn.N, server))
			case !ok:
				t.Lost = append(t.Lost, fmt.Sprintf("%s turn %d: no tool result for the call to %s", tab, turn.N, server))
			case turn.Error == "" && !strings.Contains(turn.Text, r.Text):
				t.Lost = append(t.Lost, fmt.Sprintf("%s turn %d: the model's answer does not quote the result of the call to %s (%.80q)", tab, turn.N, server, r.Text))
			case r.IsError:
				t.Failed++
				t.FailedBy[failureKind(r.Text)]++
			default:
				t.OK++
			}
		}
		if !turn.Settled && len(turn.Calls) == 0 {
			t.Lost = append(t.Lost, fmt.Sprintf("%s turn %d: the turn never settled", tab, turn.N))
		}
	}
	return t
}

// failureKinds name the catalog's honest error results (catalog/texts.go)
// by a phrase each contains, in the order they are tried.
var failureKinds = []struct{ kind, phrase string }{
	{"connection_lost", "was lost while running"},
	{"busy", " is busy (HTTP "},
	{"timeout", "did not finish within"},
	{"breaker_open", "so the app has paused calls to it"},
	{"breaker_probing", "the app is checking whether it is back"},
	{"reconnect_wait", "and will try again in about"},
	{"connect_failed", "The app could not connect to the"},
	{"needs_auth", "needs the user to sign in"},
	{"declined", "was declined or cancelled, so its tools"},
	{"unreachable", "could not run"},
	{"server_error", "failed to run"},
}

// failureKind names an error result's kind, "other" for a text that is
// none of the catalog's.
func failureKind(text string) string {
	for _, k := range failureKinds {
		if strings.Contains(text, k.phrase) {
			return k.kind
		}
	}
	return "other"
}

// refreshFigures are one authorization server's token requests over the
// soak, from its event log.
type refreshFigures struct {
	SignIns       int // code exchanges that issued tokens
	Refreshes     int // refreshes that issued tokens
	RefreshFailed int // refresh requests it refused
	Reuse         int // rotated refresh tokens that came back
	Early         int // refreshes less than half a lifetime after the previous tokens
}

// perExpiry is the refresh requests per access token refreshed: 1 when
// every expiry cost one refresh; NaN without any refresh.
func (f refreshFigures) perExpiry() float64 {
	expiries := f.Refreshes - f.Early
	if expiries <= 0 {
		return math.NaN()
	}
	return float64(f.Refreshes+f.RefreshFailed) / float64(expiries)
}

// countRefreshes reads an authorization server's events. The client
// refreshes an access token once half its lifetime ttl has passed, so
// tokens issued less than ttl/2 after the previous ones (less a second
// for the two clocks' rounding) are a refresh repeated for one expiry.
func countRefreshes(events []authserver.Event, ttl time.Duration) refreshFigures {
	var f refreshFigures
	var last time.Time
	for _, e := range events {
		switch e.Kind {
		case authserver.EventTokenCode:
			if e.Err == "" {
				f.SignIns++
				last = e.Time
			}
		case authserver.EventTokenRefresh:
			if e.Err != "" {
				f.RefreshFailed++
				continue
			}
			f.Refreshes++
			if !last.IsZero() && e.Time.Sub(last) < ttl/2-time.Second {
				f.Early++
			}
			last = e.Time
		case authserver.EventRefreshReuse:
			f.Reuse++
		}
	}
	return f
}

// soakProblems are the reasons the soak fails: lost calls, and refreshes
// repeated or refused (by server id), sign-ins beyond the first.
func soakProblems(tallies []soakTally, refresh map[string]refreshFigures) []string {
	var out []string
	for _, t := range tallies {
		out = append(out, t.Lost...)
	}
	ids := make([]string, 0, len(refresh))
	for id := range refresh {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		f := refresh[id]
		if f.Early > 0 {
			out = append(out, fmt.Sprintf("%s: %d refreshes repeated within one token lifetime", id, f.Early))
		}
		if f.RefreshFailed > 0 || f.Reuse > 0 {
			out = append(out, fmt.Sprintf("%s: %d refresh requests refused (%d reused a rotated refresh token)", id, f.RefreshFailed, f.Reuse))
		}
		if f.SignIns != 1 {
			out = append(out, fmt.Sprintf("%s: %d sign-ins; want 1 (a grant lost or not shared between the tabs)", id, f.SignIns))
		}
	}
	return out
}
