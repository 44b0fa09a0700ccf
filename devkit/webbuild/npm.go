package webbuild

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// NpmFiles are the files of web/ the npm package carries, as laid out in
// it; the built module as mcp-<hash>.wasm (with its .gz and .br when
// present), wasmurl.js and the wrapped wasm_exec.js are added beside them.
// Every module a listed module imports must be listed too (TestNpmFilesImports).
var NpmFiles = []string{
	"mcp.js", "mcp.d.ts", "mcp.wasm.d.ts", "start.js", "host.js", "models.js", "modulecache.js", "redirect.js", "testhooks.js",
	"jsapi.js", "auth.js", "remote.js", "worker.js", "rules.js", "boot.js", "errors.js", "options.js", "client.js",
	"catalog.js", "agent.js", "conversation.js", "webmcp.js",
	"react.js", "react.d.ts", "react-store.js", "react-clientstore.js", "react-usemcpclient.js",
	"react-catalogstore.js", "react-usecatalog.js", "react-ask.js", "react-messages.js", "react-agentstore.js",
	"react-useagent.js", "react-mcpappview.js", "partialjson.js",
	"ai.js", "ai.d.ts",
	"oauth/callback.html", "oauth/callback.js", "oauth/callback.css", "oauth/callback.d.ts",
	"apps/host.js", "apps/csp.js", "apps/viewstorage.js", "apps/sandbox.html", "apps/sandbox.js",
}

var describeRE = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)(?:-(\d+)-g([0-9a-f]+))?(-dirty)?$`)
var hashRE = regexp.MustCompile(`^([0-9a-f]+)(-dirty)?$`)

// SemVer turns the output of `git describe --always --dirty` into a valid
// semantic version for package.json: a tag v1.2.3 is 1.2.3; commits after
// it are a prerelease of the next patch (1.2.4-dev.5.gabc1234); a tree
// without tags is 0.0.0-dev.gabc1234; a dirty tree adds ".dirty". Anything
// else is 0.0.0-dev.
func SemVer(describe string) string {
	describe = strings.TrimSpace(describe)
	if m := describeRE.FindStringSubmatch(describe); m != nil {
		dirty := ""
		if m[6] != "" {
			dirty = ".dirty"
		}
		if m[4] == "" {
			if dirty == "" {
				return m[1] + "." + m[2] + "." + m[3]
			}
			return m[1] + "." + m[2] + "." + m[3] + "-dev" + dirty
		}
		patch, _ := strconv.Atoi(m[3])
		return fmt.Sprintf("%s.%s.%d-dev.%s.g%s%s", m[1], m[2], patch+1, m[4], m[5], dirty)
	}
	if m := hashRE.FindStringSubmatch(describe); m != nil {
		dirty := ""
		if m[2] != "" {
			dirty = ".dirty"
		}
		return "0.0.0-dev.g" + m[1] + dirty
	}
	return "0.0.0-dev"
}

// Npm writes the npm package "mcpwasm" into out (emptied first): the files
// of web/ listed in [NpmFiles], wasmDir's mcp.wasm once, under its hashed
// name with its precompressed variants, and wasmurl.js (see [StampTo]),
// wasm_exec.js as an ES module, web/README.npm.md as its README and a
// package.json at version. `npm pack` in out makes the tarball.
func Npm(root, wasmDir, out, version string) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	web := filepath.Join(root, "web")
	copy := func(src, dst string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	}
	for _, f := range NpmFiles {
		if err := copy(filepath.Join(web, f), filepath.Join(out, f)); err != nil {
			return err
		}
	}
	if err := copy(filepath.Join(web, "README.npm.md"), filepath.Join(out, "README.md")); err != nil {
		return err
	}
	// The module once, under its content-hashed name (the "./mcp.wasm"
	// export points there too), with the siblings that decode to it.
	hashed, err := StampTo(wasmDir, out)
	if err != nil {
		return err
	}
	files := append([]string{"wasm_exec.js", WasmModule, hashed}, NpmFiles...)
	for _, suffix := range siblingSuffixes {
		if _, err := os.Stat(filepath.Join(out, hashed+suffix)); err == nil {
			files = append(files, hashed+suffix)
		}
	}
	we, err := WasmExec()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "wasm_exec.js"), we, 0o644); err != nil {
		return err
	}
	b, err := json.MarshalIndent(packageJSON(version, files, hashed), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "package.json"), append(b, '\n'), 0o644)
}

type exportEntry struct {
	Types   string `json:"types,omitempty"`
	Default string `json:"default"`
}

func packageJSON(version string, files []string, wasm string) any {
	return struct {
		Name                 string                     `json:"name"`
		Version              string                     `json:"version"`
		Description          string                     `json:"description"`
		Keywords             []string                   `json:"keywords"`
		Type                 string                     `json:"type"`
		Main                 string                     `json:"main"`
		Types                string                     `json:"types"`
		Exports              map[string]exportEntry     `json:"exports"`
		SideEffects          []string                   `json:"sideEffects"`
		Files                []string                   `json:"files"`
		PeerDependencies     map[string]string          `json:"peerDependencies"`
		PeerDependenciesMeta map[string]map[string]bool `json:"peerDependenciesMeta"`
		Engines              map[string]string          `json:"engines,omitempty"`
	}{
		Name:        "mcpwasm",
		Version:     version,
		Description: "An MCP (Model Context Protocol) client for web pages, in Go compiled to WebAssembly, that does MCP OAuth itself; with a React binding.",
		Keywords:    []string{"mcp", "model-context-protocol", "oauth", "webassembly", "react", "ai-sdk"},
		Type:        "module",
		Main:        "./mcp.js",
		Types:       "./mcp.d.ts",
		Exports: map[string]exportEntry{
			".":                     {Types: "./mcp.d.ts", Default: "./mcp.js"},
			"./react":               {Types: "./react.d.ts", Default: "./react.js"},
			"./ai":                  {Types: "./ai.d.ts", Default: "./ai.js"},
			"./callback":            {Types: "./oauth/callback.d.ts", Default: "./oauth/callback.js"},
			"./mcp.wasm":            {Types: "./mcp.wasm.d.ts", Default: "./" + wasm},
			"./oauth/callback.html": {Default: "./oauth/callback.html"},
			"./apps/sandbox.html":   {Default: "./apps/sandbox.html"},
			"./package.json":        {Default: "./package.json"},
		},
		// wasm_exec.js installs the fs/process stubs the Go runtime reads;
		// the callback module relays the sign-in result on import.
		SideEffects: []string{"./wasm_exec.js", "./oauth/callback.js"},
		Files:       files,
		// mcpwasm/react needs React, mcpwasm/ai the AI SDK; an app that
		// imports neither needs neither.
		PeerDependencies:     map[string]string{"react": ">=18", "ai": "^7.0.0"},
		PeerDependenciesMeta: map[string]map[string]bool{"react": {"optional": true}, "ai": {"optional": true}},
	}
}
