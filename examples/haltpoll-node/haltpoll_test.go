// Package haltpoll_test runs the TypeScript example governor
// (tickemu-plugin-ts_haltpoll, drivers/cpuidle/governors/haltpoll.c written
// in TypeScript on Node from docs/plugins.md and docs/protocol.md) out of
// process and checks that its run gives the builtin haltpoll's results, and
// that `tickemu plugin check` passes on it.
package haltpoll_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tickemu/tickemu/framework/cli"
)

// build compiles the plugin, once for the test binary, into a directory
// TestMain removes. npm installs the pinned packages once per lock file
// (scripts/build-node-plugin.sh caches them); after that a build is tsc's
// few seconds.
func build(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "ts_haltpoll-")
		for _, args := range [][]string{
			{"install-node-plugin-deps.sh"},
			{"build-node-plugin.sh", ".", built.dir, "tickemu-plugin-ts_haltpoll", "plugin.proto", "catalog.proto", "governor.proto"},
		} {
			if built.err != nil {
				return
			}
			cmd := exec.Command("bash", append([]string{filepath.Join("..", "..", "scripts", args[0])}, args[1:]...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				built.err = fmt.Errorf("scripts/%s: %v\n%s", args[0], err, out)
			}
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	// The plugin description cache and lock file stay inside the test.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("TICKEMU_PLUGIN_PATH", "")
	t.Setenv("TICKEMU_PLUGIN_LOCK", "")
	return built.dir
}

var built struct {
	once sync.Once
	dir  string
	err  error
}

// The header lines that name the governor or hash the configuration (the
// variable differs between the two runs); everything else must be
// byte-identical.
var (
	governorLine = regexp.MustCompile(`(?m)^# governor: .*$`)
	configHash   = regexp.MustCompile(`(?m)^(# simulated .*, config )[0-9a-f]+$`)
)

func run(t *testing.T, governor string, extra ...string) (out, results string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	// Node on a loaded machine may take longer than the default 5 s to start.
	args := append([]string{"run", "scenario.hcl", "--var", "governor=" + governor, "--plugin-call-timeout", "60s"}, extra...)
	if code := cli.New().Run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("tickemu %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
	out = stdout.String()
	results = governorLine.ReplaceAllString(out, "# governor: (compared)")
	return out, configHash.ReplaceAllString(results, "${1}(differs)")
}

func TestTypeScriptHaltpollMatchesBuiltin(t *testing.T) {
	dir := build(t)
	goOut, want := run(t, "haltpoll")
	tsOut, got := run(t, "ts_haltpoll", "--plugin-dir", dir)
	if !strings.Contains(tsOut, "\n# governor: ts_haltpoll 1.0.0") {
		t.Fatalf("the run did not use the TypeScript governor:\n%s", tsOut)
	}
	if !strings.Contains(goOut, "\n# governor: haltpoll ") {
		t.Fatalf("the run did not use the builtin haltpoll:\n%s", goOut)
	}
	// The scenario must make the window matter: both the poll and the halt
	// are entered (a closed window halts, an open one polls).
	if !regexp.MustCompile(`idle entries: haltpoll=[1-9][0-9]* .*poll=[1-9]`).MatchString(goOut) {
		t.Fatalf("scenario.hcl no longer enters both POLL and haltpoll:\n%s", goOut)
	}
	if got != want {
		t.Errorf("ts_haltpoll's results differ from haltpoll's\n--- haltpoll\n%s\n--- ts_haltpoll\n%s", want, got)
	}
}

// TestMain lets the test binary act as the tickemu command for
// `tickemu plugin check`, which ends its process.
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == "plugin" {
		os.Exit(cli.New().Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// TestPluginCheck runs `tickemu plugin check` on the binary: the SDK's
// governor conformance suite passes out of process.
func TestPluginCheck(t *testing.T) {
	dir := build(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(self, "plugin", "check", "--plugin-call-timeout", "60s", filepath.Join(dir, "tickemu-plugin-ts_haltpoll")).CombinedOutput()
	if err != nil {
		t.Fatalf("tickemu plugin check: %v\n%s", err, out)
	}
	for _, sub := range []string{"Info", "Schema", "Choices", "ZeroLatency", "Reflect", "Deterministic", "Counters"} {
		if !strings.Contains(string(out), "--- PASS: tickemu-plugin-ts_haltpoll/governor/ts_haltpoll/"+sub+" ") {
			t.Errorf("tickemu plugin check did not report %s as passed:\n%s", sub, out)
		}
	}
}
