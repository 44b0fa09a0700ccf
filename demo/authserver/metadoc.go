package authserver

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// metadocTTL is how long a fetched client ID metadata document is cached.
const metadocTTL = 5 * time.Minute

// lookupClient returns the registered client id, or, when client ID
// metadata documents are enabled and id is a URL, the client its document
// describes. Nil means unknown.
func (s *Server) lookupClient(r *http.Request, id string) *client {
	now := s.now()
	s.mu.Lock()
	c := s.clients[id]
	s.mu.Unlock()
	if c != nil && (!c.metadoc || now.Before(c.expires)) {
		return c
	}
	if !s.cfg.ClientIDMetadataDocuments || !looksLikeMetadocURL(id) {
		return nil
	}
	c, err := s.fetchMetadoc(r, id)
	if err != nil {
		s.event(Event{Kind: EventClientMetadoc, ClientID: id, Err: "invalid_client", Detail: err.Error()})
		return nil
	}
	s.event(Event{Kind: EventClientMetadoc, ClientID: id})
	s.mu.Lock()
	s.clients[id] = c
	s.mu.Unlock()
	return c
}

// looksLikeMetadocURL: an https URL with a path (or an http loopback one,
// for the demo), without fragment, userinfo or dot segments.
func looksLikeMetadocURL(id string) bool {
	u, err := url.Parse(id)
	if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil || u.Path == "" || u.Path == "/" {
		return false
	}
	if strings.Contains(u.Path, "/./") || strings.Contains(u.Path, "/../") {
		return false
	}
	return u.Scheme == "https" || (u.Scheme == "http" && isLoopback(u.Hostname()))
}

func (s *Server) fetchMetadoc(r *http.Request, id string) (*client, error) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, id, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.httpc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the client metadata document failed")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("client metadata document: HTTP %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, fmt.Errorf("client metadata document is not application/json")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 5<<10+1))
	if err != nil || len(body) > 5<<10 {
		return nil, fmt.Errorf("client metadata document unreadable or larger than 5 KiB")
	}
	var doc struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		registration
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("client metadata document is not JSON")
	}
	if doc.ClientID != id {
		return nil, fmt.Errorf("client metadata document names another client_id")
	}
	if doc.ClientSecret != "" {
		return nil, fmt.Errorf("client metadata document contains a client_secret")
	}
	if doc.TokenEndpointAuthMethod != "" && doc.TokenEndpointAuthMethod != AuthNone {
		return nil, fmt.Errorf("client metadata document: only token_endpoint_auth_method none is supported")
	}
	if len(doc.RedirectURIs) == 0 {
		return nil, fmt.Errorf("client metadata document has no redirect_uris")
	}
	for _, u := range doc.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return nil, err
		}
	}
	grants := doc.GrantTypes
	if len(grants) == 0 {
		grants = []string{"authorization_code"}
	}
	if !slices.Contains(grants, "authorization_code") {
		return nil, fmt.Errorf("client metadata document does not allow authorization_code")
	}
	name := doc.ClientName
	if len(name) > 200 {
		name = name[:200]
	}
	return &client{
		id:           id,
		authMethod:   AuthNone,
		redirectURIs: doc.RedirectURIs,
		name:         name,
		grantTypes:   grants,
		issuedAt:     s.now(),
		metadoc:      true,
		expires:      s.now().Add(metadocTTL),
	}, nil
}
