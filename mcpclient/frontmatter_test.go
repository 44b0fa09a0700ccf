package mcpclient

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// yamlOracle parses frontmatter with a full YAML library: what
// parseFrontmatter must agree with wherever it reads the input at all.
func yamlOracle(data []byte) (map[string]any, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, fmt.Errorf("it does not begin with YAML frontmatter")
	}
	end := strings.Index(rest, "\n---")
	if end < 0 {
		return nil, fmt.Errorf("its frontmatter does not end")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(rest[:end+1]), &doc); err != nil || len(doc.Content) != 1 {
		return nil, fmt.Errorf("its frontmatter is not YAML a host can read")
	}
	v, err := yamlValue(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	fm, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("its frontmatter is not a YAML mapping")
	}
	return fm, nil
}

// yamlValue is the JSON value of a YAML node. A timestamp stays the text
// it was written as (JSON has none, so the entry carries it as a string).
func yamlValue(n *yaml.Node, depth int) (any, error) {
	if depth > 32 {
		return nil, fmt.Errorf("its frontmatter nests too deep")
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("its frontmatter has a key that is not text")
			}
			v, err := yamlValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := yamlValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str", "!!timestamp", "!!binary":
			return n.Value, nil
		case "!!null":
			return nil, nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("its frontmatter has a value YAML cannot read")
		}
		return v, nil
	case yaml.AliasNode:
		return yamlValue(n.Alias, depth+1)
	}
	return nil, fmt.Errorf("its frontmatter has a YAML node of an unknown kind")
}

// frontmatterCases are frontmatters a SKILL.md may carry; parseFrontmatter
// must read each as a YAML library does, or refuse it.
var frontmatterCases = []string{
	"name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n",
	"name: a\ndescription: 'It''s quoted: with a colon'\nlicense: \"Apache-2.0\"\n",
	"name: a\ndescription: \"Escapes \\\" \\n \\u00e9 \\t done\"\n",
	"name: a # a comment\n# a line of comment\ndescription: text # trailing\n",
	"name: a\ndescription: a long description\n  that goes on\n  over lines\n",
	"name: a\ndescription: |\n  Literal\n    indented\n\n  after a blank\n",
	"name: a\ndescription: |-\n  Literal\n  stripped\n",
	"name: a\ndescription: >\n  Folded\n  text here\n\n  new paragraph\n\n\n  two blanks\n",
	"name: a\ndescription: >-\n  Folded\n    more indented\n  back\n",
	"name: a\ndescription: |+\n  kept\n\n\nnext: 1\n",
	"name: a\ndescription: d\nmetadata:\n  version: \"2.1.0\"\n  author: someone\n  count: 3\n  ratio: 0.5\n  on: true\n  none: null\n  tilde: ~\n",
	"name: a\ndescription: d\nmetadata:\n  nested:\n    deeper: value\n  back: here\n",
	"name: a\ndescription: d\nallowed-tools: Bash(git:*) Read\n",
	"name: a\ndescription: d\ntags:\n  - one\n  - two\n  - 3\n",
	"name: a\ndescription: d\ntags:\n- one\n- two\n",
	"name: a\ndescription: d\nlist: [a, 'b c', \"d\", 4, true]\n",
	"name: a\ndescription: d\nempty: []\n",
	"name: a\ndescription: d\nitems:\n  - name: x\n    value: 1\n  - name: y\n    value: 2\n",
	"name: a\ndescription: d\nsince: 2026-01-05\n",
	"name: a\ndescription: d\nversion: 2\nfloat: 1.5e3\nneg: -7\nhex: 0x1F\noctal: 0o17\n",
	"name: a\ndescription: d\nurl: https://example.com/a#b\n",
	"name: a\ndescription: d\nempty:\nafter: x\n",
	"\"quoted key\": v\nname: a\ndescription: d\n",
	"name: a\ndescription: d\ncolon: a:b\n",
	"name: a\ndescription: 'multi\n  line single'\n",
	"name: a\ndescription: \"multi\n  line double\"\n",
	"name: Yes\ndescription: On\n",
	"name: a\ndescription: d\ninf: .inf\nnan: .nan\n",
	// What it refuses (anchors, tags, flow mappings, tabs):
	"name: &n a\ndescription: *n\n",
	"name: !!str a\ndescription: d\n",
	"name: a\ndescription: d\nmeta: {a: 1}\n",
	"name: a\n\tdescription: d\n",
	"name: a\ndescription: d\nname: b\n",
	"- a\n- b\n",
	"name: a\ndescription: d\n  bad: indent\n",
}

// TestFrontmatterAgreesWithYAML: on every case, parseFrontmatter either
// refuses or reads what a YAML library reads.
func TestFrontmatterAgreesWithYAML(t *testing.T) {
	read := 0
	for _, c := range frontmatterCases {
		doc := []byte("---\n" + c + "---\n\n# Body\n")
		got, err := parseFrontmatter(doc)
		want, werr := yamlOracle(doc)
		switch {
		case err != nil:
			t.Logf("refused %q: %v (yaml: %v)", c, err, werr)
		case werr != nil:
			t.Errorf("read %q as %v; a YAML library refuses it: %v", c, got, werr)
		case !sameJSON(got, want):
			t.Errorf("read %q as\n  %#v\nwant\n  %#v", c, got, want)
		default:
			read++
		}
	}
	if read < 25 {
		t.Errorf("read %d cases; want at least 25 (it refuses YAML a SKILL.md commonly has)", read)
	}
}

// FuzzFrontmatter: on any input parseFrontmatter does not panic, and what
// it reads, a YAML library reads the same.
func FuzzFrontmatter(f *testing.F) {
	for _, c := range frontmatterCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, c string) {
		doc := []byte("---\n" + c + "\n---\n")
		got, err := parseFrontmatter(doc)
		if err != nil {
			return
		}
		want, werr := yamlOracle(doc)
		if werr != nil {
			if strings.Contains(c, "---") {
				return // the frontmatter ends earlier for one of them
			}
			t.Fatalf("read %q as %v; a YAML library refuses it: %v", c, got, werr)
		}
		if !sameJSON(got, want) {
			t.Fatalf("read %q as %#v; want %#v", c, got, want)
		}
	})
}

var _ = fmt.Sprint
