//go:build linux

package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostEnv makes the test binary run Main, as the tickemu command does.
const hostEnv = "TICKEMU_CLI_TEST_HOST"

// procStat returns the state, parent and process group of pid from
// /proc/PID/stat; ok is false if pid does not exist.
func procStat(pid int) (state byte, ppid, pgid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 3 {
		return 0, 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	pgid, _ = strconv.Atoi(f[2])
	return f[0][0], ppid, pgid, true
}

// processes returns every live (not zombie) process for which keep is true.
func processes(keep func(pid, ppid, pgid int) bool) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ppid, pgid, ok := procStat(pid)
		if ok && st != 'Z' && st != 'X' && keep(pid, ppid, pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// startHost starts the test binary as `tickemu ARGS...` and waits until it
// runs want plugin processes, which it returns with their command lines.
func startHost(t *testing.T, want int, args ...string) (*exec.Cmd, *bytes.Buffer, map[int]string) {
	t.Helper()
	host := exec.Command(os.Args[0], args...)
	host.Env = append(os.Environ(), hostEnv+"=1")
	stderr := &bytes.Buffer{}
	host.Stderr = stderr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.Process.Kill()
		_, _ = host.Process.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		kids := processes(func(_, ppid, _ int) bool { return ppid == host.Process.Pid })
		plugins := map[int]string{}
		for _, pid := range kids {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if c := strings.ReplaceAll(string(cmdline), "\x00", " "); strings.Contains(c, "plugin serve") {
				plugins[pid] = c
			}
		}
		if len(plugins) == want {
			return host, stderr, plugins
		}
		if time.Now().After(deadline) {
			t.Fatalf("host runs plugins %v after 30s, want %d; stderr:\n%s", plugins, want, stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitHost waits up to limit for the host to exit and returns its status.
// A host still running then is sent SIGQUIT, so that the failure shows
// where its goroutines are (the Go runtime's dump, on stderr); stderr is
// read only once Wait has returned, that is once exec stopped writing it.
func waitHost(t *testing.T, host *exec.Cmd, limit time.Duration, stderr *bytes.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- host.Wait() }()
	select {
	case <-done:
		return host.ProcessState.ExitCode()
	case <-time.After(limit):
	}
	_ = host.Process.Signal(syscall.SIGQUIT)
	select {
	case <-done:
		t.Fatalf("host still ran %v later; SIGQUIT; stderr:\n%s", limit, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("host still runs %v later, and 30s after SIGQUIT", limit)
	}
	return -1
}

// checkNoneLeft fails if any of the plugin processes, or any process in
// their process groups, still runs.
func checkNoneLeft(t *testing.T, plugins map[int]string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processes(func(pid, _, pgid int) bool {
			_, isPlugin := plugins[pid]
			_, inGroup := plugins[pgid]
			return isPlugin || inGroup
		})
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("plugin processes %v still run after the host exited (plugins: %v)", left, plugins)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var nohzCatchup = filepath.Join("..", "..", "configs", "nohz-catchup.hcl")

// TestStoppedPluginEndsRun: the wheel plugin of an out-of-process
// nohz-catchup run is stopped (SIGSTOP) mid-run; the run ends within the call
// deadline with exit status 1 and a message naming the wheel plugin and the
// call it did not answer, and no plugin process is left.
func TestStoppedPluginEndsRun(t *testing.T) {
	const timeout = time.Second
	// A measured span of 3000 s (the default is 10 s) makes the run take
	// about ten seconds of wall time rather than one: with the default the
	// run could end, its last wheel call answered, before a loaded test
	// had found the plugins and stopped the wheel, and the host then exited
	// 0 (seen in a make test on a fresh machine, load 4).
	host, stderr, plugins := startHost(t, 4, "run", nohzCatchup, "--variant", "per_jiffy", "-var", "duration=3000s",
		"--isolation", "process", "--plugin-call-timeout", timeout.String())
	wheel := 0
	for pid, c := range plugins {
		if strings.Contains(c, "plugin serve wheel") {
			wheel = pid
		}
	}
	if wheel == 0 {
		t.Fatalf("no wheel plugin among %v", plugins)
	}
	time.Sleep(20 * time.Millisecond) // mid-run: the run takes about ten seconds
	if err := syscall.Kill(wheel, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// The deadline plus the host's own teardown; generous for a loaded machine.
	code := waitHost(t, host, timeout+20*time.Second, stderr)
	t.Logf("host exited %v after SIGSTOP:\n%s", time.Since(stopped), stderr)
	msg := stderr.String()
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	for _, want := range []string{
		fmt.Sprintf(`wheel plugin "wheel" (pid %d) stopped answering during `, wheel),
		"no answer within 1s",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr does not say %q", want)
		}
	}
	// go-plugin's own report of the kill it did not expect is debug noise.
	if strings.Contains(msg, "plugin process exited") || strings.Contains(msg, "failed to exit gracefully") {
		t.Errorf("stderr repeats go-plugin's reports of the kill:\n%s", msg)
	}
	checkNoneLeft(t, plugins)
}

// TestHostSignalLeavesNoPlugin: SIGTERM, SIGINT or SIGHUP to the host
// mid-run ends the run, which prints its results so far (marked
// incomplete), and no plugin process outlives the host, which exits with
// 128+signal.
func TestHostSignalLeavesNoPlugin(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			// -var duration=3000s: a run of about ten seconds, as in
			// TestStoppedPluginEndsRun, so that the signal comes mid-run.
			host, stderr, plugins := startHost(t, 4, "run", nohzCatchup, "--variant", "per_jiffy", "-var", "duration=3000s", "--isolation", "process")
			time.Sleep(20 * time.Millisecond) // mid-run
			if err := host.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := waitHost(t, host, 20*time.Second, stderr); code != 128+int(sig) {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, 128+int(sig), stderr)
			}
			if !strings.Contains(stderr.String(), "the results printed are incomplete") {
				t.Errorf("stderr = %q, want it to say the results printed are incomplete", stderr)
			}
			checkNoneLeft(t, plugins)
		})
	}
}

// TestStoppedPluginCompareKeepsOthers: in a compare, the run whose wheel
// plugin stops answering fails by its deadline, naming the plugin and call,
// and the other run's results are still written.
func TestStoppedPluginCompareKeepsOthers(t *testing.T) {
	src := strings.NewReplacer("%DUR%", "100ms", "%MACHINE%", "").Replace(processConfig) + `
variable "n" {
  default = 8
}
variant "a" { vars = { n = 8 } }
variant "b" { vars = { n = 4 } }
`
	src = strings.Replace(src, "count  = 8", "count  = var.n", 1)
	file := filepath.Join(t.TempDir(), "two.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	host := exec.Command(os.Args[0], "compare", file, "--seeds", "1", "--jobs", "1", "--isolation", "process",
		"--plugin-call-timeout", "1s", "--format", "csv")
	host.Env = append(os.Environ(), hostEnv+"=1")
	stdout, stderr := &bytes.Buffer{}, &bytes.Buffer{}
	host.Stdout, host.Stderr = stdout, stderr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Process.Kill(); _, _ = host.Process.Wait() })
	// Stop a run's wheel once its plugins run (the wheel, opened first, has
	// then answered its handshake and Configure). Runs out of process take
	// about a second now, so whichever run is caught is the one that fails.
	var wheel int
	for deadline := time.Now().Add(30 * time.Second); wheel == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no wheel plugin process after 30s; stderr:\n%s", stderr)
		}
		kids := processes(func(_, ppid, _ int) bool { return ppid == host.Process.Pid })
		if len(kids) < 3 {
			continue
		}
		for _, pid := range kids {
			if c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(c), "plugin\x00serve\x00wheel") {
				wheel = pid
			}
		}
	}
	if err := syscall.Kill(wheel, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// A liveness bound: after the stopped wheel's deadline (1 s) comes, if
	// the stopped run was the first, the other run, a whole one: about a
	// second on an idle machine, 20 to 60 s at load 10 to 20 under the race
	// detector.
	code := waitHost(t, host, 3*time.Minute, stderr)
	t.Logf("host exited %v after SIGSTOP; stderr:\n%s", time.Since(stopped), stderr)
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	failed, kept := "a", "b"
	if strings.Contains(stderr.String(), "variant b seed 7 failed") {
		failed, kept = "b", "a"
	}
	if want := fmt.Sprintf(`variant %s seed 7 failed: run aborted: wheel plugin "wheel" (pid %d) stopped answering during `, failed, wheel); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q", want)
	}
	if !strings.Contains(stderr.String(), "1 of 2 runs failed") {
		t.Errorf("stderr does not say 1 of 2 runs failed")
	}
	if want := "\nCyclictest/thread=0,max-latency-ns,lower," + kept + ",1,"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout lacks variant %s's completed result (%q):\n%s", kept, want, stdout)
	}
	checkNoneLeft(t, map[int]string{wheel: "wheel"})
}

// TestHostStdoutClosedLeavesNoPlugin: the reader of the host's stdout (a
// trace piped into `head -1`) goes away mid-run; the host fails and no plugin
// process is left.
func TestHostStdoutClosedLeavesNoPlugin(t *testing.T) {
	host := exec.Command(os.Args[0], "run", nohzCatchup, "--variant", "per_jiffy", "--isolation", "process", "--trace", "/dev/stdout")
	host.Env = append(os.Environ(), hostEnv+"=1")
	stderr := &bytes.Buffer{}
	host.Stderr = stderr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Process.Kill(); _, _ = host.Process.Wait() })
	// Read until the run is under way (its plugins all started), then close.
	buf := make([]byte, 4096)
	plugins := map[int]string{}
	for deadline := time.Now().Add(30 * time.Second); len(plugins) < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("plugins %v after 30s; stderr:\n%s", plugins, stderr)
		}
		if _, err := out.Read(buf); err != nil {
			t.Fatalf("reading the trace: %v; stderr:\n%s", err, stderr)
		}
		for _, pid := range processes(func(_, ppid, _ int) bool { return ppid == host.Process.Pid }) {
			plugins[pid] = "plugin"
		}
	}
	_ = out.Close()
	done := make(chan struct{})
	go func() { _ = host.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("host still runs 30s after its stdout was closed; stderr:\n%s", stderr)
	}
	if host.ProcessState.Success() {
		t.Errorf("host exited 0 with its stdout closed mid-trace")
	}
	t.Logf("host: %v; stderr:\n%s", host.ProcessState, stderr)
	checkNoneLeft(t, plugins)
}
