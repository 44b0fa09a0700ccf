package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// exchangeIDJAG runs the RFC 8693 token exchange at the identity provider
// (SEP-990 §4): the user's identity assertion for an ID-JAG whose audience
// is the MCP authorization server's issuer and whose resource is the MCP
// server's, for scopes. The ID-JAG is returned opaque.
func (h *Handler) exchangeIDJAG(ctx context.Context, d *discovery, scopes []string) (string, error) {
	ea := h.cfg.EnterpriseAuth
	endpoint := ea.IdPTokenEndpoint
	if endpoint == "" {
		var err error
		if endpoint, err = idpTokenEndpoint(ctx, h.cfg.HTTPClient, ea.IdPIssuer); err != nil {
			return "", err
		}
	}
	subject, err := ea.IdentityAssertion(ctx)
	if err != nil {
		return "", newErr(mcperr.AuthRequired, "the identity assertion (ID token) is not available", redactCallerError(err, subject))
	}
	if subject == "" {
		return "", newErr(mcperr.AuthRequired, "the identity assertion (ID token) is empty", nil)
	}
	stt := ea.SubjectTokenType
	if stt == "" {
		stt = oauthex.TokenTypeIDToken
	}
	form := url.Values{
		"grant_type":           {oauthex.GrantTypeTokenExchange},
		"requested_token_type": {oauthex.TokenTypeIDJAG},
		"audience":             {d.AS.Issuer},
		"resource":             {d.Resource},
		"subject_token":        {subject},
		"subject_token_type":   {stt},
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	cl := clientCreds{id: ea.IdPClientID, method: "none"}
	if ea.IdPClientSecret != "" {
		cl = clientCreds{id: ea.IdPClientID, secret: ea.IdPClientSecret, method: "client_secret_basic"}
	}
	req, err := clientRequest(ctx, endpoint, cl, form)
	if err != nil {
		return "", err
	}
	resp, err := h.cfg.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", tokenErr("the token exchange at the identity provider failed", redactURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		return "", tokenErr("reading the identity provider's token exchange response failed", nil)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(body, &e)
		clean := func(s string) string { return sanitize(redactSecrets(s, subject, cl.secret)) }
		re := &oauth2.RetrieveError{
			Response:         &http.Response{Status: strconv.Itoa(resp.StatusCode), StatusCode: resp.StatusCode},
			ErrorCode:        clean(e.Error),
			ErrorDescription: clean(e.Description),
		}
		msg := fmt.Sprintf("oauth: the identity provider refused to exchange the identity assertion for an ID-JAG (status %d)", resp.StatusCode)
		switch e.Error {
		case "unsupported_grant_type":
			msg = "oauth: the identity provider does not support the token exchange (RFC 8693) for an ID-JAG"
		case "invalid_grant":
			msg = "oauth: the identity provider rejected the identity assertion (expired, or not for this client?)"
		}
		return "", &Error{Code: mcperr.TokenFailed, Msg: msg, Err: re}
	}
	return parseIDJAGResponse(body)
}

// parseIDJAGResponse validates the token exchange response (RFC 8693
// §2.2.1): issued_token_type is the ID-JAG's, access_token a JWT.
func parseIDJAGResponse(body []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var r struct {
		AccessToken     any `json:"access_token"`
		IssuedTokenType any `json:"issued_token_type"`
	}
	if err := dec.Decode(&r); err != nil {
		return "", tokenErr("the identity provider's token exchange response is not a JSON object", nil)
	}
	tt, _ := r.IssuedTokenType.(string)
	if tt != oauthex.TokenTypeIDJAG {
		return "", tokenErr(fmt.Sprintf("the identity provider issued %q, not an ID-JAG (%s)", sanitize(tt), oauthex.TokenTypeIDJAG), nil)
	}
	jag, _ := r.AccessToken.(string)
	switch {
	case jag == "":
		return "", tokenErr("the identity provider's token exchange response has no access_token (the ID-JAG)", nil)
	case len(jag) > maxTokenLen:
		return "", tokenErr(fmt.Sprintf("the ID-JAG is longer than %d bytes", maxTokenLen), nil)
	case strings.Count(jag, ".") != 2 || !isB64Token(jag):
		return "", tokenErr("the ID-JAG the identity provider issued is not a JWT", nil)
	}
	return jag, nil
}

// idpTokenEndpoint discovers the token endpoint of the identity provider
// issuer (OpenID Connect discovery, then RFC 8414), checking that the
// metadata is the issuer's and does not rule out the token exchange.
func idpTokenEndpoint(ctx context.Context, hc *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", discoveryErr("invalid identity provider issuer", nil)
	}
	base := u.Scheme + "://" + u.Host
	p := strings.Trim(u.Path, "/")
	cands := []string{base + "/.well-known/openid-configuration", base + "/.well-known/oauth-authorization-server"}
	if p != "" {
		cands = []string{base + "/" + p + "/.well-known/openid-configuration", base + "/.well-known/oauth-authorization-server/" + p}
	}
	for _, cand := range cands {
		var m struct {
			Issuer              string   `json:"issuer"`
			TokenEndpoint       string   `json:"token_endpoint"`
			GrantTypesSupported []string `json:"grant_types_supported"`
		}
		err := getJSON(ctx, hc, cand, &m)
		if errors.Is(err, errNotFound) {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			continue
		}
		if err != nil {
			return "", discoveryErr("identity provider metadata at "+cand, err)
		}
		switch {
		case m.Issuer != issuer:
			return "", discoveryErr(fmt.Sprintf("identity provider metadata issuer %q does not match %q", sanitize(m.Issuer), sanitize(issuer)), nil)
		case m.TokenEndpoint == "":
			return "", discoveryErr("identity provider metadata has no token_endpoint", nil)
		case len(m.GrantTypesSupported) > 0 && !slices.Contains(m.GrantTypesSupported, oauthex.GrantTypeTokenExchange):
			return "", newErr(mcperr.TokenFailed, fmt.Sprintf("identity provider %q does not support the token exchange: its grant_types_supported (%s) lacks %s",
				sanitize(issuer), sanitizeList(m.GrantTypesSupported), oauthex.GrantTypeTokenExchange), nil)
		}
		if err := checkEndpoint("token_endpoint", m.TokenEndpoint); err != nil {
			return "", discoveryErr("invalid identity provider metadata", err)
		}
		return m.TokenEndpoint, nil
	}
	return "", discoveryErr(fmt.Sprintf("no metadata found for the identity provider %q; configure its token endpoint", sanitize(issuer)), nil)
}
