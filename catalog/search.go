package catalog

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The meta tools a model gets instead of the servers' tools when these
// exceed Config.ToolBudget.
const (
	MetaSearchTools = "catalog_search_tools"
	MetaCallTool    = "catalog_call_tool"
)

// DefaultToolBudget is Config.ToolBudget when it is 0: about 10,000 tokens
// of tool definitions (40 kB of the Chat Completions export), a few percent
// of a current model's context.
const DefaultToolBudget = 10_000

// maxSearchResults bounds the tools one catalog_search_tools answer
// describes.
const maxSearchResults = 8

// EstimateTokens is the token estimate ToolBudget is compared with: the
// size of tools' Chat Completions export in bytes divided by 4 (about what
// tokenizers make of JSON and English). The same estimate holds whatever
// format the tools are then rendered in, so that the choice between the
// whole list and the search tools is the same in every format.
func EstimateTokens(tools []Tool) int {
	b, err := Export(FormatOpenAI, tools)
	if err != nil {
		return 0
	}
	return len(b) / 4
}

// searchTools returns the two meta tools of a catalog over its budget.
func searchTools() []Tool {
	destructive := false
	return []Tool{
		{Name: MetaCallTool, Tool: &mcp.Tool{
			Name:        MetaCallTool,
			Description: descCallTool,
			InputSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name":      map[string]any{"type": "string", "description": descCallToolName},
					"arguments": map[string]any{"type": "object", "description": descCallToolArgs},
				},
				"required": []any{"name"},
			},
			// The tool it calls is what approval asks about, not this one.
			Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive},
		}},
		{Name: MetaSearchTools, Tool: &mcp.Tool{
			Name:        MetaSearchTools,
			Description: descSearchTools,
			InputSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"query": map[string]any{"type": "string", "description": descSearchQuery}},
				"required":   []any{"query"},
			},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		}},
	}
}

// isSearchMeta reports whether name is one of the search meta tools.
func isSearchMeta(name string) bool { return name == MetaSearchTools || name == MetaCallTool }

// budgeted is what a model is offered of listed (servers' tools in catalog
// order, then the meta tools of Config.ServerTools): listed itself when its
// servers' tools fit the budget; otherwise the two search meta tools and
// the other meta tools first (a part that stays the same from request to
// request, so providers' prompt caches keep hitting), then the servers'
// tools named in used, in catalog order.
func (c *Catalog) budgeted(listed []Tool, used []string) []Tool {
	var servers, meta []Tool
	for _, t := range listed {
		if t.ServerID == "" {
			meta = append(meta, t)
		} else {
			servers = append(servers, t)
		}
	}
	if EstimateTokens(servers) <= c.cfg.ToolBudget {
		return listed
	}
	out := searchTools()
	out = append(out, meta...)
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range servers {
		if slices.Contains(used, t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// UsedTools returns the exported names of the tools a conversation called,
// for [Catalog.ToolsForConversation]: names is the tool names of its tool
// calls, args their arguments (JSON text) in the same order; a call of
// catalog_call_tool counts as a call of the tool it names.
func UsedTools(names, args []string) []string {
	var used []string
	for i, n := range names {
		if n == MetaCallTool && i < len(args) {
			var a struct {
				Name string `json:"name"`
			}
			if json.Unmarshal([]byte(args[i]), &a) == nil {
				n = a.Name
			}
		}
		if n != "" && !isSearchMeta(n) && !slices.Contains(used, n) {
			used = append(used, n)
		}
	}
	return used
}

// found is one tool of a catalog_search_tools answer.
type found struct {
	Name        string         `json:"name"`
	Server      string         `json:"server"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"inputSchema"`
}

// searchAnswer is the JSON of a catalog_search_tools answer.
type searchAnswer struct {
	Tools []found `json:"tools"`
	More  int     `json:"more,omitempty"` // matches left out
	Note  string  `json:"note"`
}

// callSearch answers catalog_search_tools: the enabled servers' tools that
// match the query's words, best first, at most maxSearchResults.
func (c *Catalog) callSearch(ctx context.Context, raw []byte) (outcome, error) {
	o := outcome{name: MetaSearchTools, tool: MetaSearchTools}
	t := searchTools()[1].Tool
	_, instance, text := parseArgs(MetaSearchTools, raw)
	if text != "" {
		o.text = text
		return o, nil
	}
	if problem := describeArgs(t, instance); problem != "" {
		o.text = say(textSchema, "", MetaSearchTools, problem)
		return o, nil
	}
	query, _ := instance["query"].(string)
	tools, err := c.Tools(ctx)
	if err != nil {
		return o, err
	}
	hits := rankTools(query, tools)
	ans := searchAnswer{Tools: []found{}}
	for i, h := range hits {
		if i == maxSearchResults {
			ans.More = len(hits) - i
			break
		}
		ans.Tools = append(ans.Tools, found{Name: h.Name, Server: h.ServerID, Description: describe(h), InputSchema: objectSchema(h)})
	}
	switch {
	case len(hits) == 0:
		ans.Note = say(textSearchNone, query)
	case ans.More > 0:
		ans.Note = say(textSearchMore, ans.More)
	default:
		ans.Note = textSearchFound
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(ans)
	o.res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.TrimSpace(b.String())}}}
	return o, nil
}

// stopWords are query words that say nothing about a tool.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "the": true, "to": true, "of": true, "for": true, "in": true,
	"on": true, "with": true, "by": true, "or": true, "tool": true, "tools": true,
}

// words splits s into lower-case words: at every character that is not a
// letter or digit, and where a lower-case letter meets an upper-case one
// (camelCase).
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// matches reports whether a query word matches a word of a tool: equal, or
// one a prefix of the other when the shorter has 3 letters or more
// ("issue" and "issues", "repo" and "repository").
func matches(q, w string) bool {
	if q == w {
		return true
	}
	short, long := q, w
	if len(short) > len(long) {
		short, long = long, short
	}
	return len(short) >= 3 && strings.HasPrefix(long, short)
}

// rankTools scores tools against query: per query word, 3 when it matches
// a word of the tool's name, 2 of its server's id, 1 of its description or
// title; a query that is a tool's exact exported or server name adds 10.
// Tools that score 0 are left out; ties keep catalog order.
func rankTools(query string, tools []Tool) []Tool {
	var qs []string
	for _, w := range words(query) {
		if !stopWords[w] {
			qs = append(qs, w)
		}
	}
	q := strings.TrimSpace(query)
	type scored struct {
		t     Tool
		score int
		i     int
	}
	var hits []scored
	for i, t := range tools {
		if t.ServerID == "" || t.Tool == nil {
			continue
		}
		name, server, desc := words(t.Tool.Name), words(t.ServerID), words(describe(t)+" "+t.Tool.Title)
		score := 0
		if q != "" && (strings.EqualFold(q, t.Name) || strings.EqualFold(q, t.Tool.Name)) {
			score += 10
		}
		for _, w := range qs {
			switch {
			case slices.ContainsFunc(name, func(x string) bool { return matches(w, x) }):
				score += 3
			case slices.ContainsFunc(server, func(x string) bool { return matches(w, x) }):
				score += 2
			case slices.ContainsFunc(desc, func(x string) bool { return matches(w, x) }):
				score++
			}
		}
		if score > 0 {
			hits = append(hits, scored{t, score, i})
		}
	}
	slices.SortFunc(hits, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	out := make([]Tool, len(hits))
	for i, h := range hits {
		out[i] = h.t
	}
	return out
}

// callThrough answers catalog_call_tool: the call of the tool it names
// goes the way a direct call of that tool goes (sign-in, approval, breaker,
// schema check, honest texts), and its outcome names the real server and
// tool.
func (c *Catalog) callThrough(ctx context.Context, raw []byte, opts CallOptions) (outcome, error) {
	o := outcome{name: MetaCallTool, tool: MetaCallTool}
	_, instance, text := parseArgs(MetaCallTool, raw)
	if text != "" {
		o.text = text
		return o, nil
	}
	// Arguments as JSON text (a string) are accepted: it is how the tool
	// is declared where object parameters must list their properties
	// (Gemini), and a common slip elsewhere.
	args := instance["arguments"]
	if s, ok := args.(string); ok {
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			args = v
		}
	}
	name, _ := instance["name"].(string)
	switch {
	case strings.TrimSpace(name) == "":
		o.text = say(textSchema, "", MetaCallTool, "name: a tool name is required")
		return o, nil
	case args != nil && !isObject(args):
		o.text = say(textSchema, "", MetaCallTool, "arguments: must be an object")
		return o, nil
	case isSearchMeta(name):
		o.text = say(textCallThroughMeta, name)
		return o, nil
	}
	var inner []byte
	if args != nil {
		inner, _ = json.Marshal(args)
	}
	res, err := c.call(ctx, name, inner, opts)
	if res.res == nil && res.text == say(textUnknownTool, name) {
		res.text = say(textUnknownToolSearch, name)
	}
	res.name = MetaCallTool
	return res, err
}

func isObject(v any) bool { _, ok := v.(map[string]any); return ok }
