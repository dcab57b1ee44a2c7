package kernel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/plugins/hrtimer"
	"github.com/tickemu/tickemu/plugins/lapic"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// TestTimelines runs the data-driven kernel timelines in testdata/timeline:
// each file boots a small machine (the builtin wheel, hrtimer and lapic
// plugins with their defaults, fixed framework costs) and drives it command
// by command; each command prints what happened since the previous one and
// `state` prints the tick-sched state. `go test -run TestTimelines -rewrite`
// rewrites the expected output from what the code does now (review the
// diff against the kernel before committing it).
//
// Times are written 10ms, 2.5ms, 1500us, 42ns; "max" is KTIME_MAX.
//
//	new [cpus=N] [hz=H] [nohz=idle|off] [lowres]
//	    boot the machine (default: 1 CPU, HZ 1000, NO_HZ idle, high res).
//	hrtimer name=X at=T [cpu=C] [period=P] [clock=monotonic|realtime]
//	    hrtimer_start() of a hard ABS timer on CPU C now, as kernel code on
//	    that CPU would; its expiries are printed (re-armed every P if set).
//	timer name=X in=J [cpu=C]
//	    mod_timer() of a wheel timer J jiffies from now on CPU C.
//	cancel name=X
//	    hrtimer_try_to_cancel() or del_timer() of X.
//	sleep for=T [cpu=C]
//	    a SCHED_FIFO task (no timer slack) wakes on CPU C, sleeps T in
//	    clock_nanosleep(CLOCK_MONOTONIC) and exits: the CPU enters idle while
//	    it sleeps; its return to user space is printed.
//	busy for=T [cpu=C]
//	    a SCHED_FIFO task computes T on CPU C and exits: the CPU leaves idle
//	    for it.
//	jump by=T
//	    clock_settime(CLOCK_REALTIME) moving the clock by T (negative: back),
//	    from CPU 0 now (clock_was_set()).
//	run to=T | run for=T
//	    simulate to T (or for T).
//
// Every command but new prints the events of the simulated time it covered:
// the CPUs' activities from the span log (irq entry, hrtimer_interrupt, each
// softirq, tick-sched work, idle exits, task segments) and the timer
// expiries and task wakeups, in time order. state prints jiffies and, per
// CPU, what it is doing, its tick and its device's next event.
func TestTimelines(t *testing.T) {
	datadriven.Walk(t, "testdata/timeline", func(t *testing.T, path string) {
		var tl *timeline
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "new" {
				tl = newTimeline(t, d)
				return ""
			}
			if tl == nil {
				d.Fatalf(t, "%s before new", d.Cmd)
			}
			return tl.step(t, d)
		})
	})
}

// timelineCosts are the framework costs of every timeline: round numbers, so
// that the expected times do not move when the defaults are recalibrated.
var timelineCosts = Costs{
	IRQEntry: 1000, IRQExit: 500, SoftirqEntry: 500, Tick: 1000, JiffiesUpdate: 200,
	NohzStop: 2000, NohzRestart: 2000, Syscall: 500, ContextSwitch: 2000, Wakeup: 1000,
	IPISend: 500, IPILatency: 2000, SignalGenerate: 500, SignalDeliver: 1000, SignalDequeue: 500,
	ClockRead: 100, TimerSlack: 50000, TimerCallback: 1000, RCUCore: 1000, RCUCallback: 100,
}

// timeline is one machine being driven.
type timeline struct {
	k      *Kernel
	hr     map[string]*HRTimer
	wt     map[string]*WheelTimer
	proc   *Process
	tasks  int
	shown  ktime.Time             // events before this were printed
	seen   map[timelineEvent]bool // the events at shown that were printed
	events []timelineEvent
}

// timelineEvent is an expiry or a wakeup, logged by the callbacks.
type timelineEvent struct {
	at   ktime.Time
	cpu  int
	text string
}

func newTimeline(t *testing.T, d *datadriven.TestData) *timeline {
	cpus, hz, nohz := 1, 1000, "idle"
	d.MaybeScanArgs(t, "cpus", &cpus)
	d.MaybeScanArgs(t, "hz", &hz)
	d.MaybeScanArgs(t, "nohz", &nohz)
	highRes := !d.HasArg("lowres")
	setup := sdk.Setup{CPUs: cpus, HZ: hz, HighRes: highRes, Seed: 1}
	wb := ConfigureWith(t, wheel.New(), setup, nil).(sdk.TimerBase)
	hb := ConfigureWith(t, hrtimer.New(), setup, nil).(sdk.HRTimerBase)
	setup.Role = "local"
	dev := ConfigureWith(t, lapic.New(), setup, nil).(sdk.ClockEventDevice)
	local, err := clockevents.New(dev, clockevents.Options{HZ: hz})
	if err != nil {
		d.Fatalf(t, "clockevents.New: %v", err)
	}
	k, err := New(Options{
		Machine:  Machine{CPUs: cpus, HZ: hz, NoHZ: nohz, HighRes: highRes},
		Settings: KernelSettings{PosixTimerSignals: "consistent", Costs: timelineCosts},
		Plugins:  Plugins{Wheel: wb, HRTimer: hb, Local: local},
		Seed:     1,
	})
	if err != nil {
		d.Fatalf(t, "kernel.New: %v", err)
	}
	k.RecordSpans()
	k.Boot()
	return &timeline{k: k, hr: map[string]*HRTimer{}, wt: map[string]*WheelTimer{}, proc: k.NewProcess("timeline"),
		seen: map[timelineEvent]bool{}}
}

// step runs one command and returns what it printed.
func (tl *timeline) step(t *testing.T, d *datadriven.TestData) string {
	k := tl.k
	now := k.Now()
	cpu := 0
	d.MaybeScanArgs(t, "cpu", &cpu)
	if cpu < 0 || cpu >= k.CPUs() {
		d.Fatalf(t, "cpu=%d: the machine has %d CPUs", cpu, k.CPUs())
	}
	switch d.Cmd {
	case "hrtimer":
		name := tl.name(t, d)
		at, period := tl.duration(t, d, "at"), int64(0)
		if d.HasArg("period") {
			period = tl.duration(t, d, "period")
		}
		clock := sdk.ClockMonotonic
		if a, ok := d.Arg("clock"); ok && a.SingleVal(t) == "realtime" {
			clock = sdk.ClockRealtime
		}
		ht := tl.hr[name]
		if ht == nil {
			ht = k.NewHRTimer("timeline_"+name, clock, sdk.HRModeAbs|sdk.HRModeHard, 0, func(c *CPU, now ktime.Time, e *sdk.HRExpiry) {
				tl.log(now, c.id, "hrtimer "+name+" expires")
			})
			tl.hr[name] = ht
		}
		ht.Period = period
		k.At(now, "timeline "+d.Cmd, func(now ktime.Time) {
			k.StartHRTimer(cpu, now, ht, ktime.Time(at), 0, sdk.HRModeAbs|sdk.HRModeHard)
		})
		return tl.runTo(t, now)
	case "timer":
		name := tl.name(t, d)
		var in uint64
		d.ScanArgs(t, "in", &in)
		wt := tl.wt[name]
		if wt == nil {
			wt = k.NewWheelTimer("timeline_"+name, 0, 0, 0, func(c *CPU, now ktime.Time) {
				tl.log(now, c.id, "timer "+name+" expires at jiffies+"+utoa(k.tk.jiffies-k.tk.jiffiesBase))
			})
			tl.wt[name] = wt
		}
		k.At(now, "timeline "+d.Cmd, func(now ktime.Time) { k.ModTimer(cpu, now, wt, k.tk.jiffies+in) })
		return tl.runTo(t, now)
	case "cancel":
		name := tl.name(t, d)
		ht, wt := tl.hr[name], tl.wt[name]
		if ht == nil && wt == nil {
			d.Fatalf(t, "no timer %q", name)
		}
		k.At(now, "timeline "+d.Cmd, func(now ktime.Time) {
			if ht != nil {
				k.CancelHRTimer(cpu, now, ht)
			} else {
				k.DelTimer(cpu, now, wt)
			}
		})
		return tl.runTo(t, now)
	case "sleep", "busy":
		ns := tl.duration(t, d, "for")
		tl.tasks++
		comm := "task" + strconv.Itoa(tl.tasks)
		var a Action = ClockNanosleep{Clock: sdk.ClockMonotonic, T: ns}
		if d.Cmd == "busy" {
			a = Compute{NS: ns}
		}
		started, sleeps := false, d.Cmd == "sleep"
		prog := ProgramFunc(func(task *Task, r Result) Action {
			if !started {
				started = true
				return a
			}
			if sleeps {
				tl.log(r.Now, cpu, comm+" back in user space")
			}
			return Exit{}
		})
		if _, err := k.Spawn(tl.proc, comm, cpu, SchedFIFO, 50, prog); err != nil {
			d.Fatalf(t, "spawn: %v", err)
		}
		k.At(now, "timeline "+d.Cmd, func(now ktime.Time) { k.Start(now) })
		return tl.runTo(t, now)
	case "jump":
		by := tl.duration(t, d, "by")
		k.At(now, "timeline "+d.Cmd, func(now ktime.Time) { k.ShiftRealtime(k.cpus[0], now, by) })
		return tl.runTo(t, now)
	case "run":
		to := now
		switch {
		case d.HasArg("to"):
			to = ktime.Time(tl.duration(t, d, "to"))
		case d.HasArg("for"):
			to = now + ktime.Time(tl.duration(t, d, "for"))
		default:
			d.Fatalf(t, "run needs to= or for=")
		}
		if to < now {
			d.Fatalf(t, "run to %s: the machine is at %s already", timelineTime(to), timelineTime(now))
		}
		return tl.runTo(t, to)
	case "state":
		return tl.state()
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

func (tl *timeline) name(t *testing.T, d *datadriven.TestData) string {
	var name string
	d.ScanArgs(t, "name", &name)
	return name
}

// duration reads argument key as a duration (10ms, 1500us, -2s; max).
func (tl *timeline) duration(t *testing.T, d *datadriven.TestData, key string) int64 {
	var s string
	d.ScanArgs(t, key, &s)
	if s == "max" {
		return int64(ktime.Max)
	}
	neg := strings.HasPrefix(s, "-")
	ns, err := ktime.ParseDuration(strings.TrimPrefix(s, "-"))
	if err != nil {
		d.Fatalf(t, "%s=%s: %v", key, s, err)
	}
	if neg {
		ns = -ns
	}
	return ns
}

func (tl *timeline) log(at ktime.Time, cpu int, text string) {
	tl.events = append(tl.events, timelineEvent{at: at, cpu: cpu, text: text})
}

// runTo simulates to to and prints the events from the last printed time on
// that it has not printed: the spans (an activity is logged with its whole
// length when it starts and printed at its start; an idle period is logged
// when it ends and printed at its end) and the expiries and wakeups.
func (tl *timeline) runTo(t *testing.T, to ktime.Time) string {
	k := tl.k
	if err := k.Run(to); err != nil {
		t.Fatalf("Run(%s): %v", timelineTime(to), err)
	}
	var lines []timelineEvent
	add := func(e timelineEvent) {
		if e.at >= tl.shown && e.at <= to && !tl.seen[e] {
			lines = append(lines, e)
		}
	}
	for cpu := range k.CPUs() {
		spans, _ := k.Spans(cpu, tl.shown-1, to+1)
		for _, s := range spans {
			at := s.Start
			if s.Kind == SpanIdle {
				at = s.End
			}
			add(timelineEvent{at: at, cpu: cpu, text: spanText(s)})
		}
	}
	for _, e := range tl.events {
		add(e)
	}
	tl.events = slices.DeleteFunc(tl.events, func(e timelineEvent) bool { return e.at <= to })
	if to > tl.shown {
		clear(tl.seen)
		tl.shown = to
	}
	for _, e := range lines {
		if e.at == to {
			tl.seen[e] = true
		}
	}
	slices.SortStableFunc(lines, func(a, b timelineEvent) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.cpu - b.cpu
	})
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s cpu%d %s\n", timelineTime(l.at), l.cpu, l.text)
	}
	return b.String()
}

// spanText is a span as a timeline line: what, for how long.
func spanText(s Span) string {
	what := s.Kind.String()
	switch s.Kind {
	case SpanIdle:
		return "wakes from idle " + s.Detail + " after " + timelineTime(s.End-s.Start)
	case SpanIdleExit:
		what += " " + s.Detail
	case SpanSoftirq:
		what = s.Detail + "_SOFTIRQ"
		if s.Gap > 1 {
			what += " (catch-up " + strconv.FormatUint(s.Gap, 10) + " jiffies)"
		}
	case SpanTask:
		what = s.Detail
	}
	return what + " for " + timelineTime(s.End-s.Start)
}

// state prints jiffies and the do_timer duty, then one line per CPU.
func (tl *timeline) state() string {
	k := tl.k
	var b strings.Builder
	duty := "none"
	if k.tk.tickDoTimerCPU >= 0 {
		duty = "cpu" + strconv.Itoa(k.tk.tickDoTimerCPU)
	}
	fmt.Fprintf(&b, "jiffies=+%d last_jiffies_update=%s do_timer=%s\n",
		k.tk.jiffies-k.tk.jiffiesBase, timelineTime(k.tk.lastJiffiesUpdate), duty)
	for _, c := range k.cpus {
		mode := [...]string{modeFree: "free", modeBusy: "busy", modeTask: "task", modeIdle: "idle"}[c.mode]
		if c.mode == modeIdle {
			mode += " " + c.k.public(spanRec{kind: SpanIdle, code: int32(c.idle.state)}).Detail
		}
		tick := "running"
		if c.ts.tickStopped {
			tick = "stopped next_tick=" + timelineTime(c.ts.nextTick)
		}
		fmt.Fprintf(&b, "cpu%d: %s, tick %s, device next event %s\n", c.id, mode, tick, timelineTime(k.local.NextEvent(c.id)))
	}
	// RCU, once it has had work: the grace-period phase (odd: running),
	// the CPUs it still waits for, and each CPU's queued callbacks.
	if k.rcu.gpSeq != 0 || k.Counters.Total("rcu_callbacks") != 0 {
		fmt.Fprintf(&b, "rcu: gp_seq=%d owing=%d callbacks=", k.rcu.gpSeq, k.rcu.owing)
		for i := range k.rcu.cpus {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.FormatInt(k.rcu.cpus[i].callbacks(), 10))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// timelineTime prints a time or duration in ms: 10ms, 10.0015ms, max.
func timelineTime(t ktime.Time) string {
	if t == ktime.Max {
		return "max"
	}
	sign := ""
	if t < 0 {
		sign, t = "-", -t
	}
	ms, frac := int64(t)/ktime.Millisecond, int64(t)%ktime.Millisecond
	if frac == 0 {
		return sign + strconv.FormatInt(ms, 10) + "ms"
	}
	f := strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
	return sign + strconv.FormatInt(ms, 10) + "." + f + "ms"
}
