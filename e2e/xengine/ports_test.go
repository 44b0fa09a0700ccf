package xengine

import (
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A stack binds the port it is given itself, a moment after the test
// chose it. A port of the kernel's ephemeral range (what listening on port
// 0 gives) can be taken meanwhile by any outgoing connection of the
// browsers, servers and stacks of the passes make e2e runs at once: seen
// as wrangler and oauth-proxy failing with "address already in use". So
// the ports stacks get come from below that range, each claimed across
// processes by an flock(2) on a file of its own, held until the test ends
// (a process that dies releases it), and checked free by binding it.

// portRange is where reservePort looks: [20000, the start of the
// ephemeral range), at most up to 32768 (Linux's default start).
func portRange() (from, to int) {
	from, to = 20000, 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if low, err := strconv.Atoi(f[0]); err == nil && low < to {
				to = low
			}
		}
	}
	return from, to
}

// reservePort returns a free loopback port, outside the ephemeral range
// and claimed for this test only (see above).
func reservePort(t testing.TB) int {
	t.Helper()
	from, to := portRange()
	if to-from < 1000 {
		return ephemeralPort(t) // a machine whose ephemeral range leaves no room below it
	}
	dir := filepath.Join(os.TempDir(), "mcpwasm-ports")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := to - from
	start := rand.IntN(n)
	for i := range n {
		p := from + (start+i)%n
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close() // another test holds it
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			f.Close() // something else listens there
			continue
		}
		l.Close()
		t.Cleanup(func() { f.Close() })
		return p
	}
	t.Fatalf("no free loopback port in [%d, %d)", from, to)
	return 0
}

// reservePorts returns n distinct ports, each as reservePort's.
func reservePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ports[i] = reservePort(t)
	}
	return ports
}

// ephemeralPort returns a port the kernel deems free now.
func ephemeralPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
