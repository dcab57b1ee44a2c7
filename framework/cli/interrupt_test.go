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

// TestCompareSignalWritesFinishedRuns: SIGINT or SIGTERM to the process
// group of `tickemu compare` (as a terminal's Ctrl-C), after its first run
// has finished, stops the comparison, not the process: the run under way
// ends after its current event with its partial results, written marked
// INCOMPLETE; the finished runs are written as usual, those not started
// marked; the status is 128+signal. Linked in and with every plugin out of
// process (--isolation process, the plugins kept up until their run ends),
// a comparison and a sweep (compare --sweep, in text); no plugin process
// outlives the host.
func TestCompareSignalWritesFinishedRuns(t *testing.T) {
	type tc struct {
		name      string
		sig       syscall.Signal
		isolation string
		args      []string // after the file
		// wantOut is what the text output holds (nil: JSON, checked by
		// checkInterruptedJSON); wantErr what stderr says.
		wantOut, wantErr []string
	}
	jsonArgs := []string{"--variants", "per_jiffy,next_expiry", "--seeds", "20", "--format", "json"}
	compareErr := []string{"stopping after each run's current event; the runs that finished are written, those stopped marked INCOMPLETE",
		"compare interrupted by", "1 stopped early (their partial results written, marked INCOMPLETE)"}
	sweep := tc{"sweep-process", syscall.SIGINT, "process", []string{"--no-variants", "--sweep", "hz=100,250,1000", "--seeds", "5", "--format", "text"},
		[]string{"INCOMPLETE: interrupted; ", "\nINCOMPLETE hz=", ": interrupted: stopped at ", "  BenchmarkKernel/hz="}, compareErr}
	cases := []tc{
		{"inprocess", syscall.SIGINT, "inprocess", jsonArgs, nil, compareErr},
		{"process", syscall.SIGINT, "process", jsonArgs, nil, compareErr},
		sweep,
	}
	if !testing.Short() {
		// One path for both signals: one is enough for a quick check.
		cases = append(cases, tc{"process-SIGTERM", syscall.SIGTERM, "process", jsonArgs, nil, compareErr})
		sweep.name, sweep.isolation = "sweep-inprocess", "inprocess"
		cases = append(cases, sweep)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"compare", nohzCatchup, "--jobs", "1", "--isolation", c.isolation, "--log-level", "debug", "--log-format", "json"}, c.args...)
			stdout, stderr, plugins := signalCompare(t, args, c.sig, c.isolation == "process")
			if c.wantOut == nil {
				checkInterruptedJSON(t, stdout, stderr)
			}
			for _, want := range c.wantOut {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout does not hold %q:\n%s\nstderr:\n%s", want, stdout, stderr)
				}
			}
			for _, want := range c.wantErr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr)
				}
			}
			checkNoneLeft(t, plugins)
		})
	}
}

// TestShardSignalKeepsRuns: Ctrl-C on `tickemu compare --shard` keeps
// every run as the unsharded comparison does: the shard file is written,
// says it was interrupted, holds the finished runs' results, the run under
// way's partial results (marked incomplete) and the runs not started
// (marked interrupted); stderr says so and the status is 130. `tickemu
// merge` of that file prints what the interrupted comparison prints (the
// JSON checkInterruptedJSON reads; the text with its INCOMPLETE header and
// partial bench lines), names the file as incomplete and what it lacks, and
// exits 1.
func TestShardSignalKeepsRuns(t *testing.T) {
	stdout, stderr, _ := signalCompare(t, []string{"compare", nohzCatchup, "--jobs", "1", "--variants", "per_jiffy,next_expiry", "--seeds", "20",
		"--shard", "1/1", "--log-level", "debug", "--log-format", "json"}, syscall.SIGINT, false)
	var sf struct {
		Interrupted string
		Cells       []struct {
			Interrupted bool
			Incomplete  *struct{ Reason string }
			Metrics     []json.RawMessage
			Bench       []string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &sf); err != nil {
		t.Fatalf("stdout is not a shard file: %v\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	finished, stopped, notStarted := 0, 0, 0
	for _, c := range sf.Cells {
		switch {
		case c.Incomplete != nil && c.Interrupted && c.Incomplete.Reason == "interrupted" && len(c.Metrics) > 0 && len(c.Bench) > 0:
			stopped++
		case c.Interrupted && c.Incomplete == nil && len(c.Metrics) == 0:
			notStarted++
		case !c.Interrupted && c.Incomplete == nil && len(c.Metrics) > 0:
			finished++
		default:
			t.Errorf("a cell neither finished, stopped early with its partial results nor not started: %+v", c)
		}
	}
	if sf.Interrupted != "interrupt" || len(sf.Cells) != 40 || finished == 0 || stopped != 1 || notStarted == 0 {
		t.Errorf("shard file: interrupted %q, %d cells: %d finished, %d stopped early, %d not started; want \"interrupt\", 40 cells, some finished, 1 stopped early with partial results, the rest not started",
			sf.Interrupted, len(sf.Cells), finished, stopped, notStarted)
	}
	for _, want := range []string{"stopping after each run's current event; the runs that finished are written, those stopped marked INCOMPLETE",
		fmt.Sprintf("shard 1/1 interrupted by interrupt: %d of 40 runs finished; 1 stopped early (their partial results kept, marked INCOMPLETE), %d not started; the file written is marked incomplete", finished, notStarted)} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}

	shard := filepath.Join(t.TempDir(), "shard-1.json")
	if err := os.WriteFile(shard, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	js, mergeErr := runCLI(t, 1, "merge", "--format", "json", shard)
	checkInterruptedJSON(t, js, mergeErr)
	text, mergeErr := runCLI(t, 1, "merge", shard)
	for _, want := range []string{fmt.Sprintf("INCOMPLETE: interrupted; %d of 40 runs did not finish", 1+notStarted), "\nINCOMPLETE ", "  BenchmarkCyclictest/"} {
		if !strings.Contains(text, want) {
			t.Errorf("merge's text does not hold %q:\n%s", want, text)
		}
	}
	for _, want := range []string{fmt.Sprintf("%s (shard 1 of 1) is incomplete: interrupted by interrupt, %d of its 40 runs finished; 1 stopped early", shard, finished),
		"the comparison is INCOMPLETE: for the whole of it run shard 1 again"} {
		if !strings.Contains(mergeErr, want) {
			t.Errorf("merge's stderr does not say %q:\n%s", want, mergeErr)
		}
	}
}

// TestRunSweepSignalPrintsPartialResults: `tickemu run --sweep` stops as
// compare does: the points that finished are printed, the one under way
// printed marked INCOMPLETE (# INCOMPLETE:), status 130, no plugin left.
func TestRunSweepSignalPrintsPartialResults(t *testing.T) {
	for _, isolation := range []string{"inprocess", "process"} {
		t.Run(isolation, func(t *testing.T) {
			stdout, stderr, plugins := signalCompare(t, []string{"run", nohzCatchup, "--sweep", "hz=100,250,1000,300,500", "--isolation", isolation,
				"--log-level", "debug", "--log-format", "json"}, syscall.SIGINT, isolation == "process")
			for _, want := range []string{"# INCOMPLETE: interrupted: stopped at ", "== workload cyclictest"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout does not hold %q:\n%s\nstderr:\n%s", want, stdout, stderr)
				}
			}
			for _, want := range []string{"stopping after the current event; the points that finished are printed, the one stopped marked INCOMPLETE",
				"sweep interrupted by interrupt:", "1 stopped early (printed, marked INCOMPLETE)"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr)
				}
			}
			checkNoneLeft(t, plugins)
		})
	}
}

// signalCompare starts the host with args leading a process group, sends
// sig to the group once the first run has finished and the second has
// started (they log so at debug; --jobs 1) with its plugin processes up
// when process is set,
// checks the status is 128+sig and returns the host's output and the
// plugin processes it ran.
func signalCompare(t *testing.T, args []string, sig syscall.Signal, process bool) (string, string, map[int]string) {
	host := exec.Command(os.Args[0], args...)
	host.Env = append(os.Environ(), hostEnv+"=1")
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	host.Stdout, host.Stderr = &stdout, stderr
	host.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.Process.Kill()
		_, _ = host.Process.Wait()
	})
	deadline := time.Now().Add(60 * time.Second)
	var plugins map[int]string
	for {
		plugins = pluginsOf(host.Process.Pid)
		log := stderr.String()
		if strings.Contains(log, `"message":"run finished"`) && strings.Count(log, `"message":"run started"`) >= 2 && (len(plugins) > 0 || !process) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no run finished after 60s; stderr:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := syscall.Kill(-host.Process.Pid, sig); err != nil {
		t.Fatal(err)
	}
	if code := waitHostStatus(t, host, 30*time.Second, stderr); code != 128+int(sig) {
		t.Errorf("exit status %d, want %d; stderr:\n%s", code, 128+int(sig), stderr.String())
	}
	return stdout.String(), stderr.String(), plugins
}

// checkInterruptedJSON checks an interrupted comparison's JSON: some runs
// finished (with metrics), the one under way is among incomplete_runs with
// its partial metrics, and every other run is marked not finished.
func checkInterruptedJSON(t *testing.T, stdout, stderr string) {
	t.Helper()
	var doc struct {
		Failures []struct {
			Variant, Error string
			Seed           uint64
			Interrupted    bool
		} `json:"failures"`
		Interrupted    int `json:"interrupted"`
		Metrics        []json.RawMessage
		IncompleteRuns []struct {
			Incomplete struct{ Reason string }
			Metrics    []json.RawMessage
		} `json:"incomplete_runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not the comparison's JSON: %v\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if doc.Interrupted < 1 || doc.Interrupted >= 40 || len(doc.Metrics) == 0 {
		t.Errorf("interrupted = %d of 40, %d metrics; want some runs finished (with metrics) and the rest marked", doc.Interrupted, len(doc.Metrics))
	}
	if len(doc.IncompleteRuns) != 1 || doc.IncompleteRuns[0].Incomplete.Reason != "interrupted" || len(doc.IncompleteRuns[0].Metrics) == 0 {
		t.Errorf("incomplete_runs %+v: want the run under way, interrupted, with its metrics", doc.IncompleteRuns)
	}
	for _, f := range doc.Failures {
		if !f.Interrupted || (f.Error != "not finished: tickemu was interrupted" && !strings.HasPrefix(f.Error, "INCOMPLETE: interrupted: stopped at ")) {
			t.Errorf("failure %s/%d: %q, want it marked not finished or INCOMPLETE", f.Variant, f.Seed, f.Error)
		}
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
