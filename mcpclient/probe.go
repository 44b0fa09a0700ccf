package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server/discover probe of a connect that knows nothing of the
// server's era (no hint for the URL, no era for its origin) goes out
// bare: without the standard headers of protocol 2026-07-28 (Mcp-Method,
// Mcp-Name, Mcp-Param-*). A deployed 2025-11-25 server allows only its
// own request headers in CORS (Content-Type, Authorization,
// Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID); a probe carrying
// one more fails its preflight, and the browser logs that in the page's
// console whatever the client does next. Bare, the probe reaches such a
// server, which refuses it, and go-sdk goes on with initialize. A
// 2026-07-28 server that requires the standard headers answers the bare
// probe with HTTP 400 and the JSON-RPC error -32020 (header mismatch):
// then, and only then, the probe is sent again at once with its headers,
// and its answer is the one go-sdk (and the operation's record) sees.

type bareProbeKey struct{}

// withBareProbe marks ctx's connect as one whose server/discover probe
// goes out bare.
func withBareProbe(ctx context.Context) context.Context {
	return context.WithValue(ctx, bareProbeKey{}, true)
}

func bareProbe(ctx context.Context) bool {
	b, _ := ctx.Value(bareProbeKey{}).(bool)
	return b
}

// maxMismatchBody caps how much of a refused bare probe's answer is read
// to find the header-mismatch error.
const maxMismatchBody = 16 << 10

// sendProbe sends req, a server/discover POST, through t.guard: bare
// when its connect asks for that, and again as it is when the server
// answers the bare one with a header mismatch. peek found the probe by
// reading req.GetBody, so the body can be sent twice.
func (t *roundTripper) sendProbe(req *http.Request) (*http.Response, error) {
	bare := req.Clone(req.Context())
	stripped := false
	for k := range bare.Header {
		if k == "Mcp-Method" || k == "Mcp-Name" || strings.HasPrefix(k, "Mcp-Param-") {
			delete(bare.Header, k)
			stripped = true
		}
	}
	if !stripped {
		return t.guard.RoundTrip(req)
	}
	resp, err := t.guard.RoundTrip(bare)
	if err != nil || !headerMismatch(resp) {
		return resp, err
	}
	// A new request through the guard, as a busy retry is: fresh
	// credentials and DPoP proof.
	again := req.Clone(req.Context())
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	again.Body = body
	return t.guard.RoundTrip(again)
}

// headerMismatch reports whether resp is HTTP 400 with a JSON body
// carrying the JSON-RPC error -32020 (header mismatch); its body is then
// closed, else left readable from its start.
func headerMismatch(resp *http.Response) bool {
	if resp.StatusCode != http.StatusBadRequest || mediaType(resp) != "application/json" {
		return false
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxMismatchBody))
	var m struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(head, &m) == nil && m.JSONRPC == "2.0" && m.Error != nil && m.Error.Code == mcp.CodeHeaderMismatch {
		resp.Body.Close()
		return true
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	return false
}
