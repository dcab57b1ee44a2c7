package hrtimer

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// baseIndex models the base selection of __hrtimer_setup(): a relative
// CLOCK_REALTIME timer becomes CLOCK_MONOTONIC (POSIX: relative timers do not
// move when the clock is set) and HRTIMER_MODE_SOFT selects the soft half.
//
// Divergence: the kernel selects the base once, at hrtimer_setup(); the model
// re-derives it from the clock and mode of every Start, so a host should pass
// the same Clock and SOFT bit every time it starts a given timer.
func baseIndex(clock sdk.ClockID, mode sdk.HRMode) int {
	idx := baseMonotonic // hrtimer_clockid_to_base(): unknown ids WARN and use MONOTONIC
	if uint(clock) < uint(len(clockBases)) {
		idx = int(clockBases[clock])
	}
	if idx == baseRealtime && mode&sdk.HRModeRel != 0 {
		idx = baseMonotonic
	}
	if mode&sdk.HRModeSoft != 0 {
		idx += maxClockBases / 2
	}
	return idx
}

// clockBases is hrtimer_clockid_to_base() by clock id (one load instead of
// a chain of compares); ids it does not name are CLOCK_MONOTONIC's.
var clockBases = [...]uint8{
	sdk.ClockRealtime:  baseRealtime,
	sdk.ClockMonotonic: baseMonotonic,
	sdk.ClockBoottime:  baseBoottime,
	sdk.ClockTAI:       baseTAI,
}

// clockNow models __hrtimer_cb_get_time(): the base clock's current time read
// from the timekeeper (ktime_get_real() and friends), not from the possibly
// stale per-CPU base offsets.
func (p *Plugin) clockNow(now ktime.Time, idx int) int64 {
	var off int64
	switch idx & 3 {
	case baseRealtime:
		off = p.tk.Real
	case baseBoottime:
		off = p.tk.Boot
	case baseTAI:
		off = p.tk.TAI
	}
	return addSafe(int64(now), off)
}

// enqueue models enqueue_hrtimer(): mark the base active, queue t, and report
// whether it became the base's leftmost timer. It never touches the hardware.
func (p *Plugin) enqueue(cb *cpuBase, t *timer) bool {
	b := t.base & (maxClockBases - 1)
	cb.activeBases |= 1 << b
	t.enqueued = true
	p.seq++
	t.seq = p.seq
	return cb.bases[b].push(t)
}

// removeTimer models __remove_hrtimer(timer, base, newstate, reprogram):
// dequeue t and, when asked and t defined expires_next, re-evaluate the
// device with hrtimer_force_reprogram(cpu_base, skip_equal=1).
func (p *Plugin) removeTimer(cb *cpuBase, t *timer, reprogram bool) {
	if !t.enqueued {
		return
	}
	t.enqueued = false
	b := t.base & (maxClockBases - 1)
	if !cb.bases[b].remove(t) {
		cb.activeBases &^= 1 << b
	}
	// With reprogram false next_timer is left pointing at t, as in the
	// kernel ("No harm as we never dereference cpu_base->next_timer").
	if reprogram && t == cb.nextTimer {
		p.forceReprogram(cb, true)
	}
}

// Start models hrtimer_start_range_ns() called on cpu at now:
// __hrtimer_start_range_ns() with the configured restart strategy, then
// hrtimer_reprogram() when the timer became a new leftmost timer.
//
// The base is switch_hrtimer_base()'s: a timer whose callback is still
// running stays on its base; otherwise, while kernel.timer_migration is on
// and the mode is not HRTIMER_MODE_PINNED, get_target_base() proposes
// get_nohz_timer_target()'s CPU and hrtimer_check_target() (6.14+:
// hrtimer_suitable_target()) refuses it when the timer would expire before
// that CPU's expires_next, since a remote clockevent cannot be reprogrammed:
// the timer then stays local. Otherwise the calling CPU's base.
// HRTIMER_MODE_HARD only matters on PREEMPT_RT, which is not modelled.
// CONFIG_TIME_LOW_RES (one extra hrtimer_resolution for REL timers) is not
// modelled either.
func (p *Plugin) Start(cpu int, now ktime.Time, ht sdk.HRTimer, expires ktime.Time, slack int64) (r sdk.HROpResult) {
	this := p.cpu(cpu)
	p.beginOp(this)
	this.starts++

	t := p.timerFor(ht.ID, cpu)
	t.cbCost, t.period = ht.CallbackCost, ht.Period
	old := this // the timer's base, nearly always the caller's
	if int(t.cpu) != cpu {
		old = p.cpus[t.cpu]
	}

	// 627ef5ae2df8: restarting this CPU's first timer keeps it local and
	// defers the reprogramming until after the enqueue.
	// The restart policy decides (restart_policy).
	forceLocal := false
	if this.nextTimer == t && old == this {
		if p.restartFixed {
			forceLocal = p.restartDeferred
		} else {
			forceLocal = p.restart.Restart(sdk.RestartRequest{CPU: cpu, Now: now, Old: t.expires, New: expires}).Deferred
		}
	}

	// remove_hrtimer(timer, base, restart=true, keep_local=force_local):
	// reprogram on removal only for a local base, and not when force_local.
	ret := 0
	if t.enqueued {
		ret = 1
		p.removeTimer(old, t, old == this && !forceLocal)
	}

	t.base = uint8(baseIndex(ht.Clock, ht.Mode))
	t.soft = t.base >= baseMonotonicSoft

	tim := int64(expires)
	if ht.Mode&sdk.HRModeRel != 0 {
		tim = addSafe(tim, p.clockNow(now, int(t.base)))
	}
	if slack < 0 {
		slack = 0 // delta_ns is u64 in the kernel; a negative slack is a host bug
	}
	t.softexpires = ktime.Time(tim)
	t.expires = ktime.Time(addSafe(tim, slack))

	// switch_hrtimer_base(): move unless the callback runs.
	target := old
	if !forceLocal && !(now < t.runEnd) {
		target = this
		if p.setup.TimerMigration && ht.Mode&sdk.HRModePinned == 0 {
			target = p.targetBase(this, t, ht)
		}
	}
	t.cpu = target.cpu
	if target != this {
		target.stats.migrated++
	}

	first := p.enqueue(target, t)
	if forceLocal {
		p.forceReprogram(this, true)
	} else if first {
		p.hrtimerReprogram(this, t, true)
	}
	p.endCall()
	// The answer is written in place (a named result, no defer): no copy of
	// a struct assembled on the stack.
	r.Cost, r.Program, r.Ret = p.cfg.Costs.Start, p.prog, ret
	r.Expires, r.SoftExpires = t.expires, t.softexpires
	if target != this {
		r.Moved, r.CPU = true, int(target.cpu)
	}
	return r
}

// targetBase is get_target_base() plus switch_hrtimer_base()'s
// hrtimer_check_target() test: the migration target of get_nohz_timer_target()
// when kernel.timer_migration is on and the timer is not pinned, unless the
// timer would expire before that CPU's expires_next (it would have to be the
// remote CPU's first event); else the calling CPU.
func (p *Plugin) targetBase(this *cpuBase, t *timer, ht sdk.HRTimer) *cpuBase {
	if !p.setup.TimerMigration || ht.Mode&sdk.HRModePinned != 0 {
		return this
	}
	cand := p.cpus[sdk.NohzTimerTarget(int(this.cpu), len(p.cpus), ht.Placement, p.housekeeping, false)]
	if cand == this {
		return this
	}
	// hrtimer_check_target(): expires = hrtimer_get_expires(timer) - offset.
	if exp := toMono(t.expires, cand.offset(int(t.base))); exp < int64(cand.expiresNext) {
		return this
	}
	return cand
}

// Cancel models hrtimer_try_to_cancel(): 0 when the timer is neither queued
// nor running, -1 while its callback runs (now before the callback's end),
// otherwise remove_hrtimer(restart=false) and 1. Removal from another CPU's
// base never reprograms that CPU; its stale interrupt re-evaluates.
func (p *Plugin) Cancel(cpu int, now ktime.Time, id sdk.TimerID) (res sdk.HROpResult) {
	this := p.cpu(cpu)
	p.beginOp(this)

	res.Cost = p.cfg.Costs.Cancel
	t := p.lookup(id)
	switch {
	case t == nil || (!t.enqueued && !(now < t.runEnd)):
		res.Ret = 0
	case now < t.runEnd:
		res.Ret = -1
	default:
		owner := p.cpus[t.cpu]
		p.removeTimer(owner, t, owner == this)
		p.markInactive(t)
		if owner.nReclaim > reclaimBatch {
			// A CPU that cancels many distinct timers without taking
			// interrupts must not accumulate them.
			p.reclaim(owner, now)
		}
		this.stats.cancels++
		res.Ret = 1
	}
	p.endCall()
	res.Program = p.prog
	return res
}
