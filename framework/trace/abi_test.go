package trace_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/trace"
	"github.com/tickemu/tickemu/internal/simtest"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// sleeperHCL is the machine of the recorded capture (testdata/formats/
// linux-6.18.44: 2 CPUs, HZ=250, NO_HZ idle, high-res timers) with one task
// sleeping 10 ms at a time, so CPU 0 stops its tick at each sleep and
// restarts it at each wakeup.
const sleeperHCL = `
machine {
  cpus    = 2
  hz      = 250
  nohz    = "idle"
  highres = true
  idle_state "C1" {
    exit_latency     = "1us"
    target_residency = "1us"
  }
}
wheel {
  plugin = "wheel"
}
hrtimer {
  plugin = "hrtimer"
}
clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}
workload "cyclictest" "sleeper" {
  threads     = 1
  interval    = "10000us"
  priority    = 0
  dma_latency = false
}
run {
  duration = "300ms"
  seed     = 1
}
`

var tickLineRE = regexp.MustCompile(`\[(\d{3})\] \S+ +[0-9.]+: (\w+): (.*)$`)

// tickOps reads a text trace and returns, per CPU, the operations on the
// tick's hrtimer (the timer whose callback is tickFn) and the tick stops,
// one token each: "tick_stop", "cancel", "expire", "start MODE
// was_armed=V" (V "-" when the release prints none).
func tickOps(t *testing.T, text, tickFn string) map[string][]string {
	t.Helper()
	tick := map[string]bool{} // the tick timers' pointers
	for _, l := range strings.Split(text, "\n") {
		if m := tickLineRE.FindStringSubmatch(l); m != nil && strings.Contains(m[3], "function="+tickFn+" ") {
			tick[field(m[3], "hrtimer")] = true
		}
	}
	if len(tick) == 0 {
		t.Fatalf("no hrtimer with function=%s in the trace", tickFn)
	}
	ops := map[string][]string{}
	for _, l := range strings.Split(text, "\n") {
		m := tickLineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		cpu, ev, f := m[1], m[2], m[3]
		switch {
		case ev == "tick_stop":
			ops[cpu] = append(ops[cpu], ev)
		case !tick[field(f, "hrtimer")]:
		case ev == "hrtimer_cancel":
			ops[cpu] = append(ops[cpu], "cancel")
		case ev == "hrtimer_expire_entry":
			ops[cpu] = append(ops[cpu], "expire")
		case ev == "hrtimer_start":
			wa := field(f, "was_armed")
			if wa == "" {
				wa = "-"
			}
			ops[cpu] = append(ops[cpu], "start "+field(f, "mode")+" was_armed="+wa)
		}
	}
	return ops
}

// field is the value of key= in an event's fields.
func field(fields, key string) string {
	for _, kv := range strings.Fields(fields) {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// ngrams is the set of n consecutive tokens of each CPU's sequence.
func ngrams(ops map[string][]string, n int) map[string]bool {
	out := map[string]bool{}
	for _, seq := range ops {
		for i := 0; i+n <= len(seq); i++ {
			out[strings.Join(seq[i:i+n], " | ")] = true
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// runSleeper runs sleeperHCL at kernel release rel, text trace.
func runSleeper(t *testing.T, rel string) string {
	t.Helper()
	var buf bytes.Buffer
	simtest.Run(t, sleeperHCL, config.Options{KernelVersion: rel}, &buf)
	return buf.String()
}

// TestTickStopRestartMatchesCapture compares how the model traces the tick
// timer around tick stops and restarts with a real kernel's trace of a
// task sleeping in a loop (testdata/formats/linux-6.18.44/
// capture-tick-stop-restart.txt, whose kernel has the 7.1 changes as
// stable backports): at that kernel's release, 6.18.44, and at 7.1 every
// pair of consecutive tick-timer operations of the model's trace
// (but a stop's place) is one the real trace has, including the stop that cancels the tick
// (nothing queued), the stop and the restart that start it while it is
// still queued (was_armed=1, no cancel: adcec6a7f566), and the restart of a
// cancelled tick (was_armed=0). Before 7.1, 6.18 (the series' first
// release) and 6.18.43 included, a restart of a queued tick is
// hrtimer_cancel() then hrtimer_start(), and no line prints was_armed.
func TestTickStopRestartMatchesCapture(t *testing.T) {
	for _, rel := range []string{"6.18.44", "7.1"} {
		matchesCapture(t, rel)
	}

	// Before adcec6a7f566 (7.0 and earlier, and 6.18's point releases
	// before the backport) tick_nohz_restart() cancels the queued tick
	// first; hrtimer_start prints no was_armed.
	for _, rel := range []string{"6.18", "6.18.43", "7.0"} {
		old := ngrams(tickOps(t, runSleeper(t, rel), "tick_nohz_handler"), 3)
		restart := "start ABS|PINNED|HARD was_armed=- | cancel | start ABS|PINNED|HARD was_armed=-"
		if !old[restart] {
			t.Errorf("%s: no restart traced as %q; sequences: %q", rel, restart, keys(old))
		}
		for g := range old {
			if strings.Contains(g, "was_armed=0") || strings.Contains(g, "was_armed=1") {
				t.Errorf("%s prints was_armed (%q), which 7.1 added", rel, g)
				break
			}
		}
	}
}

// matchesCapture: the model's tick-timer operations at release rel are
// those of the capture (TestTickStopRestartMatchesCapture).
func matchesCapture(t *testing.T, rel string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "formats", "linux-6.18.44", "capture-tick-stop-restart.txt"))
	if err != nil {
		t.Fatal(err)
	}
	real2 := ngrams(tickOps(t, string(raw), "tick_nohz_handler"), 2)

	model := tickOps(t, runSleeper(t, rel), "tick_nohz_handler")
	got := ngrams(model, 2)
	for _, g := range keys(got) {
		// When a CPU stops its tick again is the workload's and the
		// governor's (the capture's task slept 3 ms, this one 10 ms); what
		// the kernel traces once it does is the kernel's.
		if strings.HasSuffix(g, " | tick_stop") {
			continue
		}
		if !real2[g] {
			t.Errorf("%s: the model traces %q, which the real kernel's trace never does (its pairs: %q)", rel, g, keys(real2))
		}
	}
	const (
		pinned1 = "start ABS|PINNED|HARD was_armed=1"
		pinned0 = "start ABS|PINNED|HARD was_armed=0"
	)
	for _, want := range []string{
		"tick_stop | cancel",             // tick_nohz_stop_tick(), KTIME_MAX
		"tick_stop | " + pinned1,         // tick_nohz_stop_tick() of the queued tick
		pinned1 + " | " + pinned1,        // tick_nohz_restart() of the queued stopped tick
		"cancel | " + pinned0,            // tick_nohz_restart() of the cancelled tick
		"expire | start ABS was_armed=0", // __run_hrtimer()'s requeue
	} {
		if !real2[want] {
			t.Fatalf("the capture lacks %q: it is not the recorded one", want)
		}
		if !got[want] {
			t.Errorf("%s: the model never traces %q, which the real kernel does", rel, want)
		}
	}
}

// TestTickFunctionByRelease checks the tick's callback and hrtimer_setup()'s
// event are named as each release names them, in the text trace.
func TestTickFunctionByRelease(t *testing.T) {
	for _, c := range []struct{ rel, tick, setup string }{
		{"6.6", "tick_sched_timer", "hrtimer_init"},
		{"6.8", "tick_nohz_highres_handler", "hrtimer_init"},
		{"6.14", "tick_nohz_handler", "hrtimer_init"},
		{"6.15", "tick_nohz_handler", "hrtimer_setup"},
	} {
		text := runSleeper(t, c.rel)
		for _, fn := range []string{"tick_sched_timer", "tick_nohz_highres_handler", "tick_nohz_handler"} {
			if has := strings.Contains(text, "function="+fn+" "); has != (fn == c.tick) {
				t.Errorf("%s: function=%s traced: %v, want the tick named %s", c.rel, fn, has, c.tick)
			}
		}
		for _, ev := range []string{"hrtimer_init", "hrtimer_setup"} {
			if has := strings.Contains(text, ": "+ev+": "); has != (ev == c.setup) {
				t.Errorf("%s: %s traced: %v, want %s", c.rel, ev, has, c.setup)
			}
		}
	}
}

// TestDatHasEveryRecordedField writes the 7.1 run as trace.dat, whose
// records are rebuilt from the text's fields with the formats
// TestFormatsMatchRecordedKernel holds to the real kernel's: a field the
// text does not print (was_armed) fails the run.
func TestDatHasEveryRecordedField(t *testing.T) {
	spec, diags := config.LoadBytes("test.hcl", []byte(sleeperHCL), config.Options{KernelVersion: "7.1"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var buf bytes.Buffer
	if _, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories()),
		Trace: &buf, TraceFormat: trace.FormatDat}); err != nil {
		t.Fatalf("trace.dat of the 7.1 run: %v", err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("field:bool was_armed;")) {
		t.Errorf("the 7.1 trace.dat declares no was_armed field")
	}
}
