//go:build linux

package cli

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/bundle"
	"github.com/tickemu/tickemu/framework/capture"
)

// The tests below capture on the machine's own kernel: they need root and
// tracefs, as CI has.

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test records the real kernel with tickemu capture: it needs root (tracefs at /sys/kernel/tracing); run the tests as root")
	}
	mountTracefs(t)
}

// mountTracefs mounts tracefs at its usual place for the test, when the
// machine has not (a freshly booted machine without systemd's
// sys-kernel-tracing.mount, as CI's can be), and unmounts it afterwards, so
// the machine is left as found. The tests compare tracefs before and after
// a capture, which needs it mounted throughout; TestCaptureMountsTracefs
// covers a capture that finds it unmounted.
func mountTracefs(t *testing.T) {
	t.Helper()
	dir := capture.DefaultTracefs
	if _, err := os.Stat(filepath.Join(dir, "trace")); err == nil {
		return
	}
	if err := syscall.Mount("nodev", dir, "tracefs", 0, ""); err != nil {
		t.Fatalf("tracefs is not mounted at %s and mounting it failed: %v (a kernel without CONFIG_FTRACE?)", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount the test's tracefs at %s: %v", dir, err)
		}
	})
}

// installCaptureDeps runs scripts/install-capture-deps.sh (cyclictest,
// stress-ng).
func installCaptureDeps(t *testing.T) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "install-capture-deps.sh")
	if out, err := exec.Command("bash", script).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// tracefsState reads every tracefs setting a capture could touch, top
// level: the switches, clock, buffer size, pid lists, cpumask, every
// option, every event's enable and the default set's filters. (Instances
// come and go with other tracing: noInstance checks the capture's own.)
//
// A buffer the kernel has not yet expanded ("7 (expanded: 1408)": nothing
// has traced since boot) is expanded first, as any tracing would: the
// kernel has no way back to the unexpanded state, so a capture restores the
// size it would take once used (1408), which the kernel rounds to whole
// sub-buffers (1410 here), and the raw text before and after could never
// match on a freshly booted machine.
func tracefsState(t *testing.T) map[string]string {
	t.Helper()
	root := capture.DefaultTracefs
	expandBuffer(t, filepath.Join(root, "buffer_size_kb"))
	out := map[string]string{}
	read := func(rel string) {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			if os.IsNotExist(err) {
				return
			}
			t.Fatal(err)
		}
		out[rel] = string(b)
	}
	for _, f := range []string{"tracing_on", "current_tracer", "buffer_size_kb", "trace_clock", "set_event", "set_event_pid",
		"set_event_notrace_pid", "tracing_cpumask", "trace_options"} {
		read(f)
	}
	for _, pat := range []string{"options/*", "events/*/*/enable", "events/*/enable", "events/timer/*/filter", "events/irq/*/filter", "events/sched/*/filter"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(root, p)
			read(rel)
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d tracefs files read: is tracefs mounted at %s?", len(out), root)
	}
	return out
}

// noInstance fails if the trace instance of the capture run by process pid
// is still there.
func noInstance(t *testing.T, pid int) {
	t.Helper()
	dir := filepath.Join(capture.DefaultTracefs, "instances", fmt.Sprintf("tickemu-%d", pid))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the capture's instance %s is still there (%v)", dir, err)
	}
}

// expandBuffer writes an unexpanded buffer's expanded size to path.
func expandBuffer(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, exp, ok := strings.Cut(strings.TrimSpace(string(b)), "(expanded: ")
	if !ok {
		return
	}
	if err := os.WriteFile(path, []byte(strings.TrimSuffix(exp, ")")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sameState(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("tracefs %s was %q before the capture, %q after", k, v, after[k])
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("tracefs %s appeared: %q", k, v)
		}
	}
}

// kernelHZ is CONFIG_HZ as /proc/config.gz or /boot/config-RELEASE has it
// (0 when neither is there).
func kernelHZ(t *testing.T) int {
	t.Helper()
	var r io.Reader
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	} else {
		rel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
		f, err := os.Open("/boot/config-" + strings.TrimSpace(string(rel)))
		if err != nil {
			return 0
		}
		defer f.Close()
		r = f
	}
	b, _ := io.ReadAll(r)
	m := regexp.MustCompile(`(?m)^CONFIG_HZ=(\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("kernel configuration without CONFIG_HZ")
	}
	hz, _ := strconv.Atoi(string(m[1]))
	return hz
}

// runCapture runs tickemu capture in process and opens the bundle.
func runCapture(t *testing.T, args ...string) (*bundle.Bundle, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "x.tcap")
	var stdout, stderr bytes.Buffer
	full := append([]string{"capture", "--out", out}, args...)
	if code := mainWith(full, &stdout, &stderr); code != 0 {
		t.Fatalf("tickemu %s: exit %d\n%s%s", strings.Join(full, " "), code, stdout.String(), stderr.String())
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	return b, stdout.String()
}

func TestCaptureSleep(t *testing.T) {
	needRoot(t)
	before := tracefsState(t)
	b, summary := runCapture(t, "--note", "test", "--", "sleep", "0.05")
	sameState(t, before, tracefsState(t))
	noInstance(t, os.Getpid())
	m := b.Manifest
	if !slices.Equal(m.Command, []string{"sleep", "0.05"}) || m.ExitStatus != 0 || m.Signal != "" || m.Name != "sleep" || m.Note != "test" {
		t.Errorf("command %q exit %d signal %q name %q note %q", m.Command, m.ExitStatus, m.Signal, m.Name, m.Note)
	}
	if m.WallNS < 50e6 {
		t.Errorf("wall %d ns for sleep 0.05", m.WallNS)
	}
	if hz := kernelHZ(t); m.Host.HZ != hz {
		t.Errorf("manifest HZ %d, kernel configuration %d", m.Host.HZ, hz)
	}
	if m.Host.CPUs != runtime.NumCPU() && m.Host.CPUs < 1 {
		t.Errorf("CPUs %d", m.Host.CPUs)
	}
	if m.Trace.Instance == "" || m.Trace.Clock != "mono" || !slices.Contains(m.Trace.Events, "sched/sched_switch") ||
		!slices.Contains(m.Trace.Events, "timer/hrtimer_start") {
		t.Errorf("trace %+v", m.Trace)
	}
	if !slices.Contains(m.Changed, bundle.Setting{Path: "instances/" + m.Trace.Instance, Old: "absent", New: "created"}) {
		t.Errorf("changed %+v lacks the instance", m.Changed)
	}
	if len(m.Before.Stat) == 0 || len(m.After.Interrupts) == 0 {
		t.Error("no /proc snapshots")
	}
	trace, err := b.File(bundle.TraceName)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(trace, []byte(": sched_switch: ")) || !bytes.Contains(trace, []byte("#P:")) {
		t.Errorf("the trace has no sched_switch or no header:\n%.2000s", trace)
	}
	if !strings.Contains(summary, "capture sleep: sleep 0.05, exit status 0") || !regexp.MustCompile(`sched_switch +\d+`).MatchString(summary) {
		t.Errorf("summary:\n%s", summary)
	}

	// tickemu replay reads the bundle, with the manifest's HZ.
	var stdout, stderr bytes.Buffer
	if code := mainWith([]string{"replay", b.Path}, &stdout, &stderr); code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, stderr.String())
	}
	if want := fmt.Sprintf("HZ %d (the bundle's CONFIG_HZ)", m.Host.HZ); m.Host.HZ > 0 && !strings.Contains(stdout.String(), want) {
		t.Errorf("replay output lacks %q:\n%.1000s", want, stdout.String())
	}
}

func TestCaptureExitStatus(t *testing.T) {
	needRoot(t)
	b, summary := runCapture(t, "--events", "sched/sched_switch,timer/nosuch", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
	m := b.Manifest
	if m.ExitStatus != 3 || !slices.Equal(m.Trace.Events, []string{"sched/sched_switch"}) || !slices.Equal(m.Trace.Missing, []string{"timer/nosuch"}) {
		t.Errorf("exit %d events %q missing %q", m.ExitStatus, m.Trace.Events, m.Trace.Missing)
	}
	for name, want := range map[string]string{bundle.StdoutName: "out\n", bundle.StderrName: "err\n"} {
		if got, err := b.File(name); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if !strings.Contains(summary, "exit status 3") || !strings.Contains(summary, "missing events: timer/nosuch") {
		t.Errorf("summary:\n%s", summary)
	}
}

func TestCaptureCyclictest(t *testing.T) {
	needRoot(t)
	installCaptureDeps(t)
	b, _ := runCapture(t, "--", "cyclictest", "-t1", "-l", "50", "-i", "1000", "-q")
	if b.Manifest.ExitStatus != 0 {
		t.Fatalf("cyclictest exit status %d", b.Manifest.ExitStatus)
	}
	out, err := b.File(bundle.StdoutName)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`T: 0 .*C:\s+50 .*Max:\s+\d+`).Match(out) {
		t.Errorf("cyclictest's output:\n%s", out)
	}
	trace, err := b.File(bundle.TraceName)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(trace, []byte("function=hrtimer_wakeup")); n < 50 {
		t.Errorf("%d hrtimer_wakeup starts for 50 cyclictest loops", n)
	}
}

func TestCaptureGlobalRestores(t *testing.T) {
	needRoot(t)
	before := tracefsState(t)
	b, _ := runCapture(t, "--global", "--buffer-kb", "2048", "--", "sleep", "0.02")
	sameState(t, before, tracefsState(t))
	if b.Manifest.Trace.Instance != "" || b.Manifest.Trace.BufferKB != 2048 {
		t.Errorf("trace %+v", b.Manifest.Trace)
	}
}

// startCaptureHost starts the test binary as `tickemu capture ... -- args`
// and returns it once the command runs, with the command's pid.
func startCaptureHost(t *testing.T, out string, args ...string) (*exec.Cmd, *syncBuffer, int) {
	t.Helper()
	host := exec.Command(os.Args[0], append([]string{"capture", "--out", out, "--"}, args...)...)
	host.Env = append(os.Environ(), hostEnv+"=1")
	stderr := &syncBuffer{}
	host.Stdout, host.Stderr = io.Discard, stderr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.Process.Kill()
		_, _ = host.Process.Wait()
	})
	re := regexp.MustCompile(`running .* \(pid (\d+)\)`)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return host, stderr, pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the command never started:\n%s", stderr.String())
	return nil, nil, 0
}

// waitStatus waits for the host and returns its exit status.
func waitStatus(t *testing.T, host *exec.Cmd) int {
	t.Helper()
	err := host.Wait()
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

func noGroupLeft(t *testing.T, pgid int) {
	t.Helper()
	if left := processes(func(_, _, g int) bool { return g == pgid }); len(left) > 0 {
		t.Errorf("processes of the command's group %d outlive tickemu: %v", pgid, left)
		for _, p := range left {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// TestCaptureSIGINT: Ctrl-C (or SIGTERM) during a capture stops the
// command, writes the bundle, restores every tracefs setting and exits
// 128+signal; nothing is left.
func TestCaptureSIGINT(t *testing.T) {
	needRoot(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			before := tracefsState(t)
			out := filepath.Join(t.TempDir(), "x.tcap")
			host, stderr, pid := startCaptureHost(t, out, "sleep", "5")
			if err := host.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := waitStatus(t, host); code != 128+int(sig) {
				t.Errorf("exit status %d, want %d\n%s", code, 128+int(sig), stderr.String())
			}
			noGroupLeft(t, pid)
			sameState(t, before, tracefsState(t))
			noInstance(t, host.Process.Pid)
			b, err := bundle.Open(out)
			if err != nil {
				t.Fatalf("no bundle after %v: %v\n%s", sig, err, stderr.String())
			}
			want := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
			if m := b.Manifest; m.ExitStatus != -1 || m.Signal != want || m.WallNS > 4e9 {
				t.Errorf("exit %d signal %q wall %d ns", m.ExitStatus, m.Signal, m.WallNS)
			}
		})
	}
}

// TestCaptureSecondSignal: a command that ignores SIGINT is killed by the
// second one; tickemu restores the settings and exits at once, without a
// bundle.
func TestCaptureSecondSignal(t *testing.T) {
	needRoot(t)
	before := tracefsState(t)
	out := filepath.Join(t.TempDir(), "x.tcap")
	host, stderr, pid := startCaptureHost(t, out, "sh", "-c", `trap "" INT; sleep 20`)
	host.Process.Signal(syscall.SIGINT)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(stderr.String(), "again to exit at once"); {
		if time.Now().After(deadline) {
			t.Fatalf("the first SIGINT was not taken:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	host.Process.Signal(syscall.SIGINT)
	if code := waitStatus(t, host); code != 130 {
		t.Errorf("exit status %d, want 130\n%s", code, stderr.String())
	}
	noGroupLeft(t, pid)
	sameState(t, before, tracefsState(t))
	noInstance(t, host.Process.Pid)
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a bundle was written after the second signal: %v", err)
	}
}

// TestCaptureNotRoot runs tickemu capture as the user nobody: it refuses,
// saying what it needs, before touching anything.
func TestCaptureNotRoot(t *testing.T) {
	needRoot(t) // to become nobody
	dir, err := os.MkdirTemp("", "tickemu-capture-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "tickemu")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	before := tracefsState(t)
	cmd := exec.Command(bin, "capture", "--", "true")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), hostEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "needs root") {
		t.Errorf("as nobody: %v\n%s", err, stderr.String())
	}
	sameState(t, before, tracefsState(t))
}

// TestCaptureMountsTracefs: with tracefs not mounted (in a mount namespace
// of the test's own, so the machine's stays as it is), capture mounts it,
// records, and unmounts it again; the manifest says so.
func TestCaptureMountsTracefs(t *testing.T) {
	needRoot(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("this test needs unshare(1) (Debian package util-linux) to unmount tracefs in a private mount namespace")
	}
	out := filepath.Join(t.TempDir(), "x.tcap")
	script := `umount ` + capture.DefaultTracefs + ` && test -z "$(ls -A ` + capture.DefaultTracefs + `)" &&
"$0" capture --out "$1" -- sleep 0.01 >/dev/null && echo "left: $(ls -A ` + capture.DefaultTracefs + ` | wc -l)"`
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script, os.Args[0], out)
	cmd.Env = append(os.Environ(), hostEnv+"=1")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	if !strings.Contains(string(got), "left: 0") {
		t.Errorf("tracefs still mounted after the capture:\n%s", got)
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if m := b.Manifest; !slices.Contains(m.Changed, bundle.Setting{Path: capture.DefaultTracefs, Old: "not mounted", New: "tracefs"}) {
		t.Errorf("changed %+v lacks the mount", m.Changed)
	}
	if _, err := os.Stat(filepath.Join(capture.DefaultTracefs, "trace")); err != nil {
		t.Errorf("the machine's tracefs is gone: %v", err)
	}
}
