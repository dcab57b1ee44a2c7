// Package hangcap_test compares the hang-cap strategy in the four forms it
// is written in: Go linked in, Go in its own process, Python and TypeScript
// on Node. `tickemu compare ab.hcl` of the builtin max_hang_time against
// hang_cap must print the same bytes with each, and `tickemu plugin check`
// must pass on each binary.
package hangcap_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tickemu/tickemu/examples/hangcap"
	"github.com/tickemu/tickemu/framework/cli"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

// binaries builds the three out-of-process forms, each in a directory of
// its own as tickemu-plugin-hang_cap, once for the test binary (TestMain
// removes them), and returns the directories by name.
func binaries(t testing.TB) map[string]string {
	t.Helper()
	built.once.Do(func() {
		root, err := os.MkdirTemp("", "hangcap-")
		if err != nil {
			built.err = err
			return
		}
		built.root = root
		dirs := map[string]string{"go": filepath.Join(root, "go"), "python": filepath.Join(root, "python"), "node": filepath.Join(root, "node")}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dirs["go"], "tickemu-plugin-hang_cap"),
			"./cmd/tickemu-plugin-hang_cap").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		for _, args := range [][]string{
			{"install-python-plugin-deps.sh"}, {"build-python-hangcap.sh", dirs["python"]},
			{"install-node-plugin-deps.sh"}, {"build-node-hangcap.sh", dirs["node"]},
		} {
			cmd := exec.Command("bash", append([]string{filepath.Join("..", "..", "scripts", args[0])}, args[1:]...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				built.err = fmt.Errorf("scripts/%s: %v\n%s", args[0], err, out)
				return
			}
		}
		built.dirs = dirs
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dirs
}

var built struct {
	once sync.Once
	root string
	dirs map[string]string
	err  error
}

// isolate keeps the plugin description cache and lock file inside the test.
func isolate(t testing.TB) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("TICKEMU_PLUGIN_PATH", "")
	t.Setenv("TICKEMU_PLUGIN_LOCK", "")
}

func tickemu(t *testing.T, app *cli.App, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := app.Run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("tickemu %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
}

// The plugins get a minute to start: a Python interpreter on a loaded
// machine may take longer than the default 5 s.
var compare = []string{"compare", "ab.hcl", "--variants", "max_hang_time,hang_cap", "--seeds", "2", "--plugin-call-timeout", "60s"}

func TestFourFormsCompareIdentically(t *testing.T) {
	dirs := binaries(t)
	isolate(t)
	linked := tickemu(t, cli.New(hangcap.Factories()...), compare...)
	if !strings.Contains(linked, "hang_cap 1.0.0") {
		t.Fatalf("the compare does not name hang_cap:\n%s", linked)
	}
	for _, form := range []string{"go", "python", "node"} {
		got := tickemu(t, cli.New(), append(compare, "--plugin-dir", dirs[form])...)
		if got != linked {
			t.Errorf("%s: tickemu compare differs from the Go plugin linked in\n--- linked in\n%s\n--- %s\n%s", form, linked, form, got)
		}
	}
	// The cap matters on this scenario: the builtin's longest hang delay is
	// above the 1 us cap, hang_cap's is not.
	app := cli.New(hangcap.Factories()...)
	a := maxHangDelay(t, tickemu(t, app, "run", "ab.hcl", "--variant", "max_hang_time", "--format", "json"))
	b := maxHangDelay(t, tickemu(t, app, "run", "ab.hcl", "--variant", "hang_cap", "--format", "json"))
	if a <= 1000 || b > 1000 {
		t.Errorf("longest hang delay %d ns under the builtin, %d under hang_cap: want above and at most the 1 us cap", a, b)
	}
}

var hangDelayMax = regexp.MustCompile(`"hang_delay_max_ns": ([0-9]+)`)

// maxHangDelay is the timermix workload's longest hang delay in a JSON result.
func maxHangDelay(t *testing.T, out string) int64 {
	t.Helper()
	m := hangDelayMax.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no hang_delay_max_ns in the result:\n%s", out)
	}
	v, _ := strconv.ParseInt(m[1], 10, 64)
	return v
}

// TestMain lets the test binary act as the tickemu command for
// `tickemu plugin check`, which ends its process.
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == "plugin" {
		os.Exit(cli.New().Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	if built.root != "" {
		os.RemoveAll(built.root)
	}
	os.Exit(code)
}

// TestPluginCheck runs `tickemu plugin check` on each binary: the SDK's
// hang_policy conformance suite passes out of process.
func TestPluginCheck(t *testing.T) {
	dirs := binaries(t)
	isolate(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for form, dir := range dirs {
		out, err := exec.Command(self, "plugin", "check", "--plugin-call-timeout", "60s", filepath.Join(dir, "tickemu-plugin-hang_cap")).CombinedOutput()
		if err != nil {
			t.Errorf("%s: tickemu plugin check: %v\n%s", form, err, out)
			continue
		}
		for _, sub := range []string{"Info", "Schema", "Decisions", "Deterministic", "Counters"} {
			if !strings.Contains(string(out), "--- PASS: tickemu-plugin-hang_cap/hang_policy/hang_cap/"+sub+" ") {
				t.Errorf("%s: tickemu plugin check did not report %s as passed:\n%s", form, sub, out)
			}
		}
	}
}

// TestConformance: the policy contract linked in and over gRPC.
func TestConformance(t *testing.T) {
	t.Run("inprocess", func(t *testing.T) {
		sdktest.RunHangPolicy(t, func(t *testing.T) sdk.HangPolicy { return hangcap.New().(sdk.HangPolicy) })
	})
	t.Run("grpc", func(t *testing.T) {
		sdktest.RunHangPolicy(t, func(t *testing.T) sdk.HangPolicy {
			return sdktest.GRPCPair(t, hangcap.Factories()[0]).(sdk.HangPolicy)
		})
	})
}
