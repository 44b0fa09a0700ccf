package authserver

import (
	"bytes"
	"html/template"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// htmlHeaders sets the headers of every /authorize and /consent response:
// no caching, no framing, no script, and COOP when configured.
func (s *Server) htmlHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("X-Frame-Options", "DENY")
	// No form-action: Chromium applies it to the redirect that follows the
	// consent POST, which goes to the client's redirect URI.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "same-origin")
	if s.cfg.COOP {
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
	}
}

// serveAuthorize is the authorization endpoint (GET only). Errors about the
// client or the redirect URI render an error page; once both are valid,
// every other error is sent to the redirect URI (RFC 6749 §4.1.2.1).
func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	s.htmlHeaders(w)
	q := r.URL.Query()
	clientID, ok := single(q, "client_id")
	if !ok || clientID == "" {
		s.event(Event{Kind: EventAuthorize, Err: "invalid_request", Detail: "client_id missing or repeated"})
		s.errorPage(w, http.StatusBadRequest, "invalid_request", "The request has no client_id, or more than one.")
		return
	}
	c := s.lookupClient(r, clientID)
	if c == nil {
		s.event(Event{Kind: EventAuthorize, Err: "invalid_client", Detail: "unknown client_id"})
		s.errorPage(w, http.StatusBadRequest, "invalid_client", "The client is not registered with this server.")
		return
	}
	redirectURI, ok := single(q, "redirect_uri")
	if !ok || redirectURI == "" {
		s.event(Event{Kind: EventAuthorize, ClientID: clientID, Err: "invalid_request", Detail: "redirect_uri missing or repeated"})
		s.errorPage(w, http.StatusBadRequest, "invalid_request", "The request has no redirect_uri, or more than one.")
		return
	}
	if !slices.Contains(c.redirectURIs, redirectURI) {
		s.event(Event{Kind: EventAuthorize, ClientID: clientID, Err: "invalid_request", Detail: "redirect_uri not registered"})
		s.errorPage(w, http.StatusBadRequest, "invalid_request", "The redirect_uri does not exactly match one registered for this client.")
		return
	}
	state, _ := single(q, "state")
	req, oerr := s.validateAuthorize(q, c)
	if oerr != nil {
		s.event(Event{Kind: EventAuthorize, ClientID: clientID, Err: oerr.Code, Detail: oerr.Description})
		s.redirect(w, r, redirectURI, url.Values{"error": {oerr.Code}, "error_description": {oerr.Description}, "state": nonEmpty(state)})
		return
	}
	req.redirectURI = redirectURI
	req.state = state
	s.event(Event{Kind: EventAuthorize, ClientID: clientID, Detail: "scope=" + strings.Join(req.scopes, " ")})

	if s.cfg.AutoApprove {
		s.event(Event{Kind: EventConsent, ClientID: clientID, Detail: "approve (auto)"})
		s.approve(w, r, req)
		return
	}
	ticket := randomToken("")
	s.mu.Lock()
	s.sweepLocked(s.now())
	s.consents[hashKey(ticket)] = &pending{req: *req, expires: s.now().Add(s.cfg.ConsentTTL)}
	s.mu.Unlock()
	s.consentPage(w, req, ticket)
}

func nonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

// validateAuthorize checks what follows the client and redirect URI.
func (s *Server) validateAuthorize(q url.Values, c *client) (*authzRequest, *oauthError) {
	bad := func(code, format string, args ...any) (*authzRequest, *oauthError) {
		return nil, errorf(http.StatusBadRequest, code, format, args...)
	}
	for k, v := range q {
		if len(v) > 1 && k != "resource" {
			return bad("invalid_request", "parameter %s is repeated", k)
		}
	}
	rt, _ := single(q, "response_type")
	switch {
	case rt == "":
		return bad("invalid_request", "response_type is required")
	case rt != "code":
		return bad("unsupported_response_type", "only response_type=code is supported")
	}
	if !slices.Contains(c.grantTypes, "authorization_code") {
		return bad("unauthorized_client", "the client is not allowed the authorization_code grant")
	}
	if rm, _ := single(q, "response_mode"); rm != "" && rm != "query" {
		return bad("invalid_request", "only response_mode=query is supported")
	}
	challenge, _ := single(q, "code_challenge")
	method, _ := single(q, "code_challenge_method")
	if challenge == "" {
		return bad("invalid_request", "PKCE is required: code_challenge is missing")
	}
	if method != "S256" {
		// An absent method means "plain" (RFC 7636 §4.3).
		return bad("invalid_request", "code_challenge_method must be S256")
	}
	if !isBase64URL(challenge) || len(challenge) != 43 {
		return bad("invalid_request", "code_challenge is not a base64url SHA-256 value")
	}
	resources := q["resource"]
	switch len(resources) {
	case 0:
		return bad("invalid_target", "resource is required (RFC 8707)")
	case 1:
	default:
		return bad("invalid_target", "exactly one resource is supported")
	}
	resource, ok := normalizeResource(resources[0])
	if !ok || s.resources[resource] == "" {
		return bad("invalid_target", "unknown resource")
	}
	scopeParam, _ := single(q, "scope")
	var scopes []string
	for sc := range strings.FieldsSeq(scopeParam) {
		if !slices.Contains(s.scopes, sc) {
			return bad("invalid_scope", "unsupported scope %q", sc)
		}
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	if len(scopes) == 0 {
		if len(s.defScopes) == 0 {
			return bad("invalid_scope", "scope is required")
		}
		scopes = slices.Clone(s.defScopes)
	}
	return &authzRequest{
		clientID:   c.id,
		clientName: c.name,
		challenge:  challenge,
		resource:   resource,
		scopes:     scopes,
	}, nil
}

func isBase64URL(s string) bool {
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// serveConsent takes the consent form back. The ticket is unguessable,
// single-use, short-lived and names the validated request server-side, so
// the form needs no cookie and cannot be forged from another site.
func (s *Server) serveConsent(w http.ResponseWriter, r *http.Request) {
	s.htmlHeaders(w)
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, s.issuer) {
		s.event(Event{Kind: EventConsent, Err: "invalid_request", Detail: "cross-origin consent POST"})
		s.errorPage(w, http.StatusForbidden, "invalid_request", "The consent form was posted from another origin.")
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		s.errorPage(w, http.StatusBadRequest, "invalid_request", "Unexpected form encoding.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, http.StatusBadRequest, "invalid_request", "The form could not be read.")
		return
	}
	ticket, ok1 := single(r.PostForm, "ticket")
	action, ok2 := single(r.PostForm, "action")
	if !ok1 || !ok2 || ticket == "" || (action != "approve" && action != "deny") {
		s.event(Event{Kind: EventConsent, Err: "invalid_request", Detail: "malformed consent form"})
		s.errorPage(w, http.StatusBadRequest, "invalid_request", "The consent form is incomplete.")
		return
	}
	now := s.now()
	s.mu.Lock()
	p := s.consents[hashKey(ticket)]
	delete(s.consents, hashKey(ticket)) // single use, whatever happens next
	s.mu.Unlock()
	if p == nil || now.After(p.expires) {
		s.event(Event{Kind: EventConsent, Err: "invalid_request", Detail: "unknown, used or expired consent ticket"})
		s.errorPage(w, http.StatusBadRequest, "invalid_request", "This consent page has expired or was already used. Start the sign-in again.")
		return
	}
	s.event(Event{Kind: EventConsent, ClientID: p.req.clientID, Detail: action})
	if action == "deny" {
		s.redirect(w, r, p.req.redirectURI, url.Values{
			"error":             {"access_denied"},
			"error_description": {"The user denied the request."},
			"state":             nonEmpty(p.req.state),
		})
		return
	}
	s.approve(w, r, &p.req)
}

// approve issues a code for req and redirects to the client.
func (s *Server) approve(w http.ResponseWriter, r *http.Request, req *authzRequest) {
	c := randomToken("")
	now := s.now()
	s.mu.Lock()
	s.sweepLocked(now)
	s.codes[hashKey(c)] = &code{req: *req, expires: now.Add(s.cfg.CodeTTL)}
	s.mu.Unlock()
	s.redirect(w, r, req.redirectURI, url.Values{"code": {c}, "state": nonEmpty(req.state)})
}

// redirect sends a 302 to the (validated) redirect URI with params and
// iss (RFC 9207) added to its query.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, redirectURI string, params url.Values) {
	u, err := url.Parse(redirectURI)
	if err != nil { // validated at registration
		s.errorPage(w, http.StatusInternalServerError, "server_error", "Bad redirect URI.")
		return
	}
	q := u.Query()
	for k, v := range params {
		if len(v) > 0 {
			q[k] = v
		}
	}
	q.Set("iss", s.issuer)
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>{{.Title}}</title>
<link rel="stylesheet" href="` + StylesheetPath + `">
</head>
<body>
<main>
<p class="brand">mcpwasm demo authorization server</p>
{{if .Error}}
<h1>Sign-in error</h1>
<p class="error"><code>{{.Error}}</code></p>
<p>{{.Description}}</p>
{{else}}
<h1>Allow access?</h1>
<p><strong id="client-name">{{.ClientName}}</strong> wants to access</p>
<p class="resource"><code id="resource">{{.Resource}}</code></p>
<p>as <strong>{{.Subject}}</strong>, with these permissions:</p>
<ul id="scopes">{{range .Scopes}}<li><code>{{.}}</code></li>{{end}}</ul>
<p class="note">You will be sent back to <code id="redirect-uri">{{.RedirectURI}}</code>.</p>
<form method="post" action="` + ConsentPath + `">
<input type="hidden" name="ticket" value="{{.Ticket}}">
<button type="submit" id="approve" name="action" value="approve">Approve</button>
<button type="submit" id="deny" name="action" value="deny">Deny</button>
</form>
{{end}}
</main>
</body>
</html>
`))

type pageData struct {
	Title       string
	Error       string
	Description string
	ClientName  string
	Resource    string
	Subject     string
	Scopes      []string
	RedirectURI string
	Ticket      string
}

func (s *Server) consentPage(w http.ResponseWriter, req *authzRequest, ticket string) {
	name := req.clientName
	if name == "" {
		name = "Unnamed client " + req.clientID
	}
	s.renderPage(w, http.StatusOK, pageData{
		Title:       "Allow access? — mcpwasm demo",
		ClientName:  name,
		Resource:    s.resources[req.resource],
		Subject:     s.cfg.Subject,
		Scopes:      req.scopes,
		RedirectURI: req.redirectURI,
		Ticket:      ticket,
	})
}

func (s *Server) errorPage(w http.ResponseWriter, status int, code, description string) {
	s.renderPage(w, status, pageData{Title: "Sign-in error — mcpwasm demo", Error: code, Description: description})
}

func (s *Server) renderPage(w http.ResponseWriter, status int, d pageData) {
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, d); err != nil {
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

const stylesheet = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2129;margin:0}
main{max-width:28rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.15)}
.brand{color:#68707d;font-size:.85rem;margin:0 0 1rem}
h1{font-size:1.4rem;margin:0 0 1rem}
code{word-break:break-all}
.error{color:#b00020}
.note{color:#68707d;font-size:.85rem}
form{display:flex;gap:.75rem;margin-top:1.5rem}
button{flex:1;font-size:1rem;padding:.6rem;border-radius:6px;border:1px solid #c4c8cf;background:#fff;cursor:pointer}
#approve{background:#1a73e8;border-color:#1a73e8;color:#fff}
`

func serveStylesheet(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Write([]byte(stylesheet))
}
