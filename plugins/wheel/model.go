package wheel

import "github.com/tickemu/tickemu/framework/sdk"

var _ sdk.NextTimerModeler = (*Wheel)(nil)

// modeler is implemented by a layout that can declare what its next
// nextTimerInterrupt will answer.
type modeler interface {
	nextTimerModel(cpu int) sdk.NextTimerModel
}

// NextTimerModel implements sdk.NextTimerModeler: the answer the next
// get_next_timer_interrupt() on cpu will give, computed without its side
// effects. Out of process only: in process it is never asked.
func (w *Wheel) NextTimerModel(cpu int) sdk.NextTimerModel {
	if w.c == nil || cpu < 0 || cpu >= len(w.c.stats) {
		return sdk.NextTimerModel{}
	}
	if m, ok := w.eng.(modeler); ok {
		return m.nextTimerModel(cpu)
	}
	return sdk.NextTimerModel{}
}

// nextTimerModel is nextTimerInterrupt's answer without its side effects.
// The 4.8-5.8 raise rule reads clk, which the call forwards by an amount that
// depends on its jiffies: no model then; nor for the 6.9+ split bases,
// whose answer is the earlier of two bases.
func (w *levelWheel) nextTimerModel(cpu int) sdk.NextTimerModel {
	std := &w.bases[nrKinds*cpu]
	if !std.init || w.c.opt.raise == RaiseEveryTick || w.c.opt.migr == MigrationPull {
		return sdk.NextTimerModel{}
	}
	next, pending := std.nextExpiry, std.timersPending
	var m meter
	if std.recalc {
		var levels int
		next, levels = w.computeNext(std)
		pending = next != std.clk+nextTimerMaxDelta
		m.addN(w.c.opt.cost.scan, int64(levels))
	}
	st := w.state(cpu)
	// The recalculation stores next_expiry, which the 5.9+ raise rule reads.
	st.RaiseAt = next
	if def := &w.bases[nrKinds*cpu+kindDef]; before(def.nextExpiry, st.RaiseAt) {
		st.RaiseAt = def.nextExpiry
	}
	return sdk.NextTimerModel{Valid: true, Expiry: next, Pending: pending, Cost: m.ns(), State: st}
}

// nextTimerModel is the 3.10 get_next_timer_interrupt() without its side
// effect (the rescan stored in next_timer, which state does not read).
func (w *cascadeWheel) nextTimerModel(cpu int) sdk.NextTimerModel {
	b := &w.bases[cpu]
	if !b.init {
		return sdk.NextTimerModel{}
	}
	st := w.state(cpu)
	if b.activeTimers == 0 {
		return sdk.NextTimerModel{Valid: true, Expiry: sdk.NoExpiry, State: st}
	}
	next := b.nextTimer
	var m meter
	stale := beforeEq(next, b.timerJiffies)
	if stale {
		var buckets int
		next, buckets = w.scan(b)
		m.addN(w.c.opt.cost.scan, int64(buckets))
	}
	md := sdk.NextTimerModel{Valid: true, Expiry: next, Pending: true, Cost: m.ns(), State: st}
	if beforeEq(next, b.timerJiffies) {
		// Still stale after the rescan: every call rescans.
		md.RepeatCost = md.Cost
	}
	return md
}
