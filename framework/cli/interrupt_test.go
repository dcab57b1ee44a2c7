//go:build linux

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pluginsOf returns the plugin processes the host with pid runs.
func pluginsOf(host int) map[int]string {
	out := map[int]string{}
	for _, pid := range processes(func(_, ppid, _ int) bool { return ppid == host }) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if c := strings.ReplaceAll(string(cmdline), "\x00", " "); strings.Contains(c, "plugin serve") {
			out[pid] = c
		}
	}
	return out
}

// TestCompareSignalWritesFinishedRuns: SIGINT or SIGTERM in the middle of an
// out-of-process comparison, after its first run has finished, kills every
// plugin process (the one signal path), writes the comparison with the
// finished runs and the others marked not finished, and exits 128+signal.
func TestCompareSignalWritesFinishedRuns(t *testing.T) {
	sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}
	if testing.Short() {
		sigs = sigs[:1] // one path for both: one is enough for a quick check
	}
	for _, sig := range sigs {
		t.Run(sig.String(), func(t *testing.T) {
			host := exec.Command(os.Args[0], "compare", nohzCatchup, "--variants", "per_jiffy,next_expiry", "--seeds", "20",
				"--jobs", "1", "--isolation", "process", "--format", "json", "--log-level", "info", "--log-format", "json")
			host.Env = append(os.Environ(), hostEnv+"=1")
			var stdout bytes.Buffer
			stderr := &syncBuffer{}
			host.Stdout, host.Stderr = &stdout, stderr
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = host.Process.Kill()
				_, _ = host.Process.Wait()
			})
			// Signal once the first run has finished (it logs so at info),
			// while the second runs: its plugins are the ones to be killed.
			deadline := time.Now().Add(60 * time.Second)
			var plugins map[int]string
			for {
				plugins = pluginsOf(host.Process.Pid)
				if strings.Contains(stderr.String(), `"message":"run finished"`) && len(plugins) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no run finished after 60s; stderr:\n%s", stderr.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := host.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := waitHostStatus(t, host, 30*time.Second, stderr); code != 128+int(sig) {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, 128+int(sig), stderr.String())
			}
			var doc struct {
				Failures []struct {
					Variant, Error string
					Seed           uint64
				} `json:"failures"`
				Interrupted int `json:"interrupted"`
				Metrics     []json.RawMessage
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatalf("stdout is not the comparison's JSON: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			if doc.Interrupted < 1 || doc.Interrupted >= 40 || len(doc.Metrics) == 0 {
				t.Errorf("interrupted = %d of 40, %d metrics; want some runs finished (with metrics) and the rest marked", doc.Interrupted, len(doc.Metrics))
			}
			for _, f := range doc.Failures {
				if f.Error != "not finished: tickemu was interrupted" {
					t.Errorf("failure %s/%d: %q, want it marked not finished", f.Variant, f.Seed, f.Error)
				}
			}
			for _, want := range []string{"stopping; the runs that finished are written", "compare interrupted by"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
				}
			}
			checkNoneLeft(t, plugins)
		})
	}
}

// syncBuffer is a bytes.Buffer the test reads while the host writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitHostStatus waits up to limit for the host to exit and returns its status.
func waitHostStatus(t *testing.T, host *exec.Cmd, limit time.Duration, stderr *syncBuffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- host.Wait() }()
	select {
	case <-done:
		return host.ProcessState.ExitCode()
	case <-time.After(limit):
		t.Fatalf("host still runs %v later; stderr:\n%s", limit, stderr.String())
		return -1
	}
}

// TestRunSignalPrintsPartialResults: SIGINT in the middle of `tickemu run`
// stops the simulation, not the process: the results so far are printed,
// marked INCOMPLETE as at --max-wall, and the status is 130. Linked in and
// with every plugin out of process (--isolation process): the plugins are
// not killed before the run has ended (they are in process groups of their
// own, so a terminal's Ctrl-C reaches the host alone), the run prints its
// partial results all the same, and no plugin process outlives the host.
func TestRunSignalPrintsPartialResults(t *testing.T) {
	for _, isolation := range []string{"inprocess", "process"} {
		t.Run(isolation, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "long.hcl")
			// 100000 s of simulated time: minutes of wall time even without
			// the race detector (1000 s took about 2 s and ended before the
			// estimate came).
			src := "machine { cpus = 2 }\nrun { duration = \"100000s\" }\nworkload \"cyclictest\" \"c\" {\n  interval = \"1ms\"\n}\n"
			if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			host := exec.Command(os.Args[0], "run", cfg, "--isolation", isolation)
			host.Env = append(os.Environ(), hostEnv+"=1")
			var stdout bytes.Buffer
			stderr := &syncBuffer{}
			host.Stdout, host.Stderr = &stdout, stderr
			// The host leads a process group, as a shell's foreground job
			// does: the SIGINT goes to the whole group, as a terminal's
			// Ctrl-C would.
			host.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = host.Process.Kill()
				_, _ = host.Process.Wait()
			})
			// The wall-time estimate comes a second into the simulation:
			// the handler is in place by then, and the plugins run.
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(stderr.String(), "this run simulates") {
				if time.Now().After(deadline) {
					t.Fatalf("no wall estimate after 60s; stderr:\n%s", stderr.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			plugins := pluginsOf(host.Process.Pid)
			if isolation == "process" && len(plugins) == 0 {
				t.Fatal("--isolation process runs no plugin process")
			}
			if err := syscall.Kill(-host.Process.Pid, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if code := waitHostStatus(t, host, 30*time.Second, stderr); code != 130 {
				t.Errorf("exit status %d, want 130; stderr:\n%s", code, stderr.String())
			}
			for _, want := range []string{"# INCOMPLETE: ", "== workload cyclictest"} {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout does not hold %q:\n%s\nstderr:\n%s", want, stdout.String(), stderr.String())
				}
			}
			for _, want := range []string{"stopping; the results so far are printed, marked INCOMPLETE", "(interrupted): the results printed are incomplete"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
				}
			}
			checkNoneLeft(t, plugins)
		})
	}
}
