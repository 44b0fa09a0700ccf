package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// ParseServers reads a catalog's servers from JSON in either of two forms:
//
//   - this package's own: {"servers": {id: {url, title?, description?,
//     enabled?, allowTools?, denyTools?, …client options}}};
//   - the mcpServers file desktop MCP hosts use: {"mcpServers": {id: {url
//     (or serverUrl), type?, headers?, …}}}, where type (or transport)
//     "http", "streamable-http" and "sse" become the client option
//     transport ("streamable" or "sse"), and "disabled": true turns the
//     server off.
//
// Other top-level keys are ignored, so a whole catalog configuration may be
// passed. Each entry's url, title, description, enabled, allowTools and
// denyTools fill the [ServerConfig] fields; every other key goes, unchanged,
// into [ServerConfig.Client] as one JSON object for the [Factory].
//
// An entry that cannot be used ([ParseEntry] fails) is left out and
// reported in the warnings, while the rest still load: an entry with a
// command (a local stdio server, which a web page cannot start; its warning
// matches [ErrLocalServer]), a url that is not absolute http(s), a bad
// allow/deny pattern, an empty id. The error return is for a document that
// is not JSON or has neither form. Every error is coded invalid_argument.
func ParseServers(data []byte) (map[string]ServerConfig, []error, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil || doc == nil {
		return nil, nil, mcperr.New(mcperr.InvalidArgument, "catalog: the server list must be a JSON object like {\"servers\": {…}} or {\"mcpServers\": {…}}")
	}
	ours, hasOurs := doc["servers"]
	theirs, hasTheirs := doc["mcpServers"]
	var raw json.RawMessage
	var key string
	switch {
	case hasOurs && hasTheirs:
		return nil, nil, mcperr.New(mcperr.InvalidArgument, "catalog: the server list has both \"servers\" and \"mcpServers\"; use one")
	case hasOurs:
		raw, key = ours, "servers"
	case hasTheirs:
		raw, key = theirs, "mcpServers"
	default:
		return nil, nil, mcperr.New(mcperr.InvalidArgument, "catalog: the server list must have a \"servers\" or an \"mcpServers\" object")
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil || entries == nil {
		return nil, nil, mcperr.New(mcperr.InvalidArgument, "catalog: %q must be an object of server entries keyed by id", key)
	}
	ids := make([]string, 0, len(entries))
	for id := range entries {
		ids = append(ids, id)
	}
	slices.Sort(ids) // warnings in a stable order
	out := make(map[string]ServerConfig, len(entries))
	var warnings []error
	for _, id := range ids {
		sc, err := ParseEntry(id, entries[id])
		if err != nil {
			warnings = append(warnings, err)
			continue
		}
		out[id] = sc
	}
	return out, warnings, nil
}

// catalogKeys are the entry keys that fill ServerConfig fields.
var catalogKeys = []string{"url", "title", "description", "enabled", "allowTools", "denyTools"}

// ErrLocalServer is matched (errors.Is) by the error [ParseEntry] and
// [ParseServers] give for a local command (stdio) server entry.
var ErrLocalServer = errors.New("catalog: a local command (stdio) server")

// ParseEntry reads and validates one server entry, raw, as it appears under
// id in either form of [ParseServers]. For a local command (stdio) server it
// returns an error matching [ErrLocalServer]: an entry for a desktop host,
// which a web page cannot start, that a caller may skip with a warning. Any
// other error means the entry is malformed. Every error is coded
// invalid_argument.
func ParseEntry(id string, raw json.RawMessage) (ServerConfig, error) {
	if id == "" {
		return ServerConfig{}, mcperr.New(mcperr.InvalidArgument, "catalog: a server has an empty id; give it a name")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return ServerConfig{}, entryError(id, "the entry must be a JSON object")
	}
	if _, ok := m["command"]; ok {
		return ServerConfig{}, &localServerError{id}
	}
	var sc ServerConfig
	// Hosts spell the URL "url" or "serverUrl".
	if u, ok := m["serverUrl"]; ok {
		if _, dup := m["url"]; !dup {
			m["url"] = u
		}
		delete(m, "serverUrl")
	}
	// Hosts say "disabled": true where this package says "enabled": false.
	if d, ok := m["disabled"]; ok {
		var off bool
		if err := json.Unmarshal(d, &off); err != nil {
			return ServerConfig{}, entryError(id, "disabled must be true or false")
		}
		if _, both := m["enabled"]; !both {
			on := !off
			sc.Enabled = &on
		}
		delete(m, "disabled")
	}
	if err := normalizeTransport(id, m); err != nil {
		return ServerConfig{}, err
	}
	if err := takeFields(id, &sc, m); err != nil {
		return ServerConfig{}, err
	}
	client, err := json.Marshal(m) // map keys come out sorted
	if err != nil {
		return ServerConfig{}, entryError(id, "%v", err)
	}
	sc.Client = client
	if err := validateServer(id, sc); err != nil {
		return ServerConfig{}, err
	}
	return sc, nil
}

// normalizeTransport replaces the entry's "type" (hosts) or "transport" by
// the client option transport: "streamable", "sse" or "auto".
func normalizeTransport(id string, m map[string]json.RawMessage) error {
	for _, k := range []string{"type", "transport"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return entryError(id, "%s must be a string", k)
		}
		switch strings.ToLower(s) {
		case "stdio":
			return &localServerError{id}
		case "http", "streamable-http", "streamable_http", "streamablehttp", "streamable":
			s = "streamable"
		case "sse":
			s = "sse"
		case "auto", "":
			s = "auto"
		default:
			return entryError(id, "transport %q is not one of \"http\", \"streamable-http\", \"sse\"", s)
		}
		delete(m, k)
		m["transport"], _ = json.Marshal(s)
	}
	return nil
}

// takeFields moves the catalogKeys of server id's entry m into sc.
func takeFields(id string, sc *ServerConfig, m map[string]json.RawMessage) error {
	fields := map[string]any{
		"url": &sc.URL, "title": &sc.Title, "description": &sc.Description,
		"allowTools": &sc.AllowTools, "denyTools": &sc.DenyTools,
	}
	for _, k := range catalogKeys {
		v, ok := m[k]
		if !ok {
			continue
		}
		delete(m, k)
		if k == "enabled" {
			var on bool
			if err := json.Unmarshal(v, &on); err != nil {
				return entryError(id, "enabled must be true or false")
			}
			sc.Enabled = &on
			continue
		}
		if err := json.Unmarshal(v, fields[k]); err != nil {
			return entryError(id, "%s has the wrong type", k)
		}
	}
	return nil
}

// localServerError is the error of a local command (stdio) server entry.
type localServerError struct{ id string }

func (e *localServerError) Error() string {
	return fmt.Sprintf("server %q is a local command (stdio) server; a web page can only reach servers over HTTP: give it a url", e.id)
}

func (e *localServerError) MCPErrorCode() mcperr.Code { return mcperr.InvalidArgument }

func (e *localServerError) Is(target error) bool { return target == ErrLocalServer }

// entryError is an invalid_argument error about server id's entry.
func entryError(id, format string, args ...any) error {
	return mcperr.New(mcperr.InvalidArgument, "catalog: server %q: "+format, append([]any{id}, args...)...)
}

// validateServer checks one entry: a non-empty id, an absolute http(s) URL,
// valid allow/deny patterns, and a Client that is a JSON object when set.
func validateServer(id string, sc ServerConfig) error {
	bad := func(format string, args ...any) error { return entryError(id, format, args...) }
	if id == "" {
		return mcperr.New(mcperr.InvalidArgument, "catalog: a server has an empty id; give it a name")
	}
	if sc.URL == "" {
		return bad("it has no url; give it the http(s) URL of its MCP endpoint")
	}
	u, err := url.Parse(sc.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("url %q is not an absolute http(s) URL", sc.URL)
	}
	if err := checkPatterns("allowTools", sc.AllowTools); err != nil {
		return bad("%v", err)
	}
	if err := checkPatterns("denyTools", sc.DenyTools); err != nil {
		return bad("%v", err)
	}
	if len(sc.Client) > 0 {
		t := bytes.TrimSpace(sc.Client)
		if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
			return bad("client options must be a JSON object")
		}
	}
	return nil
}

// displayName is how texts for a model name a server: its title, else its id.
func displayName(id string, sc ServerConfig) string {
	if sc.Title != "" {
		return sc.Title
	}
	return id
}

// String makes a config readable in test failures and logs; the Client
// options are left out since they may hold header values.
func (sc ServerConfig) String() string {
	return fmt.Sprintf("{url %s, title %q, enabled %v, allow %q, deny %q}", sc.URL, sc.Title, sc.Enabled == nil || *sc.Enabled, sc.AllowTools, sc.DenyTools)
}
