package kernel

import (
	"math/rand/v2"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// TestWheelNextTimerRepeats runs one random script of wheel calls (timers
// armed, deleted and run on 3 CPUs, jiffies advancing, idle entries asking
// get_next_timer_interrupt() several times per jiffy) on two kernels over
// the levels wheel: one skips the repeats the wheel's
// sdk.RepeatFreeNextTimer promise allows, the other asks every time. Every
// answer and every CPU's wheel state must be the same, and the first must
// have skipped calls. A wheel call that did not end a repeat (a missing
// Kernel.wheelGen bump) answers from a stale answer and fails it.
func TestWheelNextTimerRepeats(t *testing.T) {
	const ncpu = 3
	mk := func(skip bool) (*Kernel, []*WheelTimer) {
		w := ConfigureWith(t, wheel.New(), sdk.Setup{CPUs: ncpu, HZ: 1000, HighRes: true, Seed: 1},
			sdk.Config{"layout": "levels", "catchup": "next_expiry"}).(sdk.TimerBase)
		k := &Kernel{wheelHost: wheelHost{wheel: w}, kernelConfig: kernelConfig{tickNsec: 1000000}}
		k.wheelInPlace, _ = w.(sdk.InPlaceNextTimer)
		k.wheelRepeatFree = skip && w.(sdk.RepeatFreeNextTimer).NextTimerRepeatFree()
		k.tk.jiffies = 5000
		k.tk.lastJiffiesUpdate = 5000 * ktime.Time(ktime.Millisecond)
		k.tk.tickNextPeriod = k.tk.lastJiffiesUpdate + ktime.Time(k.tickNsec)
		k.cpus = newCPUs(k, ncpu, nil)
		var ts []*WheelTimer
		for i := 0; i < 8; i++ {
			ts = append(ts, k.NewWheelTimer("t", 0, 10, 0, nil))
		}
		return k, ts
	}
	a, ta := mk(true)
	b, tb := mk(false)
	if !a.wheelRepeatFree {
		t.Fatal("the levels wheel makes no repeat-free promise")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	now := a.tk.lastJiffiesUpdate
	skipped := 0
	for i := 0; i < 20000; i++ {
		cpu := rng.IntN(ncpu)
		id := rng.IntN(8)
		switch op := rng.IntN(20); {
		case op < 2:
			exp := a.tk.jiffies + 1 + uint64(rng.IntN(6))
			a.modTimer(a.cpus[cpu], now, ta[id], exp)
			b.modTimer(b.cpus[cpu], now, tb[id], exp)
		case op < 3:
			a.delTimer(a.cpus[cpu], now, ta[id])
			b.delTimer(b.cpus[cpu], now, tb[id])
		case op < 4:
			runTimerSoftirq(a.cpus[cpu], now)
			runTimerSoftirq(b.cpus[cpu], now)
		case op < 6:
			now += ktime.Time(rng.IntN(700000))
			a.doUpdateJiffies(now)
			b.doUpdateJiffies(now)
		default:
			ca, cb := a.cpus[cpu], b.cpus[cpu]
			if ca.ntiGen == a.wheelGen+1 {
				skipped++
			}
			na, costA := ca.wheelNextEvent(a.tk.jiffies)
			nb, costB := cb.wheelNextEvent(b.tk.jiffies)
			if na != nb || costA != costB || ca.wheel != cb.wheel {
				t.Fatalf("step %d, cpu%d at jiffies %d: answered %d (cost %d, state %+v), asking every time %d (cost %d, state %+v)",
					i, cpu, a.tk.jiffies, na, costA, ca.wheel, nb, costB, cb.wheel)
			}
		}
	}
	if skipped == 0 {
		t.Error("no repeat was skipped")
	}
	t.Logf("%d repeats skipped", skipped)
}
