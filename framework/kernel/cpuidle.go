package kernel

import (
	"fmt"
	"math"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// cpuidleDevice is a CPU's governor state (the parts of struct
// cpuidle_device the model uses, and the utilisation the governor reads): the
// pending choice (an index into Kernel.govStates), whether the CPU is in a
// state the governor chose, when it selected and entered it, and the
// PELT-like utilisation.
type cpuidleDevice struct {
	state      int32
	pending    bool
	entered    bool
	selectAt   ktime.Time
	enteredAt  ktime.Time
	util       float64
	utilAt     ktime.Time
	utilTaskNS int64
}

// The cpuidle core between the idle loop and the governor plugin
// (kernel/sched/idle.c:cpuidle_idle_call(), drivers/cpuidle/cpuidle.c).
//
// A machine with idle_state blocks has a cpuidle driver whose state 0 is the
// polling loop (x86 poll_idle()) followed by the machine's states; its CPUs
// ask the governor on every idle entry. Without idle states there is no
// driver (cpuidle_not_available()): the idle loop stops the tick whenever
// NO_HZ allows and polls, with no governor. Without a governor plugin (kernel
// tests) the engine picks the state itself with the always_stop rule.

// utilHalfLife is PELT's half-life (32 ms): a CPU's utilisation halves after
// 32 ms without running a task.
const utilHalfLife = 32 * ktime.Millisecond

// cpuidleStates is the driver's state table as the governor sees it.
func (k *Kernel) cpuidleStates() []sdk.CPUIdleState {
	out := []sdk.CPUIdleState{{Name: "POLL", Polling: true}}
	for _, s := range k.m.IdleStates {
		out = append(out, sdk.CPUIdleState{Name: s.Name, ExitLatency: s.ExitLatency,
			TargetResidency: s.TargetResidency, StopsLocalTimer: s.StopsLocalTimer})
	}
	return out
}

// governed reports whether idle entries ask the governor plugin.
func (k *Kernel) governed() bool { return k.gov != nil && len(k.m.IdleStates) > 0 }

// enableGovernor is cpuidle_enable_device() on every CPU at boot.
func (k *Kernel) enableGovernor() {
	if !k.governed() {
		return
	}
	k.govStates = k.cpuidleStates()
	k.govName = k.gov.Info().Name
	for _, c := range k.cpus {
		k.gov.Enable(c.id, k.govStates)
	}
}

// utilDecay is the decay factor 2^(-dt/utilHalfLife) of an interval of dt
// ns, the math.Exp2 result itself. Idle entries recur at a few distinct
// intervals (a periodic task's; on CPUs in lockstep the same one on every
// CPU), so the values are kept in a small direct-mapped table keyed by the
// exact interval: a hit is the very float64 math.Exp2 returned for that dt.
// The kernel's PELT (kernel/sched/pelt.c:decay_load()) decays in 1024 us
// periods with an integer table; the model's average is continuous in time.
type utilDecay [1 << utilDecayBits]struct {
	dt int64 // 0: empty (intervals are positive)
	y  float64
}

// utilDecayBits sizes utilDecay: 1024 slots of 16 bytes.
const utilDecayBits = 10

// of returns 2^(-dt/utilHalfLife) for dt > 0.
func (d *utilDecay) of(dt int64) float64 {
	e := &d[uint64(dt)*0x9e3779b97f4a7c15>>(64-utilDecayBits)] // Fibonacci hashing
	if e.dt != dt {
		e.dt, e.y = dt, math.Exp2(-float64(dt)/float64(utilHalfLife))
	}
	return e.y
}

// utilShare is the task's share of an interval of dt > 0 ns in which it ran
// for d ns, clamped to [0, 1]: math.Min(math.Max(float64(d)/float64(dt), 0),
// 1), bit for bit (TestUtilShare), without the division when the clamp
// decides (int64 to float64 conversion is monotonic, so d >= dt gives a
// quotient >= 1) and without math.Min and math.Max, which are assembly
// calls on amd64.
func utilShare(d, dt int64) float64 {
	switch {
	case d <= 0:
		return 0
	case d >= dt:
		return 1
	}
	return float64(d) / float64(dt)
}

// updateUtil folds the CPU's task time since the last call into its
// PELT-like utilisation (SCHED_CAPACITY_SCALE units), the task time being
// spread evenly over the interval; it returns the new value.
func (c *CPU) updateUtil(now ktime.Time) int64 {
	dt := int64(now - c.cpuidle.utilAt)
	if dt > 0 {
		task := c.ctxNS[ctxTask]
		frac := utilShare(task-c.cpuidle.utilTaskNS, dt)
		y := c.k.utilDecay.of(dt)
		c.cpuidle.util = c.cpuidle.util*y + frac*sdk.CapacityScale*(1-y)
		c.cpuidle.utilAt, c.cpuidle.utilTaskNS = now, task
	}
	return int64(c.cpuidle.util)
}

// cpuidleSelect is the governed half of cpuidle_idle_call() at now:
// tick_nohz_get_sleep_length(), the governor's ->select(), then
// tick_nohz_idle_stop_tick() when it asks to stop the tick or the tick is
// stopped already, else tick_nohz_idle_retain_tick(). The chosen state is
// entered by enterIdleState once the bookkeeping is done. It returns the cost.
func (c *CPU) cpuidleSelect(now ktime.Time) int64 {
	k := c.k
	var cost int64
	// tick_nohz_get_sleep_length(&delta_next).
	deltaNext := int64(ktime.Max)
	devNext := k.local.NextEvent(c.id)
	if devNext != ktime.Max {
		deltaNext = max(int64(devNext-now), 0)
	}
	sleep := deltaNext
	var expires ktime.Time // ts->timer_expires; 0: keep the tick
	canStop := k.nohz && c.canStopIdleTick()
	if canStop {
		var qc int64
		// hrtimer_next_event_without(&ts->sched_timer): the device's next
		// event unless that is the tick itself. The kernel asks only when
		// tick_nohz_next_event() says the tick may stop; the query has no
		// side effect, so it is asked beforehand, next to the wheel's
		// get_next_timer_interrupt(), and both round trips overlap out of
		// process.
		h := devNext
		switch ask := k.m.HighRes && c.ts.schedTimer.queued && c.ts.schedTimer.expires <= devNext; {
		case ask && k.hrtStarter != nil:
			wait := k.hrtStarter.StartNextEvent(c.id, now, c.ts.schedTimer.ID)
			expires, qc = c.nohzNextEvent(now)
			h = wait()
		case ask:
			h = k.hrt.NextEvent(c.id, now, c.ts.schedTimer.ID)
			fallthrough
		default:
			expires, qc = c.nohzNextEvent(now)
		}
		cost += qc
		if expires != 0 {
			next := expires
			if k.m.HighRes {
				next = min(next, h)
			}
			sleep = int64(ktime.Max)
			if next != ktime.Max {
				sleep = max(int64(next-now), 0)
			}
		}
	}
	ch := c.governorSelect(now, sleep, deltaNext)
	cost += ch.Cost
	c.cpuidle.selectAt = now
	c.cpuidle.state = int32(ch.State)
	if canStop && expires != 0 && (ch.StopTick || c.ts.tickStopped) {
		cost += c.nohzStopTickAt(now+ktime.Time(cost), expires, ktime.Max)
	} else if !c.ts.tickStopped {
		// tick_nohz_idle_retain_tick(): the tick keeps running.
		c.cnt.b.Add(cTickRetains, 1)
	}
	return cost
}

// governorSelect is the governor's ->select() (cpuidle_select()) at now for
// an expected sleep of sleep ns, the next tick deltaNext ns away: the state
// it chooses, whether to stop the tick, and its cost.
func (c *CPU) governorSelect(now ktime.Time, sleep, deltaNext int64) sdk.IdleChoice {
	k := c.k
	req := sdk.IdleSelect{CPU: c.id, Now: now, SleepLength: sleep, DeltaTick: deltaNext, TickStopped: c.ts.tickStopped,
		LatencyReq: k.pmQoS(), TickNsec: k.tickNsec, Util: c.updateUtil(now)}
	ch := k.gov.Select(req)
	if ch.State < 0 || ch.State >= len(k.govStates) || ch.Cost < 0 {
		// framework/contract catches this first for plugins the experiment
		// opens; a kernel built directly still fails cleanly.
		panic(&sdk.ContractError{Kind: sdk.KindGovernor, Name: k.govName, Call: "Select",
			Problem: fmt.Sprintf("state %d with cost %d ns on cpu %d, which has states 0..%d", ch.State, ch.Cost, c.id, len(k.govStates)-1)})
	}
	return ch
}

// enterGovernedState is call_cpuidle() -> cpuidle_enter_state() for the
// governor's choice: a state that stops the local timer first enters the tick
// broadcast; if that fails, the deepest state that does not stop it and exits
// no slower is used instead (find_deepest_state()).
func (c *CPU) enterGovernedState(now ktime.Time) {
	k := c.k
	idx := int(c.cpuidle.state)
	st := &k.govStates[idx]
	if st.StopsLocalTimer && k.local.Has(sdk.FeatC3Stop) {
		if ok, _ := k.broadcastEnter(c, now); !ok {
			fb := 0
			for i := idx - 1; i > 0; i-- {
				if !k.govStates[i].StopsLocalTimer && k.govStates[i].ExitLatency <= st.ExitLatency {
					fb = i
					break
				}
			}
			idx = fb
		}
	}
	c.idle.state = idx - 1 // the machine's states follow POLL
	c.cpuidle.entered = true
	c.cpuidle.enteredAt = now
}

// cpuidleReflect is cpuidle_reflect() after the CPU left the governed state
// at now with exit latency lat: last_residency_ns runs from the entry until
// the CPU runs again.
func (c *CPU) cpuidleReflect(now ktime.Time, lat int64, tickWakeup bool) {
	if !c.cpuidle.entered {
		return
	}
	c.cpuidle.entered = false
	end := now + ktime.Time(lat)
	c.k.gov.Reflect(sdk.IdleReflect{CPU: c.id, State: c.idle.state + 1, Residency: int64(end - c.cpuidle.enteredAt),
		Span: int64(end - c.cpuidle.selectAt), TickWakeup: tickWakeup})
}

// tickWakesIdle reports whether the interrupt waking the idle CPU at now is
// the tick (tick_nohz_idle_got_tick()): a local timer interrupt when the
// tick's expiry has come.
func (c *CPU) tickWakesIdle(now ktime.Time) bool {
	if c.flags&(pendDevice|ipiTimer) == 0 {
		return false
	}
	if c.k.m.HighRes {
		return c.ts.schedTimer.queued && c.ts.schedTimer.expires <= now
	}
	return c.ts.lowresNext <= now
}
