// Package boundedwalk_test checks the Python catchup_policy example
// (tickemu-plugin-bounded_walk, written from docs/plugins.md and
// docs/protocol.md) against the same rule written in Go and linked in:
// `tickemu compare ab.hcl` of the builtin per_jiffy against bounded_walk
// prints the same bytes with either, the rule matters on ab.hcl, and
// `tickemu plugin check` passes on the binary.
package boundedwalk_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/cli"
	"github.com/tickemu/tickemu/framework/sdk"
)

// boundedWalk is the Python plugin's rule in Go: walk one jiffy per
// iteration (3.10 __run_timers()) while the base is at most maxWalk jiffies
// behind, else jump to the next jiffy with work (4.8 236968383cf5).
type boundedWalk struct {
	maxWalk          uint64
	decisions, jumps int64
}

var factory = sdk.Factory{Kind: sdk.KindCatchupPolicy, Name: "bounded_walk", New: func() sdk.Plugin { return &boundedWalk{} }}

func (p *boundedWalk) Info() sdk.Info {
	return sdk.Info{Kind: sdk.KindCatchupPolicy, Name: "bounded_walk", Version: "1.0.0",
		Description: "__run_timers() walks per jiffy up to max_walk jiffies behind, else jumps to the next jiffy with work"}
}

func (p *boundedWalk) Schema() sdk.Schema {
	return sdk.Schema{Attributes: []sdk.Attribute{{Name: "max_walk", Type: sdk.TypeNumber, Default: "1000", Min: "0",
		Doc: "the most jiffies a base walks one at a time; a base further behind jumps to its next expiry"}}}
}

func (p *boundedWalk) Configure(_ sdk.Setup, c sdk.Config) sdk.Diagnostics {
	r := c.Reader()
	p.maxWalk = uint64(r.Int("max_walk"))
	p.decisions, p.jumps = 0, 0
	return r.Diagnostics()
}

func (p *boundedWalk) Counters() []sdk.Counter {
	return []sdk.Counter{{Name: "decisions", CPU: -1, Value: p.decisions}, {Name: "jumps", CPU: -1, Value: p.jumps}}
}

func (p *boundedWalk) Catchup(r sdk.CatchupRequest) sdk.CatchupDecision {
	p.decisions++
	var behind uint64
	if r.Jiffies >= r.Clk {
		behind = r.Jiffies - r.Clk
	}
	if behind > p.maxWalk {
		p.jumps++
		return sdk.CatchupDecision{Mode: sdk.CatchupNextExpiry}
	}
	return sdk.CatchupDecision{Mode: sdk.CatchupWalk}
}

// build generates the Python stubs and installs the plugin into a fresh
// directory (about a second).
func build(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"install-python-plugin-deps.sh"},
		{"build-python-plugin.sh", "tickemu-plugin-bounded_walk", dir, "policy.proto"},
	} {
		cmd := exec.Command("bash", append([]string{filepath.Join("..", "..", "scripts", args[0])}, args[1:]...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scripts/%s: %v\n%s", args[0], err, out)
		}
	}
	// The plugin description cache and lock file stay inside the test.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("TICKEMU_PLUGIN_PATH", "")
	t.Setenv("TICKEMU_PLUGIN_LOCK", "")
	return dir
}

func tickemu(t *testing.T, app *cli.App, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := app.Run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("tickemu %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
}

var iterations = regexp.MustCompile(`catch-up iterations ([0-9]+)`)

// catchupIterations is the wheel's catch-up loop iterations in a run's text.
func catchupIterations(t *testing.T, out string) int64 {
	t.Helper()
	m := iterations.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no catch-up iterations in the result:\n%s", out)
	}
	v, _ := strconv.ParseInt(m[1], 10, 64)
	return v
}

func TestPythonMatchesGo(t *testing.T) {
	dir := build(t)
	// A Python interpreter on a loaded machine may take longer than the
	// default 5 s to start.
	compare := []string{"compare", "ab.hcl", "--variants", "per_jiffy,bounded_walk", "--seeds", "2", "--plugin-call-timeout", "60s"}
	linked := tickemu(t, cli.New(factory), compare...)
	py := tickemu(t, cli.New(), append(compare, "--plugin-dir", dir)...)
	if !strings.Contains(linked, "bounded_walk 1.0.0") {
		t.Fatalf("the compare does not name bounded_walk:\n%s", linked)
	}
	if py != linked {
		t.Errorf("tickemu compare differs with the Python plugin\n--- Go, linked in\n%s\n--- Python\n%s", linked, py)
	}
	// The rule matters on ab.hcl: it walks CPU 0's 500-jiffy gaps, which
	// next_expiry jumps, and jumps the isolated CPUs' 300000-jiffy gaps,
	// which per_jiffy walks.
	app := cli.New(factory)
	walk := catchupIterations(t, tickemu(t, app, "run", "ab.hcl", "--variant", "per_jiffy"))
	jump := catchupIterations(t, tickemu(t, app, "run", "ab.hcl", "--variant", "next_expiry"))
	bounded := catchupIterations(t, tickemu(t, app, "run", "ab.hcl", "--variant", "bounded_walk"))
	if !(jump < bounded && bounded < walk) {
		t.Errorf("catch-up iterations: next_expiry %d, bounded_walk %d, per_jiffy %d: want bounded_walk strictly between", jump, bounded, walk)
	}
}

// TestMain lets the test binary act as the tickemu command for
// `tickemu plugin check`, which ends its process.
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == "plugin" {
		os.Exit(cli.New().Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestPluginCheck runs `tickemu plugin check` on the binary: the SDK's
// catchup_policy conformance suite passes out of process.
func TestPluginCheck(t *testing.T) {
	dir := build(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(self, "plugin", "check", "--plugin-call-timeout", "60s", filepath.Join(dir, "tickemu-plugin-bounded_walk")).CombinedOutput()
	if err != nil {
		t.Fatalf("tickemu plugin check: %v\n%s", err, out)
	}
	for _, sub := range []string{"Info", "Schema", "Decisions", "Deterministic", "Counters"} {
		if !strings.Contains(string(out), "--- PASS: tickemu-plugin-bounded_walk/catchup_policy/bounded_walk/"+sub+" ") {
			t.Errorf("tickemu plugin check did not report %s as passed:\n%s", sub, out)
		}
	}
}
