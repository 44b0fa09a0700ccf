package catalog

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var validName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`)

func TestBaseName(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		id, tool, want string
	}{
		{"github", "search_repos", "github_search_repos"},
		{"my server", "get.file", "my_server_get_file"},
		{"café", "naïve/tool", "caf__na_ve_tool"},
		{"a-b", "c-d", "a-b_c-d"},
		{"1password", "read", "_1password_read"},
		{"-x", "y", "_-x_y"},
		{"", "t", "_t"},
		{"srv", long, ("srv_" + long)[:64]},
	}
	for _, tt := range tests {
		got := baseName(tt.id, tt.tool)
		if got != tt.want {
			t.Errorf("baseName(%q, %q) = %q; want %q", tt.id, tt.tool, got, tt.want)
		}
		if !validName.MatchString(got) {
			t.Errorf("baseName(%q, %q) = %q; not a valid provider name", tt.id, tt.tool, got)
		}
	}
}

func TestAssignNames(t *testing.T) {
	long := strings.Repeat("t", 70)
	keys := []toolKey{
		{"gh", "search"},
		{"a", "b_c"}, {"a_b", "c"}, // both "a_b_c"
		{"x y", "z"}, {"x.y", "z"}, // both "x_y_z"
		{"srv", long + "1"}, {"srv", long + "2"}, // equal after the cut to 64
		{"catalog", "list_servers"}, // a reserved name
	}
	reserved := []string{MetaListServers}
	got := assignNames(keys, reserved)
	if got[toolKey{"gh", "search"}] != "gh_search" {
		t.Errorf("unique name = %q; want gh_search", got[toolKey{"gh", "search"}])
	}
	seen := map[string]toolKey{MetaListServers: {}}
	for _, k := range keys {
		n := got[k]
		if !validName.MatchString(n) {
			t.Errorf("name of %v = %q; not a valid provider name", k, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("name %q given to %v and %v", n, k, other)
		}
		seen[n] = k
	}
	for _, k := range keys[1:] {
		if n := got[k]; !regexp.MustCompile(`_[0-9a-f]{6}$`).MatchString(n) {
			t.Errorf("colliding %v got %q; want a name ending in a 6-hex hash", k, n)
		}
	}
	if n := got[toolKey{"a", "b_c"}]; n != hashedName("a", "b_c", 6) {
		t.Errorf("name of a/b_c = %q; want %q", n, hashedName("a", "b_c", 6))
	}
	// The same set in any order gives the same names.
	for i := range 20 {
		shuffled := append([]toolKey(nil), keys...)
		r := rand.New(rand.NewPCG(uint64(i), 7))
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if diff := cmp.Diff(got, assignNames(shuffled, reserved), cmp.AllowUnexported(toolKey{})); diff != "" {
			t.Fatalf("names depend on order (-first +shuffled):\n%s", diff)
		}
	}
}

// Catalogs built from the same servers (a map, iterated in random order)
// export the same names, and colliding tools of two servers get hashed names
// that route back to their own server.
func TestNamesAcrossMapOrders(t *testing.T) {
	var first map[string]string
	for range 10 {
		fs := map[string]*fakeServer{
			"a":   {tools: []*mcp.Tool{tool("b_c", true), tool("x", true)}},
			"a_b": {tools: []*mcp.Tool{tool("c", true)}},
			"é":   {tools: []*mcp.Tool{tool("t", true)}},
			"_":   {tools: []*mcp.Tool{tool("t", true)}},
		}
		cat, _ := newCatalog(t, Config{Servers: servers("a", "http://127.0.0.1:9/a", "a_b", "http://127.0.0.1:9/ab", "é", "http://127.0.0.1:9/e", "_", "http://127.0.0.1:9/u"), Factory: fakes(fs)})
		tools, err := cat.Tools(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, tl := range tools {
			got[tl.Name] = tl.ServerID + "/" + tl.Tool.Name
		}
		if first == nil {
			first = got
			if len(got) != 5 {
				t.Fatalf("tools = %v; want 5", got)
			}
			continue
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Fatalf("names differ between catalogs (-first +now):\n%s", diff)
		}
		for name, want := range got {
			res, err := cat.ModelCall(ctxT(t), name, "{}", CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ServerID+"/"+res.Tool != want || res.Text != "ran "+want[strings.Index(want, "/")+1:] {
				t.Errorf("call %s went to %s/%s (%q); want %s", name, res.ServerID, res.Tool, res.Text, want)
			}
		}
	}
}

func TestFilterTools(t *testing.T) {
	all := []*mcp.Tool{tool("search_code", true), tool("search_issues", true), tool("delete_repo", false), tool("create_issue", false), tool("search_code", true)}
	tests := []struct {
		name        string
		allow, deny []string
		max         int
		want        []string
		cut         int
	}{
		{"all", nil, nil, 10, []string{"search_code", "search_issues", "delete_repo", "create_issue"}, 0},
		{"allow glob", []string{"search_*"}, nil, 10, []string{"search_code", "search_issues"}, 0},
		{"deny glob", nil, []string{"delete_*"}, 10, []string{"search_code", "search_issues", "create_issue"}, 0},
		{"deny wins", []string{"*"}, []string{"*_issue*"}, 10, []string{"search_code", "delete_repo"}, 0},
		{"cap in server order", nil, nil, 2, []string{"search_code", "search_issues"}, 2},
		{"allow then cap", []string{"*_*"}, []string{"search_code"}, 1, []string{"search_issues"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, _, cut := filterTools(ServerConfig{AllowTools: tt.allow, DenyTools: tt.deny}, all, tt.max)
			var got []string
			for _, k := range kept {
				got = append(got, k.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || cut != tt.cut {
				t.Errorf("kept (-want +got):\n%s\ncut = %d; want %d", diff, cut, tt.cut)
			}
		})
	}
}

// More tools than MaxToolsPerServer are cut to the cap, never silently.
func TestToolCapWarning(t *testing.T) {
	fs := map[string]*fakeServer{"big": {tools: []*mcp.Tool{tool("t1", true), tool("t2", true), tool("t3", true), tool("t4", true), tool("t5", true)}}}
	cat, ev := newCatalog(t, Config{Servers: servers("big", "http://127.0.0.1:9/big"), Factory: fakes(fs), MaxToolsPerServer: 3})
	tools, err := cat.Tools(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"big_t1", "big_t2", "big_t3"}, names(tools)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	waitFor(t, "warning", func() bool { return ev.count(EventWarning) == 1 })
	got := ev.of(EventWarning)[0].Data.(Warning)
	want := Warning{ID: "big", Message: `server "big" offers 5 tools; only the first 3 are used (maxToolsPerServer)`}
	if got != want {
		t.Errorf("warning = %+v; want %+v", got, want)
	}
}
