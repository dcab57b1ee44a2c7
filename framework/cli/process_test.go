package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/resultfmt"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// recordingOpener remembers the instances a run opens, so a test can see (and
// kill) the plugin processes.
type recordingOpener struct {
	experiment.Opener
	mu   sync.Mutex
	open []experiment.Instance
}

func (r *recordingOpener) Open(kind sdk.Kind, name, iso string) (experiment.Instance, error) {
	in, err := r.Opener.Open(kind, name, iso)
	if err == nil {
		r.mu.Lock()
		r.open = append(r.open, in)
		r.mu.Unlock()
	}
	return in, err
}

func (r *recordingOpener) pids() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, in := range r.open {
		if i, ok := in.(instance); ok && i.Pid() > 0 {
			out = append(out, i.Pid())
		}
	}
	return out
}

const processConfig = `
machine {
  cpus = 2
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "2us"
  }
  idle_state "C6" {
    exit_latency     = "133us"
    target_residency = "600us"
  }
}
governor {
  plugin = "teo"
}
workload "cyclictest" "rt" {
  threads     = 2
  priority    = 99
  dma_latency = false
}
workload "hrtimer_load" "load" {
  count  = 8
  period = "50us"
}
run {
  duration = "%DUR%"
  seed     = 7
}
`

func loadInline(t *testing.T, src string) *config.Spec {
	t.Helper()
	spec, diags := config.LoadBytes("inline.hcl", []byte(src), config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return spec
}

// TestProcessIsolationIdentical: the same spec and seed give byte-identical
// JSON and traces whether the plugins run in process or in their own
// processes, and the plugin processes exist while the run uses them; in
// high-res and in low-res mode (where idle entry asks the wheel and the
// hrtimer plugin together, concurrently out of process).
func TestProcessIsolationIdentical(t *testing.T) {
	for _, tc := range []struct{ name, machine string }{
		{"highres", ""},
		{"lowres", "highres = false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(strings.ReplaceAll(processConfig, "%DUR%", "8ms"), "cpus = 2", "cpus = 2\n  "+tc.machine, 1)
			spec := loadInline(t, src)
			var c common
			op, closeOp, err := New().newOpener(&c, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			defer closeOp()
			var out, traces [2]bytes.Buffer
			for i, iso := range []string{"inprocess", "process"} {
				rec := &recordingOpener{Opener: op}
				res, err := experiment.Run(spec, experiment.Options{Opener: rec, Isolation: iso, Trace: &traces[i]})
				if err != nil {
					t.Fatalf("Run(isolation=%s): %v", iso, err)
				}
				if err := resultfmt.WriteJSON(&out[i], res); err != nil {
					t.Fatal(err)
				}
				if iso == "process" && len(rec.pids()) != 4 {
					t.Errorf("isolation=process started %d plugin processes, want 4 (wheel, hrtimer, lapic, governor)", len(rec.pids()))
				}
			}
			if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
				t.Errorf("results differ between isolation=inprocess (%d bytes) and isolation=process (%d bytes)", out[0].Len(), out[1].Len())
			}
			if traces[0].Len() == 0 || !bytes.Equal(traces[0].Bytes(), traces[1].Bytes()) {
				t.Errorf("traces differ between isolation=inprocess (%d bytes) and isolation=process (%d bytes)", traces[0].Len(), traces[1].Len())
			}
		})
	}
}

// TestPluginKilledMidRun: SIGKILL to a plugin process ends the run promptly
// with an error that names the plugin and how it exited.
func TestPluginKilledMidRun(t *testing.T) {
	spec := loadInline(t, strings.ReplaceAll(processConfig, "%DUR%", "60s"))
	var c common
	op, closeOp, err := New().newOpener(&c, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer closeOp()
	rec := &recordingOpener{Opener: op}
	done := make(chan error, 1)
	go func() {
		_, err := experiment.Run(spec, experiment.Options{Opener: rec, Isolation: "process"})
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(rec.pids()) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("plugin processes did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	victim := rec.pids()[1] // the hrtimer plugin
	// Kill it mid-run, not during start-up: once it has spent CPU time
	// serving calls (utime+stime in /proc/PID/stat, in clock ticks).
	for cpuTicks(victim) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the hrtimer plugin process served no calls")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case err := <-done:
		var te *sdk.TransportError
		if !errors.As(err, &te) {
			t.Fatalf("Run after SIGKILL = %v, want a *sdk.TransportError", err)
		}
		msg := te.Error()
		for _, want := range []string{"hrtimer", "signal: killed", strconv.Itoa(victim)} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not mention %q", msg, want)
			}
		}
		t.Logf("run ended %v after the kill: %v", time.Since(killed).Round(time.Millisecond), msg)
	case <-time.After(20 * time.Second):
		t.Fatal("run did not end within 20 s of its plugin being killed")
	}
	// go-plugin reaps the killed process: no zombie is left behind.
	for reap := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, _, _, ok := procStat(victim); !ok {
			break
		}
		if time.Now().After(reap) {
			st, _, _, _ := procStat(victim)
			t.Fatalf("killed plugin %d still in the process table (state %c) 5 s after the run ended", victim, st)
		}
	}
}

// cpuTicks is pid's user+system CPU time in clock ticks (/proc/PID/stat
// fields 14 and 15), 0 if pid does not exist.
func cpuTicks(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	k, _ := strconv.Atoi(f[12])
	return u + k
}

// TestShippedScenariosIdentical: the shipped scenarios the round-trip target
// is about (default.hcl under each governor, with the KVM guest's drawn
// interrupt latencies and EOI costs, which the lapic's declared model draws
// on the host too; nohz-catchup.hcl), hang-timermix.hcl (one CPU's long
// hrtimer interrupts overlap the other's starts, which the model answers)
// and the timer placement ones (timer-migration.hcl push and pull), where the
// hrtimer and wheel plugins' declared models answer most calls out of
// process, give the same bytes of results and trace in and out of process
// (in process the builtins run unchecked, as vetted; in their own processes
// behind the contract checker).
func TestShippedScenariosIdentical(t *testing.T) {
	for _, tc := range []struct {
		file, variant string
		dur           time.Duration
		from          ktime.Time
	}{
		{"default.hcl", "menu", 30 * time.Millisecond, 0},
		{"default.hcl", "always_stop", 30 * time.Millisecond, 0},
		{"nohz-catchup.hcl", "per_jiffy", 30 * time.Millisecond, ktime.Time(295 * ktime.Second)},
		{"hang-timermix.hcl", "", 20 * time.Millisecond, 0},
		// Timer placement: get_nohz_timer_target() pushes, the 6.9+
		// hierarchy's remote expiries (ExpireRemote over the wire).
		{"timer-migration.hcl", "push", 60 * time.Millisecond, 0},
		{"timer-migration.hcl", "pull", 60 * time.Millisecond, 0},
	} {
		t.Run(tc.file+"/"+tc.variant, func(t *testing.T) {
			spec, diags := config.Load(filepath.Join("..", "..", "configs", tc.file), config.Options{Variant: tc.variant})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			spec.Run.Duration = tc.dur.Nanoseconds()
			var c common
			op, closeOp, err := New().newOpener(&c, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			defer closeOp()
			var out, traces [2]bytes.Buffer
			for i, iso := range []string{"inprocess", "process"} {
				res, err := experiment.Run(spec, experiment.Options{Opener: op, Isolation: iso, Trace: &traces[i], TraceFrom: tc.from})
				if err != nil {
					t.Fatalf("Run(isolation=%s): %v", iso, err)
				}
				if err := resultfmt.WriteJSON(&out[i], res); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
				t.Errorf("results differ between isolation=inprocess (%d bytes) and isolation=process (%d bytes)", out[0].Len(), out[1].Len())
			}
			if traces[0].Len() == 0 || !bytes.Equal(traces[0].Bytes(), traces[1].Bytes()) {
				t.Errorf("traces differ between isolation=inprocess (%d bytes) and isolation=process (%d bytes)", traces[0].Len(), traces[1].Len())
			}
		})
	}
}

// TestShippedConfigsChecked runs every shipped config (configs/*.hcl, each
// variant, briefly) with the builtins checked on every call (--check-builtins), so a
// builtin that breaks the plugin contract on a shipped scenario fails the
// tests, and without (as tickemu runs them): the results and the trace are
// the same bytes, the checker only watches.
func TestShippedConfigsChecked(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "configs", "*.hcl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	op := experiment.InProcess(builtins)
	for _, f := range files {
		spec, diags := config.Load(f, config.Options{})
		if diags.HasErrors() {
			t.Fatalf("%s: %v", f, diags)
		}
		for _, v := range append([]string{""}, spec.Variants()...) {
			t.Run(filepath.Base(f)+"/"+v, func(t *testing.T) {
				spec, diags := config.Load(f, config.Options{Variant: v})
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				// 20 ms, or BenchmarkScenarios's shorter time (the 64-CPU
				// lkp-timer-64's trace is long).
				d, ok := scenarioBenchDuration[filepath.Base(f)]
				if !ok {
					t.Fatalf("%s has no entry in scenarioBenchDuration", f)
				}
				if d == 0 || d > 20*time.Millisecond {
					d = 20 * time.Millisecond
				}
				spec.Run.Duration = min(spec.Run.Duration, d.Nanoseconds())
				var out, traces [2]bytes.Buffer
				for i, check := range []bool{true, false} {
					res, err := experiment.Run(spec, experiment.Options{Opener: op, CheckBuiltins: check, Trace: &traces[i]})
					if err != nil {
						t.Fatalf("Run(CheckBuiltins=%v): %v", check, err)
					}
					if err := resultfmt.WriteJSON(&out[i], res); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) || !bytes.Equal(traces[0].Bytes(), traces[1].Bytes()) {
					t.Errorf("results (%d, %d bytes) or traces (%d, %d bytes) differ with the builtins checked and not",
						out[0].Len(), out[1].Len(), traces[0].Len(), traces[1].Len())
				}
			})
		}
	}
}

// TestProcessIsolationIdenticalRCU: the RCU model (grace periods, its
// process_timeout timer, the ticks its callbacks keep), driven by a replayed
// 3.10 capture, gives byte-identical results and traces in process and out
// of process.
func TestProcessIsolationIdenticalRCU(t *testing.T) {
	spec := loadInline(t, `
kernel {
  version = "3.10"
}
workload "replay" "cap" {
  capture = "../replay/testdata/captures/lttng-bug446190-3.10.txt"
}
run {
  duration = "1500ms"
}
`)
	var c common
	op, closeOp, err := New().newOpener(&c, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer closeOp()
	var out, traces [2]bytes.Buffer
	for i, iso := range []string{"inprocess", "process"} {
		res, err := experiment.Run(spec, experiment.Options{Opener: op, Isolation: iso, Trace: &traces[i]})
		if err != nil {
			t.Fatalf("Run(isolation=%s): %v", iso, err)
		}
		if gp := res.Total("rcu_grace_periods"); gp == 0 {
			t.Fatalf("isolation=%s: no RCU grace period ran", iso)
		}
		if err := resultfmt.WriteJSON(&out[i], res); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
		t.Errorf("results differ between isolation=inprocess (%d bytes) and isolation=process (%d bytes)", out[0].Len(), out[1].Len())
	}
	if traces[0].Len() == 0 || !bytes.Equal(traces[0].Bytes(), traces[1].Bytes()) {
		t.Errorf("traces differ between isolation=inprocess (%d bytes) and isolation=process (%d bytes)", traces[0].Len(), traces[1].Len())
	}
}
