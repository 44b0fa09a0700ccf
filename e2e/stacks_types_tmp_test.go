package e2e

// The stack types of the shared browser runner (e2e/stacks_test.go), here
// so that e2e/stacks_oidc_test.go compiles on its own; deleted at merge.

import (
	"context"
	"testing"
	"time"
)

type stack struct {
	name  string
	start func(t *testing.T, pageOrigin string) *stackServer
}

type stackServer struct {
	MCPURL     string                                                  // the MCP endpoint the page connects to
	ClientOpts string                                                  // extra client() options as a JS object literal body ("" for none), e.g. `scopes: ["openid"]`
	Consent    func(t *testing.T, popup context.Context, approve bool) // log in and approve/deny in the popup tab (chromedp on the popup's context)
	TokenTTL   time.Duration                                           // access token lifetime; the runner waits past it to see a refresh
	StepUp     string                                                  // "" when the stack has no step-up; else the tool that needs a higher scope
	Requests   func() []string                                         // optional: requests the AS saw ("POST /token", ...), nil when unknown
}
