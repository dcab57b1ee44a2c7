package builtin

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is tickemu's module path.
const module = "github.com/tickemu/tickemu"

// TestPluginImports holds the SDK boundary: a plugin may import the standard
// library, third-party modules, framework/sdk and the packages under it, and
// other plugins, but no other tickemu package, so everything it relies on is
// covered by the SDK's compatibility promise (framework/sdk/doc.go). It
// checks the builtins' non-test imports and the examples' imports including
// their tests (which is what an author outside the tree can use). A test may
// also import framework/scenariotest, the host-side harness that runs a
// scenario with the plugin linked in: it is not SDK and not promised, and a
// plugin's own code never needs it.
func TestPluginImports(t *testing.T) {
	root := filepath.Join("..", "..")
	var pkgs []listed
	pkgs = append(pkgs, goList(t, root, false, module+"/plugins/...")...)
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*", "go.mod"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples/*/go.mod (%v)", err)
	}
	for _, gomod := range examples {
		pkgs = append(pkgs, goList(t, filepath.Dir(gomod), true, "./...")...)
	}
	checked := 0
	for _, p := range pkgs {
		for _, imp := range p.imports() {
			if bad := forbidden(imp, p.Module.Path); bad && !(p.withTests && imp == module+"/framework/scenariotest" && !slices.Contains(p.Imports, imp)) {
				t.Errorf("%s imports %s: a plugin may import only framework/sdk/... of tickemu", p.ImportPath, imp)
			}
		}
		checked++
	}
	if checked < 6 {
		t.Fatalf("checked only %d packages", checked)
	}
}

// forbidden reports whether a plugin of module own may not import imp.
func forbidden(imp, own string) bool {
	switch {
	case own != "" && own != module && (imp == own || strings.HasPrefix(imp, own+"/")):
		return false // the plugin's own module
	case imp == module+"/framework/sdk" || strings.HasPrefix(imp, module+"/framework/sdk/"):
		return false
	case strings.HasPrefix(imp, module+"/plugins/"):
		return false
	}
	return imp == module || strings.HasPrefix(imp, module+"/")
}

func TestForbidden(t *testing.T) {
	tests := []struct {
		imp, own string
		want     bool
	}{
		{"fmt", module, false},
		{"github.com/rs/zerolog", module, false},
		{module + "/framework/sdk", module, false},
		{module + "/framework/sdk/clockmath", module, false},
		{module + "/framework/sdkx", module, true},
		{module + "/framework/clockevents", module, true},
		{module + "/framework/sim", module, true},
		{module + "/internal/simtest", module, true},
		{module + "/plugins/wheel", module, false},
		{module + "/examples/fixed", module + "/examples/fixed", false},
		{module + "/framework/config", module + "/examples/fixed", true},
	}
	for _, tt := range tests {
		if got := forbidden(tt.imp, tt.own); got != tt.want {
			t.Errorf("forbidden(%q, own %q) = %v, want %v", tt.imp, tt.own, got, tt.want)
		}
	}
}

type listed struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Module       struct{ Path string }
	withTests    bool
}

func (p listed) imports() []string {
	if !p.withTests {
		return p.Imports
	}
	return append(append(append([]string(nil), p.Imports...), p.TestImports...), p.XTestImports...)
}

// goList runs go list -json in dir.
func goList(t *testing.T, dir string, withTests bool, pattern string) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", pattern)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list in %s: %v\n%s", dir, err, ee.Stderr)
		}
		t.Fatalf("go list in %s: %v", dir, err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		p.withTests = withTests
		pkgs = append(pkgs, p)
	}
	return pkgs
}
