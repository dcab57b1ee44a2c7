package replayrun_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/replayrun"
	"github.com/tickemu/tickemu/framework/workload"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// shippedDurations are the simulated spans TestShippedConfigsRoundTrip runs
// each shipped configuration for (no warm-up): long enough for every timer
// the configuration arms at a short period, short enough for the trace of
// 64 CPUs.
var shippedDurations = map[string]int64{
	"lkp-timer-64.hcl":  5_000_000,
	"posix-signals.hcl": 20_000_000,
}

const defaultShippedDuration = 100_000_000

// shippedGaps are the rows a replay of tickemu's own trace does not
// reproduce yet, per configuration, with the reason; every other row of
// every shipped configuration is held to 5%.
var shippedGaps = map[string]struct {
	rows   []string
	reason string
}{
	// The model's kernel arms sched_tick_remote()'s delayed work for every
	// nohz_full CPU itself (kernel/sched/core.c, sched_tick_start()), and
	// the replay arms the trace's copy of it too.
	"nohz-full.hcl": {[]string{"timer:delayed_work_timer_fn "}, "sched_tick_remote's delayed work armed by the model and replayed"},
	// The same, and the background timer_list timer re-armed while still
	// queued in the model (8 re-arms against none).
	"timer-migration.hcl": {[]string{"timer:delayed_work_timer_fn ", "timer:background re-arms"},
		"sched_tick_remote's delayed work armed by the model and replayed; background timer re-armed while queued"},
}

func gap(cfg, row string) bool {
	for _, p := range shippedGaps[cfg].rows {
		if strings.HasPrefix(row, p) {
			return true
		}
	}
	return false
}

// TestShippedConfigsRoundTrip runs every configs/*.hcl briefly with its
// trace (every event, as `tickemu run F --trace t.txt` writes it), then
// replays the trace on the same file's machine, plugins and kernel block
// (its workload and run blocks left out, as `tickemu replay t.txt --config`
// wants them): the tick's rows (expiries, stops) and every callback's
// starts, expiries, re-arms and cancels agree within 5% (and within one for
// counts under 20), so what held the tick or placed a timer in the run
// (cyclictest's PM QoS request, the trace's pm_qos events) survives the
// replay. shippedGaps lists the rows it does not reproduce yet.
func TestShippedConfigsRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../../configs/*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped configs: %v", err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			out := roundTripShipped(t, file, name)
			for ev, n := range out.Capture.Stats.Unknown {
				if !replayIgnores(ev) {
					t.Errorf("%s: the replay skipped %d of the model's own %q events as unknown", name, n, ev)
				}
			}
			var b bytes.Buffer
			out.Write(&b, name)
			for _, r := range replayTable(out) {
				if r.NA || r.Duration || strings.HasPrefix(r.Name, "idle ticks kept") || r.Name == "tick arms > 1 tick ahead" {
					continue
				}
				if gap(name, r.Name) {
					continue
				}
				if !within(r.Capture, r.Model) {
					t.Errorf("%s: %s: run %d, replay %d (more than 5%% apart)", name, r.Name, r.Capture, r.Model)
				}
			}
			if t.Failed() {
				t.Logf("\n%s", b.String())
			}
		})
	}
}

// replayIgnored are the events of the model's trace that the replay's
// importer skips (counted as unknown): what it replays comes from the timer,
// scheduling, idle and PM QoS events, not from syscalls (sys_enter_* and
// sys_exit_*, their names as the syscall tracer prints them), the function
// tracer's lines (named by their callee: "posixtimer_rearm <-dequeue_signal"),
// itimers or signals. Any other event of the model's own trace (cpu_idle
// among them) must be decoded.
var replayIgnored = map[string]bool{"posixtimer_rearm": true, "posixtimer_deliver_signal": true,
	"itimer_state": true, "itimer_expire": true, "signal_generate": true, "signal_deliver": true}

func replayIgnores(ev string) bool {
	return replayIgnored[ev] || strings.HasPrefix(ev, "sys_")
}

func within(a, b int64) bool {
	d := math.Abs(float64(a - b))
	return d <= 1 && max(a, b) < 20 || d <= 0.05*float64(max(a, b))
}

// roundTripShipped runs file briefly with its trace and replays the trace
// on file without its workload and run blocks.
func roundTripShipped(t *testing.T, file, name string) *replayrun.Outcome {
	t.Helper()
	dir := t.TempDir()
	spec, diags := config.Load(file, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	spec.Run.Warmup = 0
	spec.Run.Duration = defaultShippedDuration
	if d, ok := shippedDurations[name]; ok {
		spec.Run.Duration = d
	}
	tracePath := filepath.Join(dir, "trace.txt")
	f, err := os.Create(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories()), Trace: f}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	hf, d := hclwrite.ParseConfig(src, file, hcl.InitialPos)
	if d.HasErrors() {
		t.Fatal(d)
	}
	for _, bl := range hf.Body().Blocks() {
		if bl.Type() == "workload" || bl.Type() == "run" {
			hf.Body().RemoveBlock(bl)
		}
	}
	machineFile := filepath.Join(dir, name)
	// A machine profile is named relative to configs/ (default.hcl
	// includes profiles/kvm-guest.hcl): the copy names it absolutely.
	profiles, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	src = bytes.ReplaceAll(hf.Bytes(), []byte(`"../profiles/`), []byte(`"`+profiles+`/`))
	if err := os.WriteFile(machineFile, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cp, err := workload.ScanCapture(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	rsrc, rname, err := replayrun.Config(machineFile, tracePath, cp)
	if err != nil {
		t.Fatal(err)
	}
	rspec, diags := config.LoadBytes(rname, rsrc, config.Options{})
	if diags.HasErrors() {
		t.Fatal(fmt.Errorf("%s: %v", rname, diags))
	}
	out, err := replayrun.Run(tracePath, cp, rspec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
