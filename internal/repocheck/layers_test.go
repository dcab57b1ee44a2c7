package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// deps returns the tickemu packages pkg imports, directly or not (go list
// -deps, test files excluded).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var ds []string
	for _, d := range strings.Fields(string(out)) {
		if strings.HasPrefix(d, "github.com/tickemu/tickemu/") && d != pkg {
			ds = append(ds, d)
		}
	}
	return ds
}

// TestKernelSeesPluginsThroughSDK: framework/kernel gets its plugins already
// wrapped (the contract checker, the out-of-process transport) and sees them
// only as framework/sdk's interfaces (issue 30): it imports neither
// framework/contract, the transport nor the loader, and calls no method that
// only a checker or a transport client has.
func TestKernelSeesPluginsThroughSDK(t *testing.T) {
	const kernel = "github.com/tickemu/tickemu/framework/kernel"
	for _, d := range deps(t, kernel) {
		for _, bad := range []string{"/framework/contract", "/framework/internal/", "/framework/loader", "/framework/sdk/model", "/framework/sdk/shim", "/framework/experiment"} {
			if strings.Contains(d, bad) {
				t.Errorf("%s imports %s", kernel, d)
			}
		}
	}
	files, err := filepath.Glob("../../framework/kernel/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no kernel sources: %v", err)
	}
	// The names the checker's and the transport's own methods had when the
	// kernel called them (Unchecked and the split checks).
	banned := map[string]bool{"Unchecked": true, "CheckStart": true, "CheckCancel": true, "CheckInterrupt": true}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && banned[id.Name] {
				t.Errorf("%s: the kernel names %s, a method of the contract checker", fset.Position(id.Pos()), id.Name)
			}
			return true
		})
	}
}

// TestSDKImportsNoHostPackage: no package of framework/sdk imports a tickemu
// package outside framework/sdk, directly or not (go list -deps, test files
// excluded): a plugin author's build and go test pull in only the SDK (issue
// 29 item 3). The host-side harness that runs a scenario is
// framework/scenariotest; the model evaluators, the era rules, the protocol's
// both ends and the plugin log convention live under framework/sdk, and the
// host imports them from there.
func TestSDKImportsNoHostPackage(t *testing.T) {
	cmd := exec.Command("go", "list", "./framework/sdk/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./framework/sdk/...: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 {
		t.Fatalf("go list ./framework/sdk/... found only %v", pkgs)
	}
	for _, pkg := range pkgs {
		for _, d := range deps(t, pkg) {
			if rel := strings.TrimPrefix(d, "github.com/tickemu/tickemu/"); rel != "framework/sdk" && !strings.HasPrefix(rel, "framework/sdk/") {
				t.Errorf("%s imports the host package %s: the SDK's packages may import only framework/sdk/... (plugin authors' go test pulls in what they import)", pkg, d)
			}
		}
	}
}
