package model

import "github.com/tickemu/tickemu/framework/sdk"

// NextTimer is the answer m gives to NextTimerInterrupt(cpu, jiffies)
// (get_next_timer_interrupt()); repeat says whether a NextTimerInterrupt was
// answered from m already. ok is false when m is not Valid.
func NextTimer(m *sdk.NextTimerModel, jiffies uint64, repeat bool) (r sdk.NextTimerResult, ok bool) {
	if !m.Valid {
		return r, false
	}
	r = sdk.NextTimerResult{Next: sdk.NoExpiry, Cost: m.Cost, State: m.State}
	if repeat {
		r.Cost = m.RepeatCost
	}
	switch {
	case m.Expiry != sdk.NoExpiry && int64(jiffies-m.Expiry) >= 0:
		r.Next = jiffies
	case m.Pending:
		r.Next = m.Expiry
	}
	return r, true
}
