package kernel

import (
	"testing"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/plugins/hrtimer"
	"github.com/tickemu/tickemu/plugins/lapic"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// TestLazyIRQWorkHoldsTick: clockevents_increase_min_delta()'s
// printk_deferred() queues printk's lazy irq_work; until the next tick runs
// it (irq_work_tick()), tick_nohz_next_event() keeps the tick
// (irq_work_needs_cpu()), counted as tick_keep:irq_work. With the tick
// already stopped the work is raised by the self-IPI and holds nothing.
func TestLazyIRQWorkHoldsTick(t *testing.T) {
	setup := sdk.Setup{CPUs: 1, HZ: 250, HighRes: true, Seed: 1}
	wb := ConfigureWith(t, wheel.New(), setup, nil).(sdk.TimerBase)
	hb := ConfigureWith(t, hrtimer.New(), setup, nil).(sdk.HRTimerBase)
	setup.Role = "local"
	dev := ConfigureWith(t, lapic.New(), setup, nil).(sdk.ClockEventDevice)
	local, err := clockevents.New(dev, clockevents.Options{HZ: 250})
	if err != nil {
		t.Fatal(err)
	}
	k, err := New(Options{Machine: Machine{CPUs: 1, HZ: 250, NoHZ: "idle", HighRes: true},
		Settings: KernelSettings{PosixTimerSignals: "consistent", Costs: DefaultCosts()},
		Plugins:  Plugins{Wheel: wb, HRTimer: hb, Local: local}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	k.Boot()
	c := k.cpus[0]
	now := ktime.Time(10 * ktime.Millisecond)
	c.ts.tickStopped = false
	if e, _ := c.nohzNextEvent(now); e == 0 {
		t.Fatalf("nothing queued: the tick is kept (next event %v); want a stop", e)
	}
	// One min_delta_ns raise, as clockevents_program_min_delta() reports it.
	c.programmed(now, &clockevents.ProgramResult{FireAt: ktime.Max, Raises: 1, MinDeltaFrom: 1000, MinDeltaNs: 5000})
	keep := k.Counters.Get("tick_keep:irq_work", 0)
	if e, _ := c.nohzNextEvent(now); e != 0 {
		t.Errorf("lazy irq_work queued: next event %v; want 0, the tick kept", e)
	}
	if got := k.Counters.Get("tick_keep:irq_work", 0); got != keep+1 {
		t.Errorf("tick_keep:irq_work = %d, want %d", got, keep+1)
	}
	c.tickHandle(now) // irq_work_tick() runs the lazy list
	if e, _ := c.nohzNextEvent(now); e == 0 {
		t.Error("after the tick ran the lazy irq_work, the tick is still kept")
	}
	// A give-up message on a CPU whose tick is stopped: the self-IPI.
	c.ts.tickStopped = true
	c.programmed(now, &clockevents.ProgramResult{FireAt: ktime.Max, GaveUp: true})
	if c.ts.lazyIRQWork {
		t.Error("lazy irq_work left queued on a CPU whose tick is stopped; irq_work_raise() runs it")
	}
}
