package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginCheckRefuses covers what `tickemu plugin check` refuses before
// any suite runs (a passing and a failing suite end the process, so they
// are run by examples/python-governor's test in a process of their own).
func TestPluginCheckRefuses(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	silent := filepath.Join(dir, "silent")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no binary", []string{"plugin", "check"}, 2, "usage: tickemu plugin check [--plugin-call-timeout D] BINARY"},
		{"two binaries", []string{"plugin", "check", silent, silent}, 2, "usage: tickemu plugin check [--plugin-call-timeout D] BINARY"},
		{"missing", []string{"plugin", "check", filepath.Join(dir, "nope")}, 2, "no such file or directory"},
		{"directory", []string{"plugin", "check", dir}, 2, "is not an executable file"},
		{"not executable", []string{"plugin", "check", text}, 2, text + " is not an executable file"},
		{"not a plugin", []string{"plugin", "check", silent}, 1, silent + ": no go-plugin handshake on stdout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := New().Run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("tickemu %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, stderr.String(), tc.code, tc.want)
			}
			if strings.Contains(stderr.String(), checkName) {
				t.Errorf("stderr names the check's link %s instead of the binary: %q", checkName, stderr.String())
			}
		})
	}
}
