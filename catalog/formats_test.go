package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fixture is one provider's documented shapes (catalog/testdata).
type fixture struct {
	Tools   any `json:"tools"`
	Calls   any `json:"calls"`
	Results any `json:"results"`
}

func loadFixture(t *testing.T, f Format) fixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", string(f)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx fixture
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	return fx
}

// schemaKeys hold JSON Schemas, whose content differs per tool: only their
// being an object schema is compared.
var schemaKeys = map[string]bool{"parameters": true, "input_schema": true}

// conforms checks that got has the shape of the documented example want:
// objects with the same keys, values of the same JSON types, recursively;
// every element of an array like one of the example's elements (examples
// list each variant, such as a text and an image block).
func conforms(got, want any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %T; want an object", path, got)}
		}
		var errs []string
		for _, k := range slices.Sorted(mapsKeys(w)) {
			gv, ok := g[k]
			if !ok {
				errs = append(errs, fmt.Sprintf("%s: key %q missing", path, k))
				continue
			}
			if schemaKeys[k] {
				if m, ok := gv.(map[string]any); !ok || m["type"] != "object" {
					errs = append(errs, fmt.Sprintf("%s.%s: got %v; want an object schema", path, k, gv))
				}
				continue
			}
			errs = append(errs, conforms(gv, w[k], path+"."+k)...)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				errs = append(errs, fmt.Sprintf("%s: key %q is not in the documented shape", path, k))
			}
		}
		return errs
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %T; want an array", path, got)}
		}
		var errs []string
		for i, gv := range g {
			var best []string
			for _, wv := range w {
				e := conforms(gv, wv, fmt.Sprintf("%s[%d]", path, i))
				if len(e) == 0 {
					best = nil
					break
				}
				if best == nil || len(e) < len(best) {
					best = e
				}
			}
			errs = append(errs, best...)
		}
		return errs
	default:
		if jsonType(got) != jsonType(want) {
			return []string{fmt.Sprintf("%s: got %s; want %s", path, jsonType(got), jsonType(want))}
		}
	}
	return nil
}

func mapsKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return v
}

var formats = []Format{FormatOpenAI, FormatOpenAIResponses, FormatAnthropic, FormatGemini}

// Every format's export and tool-result messages have the shapes of the
// provider's documentation, and the documented tool-call shapes are read.
func TestFormatsMatchFixtures(t *testing.T) {
	d := startDemo(t)
	cat, _ := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t)})
	ctx := ctxT(t)
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			fx := loadFixture(t, f)
			// The fixture's own examples conform to themselves.
			if errs := conforms(fx.Results, fx.Results, "results"); len(errs) > 0 {
				t.Fatalf("fixture: %v", errs)
			}
			out, err := cat.ToolsFor(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			got := decode(t, out)
			if n := countTools(f, got); n != 7 {
				t.Errorf("exported %d tools; want 7", n)
			}
			if errs := conforms(got, fx.Tools, "tools"); len(errs) > 0 {
				t.Errorf("export does not match the documented shape:\n%s", strings.Join(errs, "\n"))
			}
			// The documented call, renamed to a demo tool, parses and
			// runs; its result message has the documented shape.
			doc, _ := json.Marshal(fx.Calls)
			doc = renameCall(f, doc)
			calls, err := ParseToolCalls(f, doc)
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) != 1 || calls[0].Name != "demo_echo" || calls[0].ID == "" {
				t.Fatalf("parsed calls = %+v; want one demo_echo call with an id", calls)
			}
			res, err := cat.HandleToolCalls(ctx, f, doc, CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if errs := conforms(decode(t, res), fx.Results, "results"); len(errs) > 0 {
				t.Errorf("results do not match the documented shape:\n%s\n%s", strings.Join(errs, "\n"), res)
			}
			if !strings.Contains(string(res), "hello from the fixture") {
				t.Errorf("results %s do not carry the echo", res)
			}
		})
	}
}

func countTools(f Format, v any) int {
	list, _ := v.([]any)
	if f == FormatGemini && len(list) == 1 {
		decls, _ := list[0].(map[string]any)["functionDeclarations"].([]any)
		return len(decls)
	}
	return len(list)
}

// renameCall points a fixture's call at demo_echo {"text": …}.
func renameCall(f Format, doc []byte) []byte {
	s := string(doc)
	for _, n := range []string{"get_weather", "get_current_temperature"} {
		s = strings.ReplaceAll(s, `"`+n+`"`, `"demo_echo"`)
	}
	args := map[Format][2]string{
		FormatOpenAI:          {`"{\"location\":\"San Francisco, CA\"}"`, `"{\"text\":\"hello from the fixture\"}"`},
		FormatOpenAIResponses: {`"{\"location\":\"Paris, France\"}"`, `"{\"text\":\"hello from the fixture\"}"`},
		FormatAnthropic:       {`{"location":"San Francisco, CA"}`, `{"text":"hello from the fixture"}`},
		FormatGemini:          {`{"location":"London"}`, `{"text":"hello from the fixture"}`},
	}[f]
	return []byte(strings.Replace(s, args[0], args[1], 1))
}

func TestGeminiSchema(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		dropped []string
	}{{
		name: "kept as is",
		in:   `{"type":"object","properties":{"q":{"type":"string","description":"Query","minLength":1,"enum":["a","b"]},"n":{"type":"integer","minimum":1,"maximum":5,"format":"int32"},"tags":{"type":"array","items":{"type":"string"},"maxItems":3}},"required":["q"]}`,
		want: `{"type":"object","properties":{"q":{"type":"string","description":"Query","minLength":1,"enum":["a","b"]},"n":{"type":"integer","minimum":1,"maximum":5,"format":"int32"},"tags":{"type":"array","items":{"type":"string"},"maxItems":3}},"required":["q"]}`,
	}, {
		name: "annotations kept when well typed",
		in:   `{"type":"object","properties":{"a":{"type":"string","nullable":true,"example":"x","default":"y","title":"A","pattern":"^x"},"b":{"type":"string","nullable":false,"title":3,"minLength":"2"}}}`,
		want: `{"type":"object","properties":{"a":{"type":"string","nullable":true,"example":"x","default":"y","title":"A","pattern":"^x"},"b":{"type":"string"}}}`,
	}, {
		name:    "nullable types, const, oneOf, additionalProperties false",
		in:      `{"type":"object","additionalProperties":false,"properties":{"s":{"type":["string","null"]},"c":{"const":"fixed"},"u":{"oneOf":[{"type":"string"},{"type":"number"}]},"m":{"type":["string","number"]}}}`,
		want:    `{"type":"object","properties":{"s":{"type":"string","nullable":true},"c":{"type":"string","enum":["fixed"]},"u":{"anyOf":[{"type":"string"},{"type":"number"}]},"m":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`,
		dropped: []string{"oneOf (kept as anyOf)"},
	}, {
		name: "local refs inlined, recursion and the unsayable dropped",
		in: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"addr":{"type":"object","properties":{"city":{"type":"string"}}},"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}},
		      "properties":{"home":{"$ref":"#/$defs/addr","description":"Home address"},"list":{"$ref":"#/$defs/node"},"meta":{"type":"object","additionalProperties":{"type":"string"}},
		      "level":{"type":"integer","enum":[1,2,3]},"mail":{"type":"string","format":"email"},"p":{"type":"number","exclusiveMinimum":0},"x":{"not":{"type":"null"}}},"required":["home","gone"]}`,
		want: `{"type":"object","properties":{"home":{"type":"object","properties":{"city":{"type":"string"}},"description":"Home address"},"list":{"type":"object","properties":{"next":{}}},"meta":{"type":"object"},
		       "level":{"type":"integer","description":"Allowed values: 1, 2, 3."},"mail":{"type":"string"},"p":{"type":"number"},"x":{}},"required":["home"]}`,
		dropped: []string{"$ref (recursive)", "additionalProperties", "enum (non-string values, listed in the description)", "exclusiveMinimum", "format", "not"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in map[string]any
			if err := json.Unmarshal([]byte(tt.in), &in); err != nil {
				t.Fatal(err)
			}
			got, dropped := GeminiSchema(in)
			var want map[string]any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, decode(t, mustJSON(got))); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.dropped, dropped); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
		})
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// The Gemini export says what it dropped, and leaves out the parameters of
// a tool that has none.
func TestGeminiExportNotes(t *testing.T) {
	tools := []Tool{
		{Name: "s_loose", Tool: &mcp.Tool{Description: "Loose.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"m": map[string]any{"type": "object", "patternProperties": map[string]any{"^x": map[string]any{}}}}}}},
		{Name: "s_none", Tool: &mcp.Tool{Description: "No arguments.", InputSchema: map[string]any{"type": "object"}}},
	}
	out, err := Export(FormatGemini, tools)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"functionDeclarations":[{"name":"s_loose","description":"Loose.\n\nNote: the schema was simplified; dropped: patternProperties.","parameters":{"properties":{"m":{"type":"object"}},"type":"object"}},{"name":"s_none","description":"No arguments."}]}]`
	if string(out) != want {
		t.Errorf("export =\n%s\nwant\n%s", out, want)
	}
	for _, f := range formats {
		if _, err := Export(f, nil); err != nil {
			t.Errorf("Export(%s, nil): %v", f, err)
		}
	}
	if _, err := Export("cohere", tools); err == nil {
		t.Error("Export of an unknown format succeeded")
	}
}
