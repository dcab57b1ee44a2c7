//go:build unix

package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSearchPath(t *testing.T) {
	sep := string(filepath.ListSeparator)
	tests := []struct {
		flag, env string
		want      []string
	}{
		// The working directory's ./plugins only when asked for.
		{"", "", nil},
		{"/a", "", []string{"/a"}},
		{"/a" + sep + "/b", "/c" + sep + sep + "/a", []string{"/a", "/b", "/c"}},
		{"", "plugins" + sep + "/x", []string{"plugins", "/x"}},
		{"./plugins", "", []string{"./plugins"}},
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
	// Every tickemu-plugin-NAME entry, in search order (directory, then
	// file name), with why it cannot run; same-named files in later
	// directories are kept for resolve.go to warn about.
	var short []string
	for _, e := range got {
		s := fmt.Sprintf("%d %s %s", e.dir, e.name, filepath.Base(e.path))
		if e.problem != "" {
			s += ": " + e.problem
		}
		short = append(short, s)
	}
	want := []string{
		"0 dir tickemu-plugin-dir: is not a regular file (d---------)",
		"0 hpet2 tickemu-plugin-hpet2",
		"0 noexec tickemu-plugin-noexec: is not executable (mode -rw-r--r--; chmod +x it, or remove it)",
		"2 arch tickemu-plugin-arch",
		"2 dangling tickemu-plugin-dangling: cannot be read: stat " + filepath.Join(b, "tickemu-plugin-dangling") + ": no such file or directory",
		"2 hpet2 tickemu-plugin-hpet2",
		"2 linked tickemu-plugin-linked",
	}
	if strings.Join(short, "\n") != strings.Join(want, "\n") {
		t.Errorf("scan(a, absent, b) =\n%s\nwant\n%s", strings.Join(short, "\n"), strings.Join(want, "\n"))
	}
	if got[1].size != 10 || got[1].mtime.IsZero() || got[0].size != 0 {
		t.Errorf("scan: size/mtime of %+v and %+v, want them only for the runnable file", got[1], got[0])
	}
}
