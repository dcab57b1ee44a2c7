//go:build unix

package loader_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/internal/shimtest"
	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/cpuwait"
)

// stretchBound is how long a deadline of timeout may take to expire: on a
// loaded machine, time spent waiting for a CPU does not count, up to
// cpuwait.MaxStretch deadlines; then the late timer, the kill and the reap
// of a starved host, generously.
func stretchBound(timeout time.Duration) time.Duration {
	return cpuwait.MaxStretch*timeout + 5*time.Second
}

func TestNewRejects(t *testing.T) {
	echo := func() sdk.Plugin { return newEcho() }
	tests := []struct {
		name string
		fs   []sdk.Factory
		want string
	}{
		{"unknown kind", []sdk.Factory{{Kind: "idle", Name: "menu", New: echo}}, `unknown plugin kind "idle"`},
		{"no New", []sdk.Factory{{Kind: sdk.KindClockEvent, Name: "x"}}, "needs a name and a New"},
		{"twice", []sdk.Factory{{Kind: sdk.KindClockEvent, Name: "x", New: echo}, {Kind: sdk.KindClockEvent, Name: "x", New: echo}}, "listed twice"},
	}
	for _, tt := range tests {
		if _, err := loader.New(loader.Options{Builtins: tt.fs}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%s) = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestOpenInProcess(t *testing.T) {
	c, _ := newCatalog(t, loader.Options{})
	inst := open(t, c, sdk.KindClockEvent, "echo", loader.Default)
	fake, ok := inst.Plugin().(*shimtest.ClockEventDevice)
	if !ok {
		t.Fatalf("in-process Plugin() = %T, want the builtin's own value", inst.Plugin())
	}
	if inst.ClockEventDevice() == nil || inst.TimerBase() != nil || inst.HRTimerBase() != nil {
		t.Errorf("accessors = %v, %v, %v; want only ClockEventDevice non-nil", inst.ClockEventDevice(), inst.TimerBase(), inst.HRTimerBase())
	}
	if fake.LoggerSet != 1 {
		t.Errorf("SetLogger called %d times, want 1", fake.LoggerSet)
	}
	if inst.Pid() != 0 || inst.Exited() || inst.Isolation() != loader.InProcess || inst.Source() != loader.SourceBuiltin {
		t.Errorf("instance = pid %d exited %v %q %q, want 0 false inprocess builtin", inst.Pid(), inst.Exited(), inst.Isolation(), inst.Source())
	}
	if got, want := inst.String(), `clockevent plugin "echo" (builtin, in process)`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	inst.Kill() // a no-op in process
	if got := inst.ClockEventDevice().SetNextEvent(0, 5, 1); got.FireAt != 15 {
		t.Errorf("SetNextEvent after Kill in process = %+v, want it to keep working", got)
	}
}

// TestProcessMatchesInProcess: the same calls give the same answers through a
// re-executed tickemu as in process.
func TestProcessMatchesInProcess(t *testing.T) {
	c, _ := newCatalog(t, loader.Options{})
	in := open(t, c, sdk.KindClockEvent, "echo", loader.InProcess).ClockEventDevice()
	procInst := open(t, c, sdk.KindClockEvent, "echo", loader.Process)
	out := procInst.ClockEventDevice()
	if _, local := out.(*shimtest.ClockEventDevice); local || procInst.Pid() <= 0 || procInst.Pid() == os.Getpid() {
		t.Fatalf("process instance = %T pid %d, want a client of another process", out, procInst.Pid())
	}
	setup := sdk.Setup{CPUs: 2, HZ: 250, HighRes: true, Seed: 3, Role: "local"}
	if a, b := in.Configure(setup, sdk.Config{}), out.Configure(setup, sdk.Config{}); a != nil || b != nil {
		t.Fatalf("Configure = %v / %v, want no diagnostics", a, b)
	}
	for i := range 50 {
		now, ticks := ktimeOf(i*1000), uint64(i*i)
		if a, b := in.SetNextEvent(i%2, now, ticks), out.SetNextEvent(i%2, now, ticks); a != b {
			t.Fatalf("SetNextEvent(%d, %v, %d) = %+v in process, %+v over gRPC", i%2, now, ticks, a, b)
		}
	}
	if a, b := in.Spec(), out.Spec(); a != b {
		t.Errorf("Spec() = %+v in process, %+v over gRPC", a, b)
	}
	if !strings.HasPrefix(procInst.String(), `clockevent plugin "echo" (builtin, pid `) {
		t.Errorf("String() = %q, want it to name the plugin and its pid", procInst.String())
	}
	procInst.Kill()
	if !procInst.Exited() {
		t.Error("Exited() after Kill = false, want true")
	}
	te := catchTransport(t, func() { out.Spec() })
	if te.Name != "echo" {
		t.Errorf("call after Kill = %v, want a TransportError naming echo", te)
	}
}

// TestPluginLogReachesHost: an error logged in a plugin process appears in
// the host log as an error, with plugin=, although the host logs at info and
// the plugin uses zerolog's own field names.
func TestPluginLogReachesHost(t *testing.T) {
	c, logs := newCatalog(t, loader.Options{})
	d := open(t, c, sdk.KindClockEvent, "echo", loader.Process).ClockEventDevice()
	d.Configure(sdk.Setup{CPUs: 4, Role: "broadcast"}, sdk.Config{"log": "error"})
	logs.waitFor(t, `{"level":"error","plugin":"clockevent/echo","role":"broadcast","cpus":4,"message":"configured"}`)

	d.Configure(sdk.Setup{CPUs: 1, Role: "quiet"}, sdk.Config{"log": "debug"})
	d.Configure(sdk.Setup{CPUs: 2, Role: "marker"}, sdk.Config{"log": "warn"})
	logs.waitFor(t, `"role":"marker"`)
	if strings.Contains(logs.String(), `"role":"quiet"`) {
		t.Errorf("a plugin debug line reached an info host:\n%s", logs.String())
	}
}

func TestKilledPlugin(t *testing.T) {
	c, logs := newCatalog(t, loader.Options{})
	inst := open(t, c, sdk.KindClockEvent, "echo", loader.Process)
	d := inst.ClockEventDevice()
	d.SetNextEvent(0, 0, 1)
	killAndCheck(t, inst, func() { d.SetNextEvent(0, 10, 1) }, "SetNextEvent")
	logs.waitFor(t, `"level":"error"`) // go-plugin reports the unexpected exit
}

func TestPluginExits(t *testing.T) {
	c, logs := newCatalog(t, loader.Options{})
	inst := open(t, c, sdk.KindClockEvent, "echo", loader.Process)
	te := catchTransport(t, func() { inst.ClockEventDevice().Ack(chExit, 0) })
	if te.Exit != "exit status 3" || te.Pid != inst.Pid() || te.Call != "Ack" || !errors.Is(te, sdk.ErrPluginExited) {
		t.Errorf("TransportError = %+v, want exit status 3 of pid %d during Ack", te, inst.Pid())
	}
	if n := len(te.Stderr); n == 0 || !strings.Contains(te.Stderr[n-1], "exiting on request") {
		t.Errorf("TransportError.Stderr = %q, want it to end with the plugin's last log line", te.Stderr)
	}
	if !strings.Contains(te.Error(), "exiting on request") {
		t.Errorf("Error() = %q, want the last stderr line", te.Error())
	}
	logs.waitFor(t, `"message":"exiting on request"`)
}

// TestPluginCrashes: a panic on a plugin goroutine kills the process; the
// error says so with the panic line (not the transport's EOF) and carries the
// crash dump's stack once, as lines; the host log has the panic line as an
// error and the stack only at debug.
func TestPluginCrashes(t *testing.T) {
	c, logs := newCatalog(t, loader.Options{})
	inst := open(t, c, sdk.KindClockEvent, "echo", loader.Process)
	te := catchTransport(t, func() { inst.ClockEventDevice().Ack(chCrash, 0) })
	if te.Exit != "exit status 2" || !errors.Is(te, sdk.ErrPluginExited) {
		t.Errorf("TransportError = %v, want the Go runtime's exit status 2", te)
	}
	if !strings.Contains(strings.Join(te.Stderr, "\n"), "panic: crash in a goroutine") {
		t.Errorf("TransportError.Stderr = %q, want the panic", te.Stderr)
	}
	if msg := te.Error(); !strings.Contains(msg, "exited (exit status 2) during Ack: panic: crash in a goroutine") || strings.Contains(msg, "goroutine ") {
		t.Errorf("Error() = %q, want the panic line and no stack", msg)
	}
	if len(te.Stack) < 2 || !strings.HasPrefix(te.Stack[0], "goroutine ") || !strings.Contains(strings.Join(te.Stack, "\n"), "main_test.go:") {
		t.Errorf("Stack = %q, want the crash dump from its goroutine line, with the test's frame", te.Stack)
	}
	logs.waitFor(t, `{"level":"error","plugin":"clockevent/echo","message":"panic: crash in a goroutine"}`)
	if strings.Contains(logs.String(), "goroutine ") {
		t.Errorf("the stack reached the host log at info:\n%s", logs.String())
	}
}

// TestPluginPanics: a panic inside a plugin call is reported once: the
// TransportError says what the value was and carries the plugin's frames as
// readable lines (from the panicking function, without the serving
// machinery); neither the host log nor the stderr tail repeats the stack.
func TestPluginPanics(t *testing.T) {
	c, logs := newCatalog(t, loader.Options{})
	inst := open(t, c, sdk.KindClockEvent, "echo", loader.Process)
	te := catchTransport(t, func() { inst.ClockEventDevice().Ack(chPanic, 0) })
	if !strings.Contains(te.Error(), "panicked: assignment to entry in nil map") || strings.Contains(te.Error(), "goroutine") || strings.Contains(te.Error(), "rpc error") {
		t.Errorf("Error() = %q, want the panic value on one line, no stack, no rpc noise", te.Error())
	}
	stack := strings.Join(te.Stack, "\n")
	if len(te.Stack) < 3 || !strings.HasPrefix(te.Stack[0], "goroutine ") || !strings.Contains(te.Stack[1], "loader_test.echoPanics(") ||
		!strings.Contains(te.Stack[2], "main_test.go:") {
		t.Errorf("Stack =\n%s\nwant the goroutine header, then echoPanics and its file line", stack)
	}
	if strings.Contains(stack, "framework/sdk/shim.") || strings.Contains(stack, "runtime/debug") {
		t.Errorf("Stack =\n%s\nwant no serving-machinery frames", stack)
	}
	logs.waitFor(t, `"message":"plugin *shimtest.ClockEventDevice panicked: assignment to entry in nil map"`)
	if strings.Contains(logs.String(), "goroutine") || strings.Contains(strings.Join(te.Stderr, "\n"), "goroutine") {
		t.Errorf("the stack is repeated in the host log or the stderr tail:\n%s\n%q", logs.String(), te.Stderr)
	}
}

// TestPluginHangs: a call that hangs fails with ErrPluginTimeout within its
// deadline (stretched at most by a loaded machine), and the plugin is
// killed.
func TestPluginHangs(t *testing.T) {
	const timeout = 300 * time.Millisecond
	c, _ := newCatalog(t, loader.Options{CallTimeout: timeout})
	inst := open(t, c, sdk.KindClockEvent, "echo", loader.Process)
	start := time.Now()
	te := catchTransport(t, func() { inst.ClockEventDevice().Ack(chHang, 0) })
	if !errors.Is(te, sdk.ErrPluginTimeout) || te.Exit != "" || te.Pid != inst.Pid() {
		t.Errorf("TransportError = %+v, want ErrPluginTimeout from a live pid %d", te, inst.Pid())
	}
	if elapsed := time.Since(start); elapsed > stretchBound(timeout) {
		t.Errorf("timeout reported after %v, want %v, at most %v on a loaded machine", elapsed, timeout, stretchBound(timeout))
	}
	inst.Kill() // must not hang either
	if !inst.Exited() {
		t.Error("Exited() after Kill of a hung plugin = false, want true")
	}
}

// TestLookupErrors: what the config layer shows the user.
func TestLookupErrors(t *testing.T) {
	c, _ := newCatalog(t, loader.Options{})
	noSelf, _ := newCatalog(t, loader.Options{Self: "-"})
	tests := []struct {
		name string
		c    *loader.Catalog
		kind sdk.Kind
		plug string
		iso  loader.Isolation
		is   error
		want string
	}{
		{"unknown kind", c, "idle", "menu", "", loader.ErrUnknownKind, `unknown plugin kind "idle" (kinds: catchup_policy, clockevent, governor, hang_policy, hrtimer, restart_policy, wheel)`},
		{"unknown name", c, sdk.KindClockEvent, "hpet9", "", loader.ErrNotFound, `no clockevent plugin "hpet9" (available: echo (builtin))`},
		{"bad isolation", c, sdk.KindClockEvent, "echo", "vm", loader.ErrIsolation, `unknown isolation "vm"`},
		{"no executable", noSelf, sdk.KindClockEvent, "echo", loader.Process, loader.ErrStart, "echo"},
	}
	for _, tt := range tests {
		_, err := tt.c.Open(tt.kind, tt.plug, tt.iso)
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open(%s, %s, %q) = %v, want %v containing %q", tt.name, tt.kind, tt.plug, tt.iso, err, tt.is, tt.want)
		}
		if tt.is == loader.ErrStart {
			continue
		}
		if _, _, err := tt.c.Describe(tt.kind, tt.plug); tt.is != loader.ErrIsolation && !errors.Is(err, tt.is) {
			t.Errorf("%s: Describe(%s, %s) = %v, want %v", tt.name, tt.kind, tt.plug, err, tt.is)
		}
	}
	empty, err := loader.New(loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := empty.Open(sdk.KindTimerBase, "wheel", ""); err == nil || !strings.Contains(err.Error(), "(available: none)") {
		t.Errorf("Open on an empty catalog = %v, want available: none", err)
	}
	noProc, err := loader.New(loader.Options{Builtins: testFactories()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noProc.Open(sdk.KindClockEvent, "echo", loader.Process); !errors.Is(err, loader.ErrIsolation) {
		t.Errorf("Open(process) without Self = %v, want ErrIsolation", err)
	}
}

// linkBinary links the test binary into dir as tickemu-plugin-NAME: a plugin
// binary serving every test plugin.
func linkBinary(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, loader.BinaryPrefix+name)
	if err := os.Symlink(self(t), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeScript writes an executable shell script into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, loader.BinaryPrefix+name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBinaries(t *testing.T) {
	dir := t.TempDir()
	bin := linkBinary(t, dir, "echo")
	broken := writeScript(t, dir, "broken", "echo 'cannot start: no comparator found' >&2\nexit 3\n")
	chatty := writeScript(t, dir, "chatty", "echo 'hello, I print before the handshake'\nexec sleep 1\n")
	// Builtins: only "echo", so the binary's echo is shadowed and its "tb"
	// and "hr" are found in it.
	c, _ := newCatalog(t, loader.Options{Builtins: testFactories()[:1], Path: []string{dir}})

	var got []string
	for _, e := range c.List() {
		s := string(e.Kind) + "/" + e.Name + " " + e.Version + " " + e.Source
		if e.Shadowed {
			s += " shadowed"
		}
		if e.Err != nil {
			s += " error"
		}
		got = append(got, s)
	}
	want := []string{
		"clockevent/echo 2.0.0 builtin",
		"clockevent/echo 2.0.0 " + bin + " shadowed",
		"hrtimer/hr 1.0.0 " + bin,
		"wheel/tb 1.0.0 " + bin,
		"/broken  " + broken + " error",
		"/chatty  " + chatty + " error",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("List() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	info, schema, err := c.Describe(sdk.KindTimerBase, "tb")
	if err != nil || info.Version != "1.0.0" || len(schema.Attributes) != 0 {
		t.Errorf("Describe(wheel, tb) = %+v, %+v, %v; want version 1.0.0", info, schema, err)
	}
	inst := open(t, c, sdk.KindTimerBase, "tb", loader.Default)
	if inst.Source() != bin || inst.Isolation() != loader.Process || inst.Pid() <= 0 {
		t.Errorf("Open(wheel, tb) = %v (%s, %s), want a process of %s", inst, inst.Source(), inst.Isolation(), bin)
	}
	if got := inst.TimerBase().RunTimers(3, 1000); got.Iterations != 1000 || got.Cost != 3 {
		t.Errorf("RunTimers(3, 1000) = %+v, want Iterations 1000 Cost 3", got)
	}
	if _, err := c.Open(sdk.KindTimerBase, "tb", loader.InProcess); !errors.Is(err, loader.ErrIsolation) {
		t.Errorf("Open(binary, inprocess) = %v, want ErrIsolation", err)
	}

	tests := []struct {
		name string
		want []string
	}{
		{"broken", []string{"no go-plugin handshake on stdout (got nothing)", "stderr: cannot start: no comparator found", broken}},
		{"chatty", []string{`no go-plugin handshake on stdout (got "hello, I print before the handshake")`, chatty}},
	}
	for _, tt := range tests {
		_, err := c.Open(sdk.KindClockEvent, tt.name, "")
		if !errors.Is(err, loader.ErrStart) {
			t.Errorf("Open(clockevent, %s) = %v, want ErrStart", tt.name, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Open(clockevent, %s) = %v, want it to contain %q", tt.name, err, w)
			}
		}
	}
}

// TestHandshakeErrors: a plugin of another protocol version, and another
// program's go-plugin plugin, are named as such rather than as a missing
// plugin.
func TestHandshakeErrors(t *testing.T) {
	tests := []struct {
		mode string
		is   error
		want string
	}{
		{"protocol2", loader.ErrProtocol, fmt.Sprintf("the plugin speaks protocol version %d, this tickemu speaks %d", sdk.ProtocolVersion+1, sdk.ProtocolVersion)},
		{"cookie", loader.ErrMagicCookie, "wrong magic cookie: it is a go-plugin plugin, but it did not find tickemu's handshake cookie TICKEMU_PLUGIN_MAGIC_COOKIE"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		linkBinary(t, dir, "echo")
		c, _ := newCatalog(t, loader.Options{Builtins: []sdk.Factory{}, Path: []string{dir}, Env: []string{"LOADER_TEST_HANDSHAKE=" + tt.mode}})
		_, _, err := c.Describe(sdk.KindClockEvent, "echo")
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Describe = %v, want %v containing %q", tt.mode, err, tt.is, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "Unknown plugin") {
			t.Errorf("%s: Describe = %v, want no talk of an unknown plugin", tt.mode, err)
		}
	}
}

// TestStartTimeout: a binary that never completes the handshake is given up
// on after StartTimeout, killed, and reported with what it wrote.
func TestStartTimeout(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "slow", "echo 'warming up the comparators' >&2\nexec sleep 30\n")
	const timeout = 300 * time.Millisecond
	c, _ := newCatalog(t, loader.Options{Path: []string{dir}, StartTimeout: timeout})
	start := time.Now()
	_, _, err := c.Describe(sdk.KindClockEvent, "slow")
	if !errors.Is(err, loader.ErrStart) || !errors.Is(err, sdk.ErrPluginTimeout) ||
		!strings.Contains(err.Error(), "no go-plugin handshake on stdout within 300ms") || !strings.Contains(err.Error(), "warming up the comparators") {
		t.Errorf("Describe(slow) = %v, want a start timeout with the plugin's stderr", err)
	}
	if elapsed := time.Since(start); elapsed > stretchBound(timeout) {
		t.Errorf("Describe(slow) took %v, want %v, at most %v on a loaded machine", elapsed, timeout, stretchBound(timeout))
	}
}
