package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// traceOf runs configs/FILE and returns its trace in format.
func traceOf(t *testing.T, file string, format trace.Format) (*experiment.Result, []byte) {
	t.Helper()
	spec, diags := config.Load(filepath.Join("..", "..", "configs", file), config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if testing.Short() {
		// default.hcl's 1 s, traced three times, took 150 s under the
		// race detector (make ci runs it -short there, and in full
		// without): 100 ms still has every kind of slice on every CPU to
		// count against the text trace and the kernel.
		spec.Run.Duration = min(spec.Run.Duration, 100e6)
	}
	var buf bytes.Buffer
	res, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories()), CallTimeout: noDeadline, Trace: &buf, TraceFormat: format})
	if err != nil {
		t.Fatal(err)
	}
	return res, buf.Bytes()
}

// TestPerfettoDefault reads the Perfetto (trace-event JSON) trace of
// default.hcl back: one named track per CPU; on each, one local-timer slice
// per local_timer_entry of the ftrace text trace (and per the kernel's
// counter), one hrtimer callback slice per hrtimer_expire_entry, one task
// slice per sched_switch to a task, every slice inside the run, the device
// writes counter ending at the kernel's count and one idle-state counter
// sample per cpu_idle.
func TestPerfettoDefault(t *testing.T) {
	res, js := traceOf(t, "default.hcl", trace.FormatPerfetto)
	_, text := traceOf(t, "default.hcl", trace.FormatText)
	var doc struct {
		TraceEvents []struct {
			Ph   string          `json:"ph"`
			Pid  int             `json:"pid"`
			Tid  int             `json:"tid"`
			Name string          `json:"name"`
			Cat  string          `json:"cat"`
			TS   float64         `json:"ts"`
			Dur  float64         `json:"dur"`
			Args json.RawMessage `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatalf("the perfetto trace is not JSON: %v", err)
	}
	tracks := map[int]string{}
	slices := map[string]map[string]int{} // track -> category -> count
	instants := 0
	counters := map[string]int64{} // "CPU n device writes": last value
	samples := map[string]int{}
	endUS := float64(res.Config.DurationNS+res.Config.WarmupNS) / 1000
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				var a struct{ Name string }
				_ = json.Unmarshal(e.Args, &a)
				tracks[e.Tid] = a.Name
			}
		case "X":
			tr := tracks[e.Tid]
			if tr == "" {
				t.Fatalf("slice %q on an unnamed track %d", e.Name, e.Tid)
			}
			if e.Dur < 0 || e.TS < 0 || e.TS+e.Dur > endUS+0.001 {
				t.Errorf("slice %q at %.3f us for %.3f us is outside the run", e.Name, e.TS, e.Dur)
			}
			if slices[tr] == nil {
				slices[tr] = map[string]int{}
			}
			slices[tr][e.Cat]++
		case "i":
			instants++
		case "C":
			var a map[string]int64
			if err := json.Unmarshal(e.Args, &a); err != nil || len(a) != 1 {
				t.Fatalf("counter %q: args %s, want one integer series", e.Name, e.Args)
			}
			for k, v := range a {
				counters[e.Name+" "+k] = v
				samples[e.Name+" "+k]++
			}
		default:
			t.Errorf("unexpected phase %q", e.Ph)
		}
	}
	if len(tracks) != res.Config.CPUs {
		t.Fatalf("%d CPU tracks, want %d: %v", len(tracks), res.Config.CPUs, tracks)
	}
	// The same run's text trace, counted per CPU.
	count := func(re string) map[int]int {
		out := map[int]int{}
		for _, m := range regexp.MustCompile(`(?m)^.{16}-\d+ +\[(\d{3})\] [^:]+: `+re).FindAllSubmatch(text, -1) {
			cpu, _ := strconv.Atoi(string(m[1]))
			out[cpu]++
		}
		return out
	}
	irqs, hrt, switches := count(`local_timer_entry:`), count(`hrtimer_expire_entry:`), count(`sched_switch: .* next_pid=[1-9]`)
	idles := count(`cpu_idle:`)
	for cpu := 0; cpu < res.Config.CPUs; cpu++ {
		tr := fmt.Sprintf("CPU %d", cpu)
		got := slices[tr]
		t.Logf("%s: %d irq, %d hrtimer, %d task slices", tr, got["irq"], got["hrtimer"], got["task"])
		if got["irq"] != irqs[cpu] || int64(got["irq"]) != res.Kernel.CPUs[cpu].LocalTimerIRQs {
			t.Errorf("%s: %d irq slices, text trace has %d local_timer_entry, kernel counted %d", tr, got["irq"], irqs[cpu], res.Kernel.CPUs[cpu].LocalTimerIRQs)
		}
		if got["hrtimer"] != hrt[cpu] {
			t.Errorf("%s: %d hrtimer slices, text trace has %d hrtimer_expire_entry", tr, got["hrtimer"], hrt[cpu])
		}
		if got["task"] != switches[cpu] || got["task"] == 0 {
			t.Errorf("%s: %d task slices, text trace has %d switches to a task", tr, got["task"], switches[cpu])
		}
		// The counters: the device writes end at the kernel's count, the
		// idle state has one sample per cpu_idle event.
		if w := counters[tr+" device writes"]; w != res.Kernel.CPUs[cpu].DeviceWrites || w == 0 {
			t.Errorf("%s: device writes counter ends at %d, the kernel counted %d", tr, w, res.Kernel.CPUs[cpu].DeviceWrites)
		}
		if n := samples[tr+" idle state"]; n != idles[cpu] || n == 0 {
			t.Errorf("%s: %d idle state samples, text trace has %d cpu_idle", tr, n, idles[cpu])
		}
	}
	if instants == 0 {
		t.Error("no instant events (hrtimer_start, sched_wakeup, ...)")
	}
	// Deterministic, like the text trace.
	if _, again := traceOf(t, "default.hcl", trace.FormatPerfetto); !bytes.Equal(js, again) {
		t.Error("two perfetto traces of the same config and seed differ")
	}
}

// TestKnownEvents: every event the shipped scenarios trace is in
// trace.Known (which --trace-events checks names against), and every known
// event shows up in one of them. Under -short (make test, and make ci
// under the race detector) only each file as written (no variant) is
// traced, for 1 ms after at most 1 s of warmup; make ci traces every
// variant for 10 ms without the race detector.
func TestKnownEvents(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "configs", "*.hcl"))
	known := map[string]bool{}
	for _, k := range trace.Known {
		known[k] = true
	}
	seen := map[string]bool{}
	for _, f := range files {
		spec, diags := config.Load(f, config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		variants := append([]string{""}, spec.Variants()...)
		if testing.Short() {
			// The inner loop traces each file as written; make ci traces
			// every variant.
			variants = variants[:1]
		}
		for _, v := range variants {
			s, _ := config.Load(f, config.Options{Variant: v})
			s.Run.Duration = 10e6 // the first 10 ms after the warmup
			if testing.Short() {
				// 10 ms of lkp-timer-64's 64 CPUs take 12-18 s a
				// variant (three quarters of the test; 5-10 times that
				// under the race detector), and nohz-catchup's 295 s
				// warmup one.
				s.Run.Duration = 1e6
				s.Run.Warmup = min(s.Run.Warmup, 1e9)
			}
			var buf bytes.Buffer
			from := s.Run.Warmup
			o := experiment.Options{Opener: experiment.InProcess(builtin.Factories()), CallTimeout: noDeadline, Trace: &buf,
				TraceFrom: ktimeOf(from), TraceTo: ktimeOf(from + s.Run.Duration)}
			if _, err := experiment.Run(s, o); err != nil {
				t.Fatalf("%s %s: %v", f, v, err)
			}
			for _, l := range bytes.Split(buf.Bytes(), []byte("\n")) {
				if len(l) < 40 || l[0] == '#' {
					continue
				}
				i := bytes.Index(l, []byte(": "))
				if i < 0 {
					t.Fatalf("bad trace line %q", l)
				}
				fn := string(l[i+2:])
				end := strings.IndexAny(fn, " :(")
				if end < 0 {
					end = len(fn)
				}
				name := fn[:end]
				switch {
				case strings.HasPrefix(name, "sys_") && end < len(fn) && fn[end] == '(':
					name = "sys_enter_x"
				case strings.HasPrefix(name, "sys_") && strings.HasPrefix(fn[end:], " -> "):
					name = "sys_exit_x"
				case end < len(fn) && fn[end] == ':':
				default:
					name = "function" // "callee <-caller"
				}
				seen[name] = true
				if !known[name] && name != "sys_enter_x" && name != "sys_exit_x" {
					t.Errorf("%s --variant %q traces %q, which trace.Known lacks", f, v, name)
				}
			}
		}
	}
	for k := range known {
		if !seen[k] {
			t.Logf("known event %q not in the first 10 ms of any scenario", k)
		}
	}
}

func ktimeOf(ns int64) ktime.Time { return ktime.Time(ns) }
