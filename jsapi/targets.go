package jsapi

import (
	"reflect"
	"slices"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// TargetKinds are the kinds of the page's objects a host callback names
// as its target, "<kind>:<id>" (Target): a client, a catalog, an agent,
// an agent's run.
var TargetKinds = []string{"client", "catalog", "agent", "run"}

// TargetSep separates a target's kind from the page's id.
const TargetSep = ":"

// GoneReason is the abort reason of the calls of a tab that went away
// (a worker runtime's bye): unlike the page's own abort, it keeps the
// tasks the calls follow for the next page.
const GoneReason = "mcpwasm: the page that made the call went away"

// Target names the page's object id of kind as a host callback's target.
func Target(kind, id string) string { return kind + TargetSep + id }

// Replies reports whether the host callback's caller waits for its answer
// (a Promise); the others are notices.
func (h Host) Replies() bool { return strings.HasPrefix(h.Result, "Promise<") }

// Targeted reports whether the callback is for one of the page's objects
// (its first argument a Target), not for the whole page.
func (h Host) Targeted() bool { return len(h.Args) > 0 && h.Args[0] == "target" }

// IDFields are the arguments of the operations that carry an id the page
// chose for one of its objects (the fields tagged page:"id"): a worker
// runtime puts its tab's prefix before each, so that tabs sharing a
// runtime never collide.
func IDFields() []string {
	var out []string
	for _, o := range Ops {
		t := reflect.TypeOf(o.Args)
		if t == nil || t.Kind() != reflect.Struct {
			continue
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Tag.Get("page") == "id" && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// UnhandledReturn is handleCallback()'s redirect_unhandled error on a
// page that is a redirect sign-in's return that no callback module took:
// mcperr.Present's message of an [mcperr.UnhandledRedirect] (the page
// does not know the server) and a detail; {url} is the page's address.
// A function, not a variable: only the generator of web/jsapi.js needs it,
// and a variable would run mcperr.Present at every module's start.
func UnhandledReturn() ErrorText {
	return ErrorText{
		Message: presented(&mcperr.UnhandledRedirect{URL: "{url}"}),
		Detail:  "the redirect sign-in returned to {url} and no callback module (mcpwasm/callback, oauth/callback.html) ran there; it left no result for handleCallback()",
	}
}

// ErrorText is an error's message and detail, as an MCPError shows them.
type ErrorText struct {
	Message string `json:"message"`
	Detail  string `json:"detail"`
}

func presented(err error) string {
	m, _ := mcperr.Present(err)
	return m
}
