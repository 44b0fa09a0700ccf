package xengine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestSkills lists, loads and reads the demo server's skill (the Skills
// extension) through the client, and through a catalog's skill tools as
// a model would: the loaded text is the skill's SKILL.md (that listing
// reads no file the conformance run's sep-2640 scenarios check), a file the skill's entry does not list is refused, a
// skill the server does not serve is an error, and a server without the
// extension says so.
func TestSkills(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Listed   []map[string]any `json:"listed"`
		Text     string           `json:"text"`
		File     string           `json:"file"`
		Unlisted jsErr            `json:"unlisted"`
		Unknown  jsErr            `json:"unknown"`
		NoSkills jsErr            `json:"noSkills"`
		Tools    []string         `json:"tools"`
		CatList  string           `json:"catList"`
		CatLoad  string           `json:"catLoad"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const d = mcp.client(%[1]q), plain = mcp.client(%[2]q);
		await Promise.all([d.connect(), plain.connect()]);
		const listed = await d.skills();
		const skill = await d.loadSkill(listed[0].uri);
		const file = await d.readSkillFile(skill.uri, %[4]q);
		const unlisted = await d.readSkillFile(skill.uri, "../../secrets.md").then(() => ({}), %[5]s);
		const unknown = await d.loadSkill("skill://nothing/SKILL.md").then(() => ({}), %[5]s);
		const noSkills = await plain.skills().then(() => ({}), %[5]s);
		const cat = mcp.catalog({ servers: { demo: { url: %[1]q } }, skills: true });
		const tools = (await cat.tools()).map((t) => t.name).filter((n) => n.startsWith("catalog_"));
		const catList = (await cat.callTool("catalog_list_skills", {})).content[0].text;
		const catLoad = (await cat.callTool("catalog_load_skill", { server: "demo", uri: %[3]q })).content[0].text;
		await Promise.all([d.close(), plain.close(), cat.close()]);
		return { listed, text: skill.text, file, unlisted: unlisted.error, unknown: unknown.error, noSkills: noSkills.error, tools, catList, catLoad };
	})()`, w.OpenURL, w.MCP2URL, demo.SkillURI, demo.SkillFilePath, catchJS), &got)
	if len(got.Listed) != 1 || got.Listed[0]["uri"] != demo.SkillURI || got.Listed[0]["name"] != demo.SkillName || got.Listed[0]["description"] == "" {
		t.Fatalf("skills() = %v; want the demo server's %s", got.Listed, demo.SkillURI)
	}
	if files, _ := got.Listed[0]["files"].([]any); len(files) != 2 {
		t.Errorf("the skill's files = %v; want SKILL.md and %s with digests", got.Listed[0]["files"], demo.SkillFilePath)
	}
	if !strings.HasPrefix(got.Text, "---\nname: arithmetic\n") || !strings.Contains(got.Text, "# Arithmetic") {
		t.Errorf("loadSkill().text = %q; want the SKILL.md", got.Text)
	}
	if !strings.Contains(got.File, "# Examples") {
		t.Errorf("readSkillFile(%s) = %q", demo.SkillFilePath, got.File)
	}
	if got.Unlisted.Code != "protocol" || !strings.Contains(got.Unlisted.Message, "does not list it") {
		t.Errorf("a file outside the skill's entry: %+v; want protocol, saying the entry does not list it", got.Unlisted)
	}
	if got.Unknown.Code == "" {
		t.Errorf("loadSkill() of a skill the server does not serve succeeded")
	}
	if got.NoSkills.Code != "protocol" || !strings.Contains(got.NoSkills.Message, "does not offer skills") {
		t.Errorf("skills() on a server without the extension: %+v; want protocol, saying so", got.NoSkills)
	}
	if strings.Join(got.Tools, " ") != "catalog_list_skills catalog_load_skill catalog_read_skill_file" {
		t.Errorf("the catalog's meta tools = %q; want the three skill tools", got.Tools)
	}
	var list struct {
		Skills []struct{ Server, URI, Name string } `json:"skills"`
	}
	if err := json.Unmarshal([]byte(got.CatList), &list); err != nil || len(list.Skills) != 1 || list.Skills[0].Server != "demo" || list.Skills[0].URI != demo.SkillURI {
		t.Errorf("catalog_list_skills = %s; want the demo server's skill", got.CatList)
	}
	if !strings.Contains(got.CatLoad, "not the user's") || !strings.Contains(got.CatLoad, "# Arithmetic") {
		t.Errorf("catalog_load_skill = %q; want the skill's text, framed as the server's", got.CatLoad)
	}
}
