package hrtimer

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// setTimekeeper installs new timekeeper offsets. A change bumps
// clock_was_set_seq and records which bases it affects (CLOCK_SET_WALL for
// REALTIME/TAI, CLOCK_SET_BOOT for BOOTTIME); the per-CPU calls that follow
// for the same change see no difference and reuse that mask.
func (p *Plugin) setTimekeeper(off sdk.ClockOffsets) {
	var mask uint8
	if off.Real != p.tk.Real || off.TAI != p.tk.TAI {
		mask |= wallBases
	}
	if off.Boot != p.tk.Boot {
		mask |= bootBases
	}
	if mask == 0 {
		return
	}
	p.tk = off
	p.tkSeq++
	p.cwsMask = mask
}

// updateNeedsIPI models update_needs_ipi() (1e7f7fbcd40c, soft base check as
// fixed by 05dc4a9fc8b3): refresh cb's offsets and report whether a moved base
// now has a first timer ahead of the programmed event or of the soft cache.
func (p *Plugin) updateNeedsIPI(cb *cpuBase, bases uint8) bool {
	seq := cb.cwsSeq
	p.refreshOffsets(cb)
	if seq == cb.cwsSeq || cb.inHrtirq {
		return false
	}
	active := bases & cb.activeBases
	for idx := 0; idx < maxClockBases; idx++ {
		if active&(1<<idx) == 0 {
			continue
		}
		e := toMono(cb.bases[idx].first().expires, cb.offset(idx))
		if e < int64(cb.expiresNext) {
			return true
		}
		if idx < baseMonotonicSoft || cb.softirqActivated {
			continue
		}
		if e < int64(cb.softirqExpiresNext) {
			return true
		}
	}
	return false
}

// retriggerNextEvent models retrigger_next_event() run on cb's CPU: refresh
// the offsets and, in high-res mode, hrtimer_force_reprogram(skip_equal=0);
// in low-res (NOHZ) mode only hrtimer_update_next_event(), which v5.10 did not
// have (it returned early when high-res was off).
func (p *Plugin) retriggerNextEvent(cb *cpuBase) {
	switch {
	case p.highRes:
		p.refreshOffsets(cb)
		p.forceReprogram(cb, false)
	case p.cfg.SoftirqNext == SoftirqUpdated:
		p.refreshOffsets(cb)
		cb.updateNextEvent()
	}
}

// ClockWasSet models clock_was_set()'s per-CPU step for cpu on the CPU that
// set the clock, after the timekeeper's offsets became off. With
// clock_was_set_ipi = "all" (before 1e7f7fbcd40c) clock_was_set() called
// on_each_cpu(retrigger_next_event): Ret is sdk.ClockWasSetEachCPU and the
// CPU's offsets are refreshed by the retrigger. With "needed" it evaluates
// update_needs_ipi() under cpu's base lock, which refreshes cpu's offsets:
// Ret is sdk.ClockWasSetIPI when cpu must be interrupted, 0 otherwise. The
// check itself costs nothing here; RetriggerNextEvent charges
// clock_was_set_ns where it runs.
//
// Divergence: clock_was_set() without high-res or NOHZ touches no CPU; the
// plugin does not know whether NOHZ is active and treats low-res as NOHZ.
func (p *Plugin) ClockWasSet(cpu int, now ktime.Time, off sdk.ClockOffsets) sdk.HROpResult {
	cb := p.cpu(cpu)
	p.setTimekeeper(off)
	if p.cfg.IPI == IPIAll {
		return sdk.HROpResult{Ret: sdk.ClockWasSetEachCPU}
	}
	if p.updateNeedsIPI(cb, p.cwsMask) {
		return sdk.HROpResult{Ret: sdk.ClockWasSetIPI}
	}
	return sdk.HROpResult{}
}

// RetriggerNextEvent models retrigger_next_event() on cpu (the clock_was_set
// IPI handler, or the caller's own call under on_each_cpu()): refresh the
// offsets and reprogram; Cost is clock_was_set_ns.
func (p *Plugin) RetriggerNextEvent(cpu int, now ktime.Time) sdk.HROpResult {
	cb := p.cpu(cpu)
	p.beginOp(cb)
	p.retriggerNextEvent(cb)
	p.endCall()
	return sdk.HROpResult{Cost: p.cfg.Costs.ClockWasSet, Program: p.prog}
}

// NextEvent answers what tick-sched and the idle governor ask: in high-res
// mode hrtimer_next_event_without(exclude) (soft bases ignored while the
// softirq is pending), in low-res mode hrtimer_get_next_event() over all
// bases. exclude 0 excludes nothing.
//
// Divergence: both kernel helpers run under the base lock and, without an
// exclude, refresh the next_timer pointers as a side effect; the model answers
// without touching any state, so asking more or less often never changes a run.
func (p *Plugin) NextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) ktime.Time {
	cb := p.cpu(cpu)
	var ex *timer
	if exclude != 0 {
		ex = p.lookup(exclude)
	}
	return cb.queryNextEvent(ex, activeAll)
}
