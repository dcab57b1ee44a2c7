//go:build unix

package loader_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

func ktimeOf(ns int) ktime.Time { return ktime.Time(ns) }

// killAndCheck SIGKILLs inst's process, then checks that call panics,
// promptly, with a TransportError naming the plugin, its pid and the signal.
func killAndCheck(t *testing.T, inst *loader.Instance, call func(), callName string) {
	t.Helper()
	pid := inst.Pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill(%d) = %v", pid, err)
	}
	start := time.Now()
	te := catchTransport(t, call)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("TransportError after %v, want it promptly", elapsed)
	}
	if te.Kind != inst.Kind() || te.Name != inst.Name() || te.Pid != pid || te.Call != callName ||
		te.Exit != "signal: killed" || !errors.Is(te, sdk.ErrPluginExited) {
		t.Errorf("TransportError = %+v, want %s %q pid %d exited by signal: killed during %s", te, inst.Kind(), inst.Name(), pid, callName)
	}
	msg := te.Error()
	for _, w := range []string{strconv.Quote(inst.Name()), fmt.Sprintf("pid %d", pid), "signal: killed", callName} {
		if !strings.Contains(msg, w) {
			t.Errorf("Error() = %q, want it to contain %q", msg, w)
		}
	}
}

// buildExample builds examples/fixed's plugin binary into a fresh directory.
func buildExample(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building the example plugin needs the go command: %v", err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, loader.BinaryPrefix+"fixed")
	cmd := exec.Command(goTool, "build", "-o", out, "./cmd/tickemu-plugin-fixed")
	cmd.Dir = filepath.Join("..", "..", "examples", "fixed")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the example plugin: %v\n%s", err, b)
	}
	return dir
}

// TestExamplePlugin: the out-of-tree example is found on the search path,
// described, opened out of process, configured and called; killed mid-use,
// it makes the next call fail promptly with an error naming it and the signal.
func TestExamplePlugin(t *testing.T) {
	dir := buildExample(t)
	c, logs := newCatalog(t, loader.Options{Builtins: []sdk.Factory{}, Path: []string{dir}})
	entries := c.List()
	if len(entries) != 1 || entries[0].Kind != sdk.KindClockEvent || entries[0].Name != "fixed" ||
		entries[0].Source != filepath.Join(dir, loader.BinaryPrefix+"fixed") || entries[0].Err != nil {
		t.Fatalf("List() = %+v, want the fixed clockevent from %s", entries, dir)
	}
	info, schema, err := c.Describe(sdk.KindClockEvent, "fixed")
	if _, ok := schema.Lookup("write_cost"); err != nil || info.Version == "" || !ok {
		t.Fatalf("Describe(clockevent, fixed) = %+v, %+v, %v; want a version and write_cost", info, schema, err)
	}
	inst := open(t, c, sdk.KindClockEvent, "fixed", loader.Default)
	d := inst.ClockEventDevice()
	if inst.Isolation() != loader.Process || d == nil {
		t.Fatalf("Open(fixed) = %v, want a clockevent in a process", inst)
	}
	diags := d.Configure(sdk.Setup{CPUs: 2, HZ: 1000, HighRes: true, Role: "local"},
		sdk.Config{"freq": "1e+09", "write_cost": "40", "latency": "1000", "per_cpu": "true", "rating": "100"})
	if diags.HasErrors() {
		t.Fatalf("Configure = %v", diags)
	}
	if got, want := d.SetNextEvent(1, 5000, 250), (sdk.ProgramResult{FireAt: 6250, Cost: 40}); got != want {
		t.Errorf("SetNextEvent(1, 5000, 250) = %+v, want %+v", got, want)
	}
	bad := d.Configure(sdk.Setup{CPUs: 2}, sdk.Config{"freq": "0", "write_cost": "40", "latency": "0", "per_cpu": "true", "rating": "1"})
	if !bad.HasErrors() || bad[0].Attribute != "freq" {
		t.Errorf("Configure(freq 0) = %v, want an error diagnostic on freq, not a transport error", bad)
	}
	killAndCheck(t, inst, func() { d.SetNextEvent(0, 7000, 1) }, "SetNextEvent")
	if !strings.Contains(logs.String(), `"plugin":"clockevent/fixed"`) {
		t.Logf("host log:\n%s", logs.String())
	}
}

// runHost is the test binary as a host that dies: it opens a plugin process,
// prints the plugin's pid and waits to be killed.
func runHost() {
	exe, err := os.Executable()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	c, err := loader.New(loader.Options{Builtins: testFactories(), Self: exe, Logger: zerolog.Nop()})
	if err == nil {
		var inst *loader.Instance
		if inst, err = c.Open(sdk.KindClockEvent, "echo", loader.Process); err == nil {
			fmt.Println(inst.Pid())
			time.Sleep(time.Hour)
		}
	}
	fmt.Println("error:", err)
	os.Exit(1)
}

// alive reports whether pid runs; a zombie (exited, not yet reaped by
// whatever adopted it) does not.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// TestHostDeathStopsPlugin: a host killed with SIGKILL cannot stop its
// plugins; they notice the new parent and exit by themselves.
func TestHostDeathStopsPlugin(t *testing.T) {
	// tickemu's plugin lifecycle is Linux's (getppid polling, /proc): the
	// project's machines and CI are Linux.
	host := exec.Command(self(t))
	host.Env = append(os.Environ(), "LOADER_TEST_HOST=1")
	stdout, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		_ = host.Process.Kill()
		_ = host.Wait()
		t.Fatalf("host said %q (%v), want a plugin pid", line, err)
	}
	if !alive(pid) {
		t.Fatalf("plugin %d is not running before the host dies", pid)
	}
	_ = host.Process.Kill()
	_ = host.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("plugin %d still runs 10s after its host was killed", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pgid returns the process group of pid from /proc, or -1.
func pgid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 3 {
		return -1
	}
	g, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return g
}

// waitGone waits up to 10 s for pid to end and fails the test if it does not.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s %d still runs 10s later", what, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestKillEndsForkedChildren: a plugin process leads its own process group,
// so Kill ends the processes it forked too, also one that holds the plugin's
// stderr pipe open (which would otherwise keep go-plugin waiting).
func TestKillEndsForkedChildren(t *testing.T) {
	for _, tc := range []struct {
		name string
		kill func(*loader.Instance)
	}{
		{"Kill", (*loader.Instance).Kill},
		{"KillPluginGroups", func(*loader.Instance) { loader.KillPluginGroups() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newCatalog(t, loader.Options{})
			inst := open(t, c, sdk.KindClockEvent, "echo", loader.Process)
			cost, _ := inst.ClockEventDevice().Ack(chFork, 0)
			child := int(cost)
			if !alive(child) {
				t.Fatalf("the plugin's child %d is not running", child)
			}
			if g := pgid(inst.Pid()); g != inst.Pid() {
				t.Errorf("plugin %d is in process group %d, want its own", inst.Pid(), g)
			}
			if g := pgid(child); g != inst.Pid() {
				t.Errorf("child %d is in process group %d, want the plugin's %d", child, g, inst.Pid())
			}
			found := false
			for _, g := range loader.PluginGroups() {
				found = found || g == inst.Pid()
			}
			if !found {
				t.Errorf("PluginGroups() = %v, want it to hold %d", loader.PluginGroups(), inst.Pid())
			}
			tc.kill(inst)
			waitGone(t, child, "the plugin's child")
			waitGone(t, inst.Pid(), "the plugin")
			for _, g := range loader.PluginGroups() {
				if g == inst.Pid() {
					t.Errorf("PluginGroups() = %v after the kill, still holds %d", loader.PluginGroups(), g)
				}
			}
		})
	}
}
