package sdktest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/simrand"
)

// govCPUs is the machine size of the Governor suite.
const govCPUs = 2

// govStates is the cpuidle driver of the suite: the x86 polling state, then
// a C1 and a C6 that stops the local timer (intel_idle's Skylake figures).
var govStates = []sdk.CPUIdleState{
	{Name: "POLL", Polling: true},
	{Name: "C1", ExitLatency: 2000, TargetResidency: 2000},
	{Name: "C6", ExitLatency: 133000, TargetResidency: 600000, StopsLocalTimer: true},
}

// RunGovernor runs the conformance suite for a sdk.Governor. newPlugin returns
// a fresh, unconfigured plugin each time it is called; the suite configures
// it with its schema's defaults for a 2-CPU HZ=1000 machine and enables both
// CPUs with a POLL, C1, C6 driver.
//
// It checks: Info and the schema are well formed; every answer names one of
// the CPU's states and has a cost >= 0; the chosen state's exit latency meets
// the PM QoS limit (LatencyReq), a limit of 0 giving state 0; no state but
// state 0 is chosen whose target residency exceeds the sleep length (the
// known time till the next timer); Reflect accepts every state; Counters are
// stable and well formed; and two fresh instances given the same seeded
// script of selections and reflections answer identically, also when the
// script interleaves the CPUs.
func RunGovernor(t *testing.T, newPlugin func(t *testing.T) sdk.Governor) {
	t.Helper()
	t.Run("Info", func(t *testing.T) {
		i := newPlugin(t).Info()
		if i.Kind != sdk.KindGovernor || i.Name == "" || i.Version == "" || i.Description == "" {
			t.Errorf("Info() = %+v, want kind %q, a name, version and description", i, sdk.KindGovernor)
		}
	})
	t.Run("Schema", func(t *testing.T) { checkSchema(t, newPlugin(t).Schema()) })
	fresh := func(t *testing.T) sdk.Governor { return govFresh(t, newPlugin) }
	t.Run("Choices", func(t *testing.T) { govScript(t, fresh(t), 2000, true) })
	t.Run("ZeroLatency", func(t *testing.T) {
		g := fresh(t)
		for _, sleep := range []int64{500, 50000, 5000000, int64(ktime.Max)} {
			for _, stopped := range []bool{false, true} {
				r := govRequest(0, 1000, sleep, stopped)
				r.LatencyReq = 0
				if a := g.Select(r); a.State != 0 {
					t.Errorf("Select(%+v) = state %d, want 0: a PM QoS limit of 0 allows no exit latency", r, a.State)
				}
				g.Reflect(sdk.IdleReflect{CPU: 0, State: 0, Residency: 100, Span: 200})
			}
		}
	})
	t.Run("Reflect", func(t *testing.T) {
		g := fresh(t)
		for cpu := 0; cpu < govCPUs; cpu++ {
			for s := range govStates {
				g.Select(govRequest(cpu, 1000, 10000000, true))
				g.Reflect(sdk.IdleReflect{CPU: cpu, State: s, Residency: 5000, Span: 6000, TickWakeup: s == 1})
			}
		}
		g.Select(govRequest(1, 2000, 10000000, false))
	})
	t.Run("Deterministic", func(t *testing.T) {
		a := govScript(t, fresh(t), 500, false)
		b := govScript(t, fresh(t), 500, false)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("two fresh instances answered differently:\n%v\n%v", a, b)
		}
	})
	t.Run("Counters", func(t *testing.T) {
		g := fresh(t)
		govScript(t, g, 200, false)
		a, b := g.Counters(), g.Counters()
		if !reflect.DeepEqual(a, b) {
			t.Errorf("Counters() not stable: %v then %v", a, b)
		}
		for _, c := range a {
			if c.Name == "" || c.CPU < -1 || c.CPU >= govCPUs || c.Value < 0 {
				t.Errorf("counter %+v: want a name, CPU in [-1, %d) and a value >= 0", c, govCPUs)
			}
		}
	})
}

// govFresh makes, configures and enables a new instance.
func govFresh(t *testing.T, newPlugin func(*testing.T) sdk.Governor) sdk.Governor {
	t.Helper()
	g := newPlugin(t)
	cfg := mustDefaults(t, g.Schema())
	if d := g.Configure(sdk.Setup{CPUs: govCPUs, HZ: 1000, HighRes: true, Seed: 1}, cfg); d.HasErrors() {
		t.Fatalf("Configure(defaults) = %v", d)
	}
	for cpu := 0; cpu < govCPUs; cpu++ {
		g.Enable(cpu, govStates)
	}
	return g
}

// govRequest is a selection on cpu at now with the given sleep length and no
// PM QoS limit; the tick, when running, is due within the sleep length.
func govRequest(cpu int, now ktime.Time, sleep int64, stopped bool) sdk.IdleSelect {
	delta := sleep
	if !stopped {
		delta = min(sleep, 1000000-int64(now)%1000000)
	}
	return sdk.IdleSelect{CPU: cpu, Now: now, SleepLength: sleep, DeltaTick: delta, TickStopped: stopped,
		LatencyReq: sdk.NoLatencyLimit, TickNsec: 1000000}
}

// govScript drives g through n seeded idle entries spread over the CPUs, with
// sleep lengths from 1 us to 1 s, PM QoS limits, running and stopped ticks,
// early and on-time wakeups; it checks every answer and returns them.
func govScript(t *testing.T, g sdk.Governor, n int, check bool) []sdk.IdleChoice {
	t.Helper()
	rng := simrand.New(1, "sdktest/governor")
	now := ktime.Time(1000)
	var out []sdk.IdleChoice
	for i := 0; i < n; i++ {
		cpu := intn(rng, govCPUs)
		sleep := int64(1000) << intn(rng, 21) // 1 us .. ~1 s
		if intn(rng, 8) == 0 {
			sleep = int64(ktime.Max)
		}
		r := govRequest(cpu, now, sleep, intn(rng, 2) == 0)
		switch intn(rng, 4) {
		case 0:
			r.LatencyReq = 1000 // POLL only
		case 1:
			r.LatencyReq = 50000 // up to C1
		}
		r.Util = int64(intn(rng, sdk.CapacityScale+1))
		a := g.Select(r)
		out = append(out, a)
		if check {
			govCheck(t, r, a)
		}
		st := a.State
		if st < 0 || st >= len(govStates) {
			st = 0
		}
		// The CPU sleeps the whole sleep length, or wakes early.
		res := min(sleep, 10000000)
		if intn(rng, 2) == 0 {
			res = int64(rng.Int63n(res) + 1)
		}
		g.Reflect(sdk.IdleReflect{CPU: cpu, State: st, Residency: res, Span: res + 500, TickWakeup: !r.TickStopped && intn(rng, 4) == 0})
		now += ktime.Time(res + 1000)
	}
	return out
}

// govCheck checks one answer against the contract.
func govCheck(t *testing.T, r sdk.IdleSelect, a sdk.IdleChoice) {
	t.Helper()
	what := fmt.Sprintf("Select(cpu %d, sleep %d, delta_tick %d, stopped %v, latency_req %d)", r.CPU, r.SleepLength, r.DeltaTick, r.TickStopped, r.LatencyReq)
	if a.State < 0 || a.State >= len(govStates) {
		t.Errorf("%s = state %d, want 0..%d", what, a.State, len(govStates)-1)
		return
	}
	if a.Cost < 0 {
		t.Errorf("%s costs %d ns, want >= 0", what, a.Cost)
	}
	s := govStates[a.State]
	if s.ExitLatency > r.LatencyReq {
		t.Errorf("%s = %s, whose exit latency %d ns exceeds the PM QoS limit", what, s.Name, s.ExitLatency)
	}
	if a.State > 0 && s.TargetResidency > r.SleepLength {
		t.Errorf("%s = %s, whose target residency %d ns exceeds the time till the next timer", what, s.Name, s.TargetResidency)
	}
}

func intn(r *simrand.Rand, n int) int { return int(r.Int63n(int64(n))) }
