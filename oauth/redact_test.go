package oauth

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestSecretTypesPrintRedacted(t *testing.T) {
	g := &Grant{Resource: "https://mcp.example/mcp", AccessToken: "at-SECRET", RefreshToken: "rt-SECRET", ClientSecret: "cs-SECRET"}
	c := &ClientRegistration{ClientID: "id", ClientSecret: "cs-SECRET"}
	p := &PendingFlow{State: "st-SECRET", Verifier: "v-SECRET"}
	cb := &Callback{State: "st-SECRET", Code: "code-SECRET"}
	var out strings.Builder
	for _, v := range []any{g, *g, c, *c, p, *p, cb, *cb} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%q"} {
			fmt.Fprintf(&out, verb+"\n", v)
		}
	}
	var logBuf bytes.Buffer
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("x", "grant", g, "client", c, "pending", p, "callback", cb)
	out.WriteString(logBuf.String())
	if strings.Contains(out.String(), "SECRET") {
		t.Errorf("a secret was printed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "https://mcp.example/mcp") {
		t.Error("redaction hid the non-secret fields too")
	}
}
