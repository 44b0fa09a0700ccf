package jsapi

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/hostpolicy"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// TestPageIDsAreTagged: every "id" argument of an operation is one the
// page chose, tagged page:"id" (a worker prefixes only tagged ones), and
// every tagged argument is a string.
func TestPageIDsAreTagged(t *testing.T) {
	for _, o := range Ops {
		typ := reflect.TypeOf(o.Args)
		if typ == nil || typ.Kind() != reflect.Struct {
			continue
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			tagged := f.Tag.Get("page") == "id"
			if name == "id" && !tagged {
				t.Errorf("%s: argument id is not tagged page:\"id\"", o.Name)
			}
			if tagged && f.Type.Kind() != reflect.String {
				t.Errorf("%s: argument %s is tagged page:\"id\" but is a %s", o.Name, name, f.Type)
			}
		}
	}
}

// TestHostCallbacksAreKnown: a targeted callback's target is a Target of
// a kind the table lists.
func TestHostCallbacksAreKnown(t *testing.T) {
	kinds := regexp.MustCompile(`target (\w+):<id>`)
	for _, h := range Hosts {
		for _, m := range kinds.FindAllStringSubmatch(h.Doc, -1) {
			if !h.Targeted() {
				t.Errorf("host callback %s names target %s: but takes no target", h.Name, m[1])
			}
			if Target(m[1], "x") != m[1]+":x" || !strings.Contains(strings.Join(TargetKinds, " "), m[1]) {
				t.Errorf("host callback %s: target kind %s is not in TargetKinds", h.Name, m[1])
			}
		}
	}
}

// goSentences are the phrases of what Go owns and web/jsapi.js carries:
// each piece of a message between its placeholders, when long enough to
// be a copy rather than a coincidence.
func goSentences() []string {
	msgs := []string{}
	for _, c := range hostpolicy.PatternChecks {
		msgs = append(msgs, c.Problem)
	}
	for _, f := range hostpolicy.PlainForms {
		msgs = append(msgs, f.Why, f.Fix)
	}
	v := reflect.ValueOf(hostpolicy.Forms)
	for i := range v.NumField() {
		msgs = append(msgs, v.Field(i).String())
	}
	for _, m := range mcperr.Messages {
		msgs = append(msgs, m)
	}
	msgs = append(msgs, UnhandledReturn().Message, UnhandledReturn().Detail, PagePolicyOwner, CatalogPolicyOwner)
	return pieces(msgs...)
}

func pieces(msgs ...string) []string {
	var out []string
	for _, m := range msgs {
		for _, piece := range regexp.MustCompile(`%[a-z]|\{\w+\}`).Split(m, -1) {
			if piece = strings.TrimSpace(piece); len(piece) >= 30 {
				out = append(out, piece)
			}
		}
	}
	return out
}

// eachWebModule calls f with each module of web/ but the generated
// jsapi.js: its path below web/ and its source.
func eachWebModule(t *testing.T, f func(rel, src string)) {
	t.Helper()
	root := filepath.Join("..", "web")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") || filepath.Base(p) == "jsapi.js" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		f(rel, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWebCopiesNoGoSentence: no module of web/ but the generated
// jsapi.js writes a sentence that Go owns; a copy would drift.
func TestWebCopiesNoGoSentence(t *testing.T) {
	sentences := goSentences()
	eachWebModule(t, func(rel, src string) {
		for _, s := range sentences {
			if strings.Contains(src, s) {
				t.Errorf("web/%s copies Go's %q: take it from jsapi.js", rel, s)
			}
		}
	})
}

// TestWebBuildsNoTargetByHand: the page names a host callback's target
// with jsapi.js's target(kind, id), never by writing "<kind>:" itself, so
// the format has one owner (Target).
func TestWebBuildsNoTargetByHand(t *testing.T) {
	byHand := regexp.MustCompile("[`\"'](" + strings.Join(TargetKinds, "|") + ")" + regexp.QuoteMeta(TargetSep) + `(\$\{|["'` + "`" + `]\s*\+)`)
	eachWebModule(t, func(rel, src string) {
		for i, line := range strings.Split(src, "\n") {
			if byHand.MatchString(line) {
				t.Errorf("web/%s:%d builds a host callback's target by hand: use target(kind, id) from jsapi.js", rel, i+1)
			}
		}
	})
}
