package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
)

// wasmFlags are the build flags of `make build` (Makefile WASMFLAGS) but
// its tags, which webbuild.BuildWasm adds.
var wasmFlags = []string{"-trimpath", "-ldflags=-s -w -X main.version=bench"}

// buildFloor builds cmd/bench/floor, a go-sdk client over jsfetch and
// nothing else of the module, with make build's flags and tags: the size
// floor of the payload table.
func buildFloor(root, out string) error {
	return goBuildJS(root, out, "./cmd/bench/floor", webbuild.WithTags(wasmFlags))
}

// loadsHashedName reports whether the module's scripts in dir (mcp.js and
// the files beside it, such as start.js) load the module under the name
// wasmurl.js gives; a tree from before that loads mcp.wasm.
func loadsHashedName(dir string) bool {
	scripts, _ := filepath.Glob(filepath.Join(dir, "*.js"))
	for _, f := range scripts {
		if filepath.Base(f) == webbuild.WasmModule {
			continue
		}
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), webbuild.WasmModule) {
			return true
		}
	}
	return false
}

// buildUntagged builds root's module with wasmFlags but not
// webbuild.Tags, for the payload table's before and after.
func buildUntagged(root, out string) error {
	return goBuildJS(root, out, "./wasm", wasmFlags)
}

// goBuildJS builds root's package pkg for GOOS=js into out with flags.
func goBuildJS(root, out, pkg string, flags []string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	args := append(append([]string{"build"}, flags...), "-o", out, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// copyWeb copies the page files of src/web (not the built module) with the
// toolchain's wasm_exec.js into dst, and adds the bench pages.
func copyWeb(src, dst string) error {
	if err := webbuild.CopyWeb(src, dst); err != nil {
		return err
	}
	return fs.WalkDir(pages, "pages", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := pages.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, filepath.Base(p)), b, 0o644)
	})
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

func output(name string, args ...string) string {
	out, _ := exec.Command(name, args...).Output()
	return string(out)
}

// sizes are the bytes of one file raw and compressed as `make build` does.
type sizes struct {
	Raw, Gzip, Brotli int64
}

// compressor makes .gz (gzip -9) and .br (brotli -q 11) siblings of files,
// at most two at a time (the machine has two cores). brotli -q 11 takes
// about 30 s for the module, so results are cached by content hash in the
// user cache directory: an unchanged module is compressed once.
type compressor struct {
	cacheDir string
	sem      chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	errs     []error
}

func newCompressor() *compressor {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "mcpwasm-bench")
	os.MkdirAll(dir, 0o755)
	return &compressor{cacheDir: dir, sem: make(chan struct{}, 2)}
}

// start compresses name in the background; wait for the results.
func (c *compressor) start(name string) {
	for _, k := range []string{"gz", "br"} {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.sem <- struct{}{}
			defer func() { <-c.sem }()
			if err := c.compress(name, k); err != nil {
				c.mu.Lock()
				c.errs = append(c.errs, err)
				c.mu.Unlock()
			}
		}()
	}
}

func (c *compressor) wait() error {
	c.wg.Wait()
	if len(c.errs) > 0 {
		return c.errs[0]
	}
	return nil
}

func (c *compressor) compress(name, kind string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	cached := filepath.Join(c.cacheDir, hex.EncodeToString(sum[:16])+"."+kind)
	dst := name + "." + kind
	if _, err := os.Stat(cached); err == nil {
		return copyFile(cached, dst)
	}
	var cmd *exec.Cmd
	if kind == "gz" {
		cmd = exec.Command("gzip", "-9", "-k", "-f", "-n", name)
	} else {
		cmd = exec.Command("brotli", "-q", "11", "-f", "-o", dst, name)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return copyFile(dst, cached)
}

func sizesOf(name string) sizes {
	st := func(n string) int64 {
		fi, err := os.Stat(n)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	return sizes{st(name), st(name + ".gz"), st(name + ".br")}
}

// wasmOpt runs binaryen's wasm-opt -Oz on in, writing out. The features are
// the ones Go's wasm port emits.
func wasmOpt(in, out string) error {
	cmd := exec.Command("wasm-opt", "-Oz",
		"--enable-bulk-memory", "--enable-sign-ext", "--enable-nontrapping-float-to-int", "--enable-mutable-globals",
		in, "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("wasm-opt: %v\n%s", err, b)
	}
	return nil
}

// esbuild bundles the TypeScript SDK client entry into dst (minified ESM for
// the browser), as an app would ship it.
func esbuild(benchDir, dst string) error {
	bin := filepath.Join(benchDir, "node_modules", ".bin", "esbuild")
	cmd := exec.Command(bin, filepath.Join(benchDir, "pages", "ts-entry.js"),
		"--bundle", "--minify", "--format=esm", "--platform=browser", "--target=es2022",
		"--log-level=warning", "--outfile="+dst)
	cmd.Dir = benchDir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("esbuild (run scripts/bench.sh, which installs it): %v\n%s", err, b)
	}
	return nil
}

// pkgSize is the bytes of code and data one package (or group) contributes.
type pkgSize struct {
	Name  string
	Bytes int64
}

// symPackage returns the package of a function name as Go's wasm linker
// writes it in the name section: the import path with "/" and "-" turned
// into "_", then ".", then the function ("net_http.__Transport_.RoundTrip",
// "github.com_modelcontextprotocol_go_sdk_mcp.startKeepalive").
func symPackage(sym string) string {
	i := 0
	for {
		dot := strings.IndexByte(sym[i:], '.')
		if dot < 0 {
			return sym
		}
		dot += i
		// A dot inside a domain ("github.com_", "golang.org_") is part of
		// the path.
		rest := sym[dot+1:]
		if u := strings.IndexByte(rest, '_'); u > 0 && u <= 4 && !strings.ContainsAny(rest[:u], ".()*[]") && isDomain(rest[:u]) {
			i = dot + 1
			continue
		}
		return sym[:dot]
	}
}

func isDomain(tld string) bool {
	switch tld {
	case "com", "org", "net", "io", "in", "dev", "dev_":
		return true
	}
	return false
}

// groupModule maps a (mangled) package name to a group for the summary.
func groupModule(pkg string) string {
	has := func(p string) bool { return pkg == p || strings.HasPrefix(pkg, p+"_") }
	switch {
	case has("github.com_mcpwasm_mcpwasm"):
		return "mcpwasm (ours)"
	case has("github.com_modelcontextprotocol_go_sdk"):
		return "github.com/modelcontextprotocol/go-sdk"
	case has("github.com_google_jsonschema_go"):
		return "github.com/google/jsonschema-go"
	case has("github.com_segmentio"):
		return "github.com/segmentio/* (go-sdk's JSON)"
	case strings.HasPrefix(pkg, "github.com_"), strings.HasPrefix(pkg, "golang.org_x_"):
		parts := strings.SplitN(pkg, "_", 4)
		return strings.Join(parts[:min(3, len(parts))], "/")
	case has("net_http"):
		return "net/http (+ its http2, internal)"
	case has("crypto_tls"), has("crypto_x509"), has("encoding_asn1"), has("crypto_internal"), has("crypto_ecdsa"), has("crypto_elliptic"),
		has("crypto_hpke"), has("crypto_rsa"), has("crypto_ecdh"), has("crypto_ed25519"), has("crypto_mlkem"), has("vendor_golang.org_x_crypto"):
		return "TLS + x509 + public-key crypto (net/http links it; fetch never runs it)"
	case has("crypto"), has("math_big"):
		return "crypto (hashes, rand) + math/big"
	case has("runtime"), has("internal"), has("go_buildid"), has("sync"), has("syscall"):
		return "runtime, sync, syscall, internal/*"
	case has("reflect"), has("encoding_json"), has("encoding_gob"), has("fmt"):
		return "reflect, encoding/json, encoding/gob, fmt"
	case has("net"), has("vendor_golang.org_x_net"):
		return "net (+ netip, x/net)"
	case has("regexp"), has("log"), has("text"), has("html"):
		return "regexp, log/slog, text/template, html"
	}
	return "other std"
}
