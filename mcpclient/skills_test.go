package mcpclient

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/hostile"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

const (
	skillMD = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: 2\n  since: 2026-01-05\n---\n\n# PDF processing\n\nSee references/FORMS.md.\n"
	formsMD = "# Forms\n\nFill them in.\n"
	skillU  = "skill://pdf-processing/SKILL.md"
	formsU  = "skill://pdf-processing/references/FORMS.md"
)

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// skillServer is a scripted server declaring the Skills extension: it
// lists entries (two pages: the first holds pdf-processing, the second
// the entries in more), serves files from files, and records the
// JSON-RPC methods and the resources read. sse answers skills/list with an
// event stream.
type skillServer struct {
	mu      sync.Mutex
	methods []string
	reads   []string
	files   map[string]string
	more    []any
	sse     bool
	noExt   bool
}

func (s *skillServer) entry() map[string]any {
	return map[string]any{
		"uri":         skillU,
		"frontmatter": map[string]any{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents", "metadata": map[string]any{"version": 2, "since": "2026-01-05"}},
		"resources": []any{
			map[string]any{"uri": skillU, "digest": digestOf(skillMD), "size": len(skillMD)},
			map[string]any{"uri": formsU, "digest": digestOf(formsMD), "size": len(formsMD)},
		},
	}
}

func (s *skillServer) answer(w http.ResponseWriter, r *http.Request, m hostile.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.methods = append(s.methods, m.Method)
	var p struct {
		URI    string `json:"uri"`
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(m.Params, &p)
	switch m.Method {
	case "initialize":
		caps := map[string]any{"tools": map[string]any{}, "resources": map[string]any{}}
		if !s.noExt {
			caps["extensions"] = map[string]any{SkillsExtension: map[string]any{}}
		}
		hostile.Result(w, m.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": map[string]any{"name": "skills", "version": "1"}})
	case "skills/list":
		if got := r.Header.Get("Mcp-Method"); got != "" && got != "skills/list" {
			hostile.Error(w, m.ID, -32600, "Mcp-Method header "+got+" does not match the body")
			return true
		}
		res := map[string]any{"skills": []any{s.entry()}, "nextCursor": "2"}
		if p.Cursor == "2" {
			res = map[string]any{"skills": s.more}
		}
		if s.sse {
			hostile.StartSSE(w)
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", m.ID, mustMarshal(res))
			return true
		}
		hostile.Result(w, m.ID, res)
	case "skills/get":
		if p.URI != skillU {
			hostile.Error(w, m.ID, -32602, "no such skill")
			return true
		}
		hostile.Result(w, m.ID, map[string]any{"skill": s.entry()})
	case "resources/read":
		s.reads = append(s.reads, p.URI)
		text, ok := s.files[p.URI]
		if !ok {
			hostile.Error(w, m.ID, -32602, "no such resource")
			return true
		}
		hostile.Result(w, m.ID, map[string]any{"contents": []any{map[string]any{"uri": p.URI, "mimeType": "text/markdown", "text": text}}})
	default:
		return false
	}
	return true
}

func countOf(l []string, s string) int {
	n := 0
	for _, e := range l {
		if e == s {
			n++
		}
	}
	return n
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (s *skillServer) seen() (methods, reads []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.methods...), append([]string(nil), s.reads...)
}

func startSkills(t *testing.T, s *skillServer, onEvent func(Event)) *Client {
	t.Helper()
	if s.files == nil {
		s.files = map[string]string{skillU: skillMD, formsU: formsMD}
	}
	srv := hostile.Start(t, &hostile.MCP{Answer: s.answer})
	c := newClient(t, srv.URL+"/mcp", Options{Transport: TransportStreamable, OnEvent: onEvent})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSkillsListLoadAndRead: the listing (both pages, over JSON and over
// an event stream) reads no file; loading verifies SKILL.md; a listed
// file reads by its relative path; a path out of the skill or a file the
// entry does not list is refused without a read.
func TestSkillsListLoadAndRead(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			s := &skillServer{sse: sse, more: []any{map[string]any{"uri": "skill://acme/refunds/SKILL.md", "frontmatter": map[string]any{"name": "refunds", "description": "Refunds"}, "resources": "dynamic"}}}
			c := startSkills(t, s, nil)
			skills, err := c.Skills(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(skills) != 2 || skills[0].Name != "pdf-processing" || len(skills[0].Files) != 2 || !skills[1].Dynamic || skills[1].Name != "refunds" {
				t.Fatalf("skills: %+v", skills)
			}
			if methods, reads := s.seen(); len(reads) != 0 || countOf(methods, "skills/list") != 2 || countOf(methods, "ping") != 0 {
				t.Fatalf("listing: methods %v, reads %v; want two skills/list and no read", methods, reads)
			}
			got, err := c.LoadSkill(ctxT(t), skillU)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != skillMD || got.Description != "Extract, fill, and assemble PDF documents" {
				t.Errorf("loaded %+v", got)
			}
			text, err := c.ReadSkillFile(ctxT(t), skillU, "references/FORMS.md")
			if err != nil || text != formsMD {
				t.Errorf("FORMS.md: %q, %v", text, err)
			}
			for _, f := range []string{"../../etc/passwd", "references/OTHER.md", "skill://other/SKILL.md"} {
				if _, err := c.ReadSkillFile(ctxT(t), skillU, f); err == nil || !strings.Contains(err.Error(), "does not list it") {
					t.Errorf("reading %s: %v; want a refusal naming the entry", f, err)
				}
			}
			if _, reads := s.seen(); strings.Join(reads, " ") != skillU+" "+formsU {
				t.Errorf("reads %v; want SKILL.md then FORMS.md only", reads)
			}
			_, err = c.LoadSkill(ctxT(t), "skill://acme/refunds/SKILL.md")
			wantCode(t, err, mcperr.Protocol)
		})
	}
}

// TestSkillsVerification: a SKILL.md whose digest, size or frontmatter
// is not its entry's does not load, and the skill's other files are then
// not read.
func TestSkillsVerification(t *testing.T) {
	for name, body := range map[string]string{
		"digest":         strings.Replace(skillMD, "# PDF processing", "# PDF procesSing", 1),
		"size":           skillMD + "extra\n",
		"frontmatter":    strings.Replace(skillMD, "version: 2", "version: 3", 1),
		"no frontmatter": "# PDF processing\n",
	} {
		t.Run(name, func(t *testing.T) {
			s := &skillServer{files: map[string]string{skillU: body, formsU: formsMD}}
			c := startSkills(t, s, nil)
			if name == "frontmatter" || name == "no frontmatter" {
				// The entry states the tampered file's digest and size:
				// only the frontmatter comparison can catch it.
				e := s.entry()
				e["resources"].([]any)[0] = map[string]any{"uri": skillU, "digest": digestOf(body), "size": len(body)}
				s.mu.Lock()
				s.more = []any{}
				s.mu.Unlock()
				c.mu.Lock()
				sk, err := wireSkillOf(e)
				if err != nil {
					t.Fatal(err)
				}
				c.skills = map[string]Skill{skillU: sk}
				c.mu.Unlock()
			} else if _, err := c.Skills(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			_, err := c.LoadSkill(ctxT(t), skillU)
			wantCode(t, err, mcperr.Protocol)
			if !strings.Contains(err.Error(), "failed verification") {
				t.Errorf("error %q does not say the skill failed verification", err)
			}
			_, err = c.ReadSkillFile(ctxT(t), skillU, "references/FORMS.md")
			wantCode(t, err, mcperr.InvalidArgument)
			if _, reads := s.seen(); len(reads) != 1 || reads[0] != skillU {
				t.Errorf("reads %v; want SKILL.md only", reads)
			}
		})
	}
}

func wireSkillOf(e map[string]any) (Skill, error) {
	var w wireSkill
	if err := json.Unmarshal([]byte(mustMarshal(e)), &w); err != nil {
		return Skill{}, err
	}
	return w.skill()
}

// TestSkillsEntriesChecked: entries that break the extension's rules are
// left out of the listing with a warning each.
func TestSkillsEntriesChecked(t *testing.T) {
	good := digestOf("x")
	bad := []any{
		map[string]any{"uri": "skill://a/b/SKILL.md", "frontmatter": map[string]any{"name": "c", "description": "path ends in b"}, "resources": []any{map[string]any{"uri": "skill://a/b/SKILL.md", "digest": good, "size": 1}}},
		map[string]any{"uri": "skill://n/SKILL.md", "frontmatter": map[string]any{"name": "n", "description": "d"}},
		map[string]any{"uri": "skill://n/SKILL.md", "frontmatter": map[string]any{"name": "n", "description": "d"}, "resources": []any{map[string]any{"uri": "skill://n/SKILL.md", "digest": "md5:00", "size": 1}}},
		map[string]any{"uri": "skill://n/SKILL.md", "frontmatter": map[string]any{"name": "n", "description": "d"}, "resources": []any{map[string]any{"uri": "skill://n/SKILL.md", "digest": good, "size": 1}, map[string]any{"uri": "skill://elsewhere/x", "digest": good, "size": 1}}},
		map[string]any{"uri": "skill://n/SKILL.md", "frontmatter": map[string]any{"name": "n", "description": "d"}, "resources": []any{map[string]any{"uri": "skill://n/x.md", "digest": good, "size": 1}}},
		map[string]any{"uri": "skill://n/SKILL.md", "frontmatter": map[string]any{"name": "n", "description": "d"}, "resources": []any{map[string]any{"uri": "skill://n/SKILL.md", "digest": good, "size": 17 << 20}}},
	}
	s := &skillServer{more: bad}
	var warnings []string
	var mu sync.Mutex
	c := startSkills(t, s, func(e Event) {
		if w, ok := e.Data.(Warning); ok && e.Type == "warning" {
			mu.Lock()
			warnings = append(warnings, w.Message)
			mu.Unlock()
		}
	})
	skills, err := c.Skills(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(skills) != 1 {
		t.Errorf("%d skills listed; want only the valid one", len(skills))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != len(bad) {
		t.Errorf("warnings %q; want one per bad entry", warnings)
	}
}

// TestSkillsUnoffered: a server that does not declare the extension is
// not asked.
func TestSkillsUnoffered(t *testing.T) {
	s := &skillServer{noExt: true}
	c := startSkills(t, s, nil)
	_, err := c.Skills(ctxT(t))
	var u *mcperr.Unoffered
	if !errors.As(err, &u) || u.Feature != "skills" {
		t.Fatalf("Skills: %v; want Unoffered skills", err)
	}
	if methods, _ := s.seen(); countOf(methods, "skills/list") != 0 {
		t.Errorf("methods %v; want no skills/list", methods)
	}
	_, err = c.LoadSkill(ctxT(t), "skill://x")
	wantCode(t, err, mcperr.InvalidArgument)
}
