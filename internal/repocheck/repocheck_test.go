package repocheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestRepository checks the repository this test is in.
func TestRepository(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !strings.HasPrefix(string(b), "module github.com/tickemu/tickemu\n") {
		t.Fatalf("%s is not the repository root (go.mod: %v)", root, err)
	}
	problems, err := Check(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheck shows each kind of bad reference is found, and the good ones are not.
func TestCheck(t *testing.T) {
	// Built from parts, so this file does not itself hold what it tests for.
	up, home, work := ".."+"/shared", "/"+"home/someone", "/"+"work/tree"
	fsys := fstest.MapFS{
		"go.mod":                     {Data: []byte("module example\n")},
		"docs/a.md":                  {Data: []byte("See docs/b.md, [c](c.md), " + up + "/PLAN.md and PLAN.md.\nThe wheel is kernel/time/timer.c; configs/*.hcl; configs/*.txt; configs/FILE; golang.org/x/perf:cmd/benchstat; notes/reference/x.md.\n")},
		"docs/c.md":                  {Data: []byte("Back to a.md and framework/x (framework/x/y.go). " + home + "/notes.\n")},
		"framework/x/y.go":           {Data: []byte("// Package x cites docs/costs.md and ../../docs/a.md and ../../../up.md.\npackage x\n\nvar s = \"docs/costs.md\" // a string is not checked; " + work + " is\n")},
		"framework/x/testdata/t.hcl": {Data: []byte("# missing/file.md is not checked in testdata\n")},
		".git/config":                {Data: []byte("[remote]\n\turl = " + work + "\n")}, // a clone's own metadata is not scanned
		"configs/a.hcl":              {Data: []byte("# see docs/reference/gone.md and ./configs/a.hcl; run ./built-binary, not ./gone.md\n")},
		// A test's output directory, half written: the cited screenshot is not there yet.
		"test-artifacts/one.png": {Data: []byte("png")},
		"cmd/t/r_test.go":        {Data: []byte("// The screenshot is kept in test-artifacts/two.png.\npackage t\n")},
		// Build output that happens to exist on this machine: a path into
		// it is not checked either way.
		"bin/tickemu":   {Data: []byte("elf")},
		"docs/build.md": {Data: []byte("make writes bin/tickemu and bin/oracle/libktimer-oracle.so.\n")},
	}
	problems, err := Check(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		`configs/a.hcl:1: "docs/reference/gone.md": no such file or directory in the repository`,
		`configs/a.hcl:1: "./gone.md": no file of this name in the repository`,
		`docs/a.md:1: "` + up + `": points outside the repository`,
		`docs/a.md:1: "docs/b.md": no such file or directory in the repository`,
		`docs/a.md:1: "` + up + `/PLAN.md": no such file or directory in the repository`,
		`docs/a.md:1: "PLAN.md": no file of this name in the repository`,
		`docs/a.md:2: "configs/*.txt": no such file or directory in the repository`,
		`docs/a.md:2: "notes/reference/x.md": no such file or directory in the repository`,
		`docs/c.md:1: "` + home + `": points outside the repository`,
		`framework/x/y.go:4: "` + work + `": points outside the repository`,
		`framework/x/y.go:1: "docs/costs.md": no such file or directory in the repository`,
		`framework/x/y.go:1: "../../../up.md": points outside the repository`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
