//go:build unix

package loader_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/internal/shimtest"
	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/serve"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// The test binary plays three parts besides running the tests:
//
//   - `loader.test plugin serve KIND NAME`: tickemu re-executed to serve a
//     builtin (Catalog.Options.Self is the test binary);
//   - started with go-plugin's magic cookie and no arguments (as a file
//     tickemu-plugin-echo linked to it): a third-party plugin binary serving
//     every test plugin;
//   - with LOADER_TEST_HOST=1: a host that opens a plugin process, prints its
//     pid and waits to be killed (TestHostDeathStopsPlugin).
func TestMain(m *testing.M) {
	// go-plugin's in-process test pair (sdktest.GRPCPair) logs its stdio
	// teardown at DEBUG on stderr through hclog's default output, which
	// would break benchmark result lines.
	hclog.DefaultOutput = io.Discard
	switch {
	case os.Getenv("LOADER_TEST_SLEEP") == "1":
		// A plugin's child (chFork, forkSleepers): first, whatever else its
		// environment says, so that it never forks in turn.
		time.Sleep(time.Hour)
		os.Exit(0)
	case len(os.Args) == 5 && os.Args[1] == "plugin" && os.Args[2] == "serve":
		f, ok := findFactory(sdk.Kind(os.Args[3]), os.Args[4])
		if !ok {
			fmt.Fprintf(os.Stderr, "no test plugin %s/%s\n", os.Args[3], os.Args[4])
			os.Exit(2)
		}
		serve.One(f)
	case len(os.Args) == 1 && os.Getenv("LOADER_TEST_HANDSHAKE") != "":
		serveOtherHandshake(os.Getenv("LOADER_TEST_HANDSHAKE"))
	case len(os.Args) == 1 && os.Getenv(faultEnv) != "" && os.Getenv(shim.Handshake.MagicCookieKey) == shim.Handshake.MagicCookieValue:
		runFault(os.Getenv(faultEnv)) // fault_test.go
	case len(os.Args) == 1 && os.Getenv(shim.Handshake.MagicCookieKey) == shim.Handshake.MagicCookieValue:
		serve.Serve(testFactories()...)
	case os.Getenv("LOADER_TEST_HOST") == "1":
		runHost()
	}
	code := m.Run()
	loader.CleanupClients()
	os.Exit(code)
}

// Magic arguments that make the "echo" device misbehave, so tests can make a
// plugin process fail in each way a real one can.
const (
	chExit  = 666 // Ack: log "exiting on request" and exit with status 3
	chCrash = 667 // Ack: panic on another goroutine: the process dies
	chHang  = 668 // Ack: never answer
	chFork  = 669 // Ack: start a child that sleeps, holding stderr; return its pid as the cost
	chPanic = 670 // Ack: panic in the call itself (the plugin's server recovers it)
)

// serveOtherHandshake serves the test plugins as a plugin that tickemu cannot
// talk to: "protocol2" speaks a later protocol version, "cookie" is some
// other program's go-plugin plugin (another magic cookie).
func serveOtherHandshake(mode string) {
	sets, err := shim.ServerPlugins(testFactories(), zerolog.Nop())
	if err != nil {
		panic(err)
	}
	hs := shim.Handshake
	switch mode {
	case "protocol2":
		hs.ProtocolVersion = sdk.ProtocolVersion + 1
		sets = map[int]plugin.PluginSet{int(hs.ProtocolVersion): sets[sdk.ProtocolVersion]}
	case "cookie":
		hs.MagicCookieKey, hs.MagicCookieValue = "OTHER_PROGRAM_PLUGIN", "not-tickemu"
	}
	plugin.Serve(&plugin.ServeConfig{HandshakeConfig: hs, VersionedPlugins: sets, GRPCServer: shim.NewGRPCServer})
	os.Exit(0)
}

// echoPanics is a named frame for TestPluginPanics to find in the stack.
func echoPanics() {
	var m map[string]int
	//lint:ignore SA5000 the test needs a real runtime panic from plugin code
	m["x"]++ // assignment to entry in nil map
}

// testFactories are the test's plugins: an "echo" clockevent device whose
// answers are a simple function of the arguments, and trivial plugins of the
// other kinds.
func testFactories() []sdk.Factory {
	return []sdk.Factory{
		{Kind: sdk.KindClockEvent, Name: "echo", New: func() sdk.Plugin { return newEcho() }},
		{Kind: sdk.KindTimerBase, Name: "tb", New: func() sdk.Plugin {
			return &shimtest.TimerBase{
				Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindTimerBase, Name: "tb", Version: "1.0.0"}},
				RunTimersFn: func(cpu int, jiffies uint64) sdk.RunTimersResult {
					return sdk.RunTimersResult{Iterations: jiffies, Cost: int64(cpu)}
				},
			}
		}},
		{Kind: sdk.KindHRTimer, Name: "hr", New: func() sdk.Plugin {
			return &shimtest.HRTimerBase{Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindHRTimer, Name: "hr", Version: "1.0.0"}}}
		}},
	}
}

func findFactory(kind sdk.Kind, name string) (sdk.Factory, bool) {
	for _, f := range testFactories() {
		if f.Kind == kind && f.Name == name {
			return f, true
		}
	}
	return sdk.Factory{}, false
}

// newEcho returns the echo device.
func newEcho() *shimtest.ClockEventDevice {
	d := &shimtest.ClockEventDevice{
		Base: shimtest.Base{
			InfoValue: sdk.Info{Kind: sdk.KindClockEvent, Name: "echo", Version: "2.0.0", Description: "answers from its arguments"},
			SchemaValue: sdk.Schema{Attributes: []sdk.Attribute{
				{Name: "log", Type: sdk.TypeString, Default: "", Doc: "level at which Configure logs"},
			}},
		},
		SpecValue: sdk.DeviceSpec{Name: "echo", Features: sdk.FeatOneshot, FreqHz: 1e8, MinDeltaTicks: 1, MaxDeltaTicks: 1 << 32, Channels: 1},
		SetNextEventFn: func(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
			return sdk.ProgramResult{FireAt: now.Add(int64(ticks) * 10), Cost: 7 + int64(ch)}
		},
	}
	d.ConfigureFn = func(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
		if lvl, err := zerolog.ParseLevel(c["log"]); err == nil && lvl != zerolog.NoLevel {
			d.Log.WithLevel(lvl).Str("role", string(s.Role)).Int("cpus", s.CPUs).Msg("configured")
		}
		if c["fail"] != "" {
			return sdk.Diagnostics{}.Errorf("fail", "asked to fail: %s", c["fail"])
		}
		return nil
	}
	d.AckFn = func(ch int, now ktime.Time) (int64, ktime.Time) {
		switch ch {
		case chExit:
			d.Log.Error().Msg("exiting on request")
			os.Exit(3)
		case chCrash:
			go func() { panic("crash in a goroutine") }()
			time.Sleep(time.Minute)
		case chHang:
			time.Sleep(time.Hour)
		case chPanic:
			echoPanics()
		case chFork:
			exe, err := os.Executable()
			if err != nil {
				panic(err)
			}
			child := exec.Command(exe)
			child.Env = append(os.Environ(), "LOADER_TEST_SLEEP=1")
			child.Stderr = os.Stderr
			if err := child.Start(); err != nil {
				panic(err)
			}
			return int64(child.Process.Pid), ktime.Max
		}
		return 5, ktime.Max
	}
	return d
}

// logBuffer collects host log lines; plugin lines arrive on go-plugin's
// goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the log holds want.
func (b *logBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("host log never showed %s; it has:\n%s", want, b.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// self is the test binary, standing in for the tickemu executable.
func self(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable() = %v", err)
	}
	return p
}

// newCatalog returns a catalog of the test factories as builtins, with the
// test binary as tickemu, logging JSON at info into the returned buffer.
func newCatalog(t testing.TB, o loader.Options) (*loader.Catalog, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if o.Builtins == nil {
		o.Builtins = testFactories()
	}
	if o.Self == "" {
		o.Self = self(t)
	}
	o.Logger = zerolog.New(logs).Level(zerolog.InfoLevel)
	c, err := loader.New(o)
	if err != nil {
		t.Fatalf("loader.New() = %v", err)
	}
	return c, logs
}

// open opens kind/name and kills it when the test ends.
func open(t testing.TB, c *loader.Catalog, kind sdk.Kind, name string, iso loader.Isolation) *loader.Instance {
	t.Helper()
	inst, err := c.Open(kind, name, iso)
	if err != nil {
		t.Fatalf("Open(%s, %s, %q) = %v", kind, name, iso, err)
	}
	t.Cleanup(inst.Kill)
	return inst
}

// catchTransport runs f and returns the *sdk.TransportError it panicked with.
func catchTransport(t *testing.T, f func()) (te *sdk.TransportError) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("call returned, want a *sdk.TransportError panic")
		}
		var ok bool
		if te, ok = r.(*sdk.TransportError); !ok {
			t.Fatalf("panic value = %T %v, want *sdk.TransportError", r, r)
		}
	}()
	f()
	return nil
}
