//go:build unix

package loader

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestSearchPath(t *testing.T) {
	sep := string(filepath.ListSeparator)
	tests := []struct {
		flag, env string
		want      []string
	}{
		{"", "", []string{"plugins"}},
		{"/a", "", []string{"/a", "plugins"}},
		{"/a" + sep + "/b", "/c" + sep + sep + "/a", []string{"/a", "/b", "/c", "plugins"}},
		{"", "plugins" + sep + "/x", []string{"plugins", "/x"}},
	}
	for _, tt := range tests {
		getenv := func(k string) string {
			if k == PathEnv {
				return tt.env
			}
			return ""
		}
		if got := SearchPath(tt.flag, getenv); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SearchPath(%q, %s=%q) = %q, want %q", tt.flag, PathEnv, tt.env, got, tt.want)
		}
	}
}

func TestScan(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(path string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(a, "tickemu-plugin-hpet2"), 0o755)
	write(filepath.Join(a, "tickemu-plugin-noexec"), 0o644)
	write(filepath.Join(a, "tickemu-plugin-"), 0o755) // no NAME
	write(filepath.Join(a, "other-tool"), 0o755)
	if err := os.Mkdir(filepath.Join(a, "tickemu-plugin-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(b, "tickemu-plugin-hpet2"), 0o755) // shadowed by a's
	write(filepath.Join(b, "tickemu-plugin-arch"), 0o755)
	if err := os.Symlink(filepath.Join(a, "tickemu-plugin-hpet2"), filepath.Join(b, "tickemu-plugin-linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(a, "missing"), filepath.Join(b, "tickemu-plugin-dangling")); err != nil {
		t.Fatal(err)
	}
	got := scan([]string{a, filepath.Join(a, "absent"), b})
	want := []binary{
		{name: "arch", path: filepath.Join(b, "tickemu-plugin-arch")},
		{name: "hpet2", path: filepath.Join(a, "tickemu-plugin-hpet2")},
		{name: "linked", path: filepath.Join(b, "tickemu-plugin-linked")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scan(a, absent, b) = %v, want %v", got, want)
	}
}
