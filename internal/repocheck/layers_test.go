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
		for _, bad := range []string{"/framework/contract", "/framework/internal/", "/framework/loader", "/framework/timermodel", "/framework/experiment"} {
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

// sdkHostImports are the host packages framework/sdk's sdktest and serve
// import today, each with the reason; the list may only shrink (issue 29
// item 3: the conformance suites should depend on framework/sdk alone).
// Moving the scenario harness (RunScenario) and the gRPC pair (GRPCPair) out
// of sdktest removes exported SDK API, which the compatibility promise
// allows only with a ProtocolVersion bump (make api-check); until then they
// stay, and this test keeps any other host package out.
var sdkHostImports = map[string]map[string]string{
	"github.com/tickemu/tickemu/framework/sdk/sdktest": {
		"framework/clockevents":   "the DeadlineModel evaluator the conformance suite checks a device's model with",
		"framework/kernelversion": "the era rules a schema's Eras are checked against",
		"framework/timermodel":    "the HRTimerModel/NextTimerModel evaluators the suites check models with",
		"framework/internal/shim": "GRPCPair, the in-memory gRPC pair",
		"framework/config":        "RunScenario's config loading",
		"framework/experiment":    "RunScenario's runs",
		"framework/resultfmt":     "RunScenario's result text",
	},
	"github.com/tickemu/tickemu/framework/sdk/serve": {
		"framework/internal/shim": "the server side of the protocol",
		"framework/logging":       "the plugin logger the host re-logs",
	},
}

// TestSDKImportsNoNewHostPackage: sdktest and serve import no tickemu
// package outside framework/sdk but those of sdkHostImports, and each listed
// one is still imported (a stale entry is removed).
func TestSDKImportsNoNewHostPackage(t *testing.T) {
	for pkg, allowed := range sdkHostImports {
		cmd := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, pkg)
		cmd.Dir = "../.."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		seen := map[string]bool{}
		for _, imp := range strings.Fields(string(out)) {
			rel, ok := strings.CutPrefix(imp, "github.com/tickemu/tickemu/")
			if !ok || strings.HasPrefix(rel, "framework/sdk") {
				continue
			}
			seen[rel] = true
			if _, ok := allowed[rel]; !ok {
				t.Errorf("%s imports the host package %s: the SDK's packages may import only framework/sdk/... (plugin authors' go test pulls in what they import)", pkg, imp)
			}
		}
		for rel := range allowed {
			if !seen[rel] {
				t.Errorf("%s no longer imports %s: remove it from sdkHostImports", pkg, rel)
			}
		}
	}
}
