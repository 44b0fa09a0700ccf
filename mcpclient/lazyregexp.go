package mcpclient

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr the first time it is used, not at start-up:
// in a browser every package's init runs before the page's first call,
// and most clients never read a skill or an icon.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
