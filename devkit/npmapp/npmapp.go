// Package npmapp makes the npm package as a user gets it (npm pack of
// this tree's web/ and a built wasm module) and builds an example app
// (examples/react-vite, examples/ai-sdk) against the packed tarball with
// Vite. The e2e tests in Chromium (package e2e) and the cross-engine
// scenarios (e2e/xengine) serve what it builds.
package npmapp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
)

// Build is the packed package and the app built from it, all under one
// directory.
type Build struct {
	Pkg     string // the package directory (what the tarball holds)
	Tarball string
	App     string // the example's directory, e.g. examples/react-vite
	Prod    string // vite build: the app's dist
	Dev     string // vite build --mode development (React's development build); "" unless asked for
}

// Make is [MakeExample] of examples/react-vite.
func Make(root, wasmDir, out string, dev bool) (*Build, error) {
	return MakeExample(root, wasmDir, out, "react-vite", dev)
}

// MakeExample writes the npm package from root's web/ and the wasm module
// in wasmDir into out, packs it (npm pack), installs the tarball into
// examples/<example> (npm install --no-save: its other packages come
// from its lockfile through make deps) and builds the app with Vite into
// out/prod, and with dev also in development mode into out/dev.
func MakeExample(root, wasmDir, out, example string, dev bool) (*Build, error) {
	app := filepath.Join(root, "examples", example)
	if _, err := os.Stat(filepath.Join(app, "node_modules", ".bin", "vite")); err != nil {
		return nil, fmt.Errorf("examples/%s has no node_modules: run make deps (npm ci from its lockfile)", example)
	}
	b := &Build{Pkg: filepath.Join(out, "npm"), App: app, Prod: filepath.Join(out, "prod")}
	if dev {
		b.Dev = filepath.Join(out, "dev")
	}
	if err := webbuild.Npm(root, wasmDir, b.Pkg, "0.0.0-e2e"); err != nil {
		return nil, fmt.Errorf("writing the npm package: %w", err)
	}
	packed, err := run(b.Pkg, "npm", "pack", "--silent", "--pack-destination", out)
	if err != nil {
		return nil, err
	}
	b.Tarball = filepath.Join(out, lastLine(packed))
	// The install and builds use the example app's node_modules: one
	// process at a time (e2e passes may run at once).
	if lock, err := os.OpenFile(filepath.Join(os.TempDir(), "mcpwasm-e2e-"+example+".lock"), os.O_CREATE|os.O_RDWR, 0o600); err == nil {
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err == nil {
			defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		}
	}
	if _, err := run(app, "npm", "install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error", b.Tarball); err != nil {
		return nil, err
	}
	vite := filepath.Join(app, "node_modules", ".bin", "vite")
	if _, err := run(app, vite, "build", "--logLevel", "warn", "--outDir", b.Prod); err != nil {
		return nil, err
	}
	if dev {
		if _, err := run(app, vite, "build", "--logLevel", "warn", "--mode", "development", "--outDir", b.Dev); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// run runs name in dir and returns its output, or an error that holds it.
func run(dir string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "npm_config_update_notifier=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s (in %s): %w\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
