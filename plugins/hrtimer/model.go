package hrtimer

import (
	"slices"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

var _ sdk.HRTimerModeler = (*Plugin)(nil)

// HRTimerModel implements sdk.HRTimerModeler: the state a host computes
// Start and NextEvent answers from, when the CPU is in the mainline state the
// model describes (high-res, no hang, the restart strategy of 627ef5ae2df8,
// only hard CLOCK_MONOTONIC timers, softirq not raised, a short queue).
// Out of process only: in process it is never asked.
func (p *Plugin) HRTimerModel(cpu int) sdk.HRTimerModel {
	if cpu < 0 || cpu >= len(p.cpus) {
		return sdk.HRTimerModel{}
	}
	cb := p.cpus[cpu]
	q := &cb.bases[baseMonotonic]
	if !p.highRes || p.custom || p.cfg.Restart != RestartDeferred || cb.hangDetected || cb.softirqActivated ||
		cb.softirqExpiresNext != ktime.Max || cb.inHrtirq || cb.tryPending ||
		cb.activeBases&^(1<<baseMonotonic) != 0 || q.len() > sdk.HRTimerModelMaxQueue {
		return sdk.HRTimerModel{}
	}
	m := sdk.HRTimerModel{Valid: true, StartCost: p.cfg.Costs.Start, ExpiresNext: cb.expiresNext,
		// The proportional era retries on the device's answer: not modelled.
		Interrupts: p.cfg.HangDelay != HangProportional,
		Migrates:   p.setup.TimerMigration,
		EntryCost:  p.cfg.Costs.Entry, PassCost: p.cfg.Costs.Pass, ExpiryCost: p.cfg.Costs.Expiry}
	if cb.nextTimer != nil {
		m.NextTimer = cb.nextTimer.id
	}
	if q.len() > 0 {
		ts := slices.Clone(q.h)
		slices.SortFunc(ts, func(a, b *timer) int {
			if less(a, b) {
				return -1
			}
			return 1
		})
		m.Queue = make([]sdk.HRQueued, len(ts))
		for i, t := range ts {
			if t.expires < 0 || t.softexpires < 0 {
				return sdk.HRTimerModel{}
			}
			m.Queue[i] = sdk.HRQueued{ID: t.id, Expires: t.expires, SoftExpires: t.softexpires,
				CallbackCost: t.cbCost, Period: t.period}
		}
	}
	return m
}
