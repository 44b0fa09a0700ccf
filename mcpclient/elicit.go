package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitationCaps is what a client with an elicitation handler advertises:
// both modes of 2025-11-25 (form, and url, whose page the host shows the
// user). A client without a handler advertises no elicitation at all, so
// a server knows not to ask.
func elicitationCaps() *mcp.ElicitationCapabilities {
	return &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
}

// elicitationHandler puts the checks of what comes from the network around
// the host's handler h. go-sdk has checked the mode and, for a form, the
// requested schema (and checks the accepted content against it); here a
// URL-mode request whose URL is not an absolute https URL (or http on a
// loopback host) is declined without asking h, and the host is told why by
// a warning event; h's answer must have an action the protocol knows, and
// carries content only when accepting a form. h sees the mode always set.
// The timeout of the call the request belongs to (see [WithCallTimeout])
// does not run while h answers.
func (c *Client) elicitationHandler(h func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		p := r.Params
		if p == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "elicitation/create without params"}
		}
		if p.Mode == "" {
			// A request without a mode is a form (2025-06-18 had no
			// other); the host is told so.
			cp := *p
			cp.Mode = "form"
			p = &cp
		}
		url := p.Mode == "url"
		if url {
			if err := CheckElicitationURL(p.URL); err != nil {
				c.emit("warning", Warning{Message: fmt.Sprintf("mcp: the server asked the user to open a page, which was declined: %v", err)})
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
		}
		resume := c.clocks.pause(ctx)
		res, err := h(ctx, p)
		resume()
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client's elicitation handler gave no answer"}
		}
		switch res.Action {
		case "accept":
			if url {
				res.Content = nil
			}
		case "decline", "cancel":
			res.Content = nil
		default:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the client's elicitation handler answered with action %q; want accept, decline or cancel", res.Action)}
		}
		return res, nil
	}
}

// CheckElicitationURL checks the URL of a URL-mode elicitation before a
// host shows it: absolute, https (or http on a loopback host, for local
// development), with a host and no user info. That refuses javascript:,
// data:, file: and relative URLs, and plain http to anywhere else. The
// error names the URL without its query and fragment, which may carry
// secrets.
func CheckElicitationURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("its URL does not parse as a URL")
	}
	shown := shownURL(u)
	switch {
	case !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%s is not an absolute https URL", shown)
	case u.User != nil:
		return fmt.Errorf("%s carries user info", shown)
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback(u.Hostname()):
	default:
		return fmt.Errorf("%s must use https (or http on a loopback host)", shown)
	}
	return nil
}

// shownURL is u as an error may name it: scheme, host and path, at most 120
// characters.
func shownURL(u *url.URL) string {
	s := u.Scheme + ":"
	if u.Host != "" {
		s += "//" + u.Host
	}
	s += u.EscapedPath()
	if u.Opaque != "" {
		s += u.Opaque
	}
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// loopback reports whether host (no port) is localhost or a loopback IP.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// maxURLElicitations bounds the URL-mode elicitations of one -32042 error.
const maxURLElicitations = 4

// urlWaits are the URL-mode elicitations that retried tool calls wait on,
// by elicitation id: notifications/elicitation/complete closes them.
type urlWaits struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (w *urlWaits) add(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	if w.m == nil {
		w.m = map[string]chan struct{}{}
	}
	w.m[id] = ch
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		if w.m[id] == ch {
			delete(w.m, id)
		}
		w.mu.Unlock()
	}
}

func (w *urlWaits) done(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.m[id]; ok {
		close(ch)
		delete(w.m, id)
	}
}

// elicitationComplete handles notifications/elicitation/complete: a call
// waiting on it goes on, and the host hears of it.
func (c *Client) elicitationComplete(_ context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
	if r == nil || r.Params == nil || r.Params.ElicitationID == "" {
		return
	}
	c.elicitWaits.done(r.Params.ElicitationID)
	c.emit("elicitationcomplete", ElicitationComplete{ElicitationID: r.Params.ElicitationID})
}

// urlElicitationRetry answers a tools/call refused with -32042 (URL
// elicitation required, 2025-11-25): each URL-mode elicitation of the
// error's data goes to the host's handler h, through the same checks as an
// elicitation/create request; when the user accepted every one, the call
// waits for the server's notifications/elicitation/complete of each and is
// sent again, once. A decline or cancel, or data that is not a short list
// of URL-mode elicitations with ids, leaves the server's error as the
// call's answer.
func (c *Client) urlElicitationRetry(h func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			var rpcErr *jsonrpc.Error
			if err == nil || method != "tools/call" || !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
				return res, err
			}
			var data struct {
				Elicitations []*mcp.ElicitParams `json:"elicitations"`
			}
			if json.Unmarshal(rpcErr.Data, &data) != nil || len(data.Elicitations) == 0 || len(data.Elicitations) > maxURLElicitations {
				return res, err
			}
			for _, p := range data.Elicitations {
				if p == nil || p.Mode != "url" || p.ElicitationID == "" {
					return res, err
				}
			}
			// Wait for each before asking, so that a notification sent
			// at once is not missed.
			waits := make([]<-chan struct{}, len(data.Elicitations))
			for i, p := range data.Elicitations {
				ch, forget := c.elicitWaits.add(p.ElicitationID)
				defer forget()
				waits[i] = ch
			}
			for _, p := range data.Elicitations {
				ans, herr := h(ctx, &mcp.ElicitRequest{Params: p})
				if herr != nil {
					return nil, herr
				}
				if ans.Action != "accept" {
					return res, err
				}
			}
			for _, ch := range waits {
				select {
				case <-ch:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return next(ctx, method, req)
		}
	}
}
