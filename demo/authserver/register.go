package authserver

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
)

// registration is the RFC 7591 client metadata the server understands.
// Unknown members are ignored (RFC 7591 §2).
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

type registrationResponse struct {
	ClientID              string `json:"client_id"`
	ClientSecret          string `json:"client_secret,omitempty"`
	ClientIDIssuedAt      int64  `json:"client_id_issued_at"`
	ClientSecretExpiresAt *int64 `json:"client_secret_expires_at,omitempty"`
	registration
}

// serveRegister is RFC 7591 dynamic client registration. An omitted
// token_endpoint_auth_method means "none" (a public client), not RFC
// 7591's client_secret_basic: a browser cannot keep a secret.
func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	resp, oerr := s.register(w, r)
	if oerr != nil {
		s.event(Event{Kind: EventRegister, Err: oerr.Code, Detail: oerr.Description})
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, oerr.status, oerr)
		return
	}
	s.event(Event{Kind: EventRegister, ClientID: resp.ClientID, Detail: resp.TokenEndpointAuthMethod})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusCreated, resp)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) (*registrationResponse, *oauthError) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return nil, errorf(http.StatusBadRequest, "invalid_client_metadata", "Content-Type must be application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errorf(http.StatusRequestEntityTooLarge, "invalid_client_metadata", "request body too large")
		}
		return nil, errorf(http.StatusBadRequest, "invalid_client_metadata", "cannot read request body")
	}
	var reg registration
	if err := json.Unmarshal(body, &reg); err != nil {
		return nil, errorf(http.StatusBadRequest, "invalid_client_metadata", "body is not a JSON client metadata object")
	}
	if len(reg.RedirectURIs) == 0 {
		return nil, errorf(http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required")
	}
	for _, u := range reg.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return nil, errorf(http.StatusBadRequest, "invalid_redirect_uri", "%v", err)
		}
	}
	if reg.TokenEndpointAuthMethod == "" {
		reg.TokenEndpointAuthMethod = AuthNone
	}
	if !slices.Contains(authMethods, reg.TokenEndpointAuthMethod) {
		return nil, errorf(http.StatusBadRequest, "invalid_client_metadata", "unsupported token_endpoint_auth_method %q", reg.TokenEndpointAuthMethod)
	}
	if len(reg.GrantTypes) == 0 {
		reg.GrantTypes = []string{"authorization_code"}
	}
	for _, g := range reg.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return nil, errorf(http.StatusBadRequest, "invalid_client_metadata", "unsupported grant type %q", g)
		}
	}
	if !slices.Contains(reg.GrantTypes, "authorization_code") {
		return nil, errorf(http.StatusBadRequest, "invalid_client_metadata", "grant_types must include authorization_code")
	}
	if len(reg.ResponseTypes) == 0 {
		reg.ResponseTypes = []string{"code"}
	}
	if len(reg.ResponseTypes) != 1 || reg.ResponseTypes[0] != "code" {
		return nil, errorf(http.StatusBadRequest, "invalid_client_metadata", `response_types must be ["code"]`)
	}
	for sc := range strings.FieldsSeq(reg.Scope) {
		if !slices.Contains(s.scopes, sc) {
			return nil, errorf(http.StatusBadRequest, "invalid_client_metadata", "unsupported scope %q", sc)
		}
	}
	if len(reg.ClientName) > 200 {
		return nil, errorf(http.StatusBadRequest, "invalid_client_metadata", "client_name is too long")
	}

	now := s.now()
	c := &client{
		id:           randomToken("client_")[:7+22], // 128 bits: an identifier, not a secret
		authMethod:   reg.TokenEndpointAuthMethod,
		redirectURIs: slices.Clone(reg.RedirectURIs),
		name:         reg.ClientName,
		grantTypes:   slices.Clone(reg.GrantTypes),
		issuedAt:     now,
	}
	resp := &registrationResponse{ClientID: c.id, ClientIDIssuedAt: now.Unix(), registration: reg}
	if c.authMethod != AuthNone {
		secret := randomToken("secret_")
		c.secretHash = hash(secret)
		resp.ClientSecret = secret
		var never int64
		resp.ClientSecretExpiresAt = &never
	}
	s.mu.Lock()
	s.clients[c.id] = c
	s.mu.Unlock()
	return resp, nil
}
