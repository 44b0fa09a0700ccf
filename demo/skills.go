package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SkillsExtension is the Skills extension's identifier, which the demo
// server declares.
const SkillsExtension = "io.modelcontextprotocol/skills"

// The demo server's skill: its SKILL.md and one supporting file, each a
// resource.
const (
	SkillURI      = "skill://arithmetic/SKILL.md"
	SkillFileURI  = "skill://arithmetic/references/EXAMPLES.md"
	SkillName     = "arithmetic"
	SkillFilePath = "references/EXAMPLES.md"
)

const skillDescription = "Adds numbers with the demo server's add tool and reports the sum exactly."

const skillMD = `---
name: arithmetic
description: ` + skillDescription + `
metadata:
  author: mcpwasm
  version: "1.0"
---

# Arithmetic

1. Call the add tool with the two numbers as a and b.
2. Report the tool's sum as it is; do not round it.

Worked examples are in references/EXAMPLES.md.
`

const skillExamples = `# Examples

- "add 2 and 40": call add {"a": 2, "b": 40}; answer "42".
`

// skillFiles are the skill's files by URI.
var skillFiles = map[string]string{SkillURI: skillMD, SkillFileURI: skillExamples}

func (d *demo) addSkills() {
	for uri, text := range skillFiles {
		r := &mcp.Resource{URI: uri, MIMEType: "text/markdown", Size: int64(len(text))}
		if uri == SkillURI {
			r.Name, r.Description = SkillName, skillDescription
		} else {
			r.Name = SkillName + "/" + SkillFilePath
		}
		d.server.AddResource(r, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
		})
	}
}

// skillEntry is the skill's entry of skills/list and skills/get.
func skillEntry() map[string]any {
	files := []any{}
	for _, uri := range []string{SkillURI, SkillFileURI} {
		sum := sha256.Sum256([]byte(skillFiles[uri]))
		files = append(files, map[string]any{"uri": uri, "digest": "sha256:" + hex.EncodeToString(sum[:]), "size": len(skillFiles[uri])})
	}
	return map[string]any{
		"uri":         SkillURI,
		"frontmatter": map[string]any{"name": SkillName, "description": skillDescription, "metadata": map[string]any{"author": "mcpwasm", "version": "1.0"}},
		"resources":   files,
	}
}

// postBody reads a POST's body for a handler in front of next, leaving it
// for next to read again; any other request goes to next at once, and a
// body that cannot be read is refused (ok false for both).
func postBody(w http.ResponseWriter, r *http.Request, next http.Handler) (body []byte, ok bool) {
	if r.Method != http.MethodPost {
		next.ServeHTTP(w, r)
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(w, "cannot read the request", http.StatusBadRequest)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// skillMethods answers skills/list and skills/get, which go-sdk's server
// does not route, before the MCP handler next sees the request; every
// other request reaches next unchanged.
func skillMethods(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := postBody(w, r, next)
		if !ok {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 || (msg.Method != "skills/list" && msg.Method != "skills/get") {
			next.ServeHTTP(w, r)
			return
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		switch {
		case msg.Method == "skills/list":
			reply["result"] = map[string]any{"resultType": "complete", "skills": []any{skillEntry()}, "ttlMs": 60000, "cacheScope": "public"}
		case msg.Params.URI == SkillURI:
			reply["result"] = map[string]any{"resultType": "complete", "skill": skillEntry(), "ttlMs": 60000, "cacheScope": "public"}
		default:
			reply["error"] = map[string]any{"code": -32602, "message": "no skill at " + strconv.Quote(msg.Params.URI)}
		}
		out, _ := json.Marshal(reply)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}
