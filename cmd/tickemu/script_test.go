package main

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tickemu/tickemu/framework/cli"
)

var update = flag.Bool("update", false, "rewrite the cmp files of testdata/script")

// TestMain lets the test binary act as the tickemu command inside scripts
// (testscript.Main), and as a plugin process when tickemu re-executes itself.
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == "plugin" {
		// Re-executed by the loader as `tickemu plugin serve KIND NAME` (the
		// test binary is os.Executable() in tests).
		os.Exit(cli.Main())
	}
	testscript.Main(m, map[string]func(){
		"tickemu": func() { os.Exit(cli.Main()) },
	})
}

// TestScripts runs the CLI scenarios in testdata/script/*.txtar. Each script
// runs in a fresh directory with the repository's configs/ copied in as
// $WORK/configs, so scripts exercise the shipped scenario files.
func TestScripts(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			return copyDir(filepath.Join(root, "configs"), filepath.Join(env.WorkDir, "configs"))
		},
	})
}

func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
