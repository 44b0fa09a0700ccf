package mcpclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// SkillsExtension is the Skills extension's identifier (SEP-2640): a
// server that declares it in its capabilities serves skills/list and
// skills/get, and each skill's files as resources.
const SkillsExtension = "io.modelcontextprotocol/skills"

// The extension's per-skill limits a host must accept; a skill beyond
// them is refused before any of its files is read.
const (
	maxSkillFiles = 512
	maxSkillBytes = 16 << 20
	// maxSkillPages bounds one listing: a server that keeps answering
	// with a next cursor does not keep the page listing forever.
	maxSkillPages = 100
)

// Skill is a server's entry for one skill: the URI of its SKILL.md, the
// frontmatter of that file as the server states it, and the skill's
// files with their digests. Dynamic is set, and Files empty, for a skill
// whose content the server generates (no digests: it cannot be
// verified, and LoadSkill refuses it).
type Skill struct {
	URI         string         `json:"uri"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Frontmatter map[string]any `json:"frontmatter"`
	Files       []SkillFile    `json:"files,omitempty"`
	Dynamic     bool           `json:"dynamic,omitempty"`
}

// SkillFile is one file of a skill, as the skill's entry lists it.
type SkillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"` // sha256:{64 lowercase hex}
	Size   int64  `json:"size"`
}

// LoadedSkill is a skill whose SKILL.md was read and verified against its
// entry: Text is the whole file, frontmatter included. Its content is the
// server's words, not the page's: untrusted input for a model.
type LoadedSkill struct {
	Skill
	Text string `json:"text"`
}

// wireSkill is a skill entry as the server sends it.
type wireSkill struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

var digestForm = lazyRegexp(`^sha256:[0-9a-f]{64}$`)

// skill checks an entry and returns it as a Skill.
func (w wireSkill) skill() (Skill, error) {
	s := Skill{URI: w.URI, Frontmatter: w.Frontmatter}
	bad := func(format string, args ...any) (Skill, error) {
		return Skill{}, fmt.Errorf("the server's entry for skill %s %s", cleanText(w.URI), fmt.Sprintf(format, args...))
	}
	if w.URI == "" || !strings.HasSuffix(w.URI, "/SKILL.md") {
		return bad("does not name a SKILL.md")
	}
	if w.Frontmatter == nil {
		return bad("has no frontmatter")
	}
	s.Name, _ = w.Frontmatter["name"].(string)
	s.Description, _ = w.Frontmatter["description"].(string)
	if s.Name == "" || s.Description == "" {
		return bad("has no name or description in its frontmatter")
	}
	if last := path.Base(strings.TrimSuffix(w.URI, "/SKILL.md")); last != s.Name {
		return bad("names it %q, but its path ends in %q", cleanText(s.Name), cleanText(last))
	}
	if string(bytes.TrimSpace(w.Resources)) == `"dynamic"` {
		s.Dynamic = true
		return s, nil
	}
	if err := json.Unmarshal(w.Resources, &s.Files); err != nil || s.Files == nil {
		return bad(`lists its files as neither an array nor "dynamic"`)
	}
	root := strings.TrimSuffix(w.URI, "SKILL.md")
	var total int64
	hasSkillMD := false
	for _, f := range s.Files {
		switch {
		case !digestForm().MatchString(f.Digest):
			return bad("gives %s a digest that is not sha256:{64 lowercase hex}", cleanText(f.URI))
		case f.Size < 0:
			return bad("gives %s a negative size", cleanText(f.URI))
		case f.URI != w.URI && !strings.HasPrefix(f.URI, root):
			return bad("lists %s, which is outside the skill", cleanText(f.URI))
		}
		hasSkillMD = hasSkillMD || f.URI == w.URI
		total += f.Size
	}
	switch {
	case !hasSkillMD:
		return bad("does not list its SKILL.md among its files")
	case len(s.Files) > maxSkillFiles:
		return bad("lists %d files; hosts take at most %d", len(s.Files), maxSkillFiles)
	case total > maxSkillBytes:
		return bad("adds up to %d bytes; hosts take at most 16 MiB", total)
	}
	return s, nil
}

// offersSkills refuses before anything is sent when the server does not
// declare the Skills extension.
func offersSkills(cs *mcp.ClientSession) error {
	if _, ok := extension(cs, SkillsExtension); !ok {
		return &mcperr.Unoffered{Feature: "skills", Next: "use its tools, resources and prompts without them"}
	}
	return nil
}

// OffersSkills reports whether the connected server declares the Skills
// extension (false when not connected).
func (c *Client) OffersSkills() bool {
	_, ok := declared(c.InitializeResult(), SkillsExtension)
	return ok
}

// Skills lists the server's skills (skills/list, every page). Nothing of
// a skill's content is read until LoadSkill. An entry that breaks the
// extension's rules is left out with a warning; a server may list only
// some of its skills, so a skill named elsewhere can still be loaded by
// its URI.
func (c *Client) Skills(ctx context.Context) ([]Skill, error) {
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) ([]Skill, error) {
		if err := offersSkills(cs); err != nil {
			return nil, err
		}
		out := []Skill{}
		cursor := ""
		for page := 0; page < maxSkillPages; page++ {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			var r struct {
				Skills     []wireSkill `json:"skills"`
				NextCursor string      `json:"nextCursor"`
			}
			if err := c.callRaw(ctx, cs, "skills/list", params, &r); err != nil {
				return nil, err
			}
			for _, w := range r.Skills {
				s, err := w.skill()
				if err != nil {
					c.emit("warning", Warning{Message: "mcp: " + err.Error() + "; the skill is left out"})
					continue
				}
				out = append(out, s)
			}
			if r.NextCursor == "" || r.NextCursor == cursor {
				break
			}
			cursor = r.NextCursor
		}
		c.holdEntries(out...)
		return out, nil
	})
}

// GetSkill asks the server for the current entry of the skill whose
// SKILL.md is at uri (skills/get): a skill named in the server's
// instructions or another skill, or one to refresh after its content
// changed.
func (c *Client) GetSkill(ctx context.Context, uri string) (*Skill, error) {
	if err := checkSkillURI(uri); err != nil {
		return nil, err
	}
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (*Skill, error) {
		if err := offersSkills(cs); err != nil {
			return nil, err
		}
		return c.getSkill(ctx, cs, uri)
	})
}

func (c *Client) getSkill(ctx context.Context, cs *mcp.ClientSession, uri string) (*Skill, error) {
	var r struct {
		Skill *wireSkill `json:"skill"`
	}
	if err := c.callRaw(ctx, cs, "skills/get", map[string]any{"uri": uri}, &r); err != nil {
		return nil, err
	}
	if r.Skill == nil {
		return nil, violation("the server answered skills/get for %s without a skill", cleanText(uri))
	}
	if r.Skill.URI != uri {
		return nil, violation("the server answered skills/get for %s with the skill %s", cleanText(uri), cleanText(r.Skill.URI))
	}
	s, err := r.Skill.skill()
	if err != nil {
		return nil, violation("%v", err)
	}
	c.holdEntries(s)
	return &s, nil
}

// holdEntries keeps skill entries as listed or got: LoadSkill verifies
// against them.
func (c *Client) holdEntries(skills ...Skill) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.skills == nil {
		c.skills = map[string]Skill{}
	}
	for _, s := range skills {
		c.skills[s.URI] = s
	}
}

func checkSkillURI(uri string) error {
	if !strings.HasSuffix(uri, "/SKILL.md") {
		return mcperr.New(mcperr.InvalidArgument, "mcp: a skill is named by the URI of its SKILL.md (…/SKILL.md), not %q", cleanText(uri))
	}
	return nil
}

// LoadSkill reads the skill's SKILL.md and verifies it against the
// skill's entry (from the last Skills listing, else skills/get): its size
// and sha256 digest, and its YAML frontmatter field by field. Content that
// fails is not returned, and the skill is not loaded: list the skills
// again (its content may have changed) and load it anew. Once loaded,
// ReadSkillFile reads the files its entry lists.
func (c *Client) LoadSkill(ctx context.Context, uri string) (*LoadedSkill, error) {
	if err := checkSkillURI(uri); err != nil {
		return nil, err
	}
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (*LoadedSkill, error) {
		if err := offersSkills(cs); err != nil {
			return nil, err
		}
		c.mu.Lock()
		s, held := c.skills[uri]
		delete(c.loaded, uri)
		c.mu.Unlock()
		if !held {
			got, err := c.getSkill(ctx, cs, uri)
			if err != nil {
				return nil, err
			}
			s = *got
		}
		if s.Dynamic {
			return nil, mcperr.New(mcperr.Protocol, "mcp: the skill %s is generated by the server (its files have no digests), so it cannot be verified, and this client does not load it", cleanText(s.Name))
		}
		data, err := c.readVerified(ctx, cs, s, uri)
		if err != nil {
			return nil, err
		}
		fm, err := parseFrontmatter(data)
		if err != nil {
			return nil, skillFailed(s, "SKILL.md", err.Error())
		}
		if !sameJSON(fm, s.Frontmatter) {
			return nil, skillFailed(s, "SKILL.md", "its frontmatter is not the one the server's entry states")
		}
		c.mu.Lock()
		if c.loaded == nil {
			c.loaded = map[string]Skill{}
		}
		c.loaded[uri] = s
		c.mu.Unlock()
		return &LoadedSkill{Skill: s, Text: string(data)}, nil
	})
}

// ReadSkillFile reads a file of a loaded skill (LoadSkill first), named by
// its URI or by its path relative to the skill's root (references/FORMS.md),
// and verifies it against the entry the skill was loaded from. A file the
// entry does not list is not read.
func (c *Client) ReadSkillFile(ctx context.Context, skillURI, file string) (string, error) {
	if err := checkSkillURI(skillURI); err != nil {
		return "", err
	}
	if file == "" {
		return "", mcperr.New(mcperr.InvalidArgument, "mcp: readSkillFile needs the file's URI or its path in the skill")
	}
	c.mu.Lock()
	s, loaded := c.loaded[skillURI]
	c.mu.Unlock()
	if !loaded {
		return "", mcperr.New(mcperr.InvalidArgument, "mcp: the skill %s is not loaded: loadSkill() it first (a skill that failed verification stays unloaded)", cleanText(skillURI))
	}
	uri := file
	if !strings.Contains(file, "://") {
		root := strings.TrimSuffix(skillURI, "SKILL.md")
		clean := path.Clean("/" + file)
		uri = root + strings.TrimPrefix(clean, "/")
	}
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (string, error) {
		data, err := c.readVerified(ctx, cs, s, uri)
		if err != nil {
			return "", err
		}
		return string(data), nil
	})
}

// readVerified reads the file at uri of skill s and checks it against
// the entry's size and digest.
func (c *Client) readVerified(ctx context.Context, cs *mcp.ClientSession, s Skill, uri string) ([]byte, error) {
	var want *SkillFile
	for i := range s.Files {
		if s.Files[i].URI == uri {
			want = &s.Files[i]
		}
	}
	name := strings.TrimPrefix(uri, strings.TrimSuffix(s.URI, "SKILL.md"))
	if want == nil {
		return nil, skillFailed(s, name, "the skill's entry does not list it")
	}
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	var data []byte
	found := false
	for _, rc := range r.Contents {
		if rc == nil || rc.URI != uri {
			continue
		}
		found = true
		if rc.Blob != nil {
			data = rc.Blob
		} else {
			data = []byte(rc.Text)
		}
		break
	}
	if !found {
		return nil, skillFailed(s, name, "the server's answer to reading it has no content for it")
	}
	if int64(len(data)) != want.Size {
		return nil, skillFailed(s, name, fmt.Sprintf("it is %d bytes, but the entry says %d", len(data), want.Size))
	}
	sum := sha256.Sum256(data)
	if "sha256:"+hex.EncodeToString(sum[:]) != want.Digest {
		return nil, skillFailed(s, name, "its sha256 digest is not the entry's")
	}
	return data, nil
}

// skillFailed is a file of s that failed verification.
func skillFailed(s Skill, file, why string) error {
	return mcperr.New(mcperr.Protocol, "mcp: %s of the skill %s failed verification (%s): it may be tampered with, corrupted or changed since the skill was listed, so it is not used; list the skills again and load the skill anew", cleanText(file), cleanText(s.Name), why)
}

// sameJSON compares two values as JSON would carry them (YAML's integers
// and JSON's numbers alike).
func sameJSON(a, b any) bool {
	norm := func(v any) (any, bool) {
		data, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		var out any
		return out, json.Unmarshal(data, &out) == nil
	}
	x, ok1 := norm(a)
	y, ok2 := norm(b)
	return ok1 && ok2 && reflect.DeepEqual(x, y)
}
