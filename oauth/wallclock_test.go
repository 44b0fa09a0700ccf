package oauth

import (
	"strings"
	"testing"
	"time"
)

// TestExpiryIsWallClock: a token's issue and expiry times carry no
// monotonic reading, so comparing them with the handler's clock uses the
// wall clock. In a browser the monotonic clock (performance.now()) may
// stand still while the computer sleeps; a monotonic comparison would
// then keep sending a token the server already considers expired.
func TestExpiryIsWallClock(t *testing.T) {
	tr, err := parseTokenResponse([]byte(`{"access_token":"a","token_type":"Bearer","expires_in":60}`), realClock{})
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{cfg: Config{Clock: realClock{}}}
	for name, v := range map[string]time.Time{"issued": tr.issued, "expiry": tr.expiry, "Handler.now()": h.now()} {
		if s := v.String(); strings.Contains(s, " m=") {
			t.Errorf("%s = %s; want a wall-clock time without a monotonic reading", name, s)
		}
	}
	if got := tr.expiry.Sub(tr.issued); got != time.Minute {
		t.Errorf("expiry - issued = %v; want 1m", got)
	}
}
