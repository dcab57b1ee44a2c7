package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// tickSched is a CPU's tick-sched state: the fields of struct tick_sched
// (kernel/time/tick-sched.h) the model uses, but ts->inidle, which is
// CPU.flags' flagInidle (tested with the CPU's pending work).
type tickSched struct {
	// schedTimer is ts->sched_timer, the tick's hrtimer in high-res mode.
	schedTimer *HRTimer
	// lowresNext is the tick programmed on the device in low-res mode (the
	// kernel keeps it as sched_timer's expiry and programs it with
	// tick_program_event()).
	lowresNext ktime.Time
	// tickStopped is ts->tick_stopped.
	tickStopped bool
	// nextTick is ts->next_tick: what the stopped tick is programmed for,
	// cleared when it fires.
	nextTick ktime.Time
	// doTimerLast is ts->do_timer_last: the CPU held the jiffies duty when
	// it last stopped its tick.
	doTimerLast bool
	// lazyIRQWork: an IRQ_WORK_LAZY item waits on the CPU's lazy_list for
	// the next tick (irq_work_tick()); irq_work_needs_cpu() holds the tick
	// meanwhile. The model queues one where the kernel does: printk_deferred()
	// -> defer_console_output() -> wake_up_klogd_work (queueLazyIRQWork).
	lazyIRQWork bool
}

// maxIdleNS is timekeeping_max_deferment() for a TSC clocksource: the
// timekeeper CPU may not sleep longer (dmesg "tsc: ... max_idle_ns: 440795202938 ns").
const maxIdleNS = 440795202938

// doUpdateJiffies is tick_do_update_jiffies64(): advance jiffies by the whole
// ticks elapsed since last_jiffies_update, in one step (kernel/time/tick-sched.c).
func (k *Kernel) doUpdateJiffies(now ktime.Time) {
	if now < k.tk.tickNextPeriod {
		return
	}
	k.Counters.MaxN(cntJiffiesMaxStale, -1, int64(now-k.tk.tickNextPeriod))
	delta := int64(now - k.tk.lastJiffiesUpdate)
	ticks := delta / k.tickNsec
	k.tk.lastJiffiesUpdate += ktime.Time(ticks * k.tickNsec)
	k.tk.jiffies += uint64(ticks)
	k.wheelGen++ // a NextTimerInterrupt at the new jiffies is no repeat
	k.tk.tickNextPeriod = k.tk.lastJiffiesUpdate + ktime.Time(k.tickNsec)
}

// jiffyTime converts an absolute jiffy to CLOCK_MONOTONIC time on the jiffies
// grid (basemono + (j - basejiff) * TICK_NSEC, as tick_nohz_next_event() does).
func (k *Kernel) jiffyTime(j uint64) ktime.Time {
	if j == sdk.NoExpiry {
		return ktime.Max
	}
	if j <= k.tk.jiffies {
		return k.tk.lastJiffiesUpdate
	}
	d := j - k.tk.jiffies
	if d > uint64(1<<62)/uint64(k.tickNsec) {
		return ktime.Max
	}
	return k.tk.lastJiffiesUpdate.Add(int64(d) * k.tickNsec)
}

// cmpNextHrtimerEvent is kernel/time/timer.c:cmp_next_hrtimer_event() for
// low-res mode, where hrtimers expire from the tick: the wheel's next event
// expires stays if it is not later than the next hrtimer h; an hrtimer already
// due gives basem (fire the tick at once); otherwise h is rounded up to the
// tick grid (DIV_ROUND_UP(h, TICK_NSEC) * TICK_NSEC) so that tick really
// expires it.
func cmpNextHrtimerEvent(basem, expires, h ktime.Time, tick int64) ktime.Time {
	if expires <= h {
		return expires
	}
	if h <= basem {
		return basem
	}
	t := ktime.Time(tick)
	return (h + t - 1) / t * t
}

// tickSchedDoTimer is tick_sched_do_timer(): take over the jiffies duty if
// nobody has it, and update jiffies when we have it.
func (c *CPU) tickSchedDoTimer(now ktime.Time) {
	k := c.k
	if k.tk.tickDoTimerCPU < 0 && !c.isNohzFull() {
		k.tk.tickDoTimerCPU = c.id
	}
	if k.tk.tickDoTimerCPU == c.id {
		k.doUpdateJiffies(now)
	}
}

// tickHandle is tick_sched_handle() -> update_process_times(): run_local_timers()
// raises TIMER_SOFTIRQ when the wheel says so; CPU-time timers are checked.
func (c *CPU) tickHandle(now ktime.Time) {
	k := c.k
	c.cnt.b.Add(cTicks, 1)
	c.accountProcessTick() // update_process_times(): first, for the context the tick interrupted
	if c.ts.tickStopped {
		// tick_sched_handle(): a stopped tick that fired clears ts->next_tick,
		// so the next tick_nohz_stop_tick() reprograms even the same expiry
		// instead of skipping it as unchanged.
		c.ts.nextTick = 0
	}
	if k.tk.jiffies >= c.wheel.RaiseAt || c.tmigrRequiresRemote() {
		c.RaiseSoftirq(now, TimerSoftirq)
	}
	k.runCPUTimers(c, now)
	c.rcuSchedClockIRQ(now)
	c.schedulerTick(now)
	// update_process_times() -> irq_work_tick(): the lazy list runs from
	// the tick (x86 has the irq_work self-IPI, so only lazy work waits).
	c.ts.lazyIRQWork = false
}

// queueLazyIRQWork is irq_work_queue() of an IRQ_WORK_LAZY item on c
// (kernel/irq_work.c __irq_work_queue_local()): it waits on the lazy list
// for the next tick, unless the tick is stopped, when irq_work_raise()
// runs it at once from the irq_work self-IPI (whose few hundred ns the model
// does not charge). The lazy item the model raises is printk's
// wake_up_klogd_work (IRQ_WORK_INIT_LAZY, kernel/printk/printk.c), queued by
// every printk_deferred(): clockevents_increase_min_delta()'s messages.
func (c *CPU) queueLazyIRQWork() {
	if c.ts.tickStopped {
		return
	}
	c.ts.lazyIRQWork = true
}

// tickCallback is tick_sched_timer() (high-res mode), run by hrtimer_interrupt().
func (c *CPU) tickCallback(_ *CPU, now ktime.Time, e *sdk.HRExpiry) {
	c.tickSchedDoTimer(now)
	c.tickHandle(now)
}

// lowresTick is tick_nohz_handler() / tick_handle_periodic() in low-res mode:
// the tick itself, hrtimer_run_queues(), then the next tick programmed on the
// device unless the tick is stopped.
func (c *CPU) lowresTick(now ktime.Time) ktime.Time {
	k := c.k
	now += ktime.Time(k.costs.Tick)
	c.tickSchedDoTimer(now)
	c.tickHandle(now)
	r := k.hrt.RunQueues(c.id, now)
	k.runHRExpiries(c, &r)
	if r.End > now {
		now = r.End
	}
	if r.RaiseSoftirq {
		c.RaiseSoftirq(now, HRTimerSoftirq)
	}
	if !c.ts.tickStopped && !c.periodic {
		tick := ktime.Time(k.tickNsec)
		next := (now/tick + 1) * tick
		c.ts.lowresNext = next
		now += ktime.Time(c.programDevice(now, next))
	}
	return now
}

// canStopIdleTick is the nohz_full part of can_stop_idle_tick()
// (kernel/time/tick-sched.c, since 3.10): while nohz_full CPUs exist, the CPU
// holding the do_timer duty keeps its tick, so jiffies and timekeeping advance
// although every other CPU may have stopped its tick; with the duty unassigned
// no CPU stops it either.
func (c *CPU) canStopIdleTick() bool {
	k := c.k
	if !k.tk.nohzFullRunning {
		return true
	}
	return k.tk.tickDoTimerCPU != c.id && k.tk.tickDoTimerCPU >= 0
}

// nohzStopTick is tick_nohz_next_event() + tick_nohz_stop_tick() (v6.x
// kernel/time/tick-sched.c); it returns its cost.
//
// capAt bounds the stopped tick's expiry: ktime.Max on idle entry, now + 1 s
// for a busy nohz_full CPU before 4.17 (the residual 1 Hz tick).
func (c *CPU) nohzStopTick(now, capAt ktime.Time) int64 {
	expires, cost := c.nohzNextEvent(now)
	if expires == 0 {
		return cost // a timer in the next period: keep the tick
	}
	return cost + c.nohzStopTickAt(now+ktime.Time(cost), expires, capAt)
}

// nohzNextEvent is tick_nohz_next_event(): when the tick could be stopped
// until (ts->timer_expires), or 0 when a timer in the next tick period keeps
// a running tick going. It asks the wheel for its next timer; the cost is the
// wheel's.
func (c *CPU) nohzNextEvent(now ktime.Time) (ktime.Time, int64) {
	k := c.k
	tick := k.tickNsec
	basemono, basejiff := k.tk.lastJiffiesUpdate, k.tk.jiffies
	var cost int64
	var next ktime.Time
	keep := cntTickKeepTimer
	switch {
	case c.rcuNeedsCPU():
		// rcu_needs_cpu(): callbacks queued here; keep ticking.
		next, keep = basemono+ktime.Time(tick), cntTickKeepRCU
	case c.ts.lazyIRQWork:
		// irq_work_needs_cpu(): lazy work waits for the tick (x86's
		// arch_needs_cpu() is 0; arch_irq_work_has_interrupt() leaves
		// only the lazy list to it).
		next, keep = basemono+ktime.Time(tick), cntTickKeepIRQWork
	case c.flags&(1<<TimerSoftirq) != 0:
		// local_timer_softirq_pending(): keep ticking.
		next, keep = basemono+ktime.Time(tick), cntTickKeepSoftirq
	default:
		// Low-res: hrtimers expire from the tick, so the next one counts
		// (get_next_timer_interrupt() -> cmp_next_hrtimer_event()); the two
		// plugins are asked together.
		h := ktime.Max
		switch {
		case !k.m.HighRes && k.hrtStarter != nil:
			wait := k.hrtStarter.StartNextEvent(c.id, now, 0)
			next, cost = c.wheelNextEvent(basejiff)
			h = wait()
		case !k.m.HighRes:
			h = k.hrt.NextEvent(c.id, now, 0)
			fallthrough
		default:
			next, cost = c.wheelNextEvent(basejiff)
		}
		if !k.m.HighRes {
			next = cmpNextHrtimerEvent(basemono, next, h, tick)
		}
	}
	c.wheelIsDirty = false
	if next < basemono {
		next = basemono
	}
	if int64(next-basemono) <= tick {
		// Due in the next period: by what (a timer, or what
		// tick_nohz_next_event() asks besides timers).
		k.Counters.Inc(keep, c.id, 1)
		if !c.ts.tickStopped {
			return 0, cost
		}
	}
	return c.stoppedTickExpiry(basemono, next), cost
}

// stoppedTickExpiry is the end of tick_nohz_next_event(): how long the tick
// may stay stopped from basemono (the last jiffies update) with the next
// timer at next, ts->timer_expires. The CPU that had the do_timer duty last
// sleeps no longer than timekeeping_max_deferment() (maxIdleNS); the others
// as long as their timers allow.
func (c *CPU) stoppedTickExpiry(basemono, next ktime.Time) ktime.Time {
	delta := int64(maxIdleNS)
	tcpu := c.k.tk.tickDoTimerCPU
	if tcpu != c.id && (tcpu >= 0 || !c.ts.doTimerLast) {
		delta = int64(ktime.Max)
	}
	expires := basemono.Add(delta)
	if next < expires {
		expires = next
	}
	if expires == 0 {
		expires = 1 // basemono 0 at boot: still a stop, not "keep ticking"
	}
	return expires
}

// repeatAuditEvery: one in this many of the repeats wheelNextEvent could
// skip is asked all the same, so that the contract checker sees the promise
// kept (a few calls per simulated millisecond on a big machine).
const repeatAuditEvery = 64

// wheelNextEvent is get_next_timer_interrupt() on c at jiffies: the time of
// the wheel's next expiry (the hierarchy's view with timer migration,
// tmigrNextEvent) and the cost; c.wheel becomes the answer's state. A
// repeat the wheel promises to answer as before at no cost
// (sdk.RepeatFreeNextTimer: the same CPU and jiffies, no wheel call since)
// is not asked (but one in repeatAuditEvery): c.wheel still holds that
// answer's state (every other wheel call bumps Kernel.wheelGen) and ntiNext
// its time, which depends on nothing else that can change meanwhile
// (jiffies advancing and the hierarchy coming into use, Kernel.split, bump
// wheelGen too).
func (c *CPU) wheelNextEvent(jiffies uint64) (ktime.Time, int64) {
	k := c.k
	if c.ntiGen == k.wheelGen+1 {
		if k.repeatSkips != 0 {
			k.repeatSkips--
			return c.ntiNext, 0
		}
		// One repeat in repeatAuditEvery is asked: an honest wheel answers
		// the same (the promise), a checked one that does not is stopped by
		// its checker (framework/contract: timerBase.repeat).
		k.repeatSkips = repeatAuditEvery - 1
	}
	r := &k.nextTimer
	k.nextTimerInterrupt(c.id, jiffies, r)
	c.wheel = r.State
	next := c.tmigrNextEvent(r.Next, r.State.LocalNext)
	if k.wheelRepeatFree {
		c.ntiGen, c.ntiNext = k.wheelGen+1, next
	}
	return next, r.Cost
}

// nextTimerInterrupt asks the wheel's get_next_timer_interrupt() for cpu at
// jiffies, into *r: in place when the wheel (its contract checker, in an
// experiment) can answer so (sdk.InPlaceNextTimer).
func (k *Kernel) nextTimerInterrupt(cpu int, jiffies uint64, r *sdk.NextTimerResult) {
	if k.wheelInPlace != nil {
		k.wheelInPlace.NextTimerInterruptInto(cpu, jiffies, r)
		return
	}
	*r = k.wheel.NextTimerInterrupt(cpu, jiffies)
}

// nohzStopTickAt is tick_nohz_stop_tick() with ts->timer_expires = expires:
// hand over the do_timer duty, then program the stopped tick (or cancel it
// for KTIME_MAX) unless it is programmed for that time already. It returns
// the cost.
func (c *CPU) nohzStopTickAt(now, expires, capAt ktime.Time) int64 {
	k := c.k
	if capAt < expires {
		expires = capAt
	}
	walk := c.tmigrStopTick(&expires)
	tcpu := k.tk.tickDoTimerCPU
	if tcpu == c.id {
		k.tk.tickDoTimerCPU = -1
		c.ts.doTimerLast = true
	} else if tcpu >= 0 {
		c.ts.doTimerLast = false
	}
	if c.ts.tickStopped && expires == c.ts.nextTick {
		return walk
	}
	cost := walk + k.costs.NohzStop
	if !c.ts.tickStopped {
		c.ts.tickStopped = true
		if c.flags&flagInidle != 0 {
			c.acct.idleJiffies = k.tk.jiffies // tick_nohz_idle_stop_tick(): ts->idle_jiffies
		}
		c.cnt.b.Add(cTickStops, 1)
		k.tr.Event(now, c.traceCtx(), "tick_stop", "success=1 dependency=NONE")
	}
	c.ts.nextTick = expires
	at := now + ktime.Time(cost)
	if k.m.HighRes {
		if expires == ktime.Max {
			cost += k.hrCancel(c, at, c.ts.schedTimer)
		} else {
			c.ts.schedTimer.Period = 0 // tick_sched_timer() returns HRTIMER_NORESTART while stopped
			cost += k.hrStart(c, at, c.ts.schedTimer, expires, 0, sdk.HRModeAbs|sdk.HRModePinned|sdk.HRModeHard)
		}
	} else {
		c.ts.lowresNext = expires
		cost += c.programDevice(at, expires)
	}
	return cost
}

// nohzFullUpdate is tick_nohz_full_update_tick() on a nohz_full CPU about to
// run a task: with that task alone on the CPU the tick stops until the next
// timer; once another task is runnable it restarts (tick dependency
// TICK_DEP_BIT_SCHED). Before 4.17 the stopped tick is also capped at 1 s
// (scheduler_tick_max_deferment(), the residual 1 Hz tick); from 4.17 there is
// no cap and sched_tick_remote() ticks for the CPU from a housekeeping CPU
// (see startSchedTickRemote). It returns the cost.
func (c *CPU) nohzFullUpdate(now ktime.Time) int64 {
	alone := c.rq.queue.peek() == nil
	switch {
	case alone && (!c.ts.tickStopped || c.wheelIsDirty || c.stoppedTickFired(now)):
		// Stop it, or re-arm it after the stopped tick fired or the wheel
		// gained an earlier timer (tick_nohz_irq_exit() re-evaluates).
		capAt := ktime.Max
		if c.k.settings.NohzFullTick == NohzFullMaxDeferment {
			capAt = now + ktime.Time(ktime.Second)
		}
		return c.nohzStopTick(now, capAt)
	case !alone && c.ts.tickStopped:
		return c.idleExit(now)
	}
	return 0
}

// idleExit is tick_nohz_idle_exit() -> tick_nohz_restart_sched_tick(): update
// jiffies and restart the tick on its grid (tick_nohz_restart(), as
// settings.TickRestart says). It returns the cost.
func (c *CPU) idleExit(now ktime.Time) int64 {
	k := c.k
	if !c.ts.tickStopped {
		return 0
	}
	k.doUpdateJiffies(now)
	c.ts.tickStopped = false
	c.ts.nextTick = 0
	cost := k.costs.NohzRestart + k.costs.JiffiesUpdate + c.tmigrRestartTick()
	tick := ktime.Time(k.tickNsec)
	next := (now/tick + 1) * tick // hrtimer_forward(sched_timer, now, TICK_NSEC) from last_tick
	at := now + ktime.Time(cost)
	if k.m.HighRes {
		c.ts.schedTimer.Period = k.tickNsec
		if k.settings.TickRestart == TickRestartCancel {
			// tick_nohz_restart() before adcec6a7f566: hrtimer_cancel()
			// (traced if the stopped tick is still queued), hrtimer_forward(),
			// then hrtimer_start_expires() of the timer no longer queued.
			cost += k.hrCancel(c, at, c.ts.schedTimer)
			at = now + ktime.Time(cost)
		}
		cost += k.hrStart(c, at, c.ts.schedTimer, next, 0, sdk.HRModeAbs|sdk.HRModePinned|sdk.HRModeHard)
	} else {
		c.ts.lowresNext = next
		cost += c.programDevice(at, next)
	}
	c.cnt.b.Add(cTickRestarts, 1)
	return cost
}

// sendIPI sends an IPI of kind from (nil: from outside any CPU) to target; it
// arrives after the IPI latency.
func (k *Kernel) sendIPI(now ktime.Time, target *CPU, kind uint32) {
	k.Counters.Inc(cntIPISent, target.id, 1)
	at := now + ktime.Time(k.costs.IPILatency)
	k.q.Schedule(newOneShot("ipi", func(t ktime.Time) { target.ipiArrived(t, kind) }), at)
}

// pmQoS is the CPU latency QoS limit in ns (/dev/cpu_dma_latency): the lowest
// request of any workload, or no limit.
func (k *Kernel) pmQoS() int64 {
	if k.qosLatency == nil {
		return int64(ktime.Max)
	}
	return *k.qosLatency
}

// SetPMQoS records a /dev/cpu_dma_latency request (cyclictest writes 0).
// Like cpu_latency_qos_add_request() (kernel/power/qos.c) it traces
// pm_qos_add_request with the request and pm_qos_update_target with the
// constraint before and after (in us; 2000000000,
// PM_QOS_CPU_LATENCY_DEFAULT_VALUE, for none), so a replay of the trace
// holds what the run held.
func (k *Kernel) SetPMQoS(ns int64) {
	prev := k.pmQoS()
	if k.qosLatency == nil || ns < *k.qosLatency {
		v := ns
		k.qosLatency = &v
	}
	if k.tr.Enabled("pm_qos_add_request") || k.tr.Enabled("pm_qos_update_target") {
		ctx := k.cpus[0].traceCtx()
		k.tr.Event(k.Now(), ctx, "pm_qos_add_request", "CPU_DMA_LATENCY value="+itoa(qosUS(ns)))
		k.tr.Event(k.Now(), ctx, "pm_qos_update_target", "action=ADD_REQ prev_value="+itoa(qosUS(prev))+" curr_value="+itoa(qosUS(k.pmQoS())))
	}
}

// SetPMQoSLimit sets the CPU latency constraint itself (the aggregate of
// every request, pm_qos_update_target()'s curr_value), none when ns < 0: a
// replayed capture's, changing when the capture shows it change.
func (k *Kernel) SetPMQoSLimit(ns int64) {
	if ns < 0 {
		k.qosLatency = nil
		return
	}
	v := ns
	k.qosLatency = &v
}

// qosUS is a constraint in ns as the PM QoS events print it: us, and
// PM_QOS_CPU_LATENCY_DEFAULT_VALUE (2000000000) for none.
func qosUS(ns int64) int64 {
	if ns == int64(ktime.Max) {
		return 2_000_000_000
	}
	return ns / 1000
}

// stoppedTickFired reports whether the stopped tick's one programmed event has
// passed (it fired and, being stopped, did not re-arm itself).
func (c *CPU) stoppedTickFired(now ktime.Time) bool {
	if c.k.m.HighRes {
		return !c.ts.schedTimer.queued
	}
	return c.ts.lowresNext <= now
}

// startSchedTickRemote is sched_tick_start() for every nohz_full CPU in the
// 4.17+ era (kernel/sched/core.c, d84b31313ef8): a delayed work on a
// housekeeping CPU that runs sched_tick_remote() once a second, the scheduler
// tick of a busy nohz_full CPU whose own tick is stopped. It runs on the
// first housekeeping CPU (the work is queued on the unbound workqueue, whose
// CPUs are the housekeeping ones) and costs one tick there.
func (k *Kernel) startSchedTickRemote() {
	if !k.tk.nohzFullRunning || k.settings.NohzFullTick != NohzFullOffload {
		return
	}
	hk := -1
	for _, c := range k.cpus {
		if !c.isNohzFull() {
			hk = c.id
			break
		}
	}
	if hk < 0 {
		return
	}
	hz := uint64(k.m.HZ)
	for _, c := range k.cpus {
		if !c.isNohzFull() {
			continue
		}
		target := c
		t := k.NewWheelTimer("delayed_work_timer_fn", 0, k.costs.Tick, hz, func(_ *CPU, _ ktime.Time) {
			if target.ts.tickStopped && target.rq.curr != nil {
				k.Counters.Inc(cntSchedTickRemote, target.id, 1)
			}
		})
		k.modTimer(k.cpus[hk], 0, t, k.tk.jiffies+hz)
	}
}
