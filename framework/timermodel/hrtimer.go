// Package timermodel evaluates the answer models timer plugins declare
// (sdk.HRTimerModel, sdk.NextTimerModel): the answers a plugin promises to
// give, computed without asking it. The out-of-process transport uses them so
// that it need not wait for the plugin, and checks the plugin's real answers
// against them when they come.
package timermodel

import (
	"slices"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// HRNextEvent is the answer m gives to NextEvent(cpu, now, exclude)
// (hrtimer_next_event_without()); ok is false when m is not Valid.
func HRNextEvent(m *sdk.HRTimerModel, exclude sdk.TimerID) (next ktime.Time, ok bool) {
	if !m.Valid {
		return 0, false
	}
	q := m.Queue
	if len(q) > 0 && exclude != 0 && q[0].ID == exclude {
		q = q[1:]
	}
	if len(q) == 0 {
		return ktime.Max, true
	}
	return q[0].Expires, true
}

// HRModelledStart reports whether m covers a Start of t with exp on its CPU:
// the timer's clock and mode, and a NextTimer that is queued. The caller
// checks the rest of the precondition (t queued on no other CPU, its callback
// not running).
func HRModelledStart(m *sdk.HRTimerModel, t sdk.HRTimer) bool {
	if !m.Valid || t.Mode&sdk.HRModeSoft != 0 {
		return false
	}
	switch {
	case t.Clock == sdk.ClockMonotonic:
	case t.Clock == sdk.ClockRealtime && t.Mode&sdk.HRModeRel != 0:
	default:
		return false
	}
	return t.ID != m.NextTimer || index(m.Queue, t.ID) >= 0
}

// HRStart is the answer m gives to Start(cpu, now, t, exp, slack)
// (hrtimer_start_range_ns() as sdk.HRTimerModel describes it); it updates m
// to the state after the call. ok is false when m does not cover the call
// (HRModelledStart, or a negative expiry); m is then unchanged. Program is a
// fresh slice.
func HRStart(m *sdk.HRTimerModel, now ktime.Time, t sdk.HRTimer, exp ktime.Time, slack int64) (r sdk.HROpResult, ok bool) {
	if !HRModelledStart(m, t) {
		return r, false
	}
	soft := int64(exp)
	if t.Mode&sdk.HRModeRel != 0 {
		soft = addSafe(soft, int64(now))
	}
	if soft < 0 {
		return r, false
	}
	hard := addSafe(soft, max(slack, 0))
	r = sdk.HROpResult{Cost: m.StartCost, SoftExpires: ktime.Time(soft), Expires: ktime.Time(hard)}
	forced := t.ID == m.NextTimer
	if i := index(m.Queue, t.ID); i >= 0 {
		r.Ret = 1
		m.Queue = slices.Delete(m.Queue, i, i+1)
	}
	// timerqueue_add(): after every timer that does not expire later.
	at := len(m.Queue)
	for i, q := range m.Queue {
		if q.Expires > r.Expires {
			at = i
			break
		}
	}
	m.Queue = slices.Insert(m.Queue, at, sdk.HRQueued{ID: t.ID, Expires: r.Expires})
	switch {
	case forced:
		// 627ef5ae2df8: force_local, then hrtimer_force_reprogram(skip_equal).
		first := m.Queue[0]
		m.NextTimer = 0
		if first.Expires != ktime.Max {
			m.NextTimer = first.ID
		}
		if first.Expires != m.ExpiresNext {
			m.ExpiresNext = first.Expires
			r.Program = []ktime.Time{first.Expires}
		}
	case at == 0 && r.Expires < m.ExpiresNext:
		// hrtimer_reprogram() for a new first timer.
		m.NextTimer = t.ID
		m.ExpiresNext = r.Expires
		r.Program = []ktime.Time{r.Expires}
	}
	return r, true
}

// index is the position of id in q, or -1.
func index(q []sdk.HRQueued, id sdk.TimerID) int {
	for i := range q {
		if q[i].ID == id {
			return i
		}
	}
	return -1
}

// addSafe is ktime_add_safe(): a sum saturating at ktime.Max.
func addSafe(a, b int64) int64 {
	if a == int64(ktime.Max) || b == int64(ktime.Max) {
		return int64(ktime.Max)
	}
	s := a + b
	if b > 0 && s < a {
		return int64(ktime.Max)
	}
	return s
}
