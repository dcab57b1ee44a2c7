package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Idle entry and exit: do_idle() -> cpuidle_idle_call() picking and entering
// a state, and the wakeup paying its exit latency and the broadcast hand-off.
// The governor's part is in cpuidle.go, the tick's in tick.go.

// cpuIdle is a CPU's idle state.
type cpuIdle struct {
	state int        // index into Machine.IdleStates, -1 = polling
	since ktime.Time // when the CPU entered it
	// inBroadcast: the state stopped the local timer and the CPU is in the
	// tick broadcast.
	inBroadcast bool
	// pendingEntry: the idle-entry bookkeeping activity is running; when it
	// ends with nothing to do, the CPU enters its idle state directly.
	pendingEntry bool
	// traced: power:cpu_idle traced the entry and the exit is still due
	// (traceIdleExit).
	traced bool
	// The last idle exit's cost to whatever woke the CPU: the state's exit
	// latency, and the broadcast hand-off (how late the broadcast IPI came
	// for the local event, plus tick_broadcast_exit()); bcastDelay holds the
	// hand-off delay until the IPI wakes the CPU.
	wakeExit, wakeBroadcast, bcastDelay int64
}

// enterIdle is do_idle() -> cpuidle_idle_call(): with a cpuidle driver and
// governor the governor picks the state and whether the tick stops
// (cpuidleSelect); without one the tick stops if NO_HZ allows
// (tick_nohz_idle_stop_tick()) and the engine picks the state. The CPU enters
// it once the bookkeeping's cost has passed.
func (c *CPU) enterIdle(now ktime.Time) {
	k := c.k
	cost := int64(0)
	if c.flags&flagInidle == 0 {
		c.flags |= flagInidle
		if c.rq.lastRan != nil {
			// schedule() switching to the idle task.
			cost += k.costs.ContextSwitch
			k.traceSwitch(now, c, c.rq.lastRan, nil)
			c.rq.lastRan = nil
		}
	}
	c.setCtx(now, ctxIdle)
	if k.governed() {
		// cpuidle_idle_call(): the governor decides the state and the tick.
		cost += c.cpuidleSelect(now + ktime.Time(cost))
		c.cpuidle.pending = true
	} else if k.nohz && c.canStopIdleTick() {
		// No cpuidle driver (or no governor plugin): stop the tick.
		cost += c.nohzStopTick(now+ktime.Time(cost), ktime.Max)
	}
	if cost > 0 {
		c.span(SpanTickSched, now, now+ktime.Time(cost), 0)
		// The bookkeeping takes time; the CPU enters the state afterwards.
		// Interrupts arriving meanwhile are latched; kick re-runs this path.
		c.beginActivity(now, now+ktime.Time(cost))
		c.mode = modeBusy
		c.idle.pendingEntry = true
		return
	}
	c.enterIdleState(now)
}

// enterIdleState is call_cpuidle(): the governor's pending choice, or without
// a governor the engine's always_stop rule: the deepest state whose target
// residency fits the predicted sleep and whose exit latency meets the PM QoS
// limit.
func (c *CPU) enterIdleState(now ktime.Time) {
	k := c.k
	// ct_idle_enter() (cpuidle_idle_call() / default_idle_call()): RCU
	// stops watching the CPU, an extended quiescent state.
	c.rcuIdleEnter()
	if c.cpuidle.pending {
		c.cpuidle.pending = false
		c.enterGovernedState(now)
		c.mode = modeIdle
		c.idle.since = now
		c.cnt.countIdleEnter(c.idle.state)
		c.traceIdleEnter(now)
		return
	}
	var next ktime.Time
	if k.m.HighRes {
		// tick_nohz_get_sleep_length(): in high-res mode the local device is
		// programmed for the earliest hrtimer, the tick's sched_timer
		// included, so its next_event is the answer without asking the
		// hrtimer plugin (a round trip when it runs out of process).
		next = k.local.NextEvent(c.id)
	} else {
		next = k.hrt.NextEvent(c.id, now, 0)
	}
	if c.ts.tickStopped && c.ts.nextTick < next {
		next = c.ts.nextTick
	} else if !c.ts.tickStopped && k.m.HighRes {
		// tick_nohz_get_sleep_length(): the tick is still running.
		if t := c.ts.schedTimer.expires; t < next {
			next = t
		}
	}
	predicted := int64(ktime.Max)
	if next != ktime.Max {
		predicted = int64(next - now)
	}
	c.idle.state = -1
	qos := k.pmQoS()
	for i := len(k.m.IdleStates) - 1; i >= 0; i-- {
		s := &k.m.IdleStates[i]
		if s.TargetResidency > predicted || s.ExitLatency > qos {
			continue
		}
		if s.StopsLocalTimer && k.local.Has(sdk.FeatC3Stop) {
			if ok, _ := k.broadcastEnter(c, now); !ok {
				continue // tick_broadcast_enter() failed: a shallower state
			}
		}
		c.idle.state = i
		break
	}
	c.mode = modeIdle
	c.idle.since = now
	c.cnt.countIdleEnter(c.idle.state)
	c.traceIdleEnter(now)
}

// pwrEventExit is PWR_EVENT_EXIT (include/linux/pm.h: -1) as cpu_idle's
// u32 state prints it.
const pwrEventExit = "4294967295"

// traceIdleEnter traces power:cpu_idle for the state the CPU enters at now:
// cpuidle_enter_state() traces the driver's index of the state entered
// (after a failed broadcast entry, the shallower one), POLL being index 0
// (drivers/cpuidle/poll_state.c); without a cpuidle driver
// cpuidle_idle_call() runs default_idle_call(), which traces state 1
// (kernel/sched/idle.c).
func (c *CPU) traceIdleEnter(now ktime.Time) {
	if !c.k.tr.Enabled("cpu_idle") {
		return
	}
	idx := c.idle.state + 1 // the machine's states follow POLL
	if len(c.k.m.IdleStates) == 0 {
		idx = 1
	}
	c.k.tr.Event(now, c.traceCtx(), "cpu_idle", "state="+itoa(int64(idx))+" cpu_id="+itoa(int64(c.id)))
	c.idle.traced = true
}

// traceIdleExit traces power:cpu_idle's exit (PWR_EVENT_EXIT) at t once the
// CPU has left the state it traced the entry of: cpuidle_enter_state() and
// default_idle_call() trace it when the state's ->enter() (or
// arch_cpu_idle()) returns.
func (c *CPU) traceIdleExit(t ktime.Time) {
	if !c.idle.traced {
		return
	}
	c.idle.traced = false
	c.k.tr.Event(t, c.traceCtx(), "cpu_idle", "state="+pwrEventExit+" cpu_id="+itoa(int64(c.id)))
}

// leaveIdleState wakes the CPU from its idle state; it returns the exit latency.
func (c *CPU) leaveIdleState(now ktime.Time) int64 {
	k := c.k
	lat := int64(0)
	c.idle.wakeExit, c.idle.wakeBroadcast = 0, c.idle.bcastDelay
	c.idle.bcastDelay = 0
	if c.spans != nil {
		c.spans.add(spanRec{kind: SpanIdle, start: c.idle.since, end: now, code: int32(c.idle.state)})
	}
	if c.idle.state >= 0 {
		s := &k.m.IdleStates[c.idle.state]
		lat = s.ExitLatency
		c.span(SpanIdleExit, now, now+ktime.Time(lat), int32(c.idle.state))
		c.idle.wakeExit = lat
		c.cnt.idleResidency[c.idle.state].Add(int64(now - c.idle.since))
		c.cnt.b.Add(cIdleExitLat, lat)
		c.cnt.b.Add(cIdleExits, 1)
	}
	if c.idle.state >= 0 {
		// A machine state is entered with interrupts off (intel_idle's
		// MWAIT states): it returns once its exit latency has passed and
		// cpuidle_enter_state() traces the exit before tick_broadcast_exit()
		// and the interrupt's handler. Polling (poll_idle()) and
		// default_idle_call()'s HLT run with interrupts on: the handler
		// runs inside the state and the exit is traced after it
		// (startInterrupts), or now for a wakeup without one (kick).
		c.traceIdleExit(now + ktime.Time(lat))
	}
	if c.cpuidle.entered {
		c.cpuidleReflect(now, lat, c.tickWakesIdle(now))
	}
	if c.idle.inBroadcast {
		bc := k.broadcastExit(c, now+ktime.Time(lat))
		c.span(SpanBroadcastExit, now+ktime.Time(lat), now+ktime.Time(lat+bc), 0)
		lat += bc
		c.idle.wakeBroadcast += bc
	}
	c.idle.state = -1
	c.setCtx(now, ctxIdle)
	return lat
}
