package shim_test

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/tickemu/tickemu/framework/internal/shimtest"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// call is one row of a round-trip table: do makes the call through the
// client and returns its results; the fake records what it received in a
// recorder; wantArgs and want are what must arrive at each end.
type call struct {
	name     string
	do       func() any
	wantArgs []any
	want     any
}

// recorder holds the arguments the fake last received. The fake runs on the
// server's goroutine; the socket orders it before the client's return, but
// the race detector cannot see that, so a mutex says it.
type recorder struct {
	mu   sync.Mutex
	args []any
}

func (r *recorder) set(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.args = args
}

func (r *recorder) take() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.args
	r.args = nil
	return a
}

func runCalls(t *testing.T, got *recorder, calls []call) {
	t.Helper()
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			got.take()
			res := c.do()
			if args := got.take(); !reflect.DeepEqual(args, c.wantArgs) {
				t.Errorf("%s args at plugin = %#v, want %#v", c.name, args, c.wantArgs)
			}
			if !reflect.DeepEqual(res, c.want) {
				t.Errorf("%s(%v) = %#v, want %#v", c.name, c.wantArgs, res, c.want)
			}
		})
	}
}

// Values with every field set, including extremes (ktime.Max, NoExpiry,
// negative offsets) that a careless wire type would mangle.
var (
	wheelState = sdk.WheelState{RaiseAt: 1001, NextExpiry: sdk.NoExpiry, Pending: 7, Split: true, LocalNext: 1003, GlobalNext: 1002}
	wheelTimer = sdk.WheelTimer{ID: 42, Expires: 1 << 40, Flags: sdk.TimerDeferrable | sdk.TimerPinned, CallbackCost: 1500, Period: 4,
		Placement: &sdk.Placement{Idle: sdk.CPUSet{0x5, 1 << 63}}}
	wheelOp   = sdk.WheelOpResult{Cost: 95, WasPending: true, State: wheelState, BucketExpiry: 4294667400, Index: 77, Moved: true, CPU: 65}
	runTimers = sdk.RunTimersResult{
		Expired: []sdk.WheelExpiry{
			{ID: 1, Offset: 10, Jiffy: 1000, Rearmed: true, NewExpires: 1004},
			{ID: 2, Offset: 250, Jiffy: 1001, Rearmed: true, NewExpires: 2001},
		},
		Cost: 900, Gap: 3, Iterations: 4, Cascades: 1, State: wheelState,
	}
	nextTimer = sdk.NextTimerResult{Next: 1500, Cost: 40, State: wheelState}

	hrTimer = sdk.HRTimer{ID: 9, Clock: sdk.ClockTAI, Mode: sdk.HRModeRel | sdk.HRModeSoft, CallbackCost: 700, Period: 1000000,
		Placement: &sdk.Placement{Idle: sdk.CPUSet{0xff00}}}
	hrOp = sdk.HROpResult{Cost: 120, Program: []ktime.Time{5000, ktime.Max}, Ret: -1, Expires: 77000, SoftExpires: 76000, Moved: true, CPU: 3}
	intr = sdk.InterruptResult{
		Expired: []sdk.HRExpiry{
			{ID: 3, Now: 1000, BaseNow: 37001000, Soft: true, Restarted: true, NewExpires: 2000, Overruns: 2},
		},
		End: 3400, Program: []ktime.Time{ktime.Max}, RaiseSoftirq: true, Retries: 2, Hang: true, HangDelay: 100000000, TryProgram: true,
	}
	offsets = sdk.ClockOffsets{Real: -1700000000123456789, Boot: 5, TAI: 37000000000}

	spec = sdk.DeviceSpec{
		Name: "fake-deadline", Features: sdk.FeatOneshot | sdk.FeatPerCPU | sdk.FeatC3Stop, FreqHz: 14318180.5,
		MinDeltaTicks: 2, MaxDeltaTicks: 1<<64 - 1, Rating: 150, Channels: 8, Mult: 61496, Shift: 32,
	}
	program = sdk.ProgramResult{ETIME: true, FireAt: ktime.Max, Cost: 250}
)

func TestValuesCoverEveryField(t *testing.T) {
	for name, v := range map[string]any{
		"WheelTimer": wheelTimer, "WheelOpResult": wheelOp, "RunTimersResult": runTimers,
		"NextTimerResult": nextTimer, "HRTimer": hrTimer, "HROpResult": hrOp,
		"InterruptResult": intr, "ClockOffsets": offsets, "DeviceSpec": spec, "ProgramResult": program,
	} {
		requireAllSet(t, name, v)
	}
}

func TestTimerBaseRoundTrip(t *testing.T) {
	var got recorder
	fake := &shimtest.TimerBase{
		Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindTimerBase, Name: "fake"}},
		ModTimerFn: func(cpu int, j uint64, tm sdk.WheelTimer) sdk.WheelOpResult {
			got.set(cpu, j, tm)
			return wheelOp
		},
		DelTimerFn: func(cpu int, j uint64, id sdk.TimerID) sdk.WheelOpResult {
			got.set(cpu, j, id)
			return wheelOp
		},
		RunTimersFn: func(cpu int, j uint64) sdk.RunTimersResult {
			got.set(cpu, j)
			return runTimers
		},
		NextTimerInterruptFn: func(cpu int, j uint64) sdk.NextTimerResult {
			got.set(cpu, j)
			return nextTimer
		},
		ExpireRemoteFn: func(cpu int, j uint64) sdk.RunTimersResult {
			got.set(cpu, j)
			return runTimers
		},
	}
	c, _ := pair(t, factory(sdk.KindTimerBase, "fake", fake))
	tb := open(t, c, sdk.KindTimerBase, "fake", shim.Options{}).(sdk.RemoteTimerBase)
	runCalls(t, &got, []call{
		{"ModTimer", func() any { return tb.ModTimer(3, 1000, wheelTimer) }, []any{3, uint64(1000), wheelTimer}, wheelOp},
		{"DelTimer", func() any { return tb.DelTimer(7, sdk.NoExpiry-1, 42) }, []any{7, sdk.NoExpiry - 1, sdk.TimerID(42)}, wheelOp},
		{"RunTimers", func() any { return tb.RunTimers(0, 1003) }, []any{0, uint64(1003)}, runTimers},
		{"RunTimers/none", func() any { return tb.RunTimers(0, 0) }, []any{0, uint64(0)}, runTimers},
		{"NextTimerInterrupt", func() any { return tb.NextTimerInterrupt(63, 2000) }, []any{63, uint64(2000)}, nextTimer},
		{"ExpireRemote", func() any { return tb.ExpireRemote(5, 2001) }, []any{5, uint64(2001)}, runTimers},
	})
}

func TestHRTimerBaseRoundTrip(t *testing.T) {
	var got recorder
	fake := &shimtest.HRTimerBase{
		Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindHRTimer, Name: "fake"}},
		StartFn: func(cpu int, now ktime.Time, tm sdk.HRTimer, exp ktime.Time, slack int64) sdk.HROpResult {
			got.set(cpu, now, tm, exp, slack)
			return hrOp
		},
		CancelFn: func(cpu int, now ktime.Time, id sdk.TimerID) sdk.HROpResult {
			got.set(cpu, now, id)
			return hrOp
		},
		InterruptFn: func(cpu int, now ktime.Time) sdk.InterruptResult {
			got.set("Interrupt", cpu, now)
			return intr
		},
		RunSoftirqFn: func(cpu int, now ktime.Time) sdk.InterruptResult {
			got.set("RunSoftirq", cpu, now)
			return intr
		},
		RunQueuesFn: func(cpu int, now ktime.Time) sdk.InterruptResult {
			got.set("RunQueues", cpu, now)
			return intr
		},
		ClockWasSetFn: func(cpu int, now ktime.Time, off sdk.ClockOffsets) sdk.HROpResult {
			got.set(cpu, now, off)
			return hrOp
		},
		NextEventFn: func(cpu int, now ktime.Time, ex sdk.TimerID) ktime.Time {
			got.set(cpu, now, ex)
			return 123456789
		},
	}
	c, _ := pair(t, factory(sdk.KindHRTimer, "fake", fake))
	hb := open(t, c, sdk.KindHRTimer, "fake", shim.Options{}).(sdk.HRTimerBase)
	runCalls(t, &got, []call{
		{"Start", func() any { return hb.Start(2, 1000, hrTimer, ktime.Max, 50000) },
			[]any{2, ktime.Time(1000), hrTimer, ktime.Max, int64(50000)}, hrOp},
		{"Start/negative", func() any { return hb.Start(0, 0, hrTimer, -5, 0) },
			[]any{0, ktime.Time(0), hrTimer, ktime.Time(-5), int64(0)}, hrOp},
		{"Cancel", func() any { return hb.Cancel(1, 2000, 9) }, []any{1, ktime.Time(2000), sdk.TimerID(9)}, hrOp},
		{"Interrupt", func() any { return hb.Interrupt(5, 3000) }, []any{"Interrupt", 5, ktime.Time(3000)}, intr},
		{"RunSoftirq", func() any { return hb.RunSoftirq(5, 3100) }, []any{"RunSoftirq", 5, ktime.Time(3100)}, intr},
		{"RunQueues", func() any { return hb.RunQueues(6, 3200) }, []any{"RunQueues", 6, ktime.Time(3200)}, intr},
		{"ClockWasSet", func() any { return hb.ClockWasSet(0, 4000, offsets) }, []any{0, ktime.Time(4000), offsets}, hrOp},
		{"NextEvent", func() any { return hb.NextEvent(3, 5000, 9) }, []any{3, ktime.Time(5000), sdk.TimerID(9)}, ktime.Time(123456789)},
	})
}

func TestClockEventDeviceRoundTrip(t *testing.T) {
	var got recorder
	fake := &shimtest.ClockEventDevice{
		Base:      shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindClockEvent, Name: "fake"}},
		SpecValue: spec,
		SetNextEventFn: func(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
			got.set(ch, now, ticks)
			return program
		},
		SetStateFn: func(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
			got.set(ch, now, st, period)
			return 333, 4000000
		},
		AckFn: func(ch int, now ktime.Time) (int64, ktime.Time) {
			got.set(ch, now)
			return 80, ktime.Max
		},
	}
	c, _ := pair(t, factory(sdk.KindClockEvent, "fake", fake))
	d := open(t, c, sdk.KindClockEvent, "fake", shim.Options{}).(sdk.ClockEventDevice)
	pair2 := func(a int64, b ktime.Time) any { return [2]any{a, b} }
	runCalls(t, &got, []call{
		{"Spec", func() any { return d.Spec() }, nil, spec},
		{"SetNextEvent", func() any { return d.SetNextEvent(4, 1000, 1<<63) }, []any{4, ktime.Time(1000), uint64(1 << 63)}, program},
		{"SetState/periodic", func() any { return pair2(d.SetState(0, 2000, sdk.StatePeriodic, 1000000)) },
			[]any{0, ktime.Time(2000), sdk.StatePeriodic, int64(1000000)}, [2]any{int64(333), ktime.Time(4000000)}},
		{"SetState/oneshot_stopped", func() any { return pair2(d.SetState(1, 2000, sdk.StateOneshotStopped, 0)) },
			[]any{1, ktime.Time(2000), sdk.StateOneshotStopped, int64(0)}, [2]any{int64(333), ktime.Time(4000000)}},
		{"Ack", func() any { return pair2(d.Ack(2, 5000)) }, []any{2, ktime.Time(5000)}, [2]any{int64(80), ktime.Max}},
	})
}

// TestGovernorRoundTrip: every field crosses, and reflections, sent with the
// next call instead of on their own, reach the plugin before that call and in
// their order.
func TestGovernorRoundTrip(t *testing.T) {
	var log []string
	var got recorder
	states := []sdk.CPUIdleState{{Name: "POLL", Polling: true}, {Name: "C6", ExitLatency: 133000, TargetResidency: 600000, StopsLocalTimer: true},
		{Name: "odd", ExitLatency: 1, TargetResidency: 2, Polling: true, StopsLocalTimer: true}}
	requireAllSet(t, "CPUIdleState", states[2])
	sel := sdk.IdleSelect{CPU: 3, Now: 1000, SleepLength: 5000000, DeltaTick: 700000, TickStopped: true, LatencyReq: 20000, TickNsec: 1000000, Util: 77}
	requireAllSet(t, "IdleSelect", sel)
	refl := sdk.IdleReflect{CPU: 3, State: 1, Residency: 4000, Span: 4500, TickWakeup: true}
	requireAllSet(t, "IdleReflect", refl)
	choice := sdk.IdleChoice{State: 1, StopTick: true, Cost: 250}
	fake := &shimtest.Governor{
		Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindGovernor, Name: "fake"},
			CountersFn: func() []sdk.Counter { log = append(log, "Counters"); return nil }},
		EnableFn: func(cpu int, st []sdk.CPUIdleState) { got.set(cpu, st); log = append(log, "Enable") },
		SelectFn: func(r sdk.IdleSelect) sdk.IdleChoice {
			got.set(r)
			log = append(log, "Select")
			return choice
		},
		ReflectFn: func(r sdk.IdleReflect) { log = append(log, fmt.Sprintf("Reflect%d", r.State)); got.set(r) },
	}
	c, _ := pair(t, factory(sdk.KindGovernor, "fake", fake))
	g := open(t, c, sdk.KindGovernor, "fake", shim.Options{}).(sdk.Governor)
	runCalls(t, &got, []call{
		{"Enable", func() any { g.Enable(3, states); return nil }, []any{3, states}, nil},
		{"Select", func() any { return g.Select(sel) }, []any{sel}, choice},
	})
	g.Reflect(refl)
	refl2 := refl
	refl2.State = 0
	g.Reflect(refl2)
	g.Select(sel)
	g.Reflect(refl)
	g.Counters()
	want := []string{"Enable", "Select", "Reflect1", "Reflect0", "Select", "Reflect1", "Counters"}
	if !slices.Equal(log, want) {
		t.Errorf("calls reached the plugin as %v, want %v", log, want)
	}
}

// TestPolicyRoundTrip: every field of each policy decision crosses, both
// ways.
func TestPolicyRoundTrip(t *testing.T) {
	var got recorder
	hr := sdk.HangRequest{CPU: 3, Now: 5000, Entry: 1000, NrHangs: 65535, MaxHangTime: 1<<32 - 1}
	requireAllSet(t, "HangRequest", hr)
	hd := sdk.HangDecision{Delay: 100000000, KeepDetected: true}
	requireAllSet(t, "HangDecision", hd)
	cr := sdk.CatchupRequest{CPU: 2, Base: 1, Jiffies: 1 << 40, Clk: 1<<40 - 300000, Pending: 17}
	requireAllSet(t, "CatchupRequest", cr)
	cd := sdk.CatchupDecision{Mode: sdk.CatchupNextExpiry}
	requireAllSet(t, "CatchupDecision", cd)
	rr := sdk.RestartRequest{CPU: 1, Now: 7000, Old: 9000, New: 8000}
	requireAllSet(t, "RestartRequest", rr)
	rd := sdk.RestartDecision{Deferred: true}
	requireAllSet(t, "RestartDecision", rd)

	hc, _ := pair(t, factory(sdk.KindHangPolicy, "fake", &shimtest.HangPolicy{
		Base:   shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindHangPolicy, Name: "fake"}},
		HangFn: func(r sdk.HangRequest) sdk.HangDecision { got.set(r); return hd }}))
	h := open(t, hc, sdk.KindHangPolicy, "fake", shim.Options{}).(sdk.HangPolicy)
	cc, _ := pair(t, factory(sdk.KindCatchupPolicy, "fake", &shimtest.CatchupPolicy{
		Base:      shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindCatchupPolicy, Name: "fake"}},
		CatchupFn: func(r sdk.CatchupRequest) sdk.CatchupDecision { got.set(r); return cd }}))
	c := open(t, cc, sdk.KindCatchupPolicy, "fake", shim.Options{}).(sdk.CatchupPolicy)
	rc, _ := pair(t, factory(sdk.KindRestartPolicy, "fake", &shimtest.RestartPolicy{
		Base:      shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindRestartPolicy, Name: "fake"}},
		RestartFn: func(r sdk.RestartRequest) sdk.RestartDecision { got.set(r); return rd }}))
	r := open(t, rc, sdk.KindRestartPolicy, "fake", shim.Options{}).(sdk.RestartPolicy)
	runCalls(t, &got, []call{
		{"Hang", func() any { return h.Hang(hr) }, []any{hr}, hd},
		{"Catchup", func() any { return c.Catchup(cr) }, []any{cr}, cd},
		{"Restart", func() any { return r.Restart(rr) }, []any{rr}, rd},
	})
}

// TestPluginCallsRoundTrip covers the sdk.Plugin calls of every kind.
func TestPluginCallsRoundTrip(t *testing.T) {
	info := func(k sdk.Kind) sdk.Info {
		return sdk.Info{Kind: k, Name: "fake", Version: "1.2.3", Description: "a fake " + string(k)}
	}
	schema := sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "mode", Type: sdk.TypeString, Required: true, Default: "oneshot", OneOf: []string{"oneshot", "periodic"}, Min: "a", Max: "z", Doc: "how",
			Eras: []sdk.Era{{Since: "3.10", Value: "oneshot", Commit: "0123456789ab", Title: "t", Note: "n", Backports: "6.18.44"}}, Unversioned: "why"},
		{Name: "cost", Type: sdk.TypeDuration, Default: "250ns", Min: "1ns", Max: "1ms", Doc: "write cost"},
	}}
	setup := sdk.Setup{CPUs: 64, HZ: 250, HighRes: true, Seed: 1<<64 - 1, Role: "broadcast",
		TimerMigration: true, TimerHousekeeping: &sdk.CPUSet{0x6, 1 << 63}}
	config := sdk.Config{"mode": "periodic", "cost": "250", "ratio": "0.5", "empty": ""}
	diags := sdk.Diagnostics{
		{Severity: sdk.SeverityError, Summary: "bad mode", Detail: "periodic is not supported", Attribute: "mode"},
		{Severity: sdk.SeverityWarning, Summary: "odd cost"},
	}
	counters := []sdk.Counter{{Name: "writes", CPU: -1, Value: 1 << 40}, {Name: "acks", CPU: 3, Value: 9}}
	requireAllSet(t, "Schema.Attributes[0]", schema.Attributes[0])
	requireAllSet(t, "Setup", setup)
	requireAllSet(t, "Diagnostic", diags[0])
	requireAllSet(t, "Counter", counters[1])

	for _, k := range shim.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			var got recorder
			b := shimtest.Base{
				InfoValue:   info(k),
				SchemaValue: schema,
				ConfigureFn: func(s sdk.Setup, c sdk.Config) sdk.Diagnostics { got.set(s, c); return diags },
				CountersFn:  func() []sdk.Counter { return counters },
			}
			var p sdk.Plugin
			switch k {
			case sdk.KindTimerBase:
				p = &shimtest.TimerBase{Base: b}
			case sdk.KindHRTimer:
				p = &shimtest.HRTimerBase{Base: b}
			case sdk.KindClockEvent:
				p = &shimtest.ClockEventDevice{Base: b}
			case sdk.KindGovernor:
				p = &shimtest.Governor{Base: b}
			case sdk.KindHangPolicy:
				p = &shimtest.HangPolicy{Base: b}
			case sdk.KindCatchupPolicy:
				p = &shimtest.CatchupPolicy{Base: b}
			case sdk.KindRestartPolicy:
				p = &shimtest.RestartPolicy{Base: b}
			default:
				t.Fatalf("no fake for kind %q", k)
			}
			c, _ := pair(t, factory(k, "fake", p))
			cl := open(t, c, k, "fake", shim.Options{})
			runCalls(t, &got, []call{
				{"Info", func() any { return cl.Info() }, nil, info(k)},
				{"Schema", func() any { return cl.Schema() }, nil, schema},
				{"Configure", func() any { return cl.Configure(setup, config) }, []any{setup, config}, diags},
				{"Configure/empty", func() any { return cl.Configure(sdk.Setup{}, nil) }, []any{sdk.Setup{}, sdk.Config{}}, diags},
				{"Counters", func() any { return cl.Counters() }, nil, counters},
			})
		})
	}
}
