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

// ErrLocalServer is matched (errors.Is) by the error [ParseEntry] and
// [ParseServers] give for a local command (stdio) server entry.
var ErrLocalServer = errors.New("catalog: a local command (stdio) server")

// ParseEntry reads and validates one server entry, raw, as it appears under
// id in either form of [ParseServers], the way [EntryForm] says. For a
// local command (stdio) server it returns an error matching
// [ErrLocalServer]: an entry for a desktop host, which a web page cannot
// start, that a caller may skip with a warning. Any other error means the
// entry is malformed. Every error is coded invalid_argument.
func ParseEntry(id string, raw json.RawMessage) (ServerConfig, error) {
	f := &EntryForm
	if id == "" {
		return ServerConfig{}, mcperr.New(mcperr.InvalidArgument, "%s", f.Messages.EmptyID)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return ServerConfig{}, entryError(id, "%s", f.Messages.NotObject)
	}
	if _, ok := m[f.LocalKey]; ok {
		return ServerConfig{}, &localServerError{id}
	}
	for _, a := range f.Aliases {
		if v, ok := m[a[0]]; ok {
			if _, dup := m[a[1]]; !dup {
				m[a[1]] = v
			}
			delete(m, a[0])
		}
	}
	for _, n := range f.Negations {
		v, ok := m[n.Key]
		if !ok {
			continue
		}
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return ServerConfig{}, entryError(id, "%s", n.Message)
		}
		if _, both := m[n.Of]; !both {
			m[n.Of], _ = json.Marshal(!b)
		}
		delete(m, n.Key)
	}
	if err := normalizeTransport(id, m); err != nil {
		return ServerConfig{}, err
	}
	var sc ServerConfig
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
	f := &EntryForm
	for _, k := range f.TransportKeys {
		v, ok := m[k]
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return entryError(id, f.Messages.TransportString, k)
		}
		t, known := f.Transports[strings.ToLower(s)]
		switch {
		case !known:
			return entryError(id, f.Messages.Transport, s)
		case t == "":
			return &localServerError{id}
		}
		delete(m, k)
		m["transport"], _ = json.Marshal(t)
	}
	return nil
}

// takeFields moves the Fields of EntryForm from server id's entry m into sc.
func takeFields(id string, sc *ServerConfig, m map[string]json.RawMessage) error {
	fields := map[string]any{
		"url": &sc.URL, "title": &sc.Title, "description": &sc.Description, "enabled": &sc.Enabled, "required": &sc.Required,
		"allowTools": &sc.AllowTools, "denyTools": &sc.DenyTools, "webmcp": &sc.WebMCP,
	}
	for _, fd := range EntryForm.Fields {
		v, ok := m[fd.Name]
		if !ok {
			continue
		}
		delete(m, fd.Name)
		if err := json.Unmarshal(v, fields[fd.Name]); err != nil {
			return entryError(id, "%s", fd.Message)
		}
	}
	return nil
}

// localServerError is the error of a local command (stdio) server entry.
type localServerError struct{ id string }

func (e *localServerError) Error() string {
	return fmt.Sprintf(EntryForm.Messages.Local, e.id)
}

func (e *localServerError) MCPErrorCode() mcperr.Code { return mcperr.InvalidArgument }

func (e *localServerError) Is(target error) bool { return target == ErrLocalServer }

// entryError is an invalid_argument error about server id's entry.
func entryError(id, format string, args ...any) error {
	return mcperr.New(mcperr.InvalidArgument, EntryForm.Messages.Entry, id, fmt.Sprintf(format, args...))
}

// validateServer checks one entry: a non-empty id, an absolute http(s) URL,
// valid allow/deny patterns, and a Client that is a JSON object when set.
// A WebMCP entry, and a view's own tools, have no URL.
func validateServer(id string, sc ServerConfig) error {
	msg := &EntryForm.Messages
	if id == "" {
		return mcperr.New(mcperr.InvalidArgument, "%s", msg.EmptyID)
	}
	if err := checkEntryURL(id, sc); err != nil {
		return err
	}
	if sc.Required && sc.Enabled != nil && !*sc.Enabled {
		return entryError(id, "%s", msg.RequiredOff)
	}
	for _, fd := range EntryForm.Fields {
		if !fd.Globs {
			continue
		}
		patterns := sc.AllowTools
		if fd.Name == "denyTools" {
			patterns = sc.DenyTools
		}
		if p, bad := badPattern(patterns); bad {
			return entryError(id, msg.BadGlob, fd.Name, p)
		}
	}
	if len(sc.Client) > 0 {
		t := bytes.TrimSpace(sc.Client)
		if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
			return entryError(id, "client options must be a JSON object")
		}
	}
	return nil
}

// checkEntryURL checks that an entry has an absolute http(s) URL, or none
// where the page serves it (WebMCP, a view's own tools).
func checkEntryURL(id string, sc ServerConfig) error {
	msg := &EntryForm.Messages
	switch {
	case sc.WebMCP && sc.URL != "":
		return entryError(id, "%s", msg.WebMCPURL)
	case sc.WebMCP, sc.View:
		return nil
	case sc.URL == "":
		return entryError(id, "%s", msg.NoURL)
	}
	u, err := url.Parse(sc.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return entryError(id, msg.BadURL, sc.URL)
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
	return fmt.Sprintf("{url %s, title %q, enabled %v, required %v, allow %q, deny %q}", sc.URL, sc.Title, sc.Enabled == nil || *sc.Enabled, sc.Required, sc.AllowTools, sc.DenyTools)
}
