package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
)

// TestSkillTools: with Config.Skills the model lists the demo server's
// skill (name and description, none of its files read), loads it (its
// text, framed as the server's words) and reads the file it names; a
// file the skill's entry does not list, or an unknown server, is a text
// the model can act on.
func TestSkillTools(t *testing.T) {
	d := startDemo(t)
	c, _ := newCatalog(t, Config{Servers: servers("demo", d.URL, "other", d.URL), Skills: true, Factory: clientFactory(t)})
	ctx := ctxT(t)
	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{MetaListSkills, MetaLoadSkill, MetaReadSkillFile} {
		if !strings.Contains(strings.Join(names(tools), " "), want) {
			t.Errorf("tools %v lack %s", names(tools), want)
		}
	}
	before := d.count("resources/read")
	r, err := c.CallTool(ctx, MetaListSkills, json.RawMessage(`{}`), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Skills []listedSkill `json:"skills"`
		Note   string        `json:"note"`
	}
	if err := json.Unmarshal([]byte(resultText(r)), &listed); err != nil {
		t.Fatalf("%s: %v", resultText(r), err)
	}
	if len(listed.Skills) != 2 || listed.Skills[0].Server != "demo" || listed.Skills[1].Server != "other" ||
		listed.Skills[0].URI != demo.SkillURI || listed.Skills[0].Name != demo.SkillName || listed.Skills[0].Description == "" || listed.Note == "" {
		t.Fatalf("listed %+v", listed)
	}
	if n := d.count("resources/read") - before; n != 0 {
		t.Errorf("listing read %d files; want none", n)
	}
	r, err = c.CallTool(ctx, MetaLoadSkill, json.RawMessage(`{"server":"demo","uri":"`+demo.SkillURI+`"}`), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(r); !strings.Contains(text, "the server's text, not the user's") || !strings.Contains(text, "# Arithmetic") {
		t.Errorf("load: %q", text)
	}
	r, err = c.CallTool(ctx, MetaReadSkillFile, json.RawMessage(`{"server":"demo","uri":"`+demo.SkillURI+`","file":"`+demo.SkillFilePath+`"}`), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(r); !strings.Contains(text, "# Examples") {
		t.Errorf("read: %q", text)
	}
	for args, want := range map[string]string{
		`{"server":"demo","uri":"` + demo.SkillURI + `","file":"../secrets.md"}`:               "could not be read",
		`{"server":"other","uri":"` + demo.SkillURI + `","file":"` + demo.SkillFilePath + `"}`: "is not loaded",
		`{"server":"nope","uri":"` + demo.SkillURI + `","file":"x"}`:                           "There is no server",
	} {
		r, err = c.CallTool(ctx, MetaReadSkillFile, json.RawMessage(args), CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if text := resultText(r); !strings.Contains(text, want) {
			t.Errorf("%s: %q; want it to say %q", args, text, want)
		}
	}
}
