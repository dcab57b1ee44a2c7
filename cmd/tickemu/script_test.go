package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tickemu/tickemu/framework/cli"
)

var update = flag.Bool("update", false, "rewrite the cmp files of testdata/script, and README.md's and docs/'s figures (TestDocFigures)")

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
// $WORK/configs, so scripts exercise the shipped scenario files, and with
// $FIXED naming the example third-party plugin binary (examples/fixed,
// built once per test run as a plugin author would build it).
func TestScripts(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	fixed := filepath.Join(t.TempDir(), "tickemu-plugin-fixed")
	var (
		once     sync.Once
		buildErr error
	)
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			// build_with.txtar runs the go command: it needs the real caches
			// (scripts get HOME=/no-home) and the example plugins.
			for k, v := range goEnv(t) {
				env.Setenv(k, v)
			}
			// The race pass's GORACE (make test-full: atexit_sleep_ms=0, or
			// every exec of tickemu and of its plugin processes sleeps 1 s
			// at exit; the plugins get it through the loader's passEnv).
			if v, ok := os.LookupEnv("GORACE"); ok {
				env.Setenv("GORACE", v)
			}
			env.Setenv("EXAMPLES", filepath.Join(root, "examples"))
			// Capture bundles (binary) for calibrate.txtar.
			env.Setenv("CALDATA", filepath.Join(root, "cmd", "tickemu", "testdata", "calibrate"))
			env.Setenv("PROFILES", filepath.Join(root, "profiles"))
			// check.txtar reads framework/sidebyside's committed bundle.
			env.Setenv("BUNDLE", filepath.Join(root, "framework", "sidebyside", "testdata", "cyclictest-t2-h.tcap"))
			env.Setenv("SUITE", filepath.Join(root, "validation", "captures"))
			// replay_kallsyms.txtar replays a committed LTTng capture.
			env.Setenv("CAPTURES", filepath.Join(root, "framework", "replay", "testdata", "captures"))
			once.Do(func() {
				buildErr = buildExample(filepath.Join(root, "examples", "fixed"), "./cmd/tickemu-plugin-fixed", fixed)
			})
			if buildErr != nil {
				return buildErr
			}
			env.Setenv("FIXED", fixed)
			// The scenarios, and the machine profile default.hcl includes
			// (profiles/kvm-guest.hcl, named relative to configs/).
			if err := copyDir(filepath.Join(root, "profiles"), filepath.Join(env.WorkDir, "profiles")); err != nil {
				return err
			}
			return copyDir(filepath.Join(root, "configs"), filepath.Join(env.WorkDir, "configs"))
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"genfile": genfile},
	})
}

// goEnv is the go command's cache and module locations outside the scripts.
func goEnv(t *testing.T) map[string]string {
	goEnvOnce.Do(func() {
		out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH", "GOTOOLCHAIN",
			"GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GOFLAGS").Output()
		if err != nil {
			goEnvErr = err
			return
		}
		goEnvErr = json.Unmarshal(out, &goEnvVars)
	})
	if goEnvErr != nil {
		t.Fatalf("go env: %v", goEnvErr)
	}
	return goEnvVars
}

var (
	goEnvOnce sync.Once
	goEnvVars map[string]string
	goEnvErr  error
)

// buildExample runs go build for pkg in the module at dir, writing out.
func buildExample(dir, pkg, out string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %v\n%s", pkg, dir, err, b)
	}
	return nil
}

// genfile FILE PART... writes the concatenated parts to FILE, for inputs too
// big or too binary for a txtar file. A part is text with Go escapes (\n,
// \x00, \"), and N*TEXT repeats TEXT N times, with {i} in it counting 0 to N-1.
func genfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: genfile FILE PART...")
	}
	var b strings.Builder
	for _, a := range args[1:] {
		n := 1
		if i := strings.Index(a, "*"); i > 0 {
			if k, err := strconv.Atoi(a[:i]); err == nil {
				n, a = k, a[i+1:]
			}
		}
		text, err := strconv.Unquote(`"` + strings.ReplaceAll(a, `"`, `\"`) + `"`)
		ts.Check(err)
		for i := range n {
			b.WriteString(strings.ReplaceAll(text, "{i}", strconv.Itoa(i)))
		}
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
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
