package shim_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/shim"
	"github.com/tickemu/tickemu/plugins/hrtimer"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// lyingHRTimer declares the builtin's model with a Start cost off by 1 ns.
type lyingHRTimer struct{ *hrtimer.Plugin }

func (l lyingHRTimer) HRTimerModel(cpu int) sdk.HRTimerModel {
	m := l.Plugin.HRTimerModel(cpu)
	m.StartCost++
	return m
}

func configured(t *testing.T, p sdk.Plugin, s sdk.Setup) {
	t.Helper()
	c := sdk.Config{}
	for _, a := range p.Schema().Attributes {
		c[a.Name] = a.Default
	}
	if d := p.Configure(s, c); d.HasErrors() {
		t.Fatal(d)
	}
}

// TestHRTimerModelHoldsCalls: with the builtin's declared model, starts and
// next-event queries cost no round trip of their own and answer what the
// plugin answers in process; a plugin whose model lies is caught at its next
// waited-for call, naming the call.
func TestHRTimerModelHoldsCalls(t *testing.T) {
	setup := sdk.Setup{CPUs: 2, HZ: 1000, HighRes: true, Seed: 1}
	for _, lie := range []bool{false, true} {
		var p sdk.Plugin = hrtimer.New()
		if lie {
			p = lyingHRTimer{p.(*hrtimer.Plugin)}
		}
		c, _ := pair(t, factory(sdk.KindHRTimer, "hrtimer", p))
		remote := open(t, c, sdk.KindHRTimer, "hrtimer", shim.Options{}).(sdk.HRTimerBase)
		local := hrtimer.New().(sdk.HRTimerBase)
		configured(t, remote, setup)
		configured(t, local, setup)
		rt0 := shim.RoundTrips()
		var ce *sdk.ContractError
		func() {
			defer func() { ce, _ = recover().(*sdk.ContractError) }()
			for i := range 50 {
				now := ktime.Time(1000 + 10000*i)
				ht := sdk.HRTimer{ID: sdk.TimerID(1 + 3*(i%2) + (i/2)%3), Clock: sdk.ClockMonotonic} // per CPU
				exp := now + ktime.Time(5000*(i%4))
				if got, want := remote.Start(i%2, now, ht, exp, 0), local.Start(i%2, now, ht, exp, 0); sprint(got) != sprint(want) && !lie {
					t.Fatalf("Start %d = %s over the wire, %s in process", i, sprint(got), sprint(want))
				}
				if got, want := remote.NextEvent(i%2, now, 1), local.NextEvent(i%2, now, 1); got != want && !lie {
					t.Fatalf("NextEvent %d = %d over the wire, %d in process", i, got, want)
				}
			}
			remote.Counters()
		}()
		trips := shim.RoundTrips() - rt0
		if !lie {
			if ce != nil {
				t.Fatalf("honest model: %v", ce)
			}
			// The first start of each CPU is asked (no model before the
			// Configure answer's), and Counters.
			if trips > 4 {
				t.Errorf("100 modelled calls cost %d round trips, want at most 4", trips)
			}
			continue
		}
		if ce == nil || ce.Call != "Start" || !strings.Contains(ce.Error(), "sdk.HRTimerModel") {
			t.Fatalf("lying model: got %v, want a ContractError in Start naming sdk.HRTimerModel", ce)
		}
	}
}

// lyingWheel declares the builtin's NextTimerInterrupt model one jiffy off.
type lyingWheel struct{ *wheel.Wheel }

func (l lyingWheel) NextTimerModel(cpu int) sdk.NextTimerModel {
	m := l.Wheel.NextTimerModel(cpu)
	m.Expiry++
	return m
}

// TestNextTimerModelHoldsCalls: the wheel's declared model answers idle
// entries without a round trip, as the plugin does in process; a lying one is
// caught.
func TestNextTimerModelHoldsCalls(t *testing.T) {
	setup := sdk.Setup{CPUs: 2, HZ: 1000, Seed: 1}
	for _, lie := range []bool{false, true} {
		var p sdk.Plugin = wheel.New()
		if lie {
			p = lyingWheel{p.(*wheel.Wheel)}
		}
		c, _ := pair(t, factory(sdk.KindTimerBase, "wheel", p))
		remote := open(t, c, sdk.KindTimerBase, "wheel", shim.Options{}).(sdk.TimerBase)
		local := wheel.New().(sdk.TimerBase)
		configured(t, remote, setup)
		configured(t, local, setup)
		for _, w := range []sdk.TimerBase{remote, local} {
			w.ModTimer(0, 10, sdk.WheelTimer{ID: 1, Expires: 500})
			w.ModTimer(1, 10, sdk.WheelTimer{ID: 2, Expires: 90})
		}
		rt0 := shim.RoundTrips()
		var ce *sdk.ContractError
		func() {
			defer func() { ce, _ = recover().(*sdk.ContractError) }()
			for j := uint64(10); j < 200; j += 7 {
				if got, want := remote.NextTimerInterrupt(int(j)%2, j), local.NextTimerInterrupt(int(j)%2, j); got != want && !lie {
					t.Fatalf("NextTimerInterrupt(%d) = %+v over the wire, %+v in process", j, got, want)
				}
			}
			remote.Counters()
		}()
		trips := shim.RoundTrips() - rt0
		if !lie {
			if ce != nil {
				t.Fatalf("honest model: %v", ce)
			}
			if trips != 1 {
				t.Errorf("28 modelled calls and Counters cost %d round trips, want 1", trips)
			}
			continue
		}
		if ce == nil || ce.Call != "NextTimerInterrupt" || !strings.Contains(ce.Error(), "sdk.NextTimerModel") {
			t.Fatalf("lying model: got %v, want a ContractError in NextTimerInterrupt naming sdk.NextTimerModel", ce)
		}
	}
}

func sprint(r sdk.HROpResult) string {
	if len(r.Program) == 0 {
		r.Program = nil
	}
	return fmt.Sprintf("%+v", r)
}

// TestHRTimerStartWhileAnotherCPURuns: while CPU 0 runs a timer's callback,
// a Start on CPU 1 of another timer is answered from CPU 1's model (CPU 0's
// handler does not touch it), but a Start of the running timer is asked
// (switch_hrtimer_base() keeps it on CPU 0 until its callback returns), and
// both answer what the plugin answers in process.
func TestHRTimerStartWhileAnotherCPURuns(t *testing.T) {
	setup := sdk.Setup{CPUs: 2, HZ: 1000, HighRes: true, Seed: 1}
	c, _ := pair(t, factory(sdk.KindHRTimer, "hrtimer", hrtimer.New()))
	remote := open(t, c, sdk.KindHRTimer, "hrtimer", shim.Options{}).(sdk.HRTimerBase)
	local := hrtimer.New().(sdk.HRTimerBase)
	configured(t, remote, setup)
	configured(t, local, setup)
	running := sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, CallbackCost: 50_000}
	other := sdk.HRTimer{ID: 2, Clock: sdk.ClockMonotonic, CallbackCost: 1000}
	start := func(what string, cpu int, now ktime.Time, ht sdk.HRTimer, exp ktime.Time) uint64 {
		t.Helper()
		rt0 := shim.RoundTrips()
		if got, want := remote.Start(cpu, now, ht, exp, 0), local.Start(cpu, now, ht, exp, 0); sprint(got) != sprint(want) {
			t.Fatalf("%s: Start = %s over the wire, %s in process", what, sprint(got), sprint(want))
		}
		return shim.RoundTrips() - rt0
	}
	start("warm-up", 0, 1000, running, 10_000)
	start("warm-up", 1, 1000, other, 500_000)
	remote.Counters() // both CPUs' models come with the answer
	for _, b := range []sdk.HRTimerBase{remote, local} {
		if r := b.Interrupt(0, 10_000); len(r.Expired) != 1 || r.End < 60_000 {
			t.Fatalf("Interrupt(0) = %+v, want timer 1 expired, running until after 60 us", r)
		}
	}
	if n := start("another timer on CPU 1 while CPU 0's callback runs", 1, 20_000, other, 600_000); n != 0 {
		t.Errorf("a Start on CPU 1 of a timer CPU 0 does not run made %d round trips, want 0 (its model answers)", n)
	}
	if n := start("the running timer on CPU 1", 1, 21_000, running, 700_000); n != 1 {
		t.Errorf("a Start of the timer whose callback runs on CPU 0 made %d round trips, want 1 (asked)", n)
	}
	remote.Counters()
}
