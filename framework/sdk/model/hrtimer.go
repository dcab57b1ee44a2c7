// Package model evaluates the answer models plugins declare
// (sdk.DeadlineModel, sdk.HRTimerModel, sdk.NextTimerModel): the answers a
// plugin promises to give, computed without asking it. It is part of the SDK
// because it defines what a declared model means: the out-of-process
// transport (framework/sdk/shim) answers from it so that it need not wait for
// the plugin and checks the plugin's real answers against it when they come,
// the host's contract checker checks linked-in plugins with it, and sdktest's
// suites check a plugin's models with it.
package model

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
	if !m.Valid || t.Mode&sdk.HRModeSoft != 0 || (m.Migrates && t.Mode&sdk.HRModePinned == 0) {
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
	m.Queue = slices.Insert(m.Queue, at, sdk.HRQueued{ID: t.ID, Expires: r.Expires, SoftExpires: r.SoftExpires,
		CallbackCost: t.CallbackCost, Period: t.Period})
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

// HRInterrupt is the answer m gives to Interrupt(cpu, now)
// (hrtimer_interrupt() as sdk.HRTimerModel describes it, 2889243848560 and
// later); it updates m to the state after the call. ok is false when m does
// not model interrupts or the interrupt would declare a hang; m is then
// unchanged. The result's slices are fresh.
func HRInterrupt(m *sdk.HRTimerModel, now ktime.Time) (r sdk.InterruptResult, ok bool) {
	if !m.Valid || !m.Interrupts {
		return r, false
	}
	q := slices.Clone(m.Queue)
	t := now.Add(m.EntryCost)
	basenow := t
	for retries := 0; ; retries++ {
		if retries == 3 {
			return sdk.InterruptResult{}, false // a hang: asked for
		}
		t = t.Add(m.PassCost)
		// __hrtimer_run_queues() on the hard CLOCK_MONOTONIC base.
		for len(q) > 0 && basenow >= q[0].SoftExpires {
			e := q[0]
			q = q[1:]
			t = t.Add(m.ExpiryCost)
			x := sdk.HRExpiry{ID: e.ID, Now: t, BaseNow: t}
			if e.Period > 0 {
				x.Overruns = forward(&e, int64(t), e.Period)
				x.Restarted, x.NewExpires = true, e.Expires
			}
			t = t.Add(e.CallbackCost)
			if e.Period > 0 {
				q = enqueue(q, e)
			}
			r.Expired = append(r.Expired, x)
		}
		next := ktime.Max
		if len(q) > 0 {
			next = q[0].Expires
		}
		if next < t {
			basenow = t
			continue
		}
		r.Retries = retries
		r.End = t
		r.Program = []ktime.Time{next}
		m.Queue, m.ExpiresNext, m.NextTimer = q, next, 0
		if next != ktime.Max {
			m.NextTimer = q[0].ID
		}
		return r, true
	}
}

// enqueue queues e after every entry that does not expire later.
func enqueue(q []sdk.HRQueued, e sdk.HRQueued) []sdk.HRQueued {
	at := len(q)
	for i := range q {
		if q[i].Expires > e.Expires {
			at = i
			break
		}
	}
	return slices.Insert(q, at, e)
}

// forward is hrtimer_forward(timer, now, interval) on a dequeued timer in
// high-res mode (hrtimer_resolution 1 ns), as the sdk.HRTimerModel callers
// expect: both expiries move past now by whole intervals, counted from the
// hard expiry when now is before it; it returns the overrun count.
func forward(e *sdk.HRQueued, now, interval int64) int64 {
	exp := int64(e.Expires)
	now = max(now, exp)
	delta := now - exp
	interval = max(interval, 1)
	orun := int64(1)
	if delta >= interval {
		orun = delta / interval
		incr := orun * interval
		if incr/interval != orun {
			incr = int64(ktime.Max)
		}
		e.Expires = ktime.Time(addSafe(exp, incr))
		e.SoftExpires = ktime.Time(addSafe(int64(e.SoftExpires), incr))
		if int64(e.Expires) > now {
			return orun
		}
		orun++
	}
	e.Expires = ktime.Time(addSafe(int64(e.Expires), interval))
	e.SoftExpires = ktime.Time(addSafe(int64(e.SoftExpires), interval))
	return orun
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

// HROpEqual compares two Start answers field by field (what a model's answer
// is checked with).
func HROpEqual(a, b sdk.HROpResult) bool {
	return a.Cost == b.Cost && a.Ret == b.Ret && a.Expires == b.Expires && a.SoftExpires == b.SoftExpires &&
		a.Moved == b.Moved && a.CPU == b.CPU && slices.Equal(a.Program, b.Program)
}

// InterruptEqual compares two interrupt answers field by field.
func InterruptEqual(a, b sdk.InterruptResult) bool {
	return a.End == b.End && a.RaiseSoftirq == b.RaiseSoftirq && a.Retries == b.Retries && a.TryProgram == b.TryProgram &&
		a.Hang == b.Hang && a.HangDelay == b.HangDelay && slices.Equal(a.Program, b.Program) && slices.Equal(a.Expired, b.Expired)
}
