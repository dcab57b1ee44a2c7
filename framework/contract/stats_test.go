package contract_test

import (
	"reflect"
	"testing"

	"github.com/tickemu/tickemu/framework/contract"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// checkedDevice is what the clockevents core asks of a checked device.
type checkedDevice interface {
	Unchecked() sdk.ClockEventDevice
	MaxCost() int64
	CheckSetNextEvent(ch int, now ktime.Time, ticks uint64, r sdk.ProgramResult)
	CheckAck(now ktime.Time, cost int64, next ktime.Time)
}

// optional are the interfaces the host looks for on a checked plugin.
var optional = []reflect.Type{
	reflect.TypeFor[sdk.TimerBase](), reflect.TypeFor[sdk.InPlaceNextTimer](), reflect.TypeFor[sdk.RepeatFreeNextTimer](),
	reflect.TypeFor[sdk.RemoteTimerBase](), reflect.TypeFor[sdk.HRTimerBase](), reflect.TypeFor[sdk.NextEventStarter](),
	reflect.TypeFor[sdk.ClockEventDevice](), reflect.TypeFor[checkedDevice](), reflect.TypeFor[sdk.Governor](),
	reflect.TypeFor[sdk.HangPolicy](), reflect.TypeFor[sdk.CatchupPolicy](), reflect.TypeFor[sdk.RestartPolicy](),
}

func implemented(p sdk.Plugin) []string {
	var out []string
	for _, t := range optional {
		if reflect.TypeOf(p).Implements(t) {
			out = append(out, t.String())
		}
	}
	return out
}

// TestCountKeepsInterfaces: the meter in front of a checker implements
// what the checker does, for every builtin plugin and for an hrtimer with
// sdk.NextEventStarter (the out-of-process client), and Unwrap sees
// through both to the plugin.
func TestCountKeepsInterfaces(t *testing.T) {
	type plugin struct {
		kind sdk.Kind
		name string
		p    sdk.Plugin
	}
	var ps []plugin
	for _, f := range builtin.Factories() {
		ps = append(ps, plugin{f.Kind, f.Name, f.New()})
	}
	var n int
	ps = append(ps, plugin{sdk.KindHRTimer, "starter", startingHRTimer{builtinPlugin(t, "hrtimer").(sdk.HRTimerBase), &n}})
	for _, p := range ps {
		w := contract.Wrap(p.kind, p.name, p.p, contract.Limits{CPUs: 2})
		m, meter := contract.Count(w)
		if meter == nil {
			t.Errorf("%s %s: Count metered nothing", p.kind, p.name)
			continue
		}
		if got, want := implemented(m), implemented(w); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: metered implements %v, the checker %v", p.kind, p.name, got, want)
		}
		if contract.Unwrap(m) != p.p {
			t.Errorf("%s %s: Unwrap of the metered plugin is not the plugin", p.kind, p.name)
		}
		if meter.OutOfProcess() {
			t.Errorf("%s %s: a linked-in plugin counts as out of process", p.kind, p.name)
		}
	}
}

// trippingHRTimer is an hrtimer whose NextEvent and Interrupt cost a round
// trip each, as an out-of-process client's might.
type trippingHRTimer struct {
	startingHRTimer
	trips *uint64
}

func (h trippingHRTimer) SessionRoundTrips() uint64 { return *h.trips }

func (h trippingHRTimer) StartNextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) func() ktime.Time {
	*h.trips++
	return h.startingHRTimer.StartNextEvent(cpu, now, exclude)
}

func (h trippingHRTimer) Interrupt(cpu int, now ktime.Time) sdk.InterruptResult {
	*h.trips++
	return sdk.InterruptResult{End: now - 1} // a lie: ends before it starts
}

// TestCountCounts: a meter counts each call once, a split NextEvent as a
// NextEvent, the round trips the plugin's session made during each call,
// and a call the checker refuses (it panics).
func TestCountCounts(t *testing.T) {
	real := builtinPlugin(t, "hrtimer").(sdk.HRTimerBase)
	var n int
	var trips uint64
	p := trippingHRTimer{startingHRTimer{real, &n}, &trips}
	m, meter := contract.Count(contract.Wrap(sdk.KindHRTimer, "hrtimer", p, contract.Limits{CPUs: 1}))
	if !meter.OutOfProcess() {
		t.Error("a plugin with a session counts as linked in")
	}
	if d := m.Configure(sdk.Setup{CPUs: 1, HZ: 1000, HighRes: true}, hostDefaults(t, real)); d.HasErrors() {
		t.Fatal(d)
	}
	hb := m.(sdk.HRTimerBase)
	hb.Start(0, 0, sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic}, 5000, 0)
	hb.Start(0, 0, sdk.HRTimer{ID: 2, Clock: sdk.ClockMonotonic}, 6000, 0)
	if got := m.(sdk.NextEventStarter).StartNextEvent(0, 0, 0)(); got != 5000 {
		t.Errorf("NextEvent %d, want 5000", got)
	}
	func() {
		defer func() {
			if _, ok := recover().(*sdk.ContractError); !ok {
				t.Error("the lie passed")
			}
		}()
		hb.Interrupt(0, 100)
	}()
	var got []contract.CallStats
	for _, c := range meter.Calls() {
		if c.Wall < 0 {
			t.Errorf("%s: wall time %v", c.Call, c.Wall)
		}
		c.Wall = 0
		got = append(got, c)
	}
	want := []contract.CallStats{
		{Call: "Configure", Calls: 1}, {Call: "Start", Calls: 2}, {Call: "Interrupt", Calls: 1, RoundTrips: 1},
		{Call: "NextEvent", Calls: 1, RoundTrips: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("counted %+v, want %+v", got, want)
	}
}
