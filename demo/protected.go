package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/demo/dpopcheck"
)

// ProtectedResourceMetadataPath is the RFC 9728 well-known prefix. The
// metadata of the MCP endpoint is served at this prefix followed by the
// endpoint's path ("/.well-known/oauth-protected-resource/mcp").
const ProtectedResourceMetadataPath = "/.well-known/oauth-protected-resource"

// maxPeekBody bounds the JSON-RPC body the step-up check reads. A larger
// POST to a server with scoped tools is refused with 413, since it cannot
// be checked.
const maxPeekBody = 8 << 20

// Protection configures [ProtectedHandler].
type Protection struct {
	// Issuer is the authorization server's issuer URL, published as the
	// only entry of authorization_servers.
	Issuer string

	// Verifier checks bearer tokens, including their audience (for example
	// authserver's Server.Verifier(Resource)). Required.
	Verifier auth.TokenVerifier

	// Resource is the canonical URI of the MCP endpoint, for example
	// "http://127.0.0.1:8081/mcp": the "resource" of the protected resource
	// metadata and the audience tokens must have. Required.
	Resource string

	// Scopes are required on every request and are the metadata's
	// scopes_supported, so a client asks for them at first login. A token
	// lacking one gets 403 insufficient_scope.
	Scopes []string

	// ToolScopes maps a tool name to a scope needed to call it. They are
	// not advertised in the metadata: a client learns them from the 403
	// insufficient_scope challenge of tools/call (step-up authorization).
	ToolScopes map[string]string

	// HideWWWAuthenticate leaves WWW-Authenticate out of
	// Access-Control-Expose-Headers (see cors.Options), so a browser
	// client cannot read the challenges.
	HideWWWAuthenticate bool

	// DPoP takes DPoP-bound tokens only (RFC 9449): "Authorization: DPoP"
	// with a proof that carries this server's nonce and is signed by the
	// key the token is bound to (Verifier's TokenInfo.Extra[ExtraDPoPKey]).
	// Challenges then use the DPoP scheme; a proof without the current
	// nonce gets 401 error="use_dpop_nonce" with DPoP-Nonce.
	DPoP bool

	// NoMetadata publishes no protected resource metadata, and the
	// challenges name none (as some gateways do): a client must be told
	// the authorization server by hand. Not with DPoP.
	NoMetadata bool
}

// ProtectedHandler serves the same demo server as [Handler], with its MCP
// endpoints ([StreamablePath], [SSEPath]) behind go-sdk's
// auth.RequireBearerToken and a scope check, plus the RFC 9728 protected
// resource metadata:
//
//   - at ProtectedResourceMetadataPath + the path of p.Resource (the
//     path-inserted form), with resource = p.Resource;
//   - at ProtectedResourceMetadataPath (the root), with resource = the
//     origin of p.Resource, as RFC 9728 §3.3 requires of that URL.
//
// A request without a valid token gets 401 with
// WWW-Authenticate: Bearer resource_metadata="…". A token without one of
// p.Scopes, or a tools/call of a tool in p.ToolScopes whose scope the token
// lacks, gets 403 with WWW-Authenticate: Bearer error="insufficient_scope",
// scope="…" (the token's scopes plus the missing ones), resource_metadata.
// Everything is behind the CORS middleware of opts.CORS. With p.DPoP the
// challenges use the DPoP scheme instead (see [Protection.DPoP]).
//
// The legacy HTTP+SSE endpoint takes the same tokens (audience p.Resource).
// It panics if p.Verifier or p.Resource is missing.
func ProtectedHandler(opts Options, p Protection) http.Handler {
	if p.Verifier == nil {
		panic("demo.ProtectedHandler: Protection.Verifier is nil")
	}
	ru, err := url.Parse(p.Resource)
	if err != nil || !ru.IsAbs() || ru.Host == "" {
		panic(fmt.Sprintf("demo.ProtectedHandler: Protection.Resource %q is not an absolute URL", p.Resource))
	}
	origin := ru.Scheme + "://" + ru.Host
	resourcePath := strings.TrimSuffix(ru.EscapedPath(), "/")
	metadataURL := origin + ProtectedResourceMetadataPath + resourcePath
	if p.NoMetadata {
		if p.DPoP {
			panic("demo.ProtectedHandler: Protection.NoMetadata and DPoP exclude each other")
		}
		metadataURL = ""
	}

	prm := func(resource string) http.Handler {
		return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:               resource,
			AuthorizationServers:   []string{p.Issuer},
			ScopesSupported:        p.Scopes,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "mcpwasm demo MCP server",
		})
	}
	bearer := auth.RequireBearerToken(p.Verifier, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: metadataURL,
	})
	if p.DPoP {
		bearer = dpopGuard(p, dpopcheck.New(dpopcheck.Options{RequireNonce: true}), metadataURL)
	}
	guard := func(h http.Handler) http.Handler {
		return bearer(scopeGuard(p, metadataURL, h))
	}

	mux := mcpMux(opts, guard)
	if !p.NoMetadata {
		mux.Handle(ProtectedResourceMetadataPath, prm(origin))
		if resourcePath != "" {
			mux.Handle(ProtectedResourceMetadataPath+resourcePath, prm(p.Resource))
		}
	}
	c := opts.CORS
	c.HideWWWAuthenticate = c.HideWWWAuthenticate || p.HideWWWAuthenticate
	return cors.Wrap(mux, c)
}

// mcpMux returns the routes of the demo server without CORS: the MCP
// endpoints of a new server, each wrapped in guard when it is not nil, and
// a plain-text index page. [Handler] is cors.Wrap(mcpMux(opts, nil),
// opts.CORS).
func mcpMux(opts Options, guard func(http.Handler) http.Handler) *http.ServeMux {
	s := NewServer(opts)
	getServer := func(*http.Request) *mcp.Server { return s }
	var streamable http.Handler = taskMethods(skillMethods(mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger:         opts.Logger,
		SessionTimeout: opts.SessionTimeout,
		// A fetch aborted by the page ends the tool call, as
		// notifications/cancelled does.
		PropagateRequestCancellation: true,
	})))
	var sse http.Handler = mcp.NewSSEHandler(getServer, nil)
	if guard != nil {
		streamable, sse = guard(streamable), guard(sse)
	}
	mux := http.NewServeMux()
	mux.Handle(StreamablePath, streamable)
	mux.Handle(SSEPath, sse)
	if guard == nil {
		st := newServer(opts, true)
		mux.Handle(StatelessPath, taskMethods(skillMethods(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return st }, &mcp.StreamableHTTPOptions{
			Logger: opts.Logger, Stateless: true, PropagateRequestCancellation: true,
		}))))
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "mcpwasm demo MCP server\n\nStreamable HTTP: "+StreamablePath+"\nLegacy HTTP+SSE: "+SSEPath+"\n")
		if guard == nil {
			io.WriteString(w, "Streamable HTTP without sessions (2026-07-28): "+StatelessPath+"\n")
		}
	})
	return mux
}

// scopeGuard runs after auth.RequireBearerToken: it refuses a token that
// lacks a scope of p.Scopes, or a tools/call of a tool whose scope (in
// p.ToolScopes) the token lacks, with 403 insufficient_scope.
func scopeGuard(p Protection, metadataURL string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := auth.TokenInfoFromContext(r.Context())
		if info == nil {
			http.Error(w, "no token info", http.StatusInternalServerError)
			return
		}
		var missing []string
		for _, sc := range p.Scopes {
			if !slices.Contains(info.Scopes, sc) {
				missing = append(missing, sc)
			}
		}
		if len(p.ToolScopes) > 0 && r.Method == http.MethodPost {
			tools, err := peekToolCalls(r)
			if err != nil {
				if errors.Is(err, errTooLarge) {
					http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
					return
				}
				// Not JSON-RPC the guard understands: the server will
				// refuse it, and no tool runs.
			}
			for _, t := range tools {
				if sc, ok := p.ToolScopes[t]; ok && !slices.Contains(info.Scopes, sc) && !slices.Contains(missing, sc) {
					missing = append(missing, sc)
				}
			}
		}
		if len(missing) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		want := slices.Clone(info.Scopes)
		for _, sc := range append(slices.Clone(p.Scopes), missing...) {
			if !slices.Contains(want, sc) {
				want = append(want, sc)
			}
		}
		scheme := "Bearer"
		if p.DPoP {
			scheme = "DPoP"
		}
		challenge := scheme + fmt.Sprintf(` error="insufficient_scope", scope=%q`, strings.Join(want, " "))
		if metadataURL != "" {
			challenge += fmt.Sprintf(`, resource_metadata=%q`, metadataURL)
		}
		w.Header().Set("WWW-Authenticate", challenge+fmt.Sprintf(`, error_description=%q`, "this request needs scope "+strings.Join(missing, " ")))
		http.Error(w, "insufficient scope: needs "+strings.Join(missing, " "), http.StatusForbidden)
	})
}

var errTooLarge = errors.New("body too large")

// peekToolCalls returns the tool names of the tools/call requests in r's
// JSON-RPC body (one message or a batch) and restores the body. Every
// "name" key of params is returned, in any letter case and however often it
// repeats, so that a parser that reads duplicate or differently-cased keys
// otherwise than this one cannot smuggle a call past the check.
func peekToolCalls(r *http.Request) ([]string, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPeekBody+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{bytes.NewReader(body), r.Body}
	if err != nil {
		return nil, err
	}
	if len(body) > maxPeekBody {
		return nil, errTooLarge
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	var msgs []json.RawMessage
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &msgs); err != nil {
			return nil, err
		}
	} else {
		msgs = []json.RawMessage{trimmed}
	}
	var names []string
	for _, m := range msgs {
		methods, err := objectValues(m, "method")
		if err != nil {
			return nil, err
		}
		call := false
		for _, v := range methods {
			var s string
			if json.Unmarshal(v, &s) == nil && strings.EqualFold(s, "tools/call") {
				call = true
			}
		}
		if !call {
			continue
		}
		params, err := objectValues(m, "params")
		if err != nil {
			return nil, err
		}
		for _, pv := range params {
			vals, err := objectValues(pv, "name")
			if err != nil {
				continue
			}
			for _, v := range vals {
				var s string
				if json.Unmarshal(v, &s) == nil {
					names = append(names, s)
				}
			}
		}
	}
	return names, nil
}

// objectValues returns the values of every member of the JSON object data
// whose key equals key case-insensitively, duplicates included.
func objectValues(data []byte, key string) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if strings.EqualFold(k, key) {
			out = append(out, v)
		}
	}
	return out, nil
}
