package contract_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/contract"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// hooks alter a builtin plugin's answers, one per test case.
type hooks struct {
	spec      func(s *sdk.DeviceSpec)
	program   func(now ktime.Time, r *sdk.ProgramResult)
	ack       func(now ktime.Time, cost *int64, next *ktime.Time)
	counters  func(cs []sdk.Counter) []sdk.Counter
	configure func(d sdk.Diagnostics) sdk.Diagnostics
	runTimers func(r *sdk.RunTimersResult)
	next      func(r *sdk.NextTimerResult)
	// inPlace: the lying wheel answers NextTimerInterrupt in place too
	// (sdk.InPlaceNextTimer), and next alters that answer.
	inPlace bool
	// repeatFree: the lying wheel (in place) claims
	// sdk.RepeatFreeNextTimer's promise too; repeat alters the answer of
	// each call for a CPU at the jiffies of its previous call.
	repeatFree bool
	repeat     func(r *sdk.NextTimerResult)
	interrupt  func(now ktime.Time, r *sdk.InterruptResult)
	start      func(r *sdk.HROpResult)
	cancel     func(r *sdk.HROpResult)
	sel        func(r *sdk.IdleChoice)
}

type lyingDevice struct {
	sdk.ClockEventDevice
	h *hooks
}

func (l lyingDevice) Spec() sdk.DeviceSpec {
	s := l.ClockEventDevice.Spec()
	if l.h.spec != nil {
		l.h.spec(&s)
	}
	return s
}

func (l lyingDevice) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	r := l.ClockEventDevice.SetNextEvent(ch, now, ticks)
	if l.h.program != nil {
		l.h.program(now, &r)
	}
	return r
}

func (l lyingDevice) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	cost, next := l.ClockEventDevice.Ack(ch, now)
	if l.h.ack != nil {
		l.h.ack(now, &cost, &next)
	}
	return cost, next
}

func (l lyingDevice) Counters() []sdk.Counter {
	cs := l.ClockEventDevice.Counters()
	if l.h.counters != nil {
		cs = l.h.counters(cs)
	}
	return cs
}

func (l lyingDevice) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	d := l.ClockEventDevice.Configure(s, c)
	if l.h.configure != nil {
		d = l.h.configure(d)
	}
	return d
}

type lyingWheel struct {
	sdk.TimerBase
	h *hooks
}

func (l lyingWheel) RunTimers(cpu int, jiffies uint64) sdk.RunTimersResult {
	r := l.TimerBase.RunTimers(cpu, jiffies)
	if l.h.runTimers != nil {
		l.h.runTimers(&r)
	}
	return r
}

func (l lyingWheel) NextTimerInterrupt(cpu int, jiffies uint64) sdk.NextTimerResult {
	r := l.TimerBase.NextTimerInterrupt(cpu, jiffies)
	if l.h.next != nil {
		l.h.next(&r)
	}
	return r
}

// lyingInPlaceWheel is a lying wheel whose in-place NextTimerInterrupt lies.
type lyingInPlaceWheel struct{ lyingWheel }

func (l lyingInPlaceWheel) NextTimerInterruptInto(cpu int, jiffies uint64, r *sdk.NextTimerResult) {
	l.TimerBase.(sdk.InPlaceNextTimer).NextTimerInterruptInto(cpu, jiffies, r)
	if l.h.next != nil {
		l.h.next(r)
	}
}

// lyingRepeatWheel is a lying in-place wheel that promises
// sdk.RepeatFreeNextTimer and alters its repeats' answers (hooks.repeat).
type lyingRepeatWheel struct {
	lyingInPlaceWheel
	last map[int]uint64 // each CPU's previous jiffies, +1
}

func (l lyingRepeatWheel) NextTimerRepeatFree() bool { return true }

func (l lyingRepeatWheel) NextTimerInterruptInto(cpu int, jiffies uint64, r *sdk.NextTimerResult) {
	l.lyingInPlaceWheel.NextTimerInterruptInto(cpu, jiffies, r)
	if l.last[cpu] == jiffies+1 && l.h.repeat != nil {
		l.h.repeat(r)
	}
	l.last[cpu] = jiffies + 1
}

type lyingHRTimer struct {
	sdk.HRTimerBase
	h *hooks
}

func (l lyingHRTimer) Interrupt(cpu int, now ktime.Time) sdk.InterruptResult {
	r := l.HRTimerBase.Interrupt(cpu, now)
	if l.h.interrupt != nil {
		l.h.interrupt(now, &r)
	}
	return r
}

func (l lyingHRTimer) Start(cpu int, now ktime.Time, t sdk.HRTimer, expires ktime.Time, slack int64) sdk.HROpResult {
	r := l.HRTimerBase.Start(cpu, now, t, expires, slack)
	if l.h.start != nil {
		l.h.start(&r)
	}
	return r
}

func (l lyingHRTimer) Cancel(cpu int, now ktime.Time, id sdk.TimerID) sdk.HROpResult {
	r := l.HRTimerBase.Cancel(cpu, now, id)
	if l.h.cancel != nil {
		l.h.cancel(&r)
	}
	return r
}

type lyingGovernor struct {
	sdk.Governor
	h *hooks
}

func (l lyingGovernor) Select(r sdk.IdleSelect) sdk.IdleChoice {
	a := l.Governor.Select(r)
	if l.h.sel != nil {
		l.h.sel(&a)
	}
	return a
}

// factories are the builtins with the wheel, hrtimer, lapic and menu lying as h says.
// None is vetted (sdk.Factory.Vetted): a builtin that lies is no longer the
// builtin its conformance suite vouches for, so the host checks it.
func factories(h *hooks) []sdk.Factory {
	fs := builtin.Factories()
	for i, f := range fs {
		fs[i].Vetted = false
		newReal := f.New
		switch f.Name {
		case "lapic":
			fs[i].New = func() sdk.Plugin { return lyingDevice{newReal().(sdk.ClockEventDevice), h} }
		case "wheel":
			fs[i].New = func() sdk.Plugin {
				w := lyingWheel{newReal().(sdk.TimerBase), h}
				if h.repeatFree {
					return lyingRepeatWheel{lyingInPlaceWheel{w}, map[int]uint64{}}
				}
				if h.inPlace {
					return lyingInPlaceWheel{w}
				}
				return w
			}
		case "hrtimer":
			fs[i].New = func() sdk.Plugin { return lyingHRTimer{newReal().(sdk.HRTimerBase), h} }
		case "menu":
			fs[i].New = func() sdk.Plugin { return lyingGovernor{newReal().(sdk.Governor), h} }
		}
	}
	return fs
}

// scenario is a small machine with hrtimers, wheel timers and device writes.
const scenario = `
machine {
  cpus    = 2
  hz      = 1000
  nohz    = "idle"
  highres = %HIGHRES%
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "2us"
  }
}
clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}
workload "cyclictest" "rt" {
  threads  = 1
  interval = "200us"
  priority = 99
}
workload "kernel_timers" "poll" {
  period = "3ms"
}
run {
  duration = "20ms"
  seed     = 1
}
`

// run runs the scenario with liars; it fails the test if the run does not
// end (the host looping on a lie) within a minute.
func run(t *testing.T, h *hooks, highres bool) error {
	t.Helper()
	src := strings.ReplaceAll(scenario, "%HIGHRES%", map[bool]string{true: "true", false: "false"}[highres])
	spec, diags := config.LoadBytes("lie.hcl", []byte(src), config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	done := make(chan error, 1)
	go func() {
		_, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(factories(h))})
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("the run did not end within a minute: the host loops on the plugin's answer")
		return nil
	}
}

// TestHonestPluginsPass: the checker accepts the builtins' own answers,
// the wheel's in place or not, and with the repeat-free promise.
func TestHonestPluginsPass(t *testing.T) {
	for _, highres := range []bool{true, false} {
		for _, inPlace := range []bool{false, true} {
			if err := run(t, &hooks{inPlace: inPlace}, highres); err != nil {
				t.Errorf("highres=%v inPlace=%v: %v", highres, inPlace, err)
			}
		}
		// Promising repeat-free answers and keeping the promise.
		if err := run(t, &hooks{repeatFree: true}, highres); err != nil {
			t.Errorf("highres=%v repeatFree: %v", highres, err)
		}
	}
}

// TestViolations: each lie ends the run with a ContractError naming the
// plugin, the call and the value, instead of a hang, a panic, a huge
// allocation or forged output.
func TestViolations(t *testing.T) {
	manyCounters := func(cs []sdk.Counter) []sdk.Counter {
		for i := range 200000 {
			cs = append(cs, sdk.Counter{Name: "c", CPU: i % 2, Value: int64(i)})
		}
		return cs
	}
	for _, tc := range []struct {
		name     string
		h        hooks
		highres  bool
		kind     sdk.Kind
		plugin   string
		call     string
		problems []string
	}{
		{name: "interrupt in the past", highres: true,
			h:    hooks{program: func(now ktime.Time, r *sdk.ProgramResult) { r.FireAt = now - 1000 }},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "SetNextEvent", problems: []string{"not after now"}},
		{name: "interrupt at now", highres: true,
			h:    hooks{program: func(now ktime.Time, r *sdk.ProgramResult) { r.FireAt = now }},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "SetNextEvent", problems: []string{"not after now"}},
		{name: "periodic interrupt at now", highres: false,
			h:    hooks{ack: func(now ktime.Time, _ *int64, next *ktime.Time) { *next = now }},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "Ack", problems: []string{"not after now"}},
		{name: "NaN frequency", highres: true,
			h:    hooks{spec: func(s *sdk.DeviceSpec) { s.FreqHz = math.NaN() }},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "Spec", problems: []string{"frequency NaN Hz"}},
		{name: "infinite frequency", highres: true,
			h:    hooks{spec: func(s *sdk.DeviceSpec) { s.FreqHz = math.Inf(1) }},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "Spec", problems: []string{"frequency +Inf Hz"}},
		{name: "a billion channels", highres: true,
			h:    hooks{spec: func(s *sdk.DeviceSpec) { s.Channels = 1 << 30 }},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "Spec", problems: []string{"1073741824 channels, outside 1..256"}},
		{name: "negative cost", highres: true,
			h:    hooks{program: func(_ ktime.Time, r *sdk.ProgramResult) { r.Cost = -1e12 }},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "SetNextEvent", problems: []string{"cost -1000000000000 ns"}},
		{name: "MaxInt64 cost", highres: true,
			h:    hooks{program: func(_ ktime.Time, r *sdk.ProgramResult) { r.Cost = math.MaxInt64 }},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "SetNextEvent", problems: []string{"cost 9223372036854775807 ns"}},
		{name: "counter name with a newline", highres: true,
			h: hooks{counters: func(cs []sdk.Counter) []sdk.Counter {
				return append(cs, sdk.Counter{Name: "ok 1\nkernel fake_line", CPU: -1})
			}},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "Counters", problems: []string{`"ok 1\nkernel fake_line"`, "control"}},
		{name: "counter name with ANSI escapes", highres: true,
			h: hooks{counters: func(cs []sdk.Counter) []sdk.Counter {
				return append(cs, sdk.Counter{Name: "\x1b[2J\x1b[H", CPU: -1})
			}},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "Counters", problems: []string{`"\x1b[2J\x1b[H"`}},
		{name: "MaxUint64 counter", highres: true, // issue 31: summed to "catch-up iterations -466"
			h: hooks{counters: func(cs []sdk.Counter) []sdk.Counter {
				return append(cs, sdk.Counter{Name: "catchup_iterations", CPU: -1, Value: int64(-1)})
			}},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "Counters", problems: []string{`counter "catchup_iterations" = -1 is outside [0, 9007199254740992]`}},
		{name: "2^62 counter", highres: true,
			h: hooks{counters: func(cs []sdk.Counter) []sdk.Counter {
				return append(cs, sdk.Counter{Name: "huge", CPU: 0, Value: 1 << 62})
			}},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "Counters", problems: []string{"outside [0, 9007199254740992]"}},
		{name: "200000 counters", highres: true, h: hooks{counters: manyCounters},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "Counters", problems: []string{"counters, more than 192"}},
		{name: "diagnostic with escapes", highres: true,
			h: hooks{configure: func(d sdk.Diagnostics) sdk.Diagnostics {
				return append(d, sdk.Diagnostic{Severity: sdk.SeverityWarning, Summary: "\x1b[31mred"})
			}},
			kind: sdk.KindClockEvent, plugin: "lapic", call: "Configure", problems: []string{"diagnostic summary"}},
		{name: "wheel expires an unknown timer", highres: true,
			h: hooks{runTimers: func(r *sdk.RunTimersResult) {
				r.Expired = append(r.Expired, sdk.WheelExpiry{ID: 1 << 40})
			}},
			kind: sdk.KindTimerBase, plugin: "wheel", call: "RunTimers", problems: []string{"expired timer id 1099511627776"}},
		{name: "wheel's next timer costs -1 ns", highres: true,
			h:    hooks{next: func(r *sdk.NextTimerResult) { r.Cost = -1 }},
			kind: sdk.KindTimerBase, plugin: "wheel", call: "NextTimerInterrupt", problems: []string{"cost -1 ns"}},
		{name: "wheel's next timer costs -1 ns in place", highres: true,
			h:    hooks{inPlace: true, next: func(r *sdk.NextTimerResult) { r.Cost = -1 }},
			kind: sdk.KindTimerBase, plugin: "wheel", call: "NextTimerInterrupt", problems: []string{"cost -1 ns"}},
		{name: "wheel's next timer with -3 timers pending in place", highres: false,
			h:    hooks{inPlace: true, next: func(r *sdk.NextTimerResult) { r.State.Pending = -3 }},
			kind: sdk.KindTimerBase, plugin: "wheel", call: "NextTimerInterrupt", problems: []string{"-3 timers pending"}},
		// A wheel that promises sdk.RepeatFreeNextTimer has most repeats
		// skipped; the ones the kernel still asks are checked.
		{name: "wheel's repeat costs 1 ns", highres: true,
			h:    hooks{repeatFree: true, repeat: func(r *sdk.NextTimerResult) { r.Cost = 1 }},
			kind: sdk.KindTimerBase, plugin: "wheel", call: "NextTimerInterrupt", problems: []string{"sdk.RepeatFreeNextTimer", "at cost 1 ns"}},
		{name: "wheel's repeat answers another jiffy", highres: true,
			h:    hooks{repeatFree: true, repeat: func(r *sdk.NextTimerResult) { r.Next-- }},
			kind: sdk.KindTimerBase, plugin: "wheel", call: "NextTimerInterrupt", problems: []string{"sdk.RepeatFreeNextTimer", "not its previous answer"}},
		{name: "hrtimer expires an unknown timer", highres: true,
			h: hooks{interrupt: func(now ktime.Time, r *sdk.InterruptResult) {
				r.Expired = append(r.Expired, sdk.HRExpiry{ID: 1 << 40, Now: now})
			}},
			kind: sdk.KindHRTimer, plugin: "hrtimer", call: "Interrupt", problems: []string{"expired timer id 1099511627776"}},
		{name: "governor picks a state the CPU lacks", highres: true,
			h:    hooks{sel: func(a *sdk.IdleChoice) { a.State = 7 }},
			kind: sdk.KindGovernor, plugin: "menu", call: "Select", problems: []string{"state 7 on cpu", "states 0..1"}},
		{name: "governor picks a negative state", highres: true,
			h:    hooks{sel: func(a *sdk.IdleChoice) { a.State = -1 }},
			kind: sdk.KindGovernor, plugin: "menu", call: "Select", problems: []string{"state -1"}},
		{name: "governor's selection costs more than MaxCost", highres: true,
			h:    hooks{sel: func(a *sdk.IdleChoice) { a.Cost = contract.MaxCost + 1 }},
			kind: sdk.KindGovernor, plugin: "menu", call: "Select", problems: []string{"cost 10000000001 ns is outside"}},
		{name: "hrtimer start returns 2", highres: true,
			h:    hooks{start: func(r *sdk.HROpResult) { r.Ret = 2 }},
			kind: sdk.KindHRTimer, plugin: "hrtimer", call: "Start", problems: []string{"returned 2"}},
		{name: "hrtimer start costs -1 ns", highres: true,
			h:    hooks{start: func(r *sdk.HROpResult) { r.Cost = -1 }},
			kind: sdk.KindHRTimer, plugin: "hrtimer", call: "Start", problems: []string{"cost -1 ns"}},
		{name: "hrtimer interrupt ends before it starts", highres: true,
			h:    hooks{interrupt: func(now ktime.Time, r *sdk.InterruptResult) { r.End = now - 5 }},
			kind: sdk.KindHRTimer, plugin: "hrtimer", call: "Interrupt", problems: []string{"ends at"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h
			err := run(t, &h, tc.highres)
			var ce *sdk.ContractError
			if !errors.As(err, &ce) {
				t.Fatalf("run error = %v, want a *sdk.ContractError", err)
			}
			t.Logf("tickemu: run aborted: %v", ce)
			if ce.Kind != tc.kind || ce.Name != tc.plugin || ce.Call != tc.call {
				t.Errorf("ContractError names %s %q %s, want %s %q %s", ce.Kind, ce.Name, ce.Call, tc.kind, tc.plugin, tc.call)
			}
			for _, p := range tc.problems {
				if !strings.Contains(ce.Error(), p) {
					t.Errorf("Error() = %q, want it to contain %q", ce.Error(), p)
				}
			}
			if msg := ce.Error(); strings.ContainsAny(msg, "\n\x1b") {
				t.Errorf("Error() = %q carries a raw control character", msg)
			}
		})
	}
}

// builtinPlugin is a new instance of the builtin plugin name.
func builtinPlugin(t *testing.T, name string) sdk.Plugin {
	t.Helper()
	for _, f := range builtin.Factories() {
		if f.Name == name {
			return f.New()
		}
	}
	t.Fatalf("no builtin plugin %q", name)
	return nil
}

// hostDefaults is the configuration the host gives a plugin whose block sets
// nothing: every attribute of its schema at its default (sdk.ConfigReader
// makes a missing attribute an error).
func hostDefaults(t *testing.T, p sdk.Plugin) sdk.Config {
	t.Helper()
	return defaults(t, p, nil)
}

// defaults is hostDefaults with over on top.
func defaults(t testing.TB, p sdk.Plugin, over sdk.Config) sdk.Config {
	t.Helper()
	c, err := sdktest.Defaults(p.Schema(), over)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHRTimerCancelChecked: the wrapper's Cancel refuses a lie. (The
// scenarios above never cancel a queued hrtimer.)
func TestHRTimerCancelChecked(t *testing.T) {
	h := &hooks{cancel: func(r *sdk.HROpResult) { r.Ret = 3 }}
	real := builtinPlugin(t, "hrtimer").(sdk.HRTimerBase)
	p := contract.Wrap(sdk.KindHRTimer, "hrtimer", lyingHRTimer{real, h}, contract.Limits{CPUs: 1})
	if d := p.Configure(sdk.Setup{CPUs: 1, HZ: 1000, HighRes: true}, hostDefaults(t, real)); d.HasErrors() {
		t.Fatal(d)
	}
	hb := p.(sdk.HRTimerBase)
	defer func() {
		ce, ok := recover().(*sdk.ContractError)
		if !ok || ce.Call != "Cancel" || !strings.Contains(ce.Error(), "returned 3") {
			t.Errorf("recovered %v, want a ContractError for Cancel returning 3", ce)
		}
	}()
	hb.Start(0, 0, sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic}, 1000, 0)
	hb.Cancel(0, 0, 1)
}

// TestHRTimerInterruptChecked: the wrapper's Interrupt (whose in-line test
// of the answer hands a failing one to the full check) accepts a valid
// answer and refuses every lie the full check refuses, with its message.
func TestHRTimerInterruptChecked(t *testing.T) {
	const now, end = ktime.Time(1000), ktime.Time(2000)
	ok := []sdk.HRExpiry{{ID: 1, Now: now}, {ID: 1, Now: end}}
	for _, tc := range []struct {
		name            string
		end             ktime.Time
		expired         []sdk.HRExpiry
		writes, retries int
		hangDelay       int64
		problem         string
	}{
		{name: "valid", end: end, expired: ok, writes: 1},
		{name: "ends before it starts", end: now - 1, expired: ok, problem: "ends at 999"},
		{name: "ends too late", end: now + ktime.Time(contract.MaxCost) + 1, problem: "ends at"},
		{name: "too many expiries", end: end, expired: make([]sdk.HRExpiry, contract.MaxList+1), problem: "expired timers, more than"},
		{name: "too many writes", end: end, writes: contract.MaxList + 1, problem: "device writes, more than"},
		{name: "negative retries", end: end, retries: -1, problem: "retries -1"},
		{name: "negative hang delay", end: end, hangDelay: -1, problem: "hang delay -1"},
		{name: "hang delay too long", end: end, hangDelay: contract.MaxCost + 1, problem: "hang delay"},
		{name: "unknown timer", end: end, expired: []sdk.HRExpiry{ok[0], {ID: 2, Now: now}}, problem: "expired timer id 2"},
		{name: "callback before entry", end: end, expired: []sdk.HRExpiry{{ID: 1, Now: now - 1}}, problem: "callback starts at 999"},
		{name: "callback after the end", end: end, expired: []sdk.HRExpiry{ok[0], {ID: 1, Now: end + 1}}, problem: "callback starts at 2001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hooks{interrupt: func(_ ktime.Time, r *sdk.InterruptResult) {
				*r = sdk.InterruptResult{End: tc.end, Expired: tc.expired, Program: make([]ktime.Time, tc.writes),
					Retries: tc.retries, HangDelay: tc.hangDelay}
			}}
			real := builtinPlugin(t, "hrtimer").(sdk.HRTimerBase)
			p := contract.Wrap(sdk.KindHRTimer, "hrtimer", lyingHRTimer{real, h}, contract.Limits{CPUs: 1})
			if d := p.Configure(sdk.Setup{CPUs: 1, HZ: 1000, HighRes: true}, hostDefaults(t, real)); d.HasErrors() {
				t.Fatal(d)
			}
			hb := p.(sdk.HRTimerBase)
			hb.Start(0, 0, sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic}, 1000, 0) // id 1 is known
			defer func() {
				r := recover()
				if tc.problem == "" {
					if r != nil {
						t.Errorf("a valid answer: recovered %v", r)
					}
					return
				}
				ce, isCE := r.(*sdk.ContractError)
				if !isCE || ce.Call != "Interrupt" || !strings.Contains(ce.Error(), tc.problem) {
					t.Errorf("recovered %v, want a ContractError for Interrupt containing %q", r, tc.problem)
				}
			}()
			hb.Interrupt(0, now)
		})
	}
}

// startingHRTimer is an hrtimer plugin with sdk.NextEventStarter, as the
// out-of-process client has.
type startingHRTimer struct {
	sdk.HRTimerBase
	started *int
}

func (s startingHRTimer) StartNextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) func() ktime.Time {
	*s.started++
	t := s.NextEvent(cpu, now, exclude)
	return func() ktime.Time { return t }
}

// TestHRTimerStarterPassedOn: the checker has sdk.NextEventStarter exactly
// when the plugin behind it has (the kernel overlaps the hrtimer's and the
// wheel's questions only then), and passes the call on.
func TestHRTimerStarterPassedOn(t *testing.T) {
	real := builtinPlugin(t, "hrtimer").(sdk.HRTimerBase)
	if _, ok := contract.Wrap(sdk.KindHRTimer, "hrtimer", real, contract.Limits{CPUs: 1}).(sdk.NextEventStarter); ok {
		t.Error("the checked builtin hrtimer has StartNextEvent; the builtin has none")
	}
	var n int
	p := contract.Wrap(sdk.KindHRTimer, "hrtimer", startingHRTimer{real, &n}, contract.Limits{CPUs: 1})
	if d := p.Configure(sdk.Setup{CPUs: 1, HZ: 1000, HighRes: true}, hostDefaults(t, real)); d.HasErrors() {
		t.Fatal(d)
	}
	st, ok := p.(sdk.NextEventStarter)
	if !ok {
		t.Fatal("the checked plugin lost its StartNextEvent")
	}
	p.(sdk.HRTimerBase).Start(0, 0, sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic}, 5000, 0)
	if got := st.StartNextEvent(0, 0, 0)(); got != 5000 || n != 1 {
		t.Errorf("StartNextEvent waited %d after %d plugin calls, want 5000 after 1", got, n)
	}
}
