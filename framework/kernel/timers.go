package kernel

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace"
)

// HRTimer is the host's half of a struct hrtimer: identity, callback and trace
// name. Queue state lives in the hrtimer plugin; the host mirrors only whether
// the timer is queued and where, which it needs for hrtimer_active() checks.
type HRTimer struct {
	ID     sdk.TimerID
	Clock  sdk.ClockID
	Cost   int64 // declared callback cost
	Period int64 // declared forward period (HRTIMER_RESTART), 0 = NORESTART
	// Callback applies the callback's side effects on cpu at now.
	Callback func(cpu *CPU, now ktime.Time, e *sdk.HRExpiry)
	// wake is the task of an hrtimer_sleeper, whose callback is
	// hrtimer_wakeup() (newSleeper; Callback is nil): no closure object.
	wake *Task

	expires ktime.Time
	// slack is expires - softexpires of the last start (the range
	// hrtimer_start_range_ns() was given), which hrtimer_forward() keeps.
	slack  int64
	Mode   sdk.HRMode
	cpu    int16 // the CPU whose base it was last queued on (MaxCPUs 4096)
	queued bool

	Function string // callback name as ftrace prints it
}

// newSleeper registers t's struct hrtimer_sleeper (hrtimer_setup_sleeper_on_stack()):
// an hrtimer whose callback, hrtimer_wakeup(), wakes t.
func (k *Kernel) newSleeper(t *Task, clock sdk.ClockID, mode sdk.HRMode) *HRTimer {
	h := k.NewHRTimer("hrtimer_wakeup", clock, mode, k.costs.Wakeup, nil)
	h.wake = t
	return h
}

// hrtimerWakeup is hrtimer_wakeup() for t's sleeper, expired on cpu at at:
// clear t->task (the sleep is done) and wake the task.
func (k *Kernel) hrtimerWakeup(cpu *CPU, at ktime.Time, t *Task) {
	t.sleep.sleepDone = true
	k.Wake(at, t, cpu)
}

// Queued reports whether the timer is enqueued (hrtimer_is_queued()).
func (t *HRTimer) Queued() bool { return t.queued }

// NewHRTimer registers an hrtimer (hrtimer_setup()).
func (k *Kernel) NewHRTimer(function string, clock sdk.ClockID, mode sdk.HRMode, cost int64,
	cb func(cpu *CPU, now ktime.Time, e *sdk.HRExpiry)) *HRTimer {
	t := &HRTimer{ID: k.allocTimerID(), Function: function, Clock: clock, Mode: mode, Cost: cost, Callback: cb, cpu: -1}
	// __hrtimer_setup(): a relative CLOCK_REALTIME timer is a CLOCK_MONOTONIC timer.
	if clock == sdk.ClockRealtime && mode&sdk.HRModeRel != 0 {
		t.Clock = sdk.ClockMonotonic
	}
	k.hrtimers = growTo(k.hrtimers, int(t.ID))
	k.hrtimers[t.ID] = t
	return t
}

// hrStart is hrtimer_start_range_ns() on cpu c at now; it performs the device
// writes the plugin asks for and returns the total cost.
func (k *Kernel) hrStart(c *CPU, now ktime.Time, t *HRTimer, expires ktime.Time, slack int64, mode sdk.HRMode) int64 {
	t.Mode = mode
	// __hrtimer_start_range_ns(): was_armed = remove_hrtimer(), whether the
	// timer was queued (a running callback's timer is not).
	wasArmed := t.queued
	var place *sdk.Placement
	if k.migrate {
		place = k.placement()
	}
	r := k.hrt.Start(c.id, now, sdk.HRTimer{ID: t.ID, Clock: t.Clock, Mode: mode, CallbackCost: t.Cost, Period: t.Period,
		Placement: place}, expires, slack)
	t.queued, t.cpu, t.expires = true, int16(c.id), r.Expires
	t.slack = int64(r.Expires - r.SoftExpires)
	if r.Moved {
		// switch_hrtimer_base() queued it on another CPU's base.
		t.cpu = int16(r.CPU)
		k.timerMoved(c.id)
	}
	c.cnt.b.Add(cHRStart, 1)
	if k.tr.Enabled("hrtimer_start") {
		k.traceHRStart(now, c.traceCtxLocks(1+c.heldLocks), t, r.Expires, r.SoftExpires, mode, wasArmed)
	}
	return r.Cost + k.programLocal(c, now+ktime.Time(r.Cost), r.Program)
}

// traceHRStart writes an hrtimer_start line: TP_printk of
// include/trace/events/timer.h, with was_armed= on releases that have it
// (trace.ABI.WasArmed).
func (k *Kernel) traceHRStart(at ktime.Time, ctx trace.Ctx, t *HRTimer, expires, soft ktime.Time, mode sdk.HRMode, wasArmed bool) {
	s := fmt.Sprintf("hrtimer=%s function=%s expires=%d softexpires=%d mode=%s",
		trace.Ptr(uint64(t.ID)), t.Function, int64(expires), int64(soft), mode)
	if k.abi.WasArmed {
		if wasArmed {
			s += " was_armed=1"
		} else {
			s += " was_armed=0"
		}
	}
	k.tr.Event(at, ctx, "hrtimer_start", s)
}

// hrCancel is hrtimer_try_to_cancel() on cpu c; it returns the cost. Its
// common case, a timer no longer queued (a sleeper that expired), inlines
// into the caller.
func (k *Kernel) hrCancel(c *CPU, now ktime.Time, t *HRTimer) int64 {
	if !t.queued {
		return 0 // the lockless hrtimer_active() fast path: nothing to do
	}
	return k.hrCancelQueued(c, now, t)
}

// hrCancelQueued is hrCancel of a queued timer.
func (k *Kernel) hrCancelQueued(c *CPU, now ktime.Time, t *HRTimer) int64 {
	r := k.hrt.Cancel(c.id, now, t.ID)
	if r.Ret == 1 {
		t.queued = false
		c.cnt.b.Add(cHRCancel, 1)
		if k.tr != nil {
			k.tr.Event(now, c.traceCtxLocks(1+c.heldLocks), "hrtimer_cancel", "hrtimer="+trace.Ptr(uint64(t.ID)))
		}
	}
	return r.Cost + k.programLocal(c, now+ktime.Time(r.Cost), r.Program)
}

// runHRExpiries applies the side effects of the callbacks an interrupt or
// softirq pass ran, in order, and traces them.
func (k *Kernel) runHRExpiries(c *CPU, res *sdk.InterruptResult) {
	for i := range res.Expired {
		e := &res.Expired[i]
		t := k.hrtimerByID(e.ID)
		if t == nil {
			panic(fmt.Sprintf("kernel: hrtimer plugin expired unknown timer %d on cpu %d", e.ID, c.id))
		}
		t.queued = e.Restarted
		if e.Restarted {
			t.expires = e.NewExpires
		}
		if e.Soft {
			k.Counters.Inc(cntHRExpireSoft, c.id, 1)
		} else {
			c.cnt.b.Add(cHRExpire, 1)
		}
		if k.tr.Enabled("hrtimer_expire_entry") {
			k.tr.Event(e.Now, c.traceCtx(), "hrtimer_expire_entry", fmt.Sprintf("hrtimer=%s function=%s now=%d",
				trace.Ptr(uint64(t.ID)), t.Function, int64(e.BaseNow)))
		}
		if t.wake != nil {
			k.hrtimerWakeup(c, e.Now, t.wake)
		} else if t.Callback != nil {
			t.Callback(c, e.Now, e)
		}
		if k.tr != nil {
			end := e.Now + ktime.Time(t.Cost)
			k.tr.Event(end, c.traceCtx(), "hrtimer_expire_exit", "hrtimer="+trace.Ptr(uint64(t.ID)))
			if e.Restarted && k.tr.Enabled("hrtimer_start") {
				// __run_hrtimer(): a callback that returned HRTIMER_RESTART
				// (after hrtimer_forward()) is requeued under the base lock,
				// enqueue_hrtimer(timer, base, HRTIMER_MODE_ABS) ->
				// debug_activate() -> trace_hrtimer_start(): mode=ABS
				// whatever mode the timer was started with.
				// was_armed=0 (7.1+): the timer was dequeued before its callback.
				k.traceHRStart(end, c.traceCtxLocks(1), t, e.NewExpires, e.NewExpires-ktime.Time(t.slack), sdk.HRModeAbs, false)
			}
		}
	}
}

// programLocal performs the clockevent writes an hrtimer operation asked for on
// cpu c's local device, starting at now; it returns their cost. Most
// operations write nothing (a timer queued behind the first): that test
// inlines into the caller.
func (k *Kernel) programLocal(c *CPU, now ktime.Time, writes []ktime.Time) int64 {
	if len(writes) == 0 {
		return 0
	}
	return c.programWrites(now, writes)
}

// programWrites is programLocal's loop over one or more writes. The common
// single write is a plain call: nothing is live across it to be spilled.
func (c *CPU) programWrites(now ktime.Time, writes []ktime.Time) int64 {
	if len(writes) == 1 {
		return c.programDevice(now, writes[0])
	}
	var cost int64
	for _, at := range writes {
		cost += c.programDevice(now+ktime.Time(cost), at)
	}
	return cost
}

// WheelTimer is the host's half of a struct timer_list.
type WheelTimer struct {
	ID       sdk.TimerID
	Function string
	Flags    sdk.TimerFlags
	Cost     int64
	Period   uint64 // declared re-arm period in jiffies
	Callback func(cpu *CPU, now ktime.Time)

	pending bool
	cpu     int
}

// NewWheelTimer registers a timer_list (timer_setup()).
func (k *Kernel) NewWheelTimer(function string, flags sdk.TimerFlags, cost int64, period uint64, cb func(cpu *CPU, now ktime.Time)) *WheelTimer {
	t := &WheelTimer{ID: k.allocTimerID(), Function: function, Flags: flags, Cost: cost, Period: period, Callback: cb, cpu: -1}
	k.wtimers = growTo(k.wtimers, int(t.ID))
	k.wtimers[t.ID] = t
	return t
}

// ModTimer is mod_timer() on cpu c at now; it returns the cost.
func (k *Kernel) modTimer(c *CPU, now ktime.Time, t *WheelTimer, expires uint64) int64 {
	was := -1
	if t.pending {
		was = t.cpu
	}
	// __mod_timer(): the plugin detaches a timer pending elsewhere and
	// chooses the base (get_target_base() / get_timer_this_cpu_base()).
	k.wheelGen++
	r := k.wheel.ModTimer(c.id, k.tk.jiffies, sdk.WheelTimer{ID: t.ID, Expires: expires, Flags: t.Flags, CallbackCost: t.Cost, Period: t.Period,
		Placement: k.placement()})
	on := c
	if r.Moved {
		on = k.cpus[r.CPU]
		if r.CPU != was {
			k.timerMoved(c.id)
		}
	}
	if was >= 0 && was != on.id {
		k.cpus[was].wheelDirty() // its cached state can only be early
	}
	t.pending, t.cpu = true, on.id
	on.wheel = r.State
	k.Counters.Inc(cntTimerStart, c.id, 1)
	if k.tr.Enabled("timer_start") {
		// The bucket and its expiry are the wheel plugin's (ModTimer's result).
		k.tr.Event(now, c.traceCtx(), "timer_start", fmt.Sprintf("timer=%s function=%s expires=%d [timeout=%d] bucket_expiry=%d cpu=%d idx=%d flags=%s",
			trace.Ptr(uint64(t.ID)), t.Function, expires, int64(expires-k.tk.jiffies), r.BucketExpiry, on.id, r.Index, timerFlags(t.Flags)))
	}
	on.wheelChanged(now)
	return r.Cost
}

// delTimer is del_timer(); it returns the cost.
func (k *Kernel) delTimer(c *CPU, now ktime.Time, t *WheelTimer) int64 {
	if !t.pending {
		return 0
	}
	owner := k.cpus[t.cpu]
	k.wheelGen++
	r := k.wheel.DelTimer(owner.id, k.tk.jiffies, t.ID)
	owner.wheel = r.State
	t.pending = false
	k.Counters.Inc(cntTimerCancel, owner.id, 1)
	if k.tr != nil {
		k.tr.Event(now, c.traceCtx(), "timer_cancel", "timer="+trace.Ptr(uint64(t.ID)))
	}
	return r.Cost
}

func timerFlags(f sdk.TimerFlags) string {
	switch {
	case f&sdk.TimerDeferrable != 0 && f&sdk.TimerPinned != 0:
		return "D|P"
	case f&sdk.TimerDeferrable != 0:
		return "D"
	case f&sdk.TimerPinned != 0:
		return "P"
	}
	return ""
}

// growTo extends s so that index i exists.
func growTo[T any](s []*T, i int) []*T {
	for len(s) <= i {
		s = append(s, nil)
	}
	return s
}

// hrtimerByID returns the hrtimer with id, or nil.
func (k *Kernel) hrtimerByID(id sdk.TimerID) *HRTimer {
	if int(id) < len(k.hrtimers) {
		return k.hrtimers[id]
	}
	return nil
}

// wtimerByID returns the wheel timer with id, or nil.
func (k *Kernel) wtimerByID(id sdk.TimerID) *WheelTimer {
	if int(id) < len(k.wtimers) {
		return k.wtimers[id]
	}
	return nil
}
