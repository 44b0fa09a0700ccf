package model

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// reply is what the script answers.
type reply struct {
	text      string
	calls     []call
	reasoning string // streamed as reasoning_content before the answer
}

type call struct {
	id, name, args string
}

var (
	addRule       = regexp.MustCompile(`(?i)\badd\s+(-?\d+(?:\.\d+)?)\s+(?:and|to|\+)\s+(-?\d+(?:\.\d+)?)`)
	echoRule      = regexp.MustCompile(`(?i)\becho\s+(.+?)(?:\s+and\s+(?:add|slow)\b.*)?$`)
	slowRule      = regexp.MustCompile(`(?i)\bslow\b(?:\s+(\d+))?`)
	reverseRule   = regexp.MustCompile(`(?i)\breverse\s+(\S+)`)
	weatherRule   = regexp.MustCompile(`(?i)\bweather\s+in\s+([\p{L} ]+?)(?:\s+and\b.*)?$`)
	noteRule      = regexp.MustCompile(`(?i)\b(?:note|remember)\s+(?:that\s+)?(.+?)(?:\s+and\s+(?:add|echo|reverse)\b.*)?$`)
	askRule       = regexp.MustCompile(`(?i)\bask\s+me\b(?:\s+(.+))?$`)
	linkRule      = regexp.MustCompile(`(?i)\bopen\s+link\s+(\S+)`)
	timeRule      = regexp.MustCompile(`(?i)\bwhat\s+time\s+is\s+it\b`)
	listNotesRule = regexp.MustCompile(`(?i)\b(?:list|show)\s+(?:me\s+)?(?:my\s+|the\s+|all\s+)?notes\b`)
	summarizeRule = regexp.MustCompile(`(?is)^summarize in at most (\d+) words:\s*(.*)$`)
)

// help is the plain answer to anything the script does not know.
const help = "I am " + ModelID + ", a scripted stand-in, not a real model. " +
	`I only follow scripts: try "add 2 and 40", "echo hello", "slow", "reverse hello", "weather in Paris", ` +
	`"note buy milk", or "add 2 and 40 and reverse hello".`

// respond applies the rules to a request.
func respond(req *chatRequest) reply {
	var tools []string
	for _, t := range req.Tools {
		if t.Type == "function" || t.Type == "" {
			tools = append(tools, t.Function.Name)
		}
	}
	msgs := req.Messages
	user := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			user = strings.TrimSpace(msgs[i].text())
			break
		}
	}
	lower := strings.ToLower(user)
	id := func(i int) string { return fmt.Sprintf("call_%d_%d", len(msgs), i) }

	// Tool results arrived.
	if last := msgs[len(msgs)-1]; last.Role == "tool" {
		if strings.Contains(lower, "keep calling") {
			if name := find(tools, "echo"); name != "" {
				return reply{calls: []call{{id(0), name, `{"text":"again"}`}}}
			}
		}
		var results []string
		i := len(msgs) - 1
		for ; i >= 0 && msgs[i].Role == "tool"; i-- {
			results = append([]string{msgs[i].text()}, results...)
		}
		var asked []string // the tools the results answer
		if i >= 0 {
			for _, c := range msgs[i].ToolCalls {
				asked = append(asked, c.Function.Name)
			}
		}
		switch {
		case len(asked) > 0 && asked[0] == metaSearch:
			// Call what the searches found, through catalog_call_tool.
			if calls := callFound(user, tools, results, id); len(calls) > 0 {
				return reply{calls: calls}
			}
		case len(asked) == 1 && asked[0] == metaList:
			// The servers that need a sign-in: ask to turn them on.
			if enable := needSignIn(results[0]); len(enable) > 0 && find(tools, metaEnable) != "" {
				var calls []call
				for _, sid := range enable {
					b, _ := json.Marshal(map[string]string{"id": sid})
					calls = append(calls, call{id(len(calls)), metaEnable, string(b)})
				}
				return reply{calls: calls}
			}
		case len(asked) > 0 && asked[0] == metaEnable:
			// If the tools are there now, call them; if not, pass the
			// servers' answer on.
			if calls, _ := plan(user, tools, id); len(calls) > 0 {
				return reply{calls: calls}
			}
		}
		return reply{text: "Results: " + strings.Join(results, "; ")}
	}

	if len(msgs) > 0 && msgs[0].Role == "system" && strings.HasPrefix(msgs[0].text(), compactPrompt) {
		return reply{text: compactSummary(user)}
	}
	if m := summarizeRule.FindStringSubmatch(user); m != nil {
		n, _ := strconv.Atoi(m[1])
		words := strings.Fields(m[2])
		if n < len(words) {
			words = words[:n]
		}
		return reply{text: "Summary: " + strings.Join(words, " ")}
	}
	switch {
	case strings.Contains(lower, "say nothing"):
		return reply{}
	case strings.Contains(lower, "unknown tool"):
		return reply{calls: []call{{id(0), "no_such_tool", `{}`}}}
	case strings.Contains(lower, "bad json"), strings.Contains(lower, "keep calling"):
		name := find(tools, "echo")
		if name == "" {
			return reply{text: missing("echo")}
		}
		if strings.Contains(lower, "bad json") {
			return reply{calls: []call{{id(0), name, `{"text": "unterminated`}}}
		}
		return reply{calls: []call{{id(0), name, `{"text":"again"}`}}}
	}

	calls, absent := plan(user, tools, id)
	switch {
	case len(absent) > 0 && find(tools, metaSearch) != "":
		// Only some tools are offered: search for the missing ones first.
		var searches []call
		for _, s := range absent {
			b, _ := json.Marshal(map[string]string{"query": strings.ReplaceAll(s, "_", " ")})
			searches = append(searches, call{id(len(searches)), metaSearch, string(b)})
		}
		return reply{calls: searches}
	case len(calls) > 0:
		return reply{calls: calls}
	case len(absent) > 0 && find(tools, metaList) != "":
		// A tool it wants is missing: see which servers are there (some
		// may need a sign-in first).
		return reply{calls: []call{{id(0), metaList, `{}`}}}
	case len(absent) > 0:
		return reply{text: missing(absent...)}
	}
	return reply{text: help}
}

// The catalog's model-facing meta tools.
const (
	metaList   = "catalog_list_servers"
	metaEnable = "catalog_enable_server"
	metaSearch = "catalog_search_tools"
	metaCall   = "catalog_call_tool"
)

// callFound plans the user's calls over the offered tools and those the
// catalog_search_tools results name; a found tool that is not offered is
// called through catalog_call_tool.
func callFound(user string, tools, results []string, id func(int) string) []call {
	all := append([]string(nil), tools...)
	for _, r := range results {
		var found struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		_ = json.Unmarshal([]byte(r), &found)
		for _, t := range found.Tools {
			all = append(all, t.Name)
		}
	}
	calls, _ := plan(user, all, id)
	for i, c := range calls {
		if !slices.Contains(tools, c.name) {
			b, _ := json.Marshal(map[string]any{"name": c.name, "arguments": json.RawMessage(c.args)})
			calls[i] = call{c.id, metaCall, string(b)}
		}
	}
	return calls
}

// needSignIn returns the ids of the servers a catalog_list_servers result
// says need a sign-in.
func needSignIn(result string) []string {
	var servers []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal([]byte(result), &servers)
	var ids []string
	for _, s := range servers {
		if s.Status == "needs_auth" {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// plan returns the tool calls the user's message asks for among the tools
// offered, and the tools it wants that are not offered.
func plan(user string, tools []string, id func(int) string) (calls []call, absent []string) {
	want := func(suffix string, args any) {
		name := find(tools, suffix)
		if name == "" {
			absent = append(absent, suffix)
			return
		}
		b, _ := json.Marshal(args)
		calls = append(calls, call{id(len(calls)), name, string(b)})
	}
	if m := addRule.FindStringSubmatch(user); m != nil {
		a, _ := strconv.ParseFloat(m[1], 64)
		b, _ := strconv.ParseFloat(m[2], 64)
		want("add", map[string]float64{"a": a, "b": b})
	}
	if m := echoRule.FindStringSubmatch(user); m != nil {
		want("echo", map[string]string{"text": m[1]})
	}
	if m := slowRule.FindStringSubmatch(user); m != nil {
		steps := 20
		if m[1] != "" {
			steps, _ = strconv.Atoi(m[1])
		}
		want("slow", map[string]int{"steps": steps, "delayMs": 250})
	}
	if m := reverseRule.FindStringSubmatch(user); m != nil {
		want("reverse", map[string]string{"text": m[1]})
	}
	if m := weatherRule.FindStringSubmatch(user); m != nil {
		want("weather", map[string]string{"city": strings.TrimSpace(m[1])})
	}
	if m := askRule.FindStringSubmatch(user); m != nil {
		msg := strings.TrimSpace(m[1])
		if msg == "" {
			msg = "Tell us a little about yourself."
		}
		want("ask_user", map[string]string{"message": msg})
	}
	if m := linkRule.FindStringSubmatch(user); m != nil {
		want("open_link", map[string]string{"url": m[1]})
	}
	if m := noteRule.FindStringSubmatch(user); m != nil {
		want("note_add", map[string]string{"note": m[1]})
	}
	if listNotesRule.MatchString(user) {
		want("note_list", map[string]any{}) // the notes server's tool with a view
	}
	if timeRule.MatchString(user) {
		want("get-time", map[string]any{}) // the MCP Apps example servers' tool
	}
	return calls, absent
}

// find returns the offered tool named suffix, else one named
// "<server id>_"+suffix (as a catalog names it), else one ending in
// "_"+suffix after a server id with an underscore: "add" is demo_add
// before my_srv_add, and never notes_note_add (another tool of the
// script's, which only ends in "_add").
func find(tools []string, suffix string) string {
	best, rank := "", 0
	for _, t := range tools {
		prefix, ok := strings.CutSuffix(t, "_"+suffix)
		switch {
		case t == suffix:
			return t
		case ok && !strings.Contains(prefix, "_") && rank < 2:
			best, rank = t, 2
		case ok && rank < 1 && !isLonger(t, suffix):
			best, rank = t, 1
		}
	}
	return best
}

// scriptTools are the script's tool names that hold an underscore.
var scriptTools = []string{"ask_user", "open_link", "note_add", "note_list"}

// isLonger reports whether t names another of the script's tools, one
// whose name ends in "_"+suffix (note_add for add).
func isLonger(t, suffix string) bool {
	for _, s := range scriptTools {
		if s != suffix && strings.HasSuffix(s, "_"+suffix) && (t == s || strings.HasSuffix(t, "_"+s)) {
			return true
		}
	}
	return false
}

func missing(suffixes ...string) string {
	names := make([]string, len(suffixes))
	for i, s := range suffixes {
		names[i] = "_" + s
	}
	return "I would call a tool ending in " + strings.Join(names, " and ") +
		", but none is offered to me, so I cannot do that. (Is its server connected and signed in?)"
}

// compactPrompt starts the system prompt of an agent compacting a
// conversation (agent.Compact without a summarize function).
const compactPrompt = "You compact a conversation"

// compactSummary is the stand-in's summary of a compaction request: the
// previous summary's points and each user line, in order.
func compactSummary(req string) string {
	var points []string
	prev, rest, ok := strings.Cut(req, "Messages to add to it:\n")
	if !ok {
		rest = req
	} else if p, ok := strings.CutPrefix(strings.TrimSpace(prev), "Summary so far:\n"); ok {
		points = append(points, strings.TrimPrefix(p, "Summary: "))
	}
	for _, line := range strings.Split(rest, "\n") {
		if u, ok := strings.CutPrefix(line, "user: "); ok {
			points = append(points, "the user said "+strconv.Quote(u))
		}
	}
	if len(points) == 0 {
		return "Summary: nothing to keep."
	}
	return "Summary: " + strings.Join(points, "; ")
}
