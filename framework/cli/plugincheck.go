package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

// checkName is the name the binary under check is linked as, so that the
// loader, which finds plugin binaries by their tickemu-plugin- prefix, sees
// it whatever its own name.
const checkName = "tickemu-plugin-check"

// cmdPluginCheck runs the SDK's conformance suite of each plugin a binary
// serves (framework/sdk/sdktest), out of process, whatever the binary's
// language, printing each test as it passes or fails in `go test -v` form.
// Like `plugin serve` it ends the process: the suites run under the testing
// package's own runner (testing.Main), which exits with 0 when every test
// passed and 1 otherwise.
func (a *App) cmdPluginCheck(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("plugin check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	timeout := fs.Duration("plugin-call-timeout", 0, "deadline of each plugin call, the start included (0: 5s)")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: tickemu plugin check [--plugin-call-timeout D] BINARY (runs the conformance suite of every plugin BINARY serves)")
		return 2
	}
	bin, err := checkedBinary(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "tickemu plugin check: %v\n", err)
		return 2
	}
	dir, err := os.MkdirTemp("", "tickemu-check-")
	if err != nil {
		fmt.Fprintf(stderr, "tickemu plugin check: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	cat, entries, err := servedPlugins(bin, dir, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu plugin check: %v\n", err)
		return 1
	}
	runSuites(bin, dir, cat, entries)
	return 0 // not reached
}

// checkedBinary is the absolute path of arg, an executable file.
func checkedBinary(arg string) (string, error) {
	bin, err := filepath.Abs(arg)
	if err == nil {
		var st os.FileInfo
		if st, err = os.Stat(bin); err == nil && (st.IsDir() || st.Mode()&0o111 == 0) {
			err = fmt.Errorf("%s is not an executable file", bin)
		}
	}
	return bin, err
}

// servedPlugins lists the plugins bin serves, through a catalog of dir
// holding a link to bin alone; an error names bin, not the link.
func servedPlugins(bin, dir string, timeout time.Duration) (*loader.Catalog, []loader.Entry, error) {
	if err := os.Symlink(bin, filepath.Join(dir, checkName)); err != nil {
		return nil, nil, err
	}
	// No builtins: a binary's plugin named like a builtin is the one checked.
	cat, err := loader.New(loader.Options{Path: []string{dir}, Logger: zerolog.Nop(), CallTimeout: timeout})
	if err != nil {
		return nil, nil, err
	}
	entries := cat.List()
	for _, e := range entries {
		if e.Err != nil {
			// Name the binary, not the link the loader ran.
			return nil, nil, errors.New(strings.ReplaceAll(e.Err.Error(), filepath.Join(dir, checkName), bin))
		}
	}
	if len(entries) == 0 {
		return nil, nil, fmt.Errorf("%s serves no plugin", bin)
	}
	return cat, entries, nil
}

// runSuites runs the conformance suite of every entry as `go test -v` would
// and exits with its status.
func runSuites(bin, dir string, cat *loader.Catalog, entries []loader.Entry) {
	// One test named after the binary, a subtest per plugin it serves:
	// testing.Main exits without running the callers' defers, so the
	// test's cleanup removes the directory, after each suite's cleanups
	// stopped the plugin processes.
	tests := []testing.InternalTest{{Name: filepath.Base(bin), F: func(t *testing.T) {
		t.Cleanup(func() { os.RemoveAll(dir) })
		for _, e := range entries {
			t.Run(string(e.Kind)+"/"+e.Name, suite(cat, e.Kind, e.Name))
		}
	}}}
	testing.Init()
	_ = flag.Set("test.v", "true")
	testing.Main(func(pat, s string) (bool, error) { return regexp.MatchString(pat, s) }, tests, nil, nil)
}

// suite returns the conformance test of the plugin kind/name: the kind's
// sdktest suite, given a fresh plugin value in its own process for every
// value it asks for.
func suite(cat *loader.Catalog, kind sdk.Kind, name string) func(*testing.T) {
	open := func(t *testing.T) sdk.Plugin {
		in, err := cat.Open(kind, name, loader.Process)
		if err != nil {
			t.Fatalf("open %s plugin %q: %v", kind, name, err)
		}
		t.Cleanup(in.Kill)
		return in.Plugin()
	}
	return func(t *testing.T) {
		switch kind {
		case sdk.KindTimerBase:
			sdktest.RunTimerBase(t, func(t *testing.T) sdk.TimerBase { return open(t).(sdk.TimerBase) })
		case sdk.KindHRTimer:
			sdktest.RunHRTimerBase(t, func(t *testing.T) sdk.HRTimerBase { return open(t).(sdk.HRTimerBase) })
		case sdk.KindClockEvent:
			sdktest.RunClockEventDevice(t, func(t *testing.T, _ sdk.Role) sdk.ClockEventDevice {
				return open(t).(sdk.ClockEventDevice)
			})
		case sdk.KindGovernor:
			sdktest.RunGovernor(t, func(t *testing.T) sdk.Governor { return open(t).(sdk.Governor) })
		case sdk.KindHangPolicy:
			sdktest.RunHangPolicy(t, func(t *testing.T) sdk.HangPolicy { return open(t).(sdk.HangPolicy) })
		case sdk.KindCatchupPolicy:
			sdktest.RunCatchupPolicy(t, func(t *testing.T) sdk.CatchupPolicy { return open(t).(sdk.CatchupPolicy) })
		case sdk.KindRestartPolicy:
			sdktest.RunRestartPolicy(t, func(t *testing.T) sdk.RestartPolicy { return open(t).(sdk.RestartPolicy) })
		default:
			t.Fatalf("no conformance suite for kind %q", kind)
		}
	}
}
