package confsteps

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestEveryCoreScenarioHasSteps: each scenario the conformance scripts run
// that is not an auth one has its own plan; the auth plan (call test-tool)
// would fail a core scenario, or skip what it checks.
func TestEveryCoreScenarioHasSteps(t *testing.T) {
	b, err := os.ReadFile("../../scripts/conformance-lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, block := range regexp.MustCompile(`(?s)\n[A-Z_]+_SCENARIOS=\((.*?)\n\)`).FindAllStringSubmatch(string(b), -1) {
		for _, line := range strings.Split(block[1], "\n") {
			if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
				names = append(names, f[0])
			}
		}
	}
	if len(names) < 40 {
		t.Fatalf("read only %d scenarios from scripts/conformance-lib.sh: %q", len(names), names)
	}
	for _, s := range names {
		if strings.HasPrefix(s, "auth/") {
			continue
		}
		for _, st := range For(s, nil) {
			if st.Op == CallTool && st.Name == "test-tool" {
				t.Errorf("scenario %s gets the auth scenarios' steps; give it its own in For", s)
			}
		}
	}
}

// TestCustomHeaderCallsComeFromTheContext: http-custom-headers makes
// exactly the calls its context lists, in order, with their arguments.
func TestCustomHeaderCallsComeFromTheContext(t *testing.T) {
	var cctx map[string]any
	if err := json.Unmarshal([]byte(`{"name":"http-custom-headers","toolCalls":[
		{"name":"test_custom_headers","arguments":{"region":"us-west1","priority":42}},
		{"name":"test_custom_headers_null","arguments":{"verbose":null}}]}`), &cctx); err != nil {
		t.Fatal(err)
	}
	got := For("http-custom-headers", cctx)
	want := []Step{
		{Op: ListTools},
		{Op: CallTool, Name: "test_custom_headers", Args: map[string]any{"region": "us-west1", "priority": float64(42)}},
		{Op: CallTool, Name: "test_custom_headers_null", Args: map[string]any{"verbose": nil}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("steps = %+v; want %+v", got, want)
	}
}
