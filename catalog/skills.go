package catalog

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// The meta tools a model gets with Config.Skills: the servers' skills
// (the Skills extension) on demand, as tool search offers big catalogs'
// tools: their names and descriptions when listed, a skill's text only
// when the model loads it.
const (
	MetaListSkills    = "catalog_list_skills"
	MetaLoadSkill     = "catalog_load_skill"
	MetaReadSkillFile = "catalog_read_skill_file"
)

// SkillServer is a [Server] that can serve skills: [mcpclient.Client] is
// one. Servers that are not, or do not declare the extension, have none.
type SkillServer interface {
	OffersSkills() bool
	Skills(ctx context.Context) ([]mcpclient.Skill, error)
	LoadSkill(ctx context.Context, uri string) (*mcpclient.LoadedSkill, error)
	ReadSkillFile(ctx context.Context, skillURI, file string) (string, error)
}

// Bounds on what the skill tools hand a model: a listing's entries and
// descriptions, and a skill's or file's text (a skill may be 16 MiB).
const (
	maxListedSkills     = 100
	maxSkillDescription = 500
	maxSkillText        = 64 << 10
)

func skillTools() map[string]*mcp.Tool {
	server := map[string]any{"type": "string", "description": descSkillServer}
	uri := map[string]any{"type": "string", "description": descSkillURI}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	return map[string]*mcp.Tool{
		MetaListSkills: {
			Name: MetaListSkills, Description: descListSkills, Annotations: ro,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		},
		MetaLoadSkill: {
			Name: MetaLoadSkill, Description: descLoadSkill, Annotations: ro,
			InputSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"server": server, "uri": uri},
				"required":   []any{"server", "uri"},
			},
		},
		MetaReadSkillFile: {
			Name: MetaReadSkillFile, Description: descReadSkillFile, Annotations: ro,
			InputSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{"server": server, "uri": uri,
					"file": map[string]any{"type": "string", "description": descSkillFile}},
				"required": []any{"server", "uri", "file"},
			},
		},
	}
}

// listedSkill is one entry of catalog_list_skills' answer.
type listedSkill struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// callSkills answers the skill tools (their arguments checked and the call
// approved by callMeta).
func (c *Catalog) callSkills(ctx context.Context, o outcome, instance map[string]any, opts CallOptions) (outcome, error) {
	if o.name == MetaListSkills {
		return c.listSkills(ctx, o), nil
	}
	id, _ := instance["server"].(string)
	uri, _ := instance["uri"].(string)
	c.mu.Lock()
	e := c.entries[id]
	c.mu.Unlock()
	if e == nil {
		o.text = say(textNoSkillServer, id)
		return o, nil
	}
	o.id = id
	text, err := c.gate(ctx, e, o.name, opts)
	if err != nil || text != "" {
		o.text = text
		return o, err
	}
	c.mu.Lock()
	srv, display := e.srv, displayName(id, e.cfg)
	c.mu.Unlock()
	ss, ok := srv.(SkillServer)
	if !ok || !ss.OffersSkills() {
		o.text = say(textNoSkills, display)
		return o, nil
	}
	var body, what string
	if o.name == MetaLoadSkill {
		s, err := ss.LoadSkill(ctx, uri)
		if err != nil {
			o.text = say(textSkillFailed, uri, display, errText(err))
			return o, nil
		}
		body, what = s.Text, say(textSkillLoaded, s.Name, display, uri)
	} else {
		file, _ := instance["file"].(string)
		text, err := ss.ReadSkillFile(ctx, uri, file)
		if err != nil {
			o.text = say(textSkillFileFailed, file, uri, display, errText(err))
			return o, nil
		}
		body, what = text, say(textSkillFile, file, uri, display)
	}
	if len(body) > maxSkillText {
		cut := maxSkillText
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut] + "\n" + say(textTruncated, len(body)-cut)
	}
	o.res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: what + "\n\n" + body}}}
	return o, nil
}

// listSkills lists the skills of the connected servers that offer them.
func (c *Catalog) listSkills(ctx context.Context, o outcome) outcome {
	c.mu.Lock()
	type server struct {
		id string
		ss SkillServer
	}
	var servers []server
	for _, id := range slices.Sorted(maps.Keys(c.entries)) {
		e := c.entries[id]
		if !e.enabled || e.state != mcpclient.StateConnected {
			continue
		}
		if ss, ok := e.srv.(SkillServer); ok && ss.OffersSkills() {
			servers = append(servers, server{id, ss})
		}
	}
	c.mu.Unlock()
	answer := struct {
		Skills      []listedSkill     `json:"skills"`
		Unavailable map[string]string `json:"unavailable,omitempty"`
		More        int               `json:"more,omitempty"`
		Note        string            `json:"note"`
	}{Skills: []listedSkill{}, Note: textSkillsNote}
	for _, s := range servers {
		skills, err := s.ss.Skills(ctx)
		if err != nil {
			if answer.Unavailable == nil {
				answer.Unavailable = map[string]string{}
			}
			answer.Unavailable[s.id] = errText(err)
			continue
		}
		for _, k := range skills {
			if k.Dynamic {
				continue // not loadable: no digests to verify
			}
			if len(answer.Skills) == maxListedSkills {
				answer.More++
				continue
			}
			d := k.Description
			if utf8.RuneCountInString(d) > maxSkillDescription {
				d = string([]rune(d)[:maxSkillDescription]) + "…"
			}
			answer.Skills = append(answer.Skills, listedSkill{Server: s.id, URI: k.URI, Name: k.Name, Description: d})
		}
	}
	b, _ := json.Marshal(answer)
	o.res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	return o
}
