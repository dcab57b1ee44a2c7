package replayrun_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/replay"
	"github.com/tickemu/tickemu/framework/replayrun"
	"github.com/tickemu/tickemu/framework/traceimport"
	"github.com/tickemu/tickemu/framework/workload"
	"github.com/tickemu/tickemu/plugins/builtin"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// captures are the committed captures: the real ones (with provenance in
// their README) and the hand-written ones of the workload's tests.
var captures = []string{
	"../replay/testdata/captures/kernel-doc-wakeup-rt-events.txt",
	"../replay/testdata/captures/lkml-nohz-tick-stop-6.11.txt",
	"../replay/testdata/captures/lttng-bug446190-3.10.txt",
	"../replay/testdata/captures/lttng-scp-vm-3.6.txt",
	"../workload/testdata/replay-small.txt",
	"../traceimport/testdata/babeltrace.txt",
}

// versioned are real captures replayed a second time with the strategy
// settings of the kernel that recorded them (`tickemu replay
// --kernel-version`), into NAME.kVERSION.golden.
var versioned = []struct{ capture, version string }{
	{"../replay/testdata/captures/lttng-bug446190-3.10.txt", "3.10"},
	{"../replay/testdata/captures/lttng-scp-vm-3.6.txt", "3.10"}, // 3.10: the oldest release modelled
}

// TestGolden replays every committed capture with the default machine and
// plugins (and the versioned ones with their kernel's settings) and compares
// `tickemu replay`'s output (capture and model side by side) with
// NAME.golden next to the capture; -update rewrites them. The same replay
// twice gives the same bytes.
func TestGolden(t *testing.T) {
	type run struct{ capture, version, kallsyms string }
	var runs []run
	for _, c := range captures {
		runs = append(runs, run{c, "", ""})
	}
	for _, v := range versioned {
		runs = append(runs, run{v.capture, v.version, ""})
	}
	// An LTTng capture's callbacks named by a (synthetic) kallsyms file,
	// as `tickemu replay --kallsyms`.
	runs = append(runs, run{"../replay/testdata/captures/lttng-scp-vm-3.6.txt", "", "../replay/testdata/captures/lttng-scp-vm-3.6.kallsyms"})
	for _, r := range runs {
		c := r.capture
		golden := strings.TrimSuffix(c, ".txt") + ".golden"
		switch {
		case r.version != "":
			golden = strings.TrimSuffix(c, ".txt") + ".k" + r.version + ".golden"
		case r.kallsyms != "":
			golden = strings.TrimSuffix(c, ".txt") + ".kallsyms.golden"
		}
		t.Run(filepath.Base(golden), func(t *testing.T) {
			got := replayOnce(t, c, r.version, r.kallsyms)
			if again := replayOnce(t, c, r.version, r.kallsyms); !bytes.Equal(got, again) {
				t.Fatalf("two replays differ:\n%s\n%s", got, again)
			}
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("replay of %s differs from %s:\n%s", c, golden, got)
			}
		})
	}
}

func replayOnce(t *testing.T, path, kernelVersion, kallsyms string) []byte {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := workload.ScanCapture(abs)
	if err != nil {
		t.Fatal(err)
	}
	src, name, err := replayrun.Config("", abs, cp)
	if err != nil {
		t.Fatal(err)
	}
	spec, diags := config.LoadBytes(name, src, config.Options{KernelVersion: kernelVersion})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	out, err := replayrun.Run(abs, cp, spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
	if err != nil {
		t.Fatal(err)
	}
	if kallsyms != "" {
		if out.Kallsyms, err = traceimport.ReadKallsyms(kallsyms); err != nil {
			t.Fatal(err)
		}
		out.KallsymsFile = filepath.Base(kallsyms)
	}
	var b bytes.Buffer
	if err := out.Write(&b, filepath.Base(path)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// machine is the machine of roundTripConfig, for the replay's --config.
const machine = `
machine {
  cpus    = 4
  hz      = 1000
  nohz    = "idle"
  highres = true
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "2us"
  }
}
`

// roundTripConfig is configs/default.hcl's machine and cyclictest threads,
// with the background wheel timers.
const roundTripConfig = machine + `
workload "cyclictest" "rt" {
  threads  = 4
  interval = "1000us"
  distance = "500us"
  priority = 99
}
workload "kernel_timers" "watchdog" {
  period = "40ms"
}
run {
  duration = "200ms"
}
`

// TestRoundTrip replays tickemu's own trace of a run on the same machine:
// the trace states the PM QoS request cyclictest held (pm_qos_add_request,
// pm_qos_update_target), which the replay holds from then on, and the
// capture's and the model's counts agree on every row. This checks that the
// importer, the counting rules and the workload invert the model's tracing.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "trace.txt")
	f, err := os.Create(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	spec, diags := config.LoadBytes("roundtrip.hcl", []byte(roundTripConfig), config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories()), Trace: f,
		TraceEvents: "hrtimer_*,timer_*,tick_stop,sched_switch,sched_wakeup,pm_qos_*"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	machineFile := filepath.Join(dir, "machine.hcl")
	if err := os.WriteFile(machineFile, []byte(machine), 0o644); err != nil {
		t.Fatal(err)
	}
	cp, err := workload.ScanCapture(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	src, name, err := replayrun.Config(machineFile, tracePath, cp)
	if err != nil {
		t.Fatal(err)
	}
	rspec, diags := config.LoadBytes(name, src, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	out, err := replayrun.Run(tracePath, cp, rspec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	out.Write(&b, "trace.txt")
	if out.CaptureScore.Tick.Expiries < 700 || out.CaptureScore.Funcs["hrtimer_wakeup"] == nil {
		t.Fatalf("the run traced too little to check:\n%s", b.String())
	}
	for _, r := range replayTable(out) {
		d := r.Model - r.Capture
		// The last sleeper the model starts may fall just past the scored span.
		if d != 0 && !(strings.HasSuffix(r.Name, " starts") && (d == -1 || d == 1)) {
			t.Errorf("%s: capture %d, model %d\n%s", r.Name, r.Capture, r.Model, b.String())
		}
	}
}

func replayTable(o *replayrun.Outcome) []replay.Row {
	return replay.Table(o.CaptureScore, o.ModelScore, false, !o.Capture.OffsetKnown)
}

// TestCatchupExample runs examples/replay/catchup.hcl's two variants: on the
// replayed capture, per_jiffy's catch-up of 10000 idle jiffies delays the
// second sleeper's wakeup by tens of microseconds; next_expiry does not.
func TestCatchupExample(t *testing.T) {
	maxLat := map[string]float64{}
	for _, v := range []string{"per_jiffy", "next_expiry"} {
		spec, diags := config.Load("../../examples/replay/catchup.hcl", config.Options{Variant: v,
			Vars: map[string]string{"capture": "../../examples/replay/nohz-idle-catchup.txt"}})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		res, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range res.Workloads {
			for _, b := range w.Bench {
				for _, m := range b.Metrics {
					if b.Name == "Replay" && m.Name == "max-wake-latency-ns" {
						maxLat[v] = m.Value
					}
				}
			}
		}
	}
	if !(maxLat["per_jiffy"] > 20_000 && maxLat["next_expiry"] < 10_000) {
		t.Errorf("max wakeup latency per_jiffy %v ns, next_expiry %v ns: want > 20 us and < 10 us", maxLat["per_jiffy"], maxLat["next_expiry"])
	}
}

// TestRearmFollowsExpiry replays a timer_list timer whose callback re-arms
// it 3 us into its expiry, on the default (4.8+) wheel, which expires it one
// jiffy later than the capture: the replayed re-arm waits for the model's
// expiry instead of re-arming a timer still queued, so the model shows no
// re-arm, like the capture.
func TestRearmFollowsExpiry(t *testing.T) {
	var c oneCPUCapture
	const j0 = 4295000000
	c.line(1_000_000, "timer_start", fmt.Sprintf("timer=ffff1 function=poll_fn expires=%d [timeout=20] cpu=0 idx=20 flags=", j0+20))
	for i := int64(1); i <= 10; i++ {
		c.line(1_000_000+20_000*i+2, "timer_expire_entry", fmt.Sprintf("timer=ffff1 function=poll_fn now=%d baseclk=%d", j0+20*i, j0+20*i))
		c.line(1_000_000+20_000*i+5, "timer_start", fmt.Sprintf("timer=ffff1 function=poll_fn expires=%d [timeout=20] cpu=0 idx=20 flags=", j0+20*i+20))
	}
	path := c.write(t, "rearm.txt")
	out := replayOnce(t, path, "", "")
	var capture, model int64 = -1, -1
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[0] == "timer:poll_fn" && f[1] == "re-arms" {
			capture, _ = strconv.ParseInt(f[2], 10, 64)
			model, _ = strconv.ParseInt(f[3], 10, 64)
		}
	}
	if capture != 0 || model != 0 {
		t.Errorf("re-arms: capture %d, model %d, want 0 and 0:\n%s", capture, model, out)
	}
}

// TestSelfRearmEarlyExpiry replays a timer_list timer whose callback
// re-arms it for the next jiffy, in a capture whose timer softirq ran 60 us
// after each tick (a VM) and whose CPU went idle at +30 us: the model expires
// it 2 us after its tick, and its callback re-arms it at once as the real
// one did, instead of leaving the CPU with no timer until the replayed
// re-arm at +60 us, so the 3.10 tick is not stopped at +30 us and armed far
// ahead.
func TestSelfRearmEarlyExpiry(t *testing.T) {
	var c oneCPUCapture
	const j0 = 4295000000
	c.line(1_000_000, "timer_start", fmt.Sprintf("timer=ffff1 function=poll_fn expires=%d [timeout=1]", j0+1))
	for i := int64(1); i <= 50; i++ {
		// A task runs 10-30 us after the tick: the CPU goes idle before the re-arm.
		c.line(1_000_000+1_000*i+10, "sched_switch", "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=poller next_pid=100 next_prio=120")
		c.line(1_000_000+1_000*i+30, "sched_switch", "prev_comm=poller prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120")
		c.line(1_000_000+1_000*i+60, "timer_expire_entry", fmt.Sprintf("timer=ffff1 function=poll_fn now=%d", j0+i))
		c.line(1_000_000+1_000*i+61, "timer_start", fmt.Sprintf("timer=ffff1 function=poll_fn expires=%d [timeout=1]", j0+i+1))
	}
	path := c.write(t, "self.txt")
	out := replayOnce(t, path, "3.10", "")
	far := int64(-1)
	for _, l := range strings.Split(string(out), "\n") {
		// "tick arms > 1 tick ahead  n/a  N": the capture has no clock offset.
		if f := strings.Fields(l); len(f) == 8 && strings.Join(f[:6], " ") == "tick arms > 1 tick ahead" {
			far, _ = strconv.ParseInt(f[7], 10, 64)
		}
	}
	if far < 0 || far > 1 {
		t.Errorf("model tick arms > 1 tick ahead: %d, want at most 1:\n%s", far, out)
	}
	if !strings.Contains(string(out), "timer:poll_fn re-arms                  0             0") {
		t.Errorf("re-arms differ:\n%s", out)
	}
}

// oneCPUCapture builds a one-CPU ftrace text capture for a replay test.
type oneCPUCapture struct {
	lines []string
}

// line adds event ev with its fields at us microseconds.
func (c *oneCPUCapture) line(us int64, ev, fields string) {
	c.lines = append(c.lines, fmt.Sprintf("          <idle>-0       [000] d.s1.   %d.%06d: %s: %s\n", us/1e6, us%1e6, ev, fields))
}

// write writes the capture, with its header, to name in a temporary
// directory and returns the path.
func (c *oneCPUCapture) write(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	text := fmt.Sprintf("# tracer: nop\n#\n# entries-in-buffer/entries-written: %d/%d   #P:1\n%s", len(c.lines), len(c.lines), strings.Join(c.lines, ""))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
