package webbuild

import "testing"

func TestSemVer(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"v1.2.3", "1.2.3"},
		{"1.2.3", "1.2.3"},
		{"v1.2.3-dirty", "1.2.3-dev.dirty"},
		{"v1.2.3-5-gabc1234", "1.2.4-dev.5.gabc1234"},
		{"v0.9.9-12-g0123abc-dirty", "0.9.10-dev.12.g0123abc.dirty"},
		{"255e74e", "0.0.0-dev.g255e74e"},
		{"255e74e-dirty", "0.0.0-dev.g255e74e.dirty"},
		{"dev", "0.0.0-dev"},
		{"", "0.0.0-dev"},
	} {
		if got := SemVer(c.in); got != c.want {
			t.Errorf("SemVer(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
