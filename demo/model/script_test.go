package model

import "testing"

// With a catalog's names, "add" is the demo server's add, never the notes
// server's note_add that also ends in _add (a model reading the names
// would not call it with add's arguments), and a server id may hold an
// underscore.
func TestFindPrefersTheServersOwnTool(t *testing.T) {
	for _, c := range []struct {
		tools []string
		want  string
	}{
		{[]string{"notes_note_add", "demo_add"}, "demo_add"},
		{[]string{"notes_note_add"}, ""},
		{[]string{"notes_note_add", "my_srv_add"}, "my_srv_add"},
		{[]string{"notes_note_add", "add", "demo_add"}, "add"},
		{[]string{"notes_echo_x"}, ""},
	} {
		if got := find(c.tools, "add"); got != c.want {
			t.Errorf("find(%v, add) = %q; want %q", c.tools, got, c.want)
		}
	}
}
