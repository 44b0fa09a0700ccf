package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// MaxNameLen is the longest exported tool name. Model providers cap function
// names at 64 characters (OpenAI, Anthropic, Gemini alike).
const MaxNameLen = 64

// hashLen is the length of the hex suffix that separates colliding names.
const hashLen = 6

// maxHashLen bounds the longer hashes of the (astronomically rare) hashed
// names that still clash.
const maxHashLen = 32

// sanitize maps s onto the characters every provider accepts in a function
// name, [a-zA-Z0-9_-]: any other character (per rune, so "é" is one "_")
// becomes "_".
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// baseName is the exported name of tool on server id before collisions are
// resolved: "${id}_${tool}" sanitized, prefixed with "_" when it would not
// start with a letter or "_" (Gemini requires that start), cut to
// MaxNameLen.
func baseName(id, tool string) string {
	n := sanitize(id) + "_" + sanitize(tool)
	if c := n[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
		n = "_" + n
	}
	if len(n) > MaxNameLen {
		n = n[:MaxNameLen]
	}
	return n
}

// hashedName is a colliding tool's name: its base name cut short enough to
// carry "_" and n hex digits of sha256(id "\x00" tool), which depend on the
// pair alone, never on which other tools exist or in what order they came.
func hashedName(id, tool string, n int) string {
	sum := sha256.Sum256([]byte(id + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:])[:n]
	b := baseName(id, tool)
	if len(b) > MaxNameLen-len(suffix) {
		b = b[:MaxNameLen-len(suffix)]
	}
	return b + suffix
}

// toolKey names one tool of one server.
type toolKey struct{ id, tool string }

// assignNames gives every tool in keys a unique exported name. A name that
// only one tool maps to is its base name; when several tools map to the
// same base name (including after the cut to 64 characters), each of them
// gets a hashed name instead. reserved names (the meta tools) are never
// given out. The result depends only on the set of keys, not on their
// order: keys are sorted first, and the rare hashed name that still clashes
// takes a longer hash, in that sorted order.
func assignNames(keys []toolKey, reserved []string) map[toolKey]string {
	keys = slices.Clone(keys)
	slices.SortFunc(keys, func(a, b toolKey) int {
		if c := strings.Compare(a.id, b.id); c != 0 {
			return c
		}
		return strings.Compare(a.tool, b.tool)
	})
	keys = slices.Compact(keys)
	groups := make(map[string][]toolKey, len(keys))
	for _, k := range keys {
		b := baseName(k.id, k.tool)
		groups[b] = append(groups[b], k)
	}
	taken := make(map[string]bool, len(keys)+len(reserved))
	for _, r := range reserved {
		taken[r] = true
	}
	out := make(map[toolKey]string, len(keys))
	var clashing []toolKey
	for _, k := range keys {
		b := baseName(k.id, k.tool)
		if len(groups[b]) == 1 && !taken[b] {
			out[k] = b
			taken[b] = true
			continue
		}
		clashing = append(clashing, k)
	}
	// Unique base names are all taken first, so a hashed name can never
	// steal a name that a non-colliding tool has.
	for _, k := range clashing {
		for n := hashLen; ; n += 2 {
			name := hashedName(k.id, k.tool, n)
			if !taken[name] || n >= maxHashLen {
				out[k] = name
				taken[name] = true
				break
			}
		}
	}
	return out
}

// matchAny reports whether name matches one of the path.Match patterns.
// Patterns were validated when the server was configured.
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// badPattern returns the first malformed pattern of an allow or deny
// list (path.Match syntax).
func badPattern(patterns []string) (string, bool) {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return p, true
		}
	}
	return "", false
}

// filterTools applies a server's deny and allow lists (deny wins; an empty
// allow list allows all), drops unnamed and repeated tools, and keeps at most
// max tools in the server's order. cut is how many allowed tools the cap
// left out. The allowed tools only a view may call (MCP Apps visibility
// ["app"]) are left out of kept and returned in viewOnly, capped at max
// too.
func filterTools(sc ServerConfig, tools []*mcp.Tool, max int) (kept, viewOnly []*mcp.Tool, cut int) {
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t == nil || t.Name == "" || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		if matchAny(sc.DenyTools, t.Name) {
			continue
		}
		if len(sc.AllowTools) > 0 && !matchAny(sc.AllowTools, t.Name) {
			continue
		}
		if ui, _ := mcpclient.UIOf(t); !ui.ForModel() {
			if len(viewOnly) < max {
				viewOnly = append(viewOnly, t)
			}
			continue
		}
		if len(kept) == max {
			cut++
			continue
		}
		kept = append(kept, t)
	}
	return kept, viewOnly, cut
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
