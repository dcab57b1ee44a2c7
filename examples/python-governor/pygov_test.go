// Package pygov_test runs the Python example governor (tickemu-plugin-pygov,
// the builtin always_stop rule written in Python against docs/protocol.md)
// out of process and checks that its run gives the builtin's results.
package pygov_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/cli"
)

// script runs a script of scripts/ and fails the test with its output.
func script(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join("..", "..", "scripts", name)}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/%s: %v\n%s", name, err, out)
	}
}

// identity matches the header lines that name the governor or hash the
// configuration (the variable differs between the two runs); everything
// else must be byte-identical.
var (
	governorLine = regexp.MustCompile(`(?m)^# governor: .*$`)
	configHash   = regexp.MustCompile(`(?m)^(# simulated .*, config )[0-9a-f]+$`)
)

func run(t *testing.T, governor string, extra ...string) (out, results string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	// A Python interpreter on a loaded machine may take longer than the
	// default 5 s to start.
	args := append([]string{"run", "scenario.hcl", "--var", "governor=" + governor, "--plugin-call-timeout", "60s"}, extra...)
	if code := cli.New().Run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("tickemu %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
	out = stdout.String()
	results = governorLine.ReplaceAllString(out, "# governor: (compared)")
	return out, configHash.ReplaceAllString(results, "${1}(differs)")
}

func TestPythonGovernorMatchesAlwaysStop(t *testing.T) {
	script(t, "install-python-plugin-deps.sh")
	dir := t.TempDir()
	script(t, "build-python-governor.sh", dir)
	// The plugin description cache and lock file stay inside the test.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("TICKEMU_PLUGIN_PATH", "")
	t.Setenv("TICKEMU_PLUGIN_LOCK", "")

	goOut, want := run(t, "always_stop")
	pyOut, got := run(t, "pygov", "--plugin-dir", dir)
	if !strings.Contains(pyOut, "\n# governor: pygov 0.1.0\n") {
		t.Fatalf("the run did not use the Python governor:\n%s", pyOut)
	}
	if !strings.Contains(goOut, "\n# governor: always_stop ") {
		t.Fatalf("the run did not use the builtin always_stop:\n%s", goOut)
	}
	// The scenario must make the choice matter: both states are entered.
	if !regexp.MustCompile(`idle entries: C1=[1-9][0-9]* .*C6=[1-9]`).MatchString(goOut) {
		t.Fatalf("scenario.hcl no longer enters both C1 and C6:\n%s", goOut)
	}
	if got != want {
		t.Errorf("pygov's results differ from always_stop's\n--- always_stop\n%s\n--- pygov\n%s", want, got)
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

// TestPythonGovernorConformance runs `tickemu plugin check` on the Python
// governor: the SDK's governor conformance suite, out of process, passes.
func TestPythonGovernorConformance(t *testing.T) {
	script(t, "install-python-plugin-deps.sh")
	dir := t.TempDir()
	script(t, "build-python-governor.sh", dir)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(self, "plugin", "check", "--plugin-call-timeout", "60s", filepath.Join(dir, "tickemu-plugin-pygov")).CombinedOutput()
	if err != nil {
		t.Fatalf("tickemu plugin check: %v\n%s", err, out)
	}
	for _, sub := range []string{"Info", "Schema", "Choices", "ZeroLatency", "Reflect", "Deterministic", "Counters"} {
		if !strings.Contains(string(out), "--- PASS: tickemu-plugin-pygov/governor/pygov/"+sub+" ") {
			t.Errorf("tickemu plugin check did not report %s as passed:\n%s", sub, out)
		}
	}
}
