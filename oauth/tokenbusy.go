package oauth

import (
	"context"
	"errors"
	"net/http"

	"github.com/mcpwasm/mcpwasm/internal/busy"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// tokenBusy is how long and how often a token request waits for a busy
// token endpoint (429 or 503: the server did not act on the request, so
// the code or refresh token it carries is still unused). Each attempt is
// built anew by postTokenOnce, with a DPoP proof of its own (a proof is
// single-use, RFC 9449 §11.1).
var tokenBusy busy.Policy

// busyAnswer is postTokenOnce's report of a busy token endpoint: resp's
// status and headers (its body is already read and closed).
type busyAnswer struct{ resp *http.Response }

func (b *busyAnswer) Error() string { return "the token endpoint is busy" }

// waitBusy waits out a busy answer when err is one, before the request is
// sent again (nil), or returns the error that ends the token request: a
// busy endpoint past the retries or a Retry-After past the cap (code http,
// with the status and when to try again), or ctx's end. retry is false
// when err is no busy answer.
func waitBusy(ctx context.Context, clk Clock, err error, retries int) (retry bool, _ error) {
	var b *busyAnswer
	if !errors.As(err, &b) {
		return false, nil
	}
	p := tokenBusy
	if clk != nil {
		p.Now = clk.Now
	}
	switch perr := p.Pause(ctx, b.resp, retries); {
	case perr == nil:
		return true, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	default:
		return false, &Error{Code: mcperr.HTTP, Msg: "oauth: the token endpoint is busy", Err: perr}
	}
}
