package loader_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/loader"
)

func TestReadLock(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	tests := []struct {
		name, text, want string // want "" for success
	}{
		{"good", `{"format":1,"comment":"x","binaries":[{"path":"/p/tickemu-plugin-a","sha256":"` + sum + `","serves":["clockevent/a"]}]}`, ""},
		{"empty lock", `{"format":1,"binaries":[]}`, ""},
		{"not JSON", `sha256 /p`, "invalid character"},
		{"unknown field", `{"format":1,"binaries":[],"trust":"all"}`, `unknown field "trust"`},
		{"other format", `{"format":2,"binaries":[]}`, "format 2, this tickemu reads 1"},
		{"relative path", `{"format":1,"binaries":[{"path":"p/x","sha256":"` + sum + `"}]}`, `entry "p/x": want an absolute path`},
		{"short sum", `{"format":1,"binaries":[{"path":"/p/x","sha256":"abcd"}]}`, "64-digit hex SHA-256"},
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), "lock")
		if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := loader.ReadLock(p)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: ReadLock = %v, want success", tt.name, err)
		case tt.want == "" && l.File != p:
			t.Errorf("%s: ReadLock().File = %q, want %q", tt.name, l.File, p)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p)):
			t.Errorf("%s: ReadLock = %v, want an error naming the file and containing %q", tt.name, err, tt.want)
		}
	}
	// Write then read gives the same entries back.
	p := filepath.Join(t.TempDir(), "lock")
	in := &loader.Lock{Binaries: []loader.LockedFile{{Path: "/b", SHA256: sum}, {Path: "/a", SHA256: sum, Serves: []string{"wheel/w"}}}}
	if err := in.Write(p); err != nil {
		t.Fatal(err)
	}
	out, err := loader.ReadLock(p)
	if err != nil || len(out.Binaries) != 2 || out.Binaries[0].Path != "/a" || out.Binaries[1].Serves != nil {
		t.Errorf("ReadLock(Write(l)) = %+v, %v; want the entries sorted by path", out, err)
	}
}
