package main

import (
	"bytes"
	"os"
	"testing"
)

// TestDocCurrent: docs/kernel-changes.md is what the eras of the builtins
// give now. A change to an era, or a new strategy attribute, without
// `make generate` fails here (make verify-generate catches it in CI too,
// but only there).
func TestDocCurrent(t *testing.T) {
	want, err := render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/kernel-changes.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("docs/kernel-changes.md is stale: run make generate (or go generate ./internal/kernelchanges) and commit it")
	}
}
