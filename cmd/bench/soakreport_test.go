package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A full run without the soak keeps the soak section the report had.
func TestExistingSectionKeepsTheSoak(t *testing.T) {
	out := filepath.Join(t.TempDir(), "B.md")
	old := "# Benchmarks\n\n## Runtime\n\nold runtime\n\n" + soakSectionTitle + "\n\nsoak figures\n\n## What the module links\n\nold sizes\n"
	if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &report{keptSoak: existingSection(out, soakSectionTitle)}
	if want := soakSectionTitle + "\n\nsoak figures\n\n"; r.soakMarkdown() != want {
		t.Fatalf("soakMarkdown = %q, want %q", r.soakMarkdown(), want)
	}
	if existingSection(out, "## Nothing") != "" {
		t.Fatal("a section the report lacks was found")
	}
}
