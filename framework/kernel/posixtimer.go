package kernel

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/ktime"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/trace"
)

// CPU-time clock ids.
const (
	ClockProcessCPUTime sdk.ClockID = 2
	ClockThreadCPUTime  sdk.ClockID = 3
)

// Notification kinds (struct sigevent.sigev_notify).
const (
	SigevSignal   = 0
	SigevNone     = 1
	SigevThreadID = 4
)

// Interval timer kinds.
const (
	ItimerReal    = 0
	ItimerVirtual = 1
	ItimerProf    = 2
)

// TimerCreate is timer_create(clock, sigevent); Result.Ret is the timer id.
type TimerCreate struct {
	Clock  sdk.ClockID
	Notify int // SigevSignal, SigevThreadID or SigevNone
	Signo  int
}

// TimerSettime is timer_settime(id, flags, value, interval): Abs = TIMER_ABSTIME;
// Value 0 disarms.
type TimerSettime struct {
	ID              int
	Abs             bool
	Value, Interval int64
}

// TimerGettime is timer_gettime(); Result.Ret is the time left in ns.
type TimerGettime struct{ ID int }

// TimerGetoverrun is timer_getoverrun(); Result.Ret is the overrun count.
type TimerGetoverrun struct{ ID int }

// TimerDelete is timer_delete().
type TimerDelete struct{ ID int }

// Setitimer is setitimer(which, value, interval); Value 0 disarms.
type Setitimer struct {
	Which           int
	Value, Interval int64
}

// Sigaction installs a handler for Signo (nil restores the default: ignored in this model).
type Sigaction struct {
	Signo   int
	Handler Handler
}

// Sigpending is sigpending(); Result.Ret is the pending mask.
type Sigpending struct{}

func (TimerCreate) isAction()     {}
func (TimerSettime) isAction()    {}
func (TimerGettime) isAction()    {}
func (TimerGetoverrun) isAction() {}
func (TimerDelete) isAction()     {}
func (Setitimer) isAction()       {}
func (Sigaction) isAction()       {}
func (Sigpending) isAction()      {}

// PosixTimer is a struct k_itimer (kernel/time/posix-timers.c).
type PosixTimer struct {
	ID     int
	Clock  sdk.ClockID
	Notify int
	Signo  int
	proc   *Process
	thread *Task // SIGEV_THREAD_ID target

	hr       *HRTimer // hrtimer-based clocks
	cpuClock bool     // CPU-time clocks: checked from the tick
	cpuExp   int64    // CPU-time expiry (process or thread CPU ns)
	cpuArmed bool

	interval       int64
	overrun        int64 // it_overrun
	overrunLast    int64 // it_overrun_last
	requeuePending uint64
	signalSeq      uint64 // it_signal_seq (6.13+)
	requeueArmed   bool   // 6.13 it_status == POSIX_TIMER_REQUEUE_PENDING
	sigq           sigEntry
	deleted        bool
}

// consistent reports whether the 6.13 signal rules are in force.
func (k *Kernel) consistentSignals() bool { return k.settings.PosixTimerSignals != "legacy" }

// posixSyscall executes the POSIX timer and signal syscalls.
func (t *Task) posixSyscall(now ktime.Time, a Action) {
	k := t.k
	c := t.cpu
	p := t.Proc
	cost := k.costs.Syscall
	res := Result{}
	name := ""
	at := now + ktime.Time(cost)
	switch a := a.(type) {
	case TimerCreate:
		name = "timer_create"
		p.nextTID++
		pt := &PosixTimer{ID: p.nextTID, Clock: a.Clock, Notify: a.Notify, Signo: a.Signo, proc: p}
		if a.Notify == SigevThreadID {
			pt.thread = t
		}
		pt.sigq = sigEntry{signo: a.Signo, code: siTimer, timer: pt}
		switch a.Clock {
		case ClockProcessCPUTime, ClockThreadCPUTime:
			pt.cpuClock = true
			if a.Clock == ClockThreadCPUTime {
				pt.thread = t
			}
		case sdk.ClockRealtime, sdk.ClockMonotonic, sdk.ClockBoottime, sdk.ClockTAI:
			pt.hr = k.NewHRTimer("posix_timer_fn", a.Clock, sdk.HRModeAbs, k.costs.SignalGenerate, func(cpu *CPU, now ktime.Time, e *sdk.HRExpiry) {
				pt.fire(cpu, now)
			})
		default:
			res.Err = EINVAL
		}
		if res.Err == 0 {
			p.timers[pt.ID] = pt
			res.Ret = int64(pt.ID)
		}
	case TimerSettime:
		name = "timer_settime"
		pt := p.timers[a.ID]
		if pt == nil {
			res.Err = EINVAL
			break
		}
		cost += pt.set(c, at, a.Abs, a.Value, a.Interval)
	case TimerGettime:
		name = "timer_gettime"
		pt := p.timers[a.ID]
		if pt == nil {
			res.Err = EINVAL
			break
		}
		res.Ret = pt.remaining(at)
	case TimerGetoverrun:
		name = "timer_getoverrun"
		pt := p.timers[a.ID]
		if pt == nil {
			res.Err = EINVAL
			break
		}
		res.Ret = pt.overrunLast
	case TimerDelete:
		name = "timer_delete"
		pt := p.timers[a.ID]
		if pt == nil {
			res.Err = EINVAL
			break
		}
		cost += pt.disarm(c, at)
		pt.deleted = true
		if k.consistentSignals() {
			pt.signalSeq++
			// 6.13+: posix_timer_delete() -> posixtimer_sigqueue_putref(): a
			// queued signal of a deleted timer is dropped at dequeue.
		}
		delete(p.timers, a.ID)
	case Setitimer:
		name = "setitimer"
		cost += p.setitimer(c, at, a.Which, a.Value, a.Interval)
	case Sigaction:
		name = "rt_sigaction"
		if a.Handler == nil {
			delete(p.handlers, a.Signo)
		} else {
			p.handlers[a.Signo] = a.Handler
		}
	case Sigpending:
		name = "rt_sigpending"
		for _, e := range append(append([]*sigEntry{}, t.sigPending.q...), p.pending.q...) {
			res.Ret |= 1 << uint(e.signo-1)
		}
	}
	t.traceSysEnter(now, name, "")
	t.segment(cost, false, func(now ktime.Time) { t.sysReturn(now, name, res) })
}

// set is common_timer_set() / do_timer_settime(): disarm, invalidate pending
// signals' requeue (legacy) or sequence (6.13+), then arm. It returns the cost.
func (pt *PosixTimer) set(c *CPU, now ktime.Time, abs bool, value, interval int64) int64 {
	k := pt.proc.k
	cost := pt.disarm(c, now)
	if k.consistentSignals() {
		pt.signalSeq++ // posix_timer_set_common(): it_signal_seq++
	} else {
		pt.requeuePending = (pt.requeuePending + 2) &^ 1 // REQUEUE_PENDING bit cleared
	}
	pt.overrunLast = 0
	pt.interval = interval
	pt.requeueArmed = false
	if value == 0 {
		return cost
	}
	if pt.cpuClock {
		base := pt.cpuNow()
		if abs {
			pt.cpuExp = value
		} else {
			pt.cpuExp = base + value
		}
		pt.cpuArmed = true
		return cost
	}
	// common_hrtimer_arm(): hrtimer_setup() then hrtimer_start(). A relative
	// CLOCK_REALTIME timer runs on CLOCK_MONOTONIC.
	mode := sdk.HRModeAbs
	clock := pt.Clock
	if !abs {
		mode = sdk.HRModeRel
		if clock == sdk.ClockRealtime {
			clock = sdk.ClockMonotonic
		}
	}
	pt.hr.Clock = clock
	if k.tr.Enabled("hrtimer_init") {
		k.tr.Event(now, c.traceCtx(), "hrtimer_init", fmt.Sprintf("hrtimer=%s clockid=%s mode=%s", ptrOf(pt.hr), clock, mode))
	}
	cost += k.hrStart(c, now+ktime.Time(cost), pt.hr, ktime.Time(value), 0, mode)
	return cost
}

// disarm cancels the timer's expiry (hrtimer_try_to_cancel()).
func (pt *PosixTimer) disarm(c *CPU, now ktime.Time) int64 {
	pt.cpuArmed = false
	if pt.hr != nil {
		return pt.proc.k.hrCancel(c, now, pt.hr)
	}
	return 0
}

func (pt *PosixTimer) cpuNow() int64 {
	if pt.Clock == ClockThreadCPUTime && pt.thread != nil {
		return pt.thread.cpuTime
	}
	return pt.proc.cpuTime
}

// remaining is common_timer_get()'s it_value.
func (pt *PosixTimer) remaining(now ktime.Time) int64 {
	if pt.cpuClock {
		if !pt.cpuArmed {
			return 0
		}
		return max(pt.cpuExp-pt.cpuNow(), 1)
	}
	if !pt.hr.queued {
		return 0
	}
	off := pt.proc.k.clockOffset(pt.hr.Clock)
	return max(int64(pt.hr.expires)-(int64(now)+off), 1)
}

// fire is posix_timer_fn() (hrtimer clocks) or cpu_timer_fire() (CPU clocks):
// queue the timer's signal. A periodic timer is re-armed when the signal is
// dequeued, not here.
func (pt *PosixTimer) fire(c *CPU, now ktime.Time) {
	k := pt.proc.k
	if pt.Notify == SigevNone {
		return
	}
	consistent := k.consistentSignals()
	if consistent {
		pt.sigq.sysPriv = pt.signalSeq // it_sigqueue_seq
		pt.requeueArmed = pt.interval != 0
	} else if pt.interval != 0 {
		pt.requeuePending++ // si_private = ++timr->it_requeue_pending
		pt.sigq.sysPriv = pt.requeuePending
	} else {
		pt.sigq.sysPriv = 0
	}
	res, _ := k.sendSignal(now, c, pt.proc, pt.thread, &pt.sigq)
	if res == 2 {
		pt.overrun++ // already queued: the expiry is an overrun
		k.Counters.Add("posix_timer_overruns", c.id, 1)
	}
	k.Counters.Add("posix_timer_fires", c.id, 1)
	if k.tr.Enabled("signal_generate") {
		target := pt.proc.tasks[0]
		if pt.thread != nil {
			target = pt.thread
		}
		grp := 1
		if pt.thread != nil {
			grp = 0
		}
		k.tr.Event(now, c.traceCtx(), "signal_generate", fmt.Sprintf("sig=%d errno=0 code=%d comm=%s pid=%d grp=%d res=%d",
			pt.Signo, siTimer, target.Comm, target.Pid, grp, res))
	}
}

// dequeued is the timer half of dequeue_signal(): legacy posixtimer_rearm(),
// or 6.13+ posixtimer_deliver_signal(). It reports whether the signal is
// delivered and fills in its overrun.
func (pt *PosixTimer) dequeued(now ktime.Time, e *sigEntry, info *SigInfo) bool {
	k := pt.proc.k
	info.TimerID = pt.ID
	c := pt.proc.tasks[0].cpu
	if pt.thread != nil {
		c = pt.thread.cpu
	}
	if k.consistentSignals() {
		if pt.deleted || e.sysPriv != pt.signalSeq {
			return false // stale: the timer was re-armed or deleted since it was queued
		}
		if pt.requeueArmed && pt.interval != 0 {
			pt.requeueArmed = false
			pt.rearm(c, now)
		}
		info.Overrun = pt.overrunLast
		return true
	}
	// Legacy: re-arm only when the signal matches the current arming; deliver anyway.
	if pt.interval != 0 && !pt.deleted && pt.requeuePending == e.sysPriv {
		pt.rearm(c, now)
		pt.requeuePending++
	} else if pt.deleted || pt.requeuePending != e.sysPriv {
		k.Counters.Add("signals_stale_delivered", c.id, 1)
	}
	info.Overrun = pt.overrunLast
	return true
}

// rearm is common_hrtimer_rearm(): forward the expiry past now by the interval,
// counting overruns, and restart the timer.
func (pt *PosixTimer) rearm(c *CPU, now ktime.Time) {
	k := pt.proc.k
	if pt.cpuClock {
		base := pt.cpuNow()
		n := int64(1)
		if pt.cpuExp+pt.interval <= base {
			n = (base-pt.cpuExp)/pt.interval + 1
		}
		pt.cpuExp += n * pt.interval
		pt.overrunLast = pt.overrun + n - 1
		pt.overrun = 0
		pt.cpuArmed = true
		return
	}
	off := k.clockOffset(pt.hr.Clock)
	nowc := int64(now) + off
	exp := int64(pt.hr.expires)
	var n int64
	if exp <= nowc {
		n = (nowc-exp)/pt.interval + 1
		exp += n * pt.interval
	}
	pt.overrunLast = pt.overrun + max(n-1, 0)
	pt.overrun = 0
	cost := k.hrStart(c, now, pt.hr, ktime.Time(exp), 0, sdk.HRModeAbs)
	c.addKernelCost(cost)
}

// itimer is one of a process's interval timers (struct signal_struct it[] and real_timer).
type itimer struct {
	which    int
	hr       *HRTimer // ITIMER_REAL
	interval int64
	cpuExp   int64 // VIRTUAL/PROF: process CPU time expiry
	armed    bool
	sig      sigEntry
}

// setitimer is do_setitimer().
func (p *Process) setitimer(c *CPU, now ktime.Time, which int, value, interval int64) int64 {
	k := p.k
	it := p.itimers[which]
	if it == nil {
		sig := map[int]int{ItimerReal: SIGALRM, ItimerVirtual: SIGVTALRM, ItimerProf: SIGPROF}[which]
		it = &itimer{which: which, sig: sigEntry{signo: sig}}
		if which == ItimerReal {
			it.hr = k.NewHRTimer("it_real_fn", sdk.ClockMonotonic, sdk.HRModeRel, k.costs.SignalGenerate, func(cpu *CPU, now ktime.Time, e *sdk.HRExpiry) {
				k.sendSignal(now, cpu, p, nil, &sigEntry{signo: SIGALRM})
				k.Counters.Add("itimer_real_fires", cpu.id, 1)
			})
		}
		p.itimers[which] = it
	}
	it.interval = interval
	var cost int64
	if it.hr != nil {
		cost += k.hrCancel(c, now, it.hr)
		if value > 0 {
			cost += k.hrStart(c, now+ktime.Time(cost), it.hr, ktime.Time(value), 0, sdk.HRModeRel)
		}
		return cost
	}
	it.armed = value > 0
	// set_cpu_itimer(): the first expiry gets one TICK_NSEC added.
	it.cpuExp = p.cpuTime + value + k.tickNsec
	return cost
}

// rearmRealTimer is the SIGALRM branch of dequeue_signal(): restart a periodic
// ITIMER_REAL that is not queued.
func (p *Process) rearmRealTimer(c *CPU, now ktime.Time) {
	it := p.itimers[ItimerReal]
	if it == nil || it.interval == 0 || it.hr.queued {
		return
	}
	k := p.k
	exp := int64(it.hr.expires)
	if exp <= int64(now) {
		n := (int64(now)-exp)/it.interval + 1
		exp += n * it.interval
	}
	c.addKernelCost(k.hrStart(c, now, it.hr, ktime.Time(exp), 0, sdk.HRModeAbs))
}

// runCPUTimers is run_posix_cpu_timers() from the tick: CPU-time POSIX timers
// and ITIMER_VIRTUAL/PROF of the current task's process fire when their CPU
// time is reached, so they run at most HZ times a second.
func (k *Kernel) runCPUTimers(c *CPU, now ktime.Time) {
	t := c.curr
	if t == nil {
		return
	}
	p := t.Proc
	for _, which := range []int{ItimerVirtual, ItimerProf} {
		it := p.itimers[which]
		if it == nil || !it.armed || p.cpuTime < it.cpuExp {
			continue
		}
		k.sendSignal(now, c, p, nil, &sigEntry{signo: it.sig.signo})
		if it.interval > 0 {
			it.cpuExp += it.interval
			if it.cpuExp <= p.cpuTime {
				it.cpuExp = p.cpuTime + it.interval
			}
		} else {
			it.armed = false
		}
	}
	for _, id := range p.timerIDs() {
		pt := p.timers[id]
		if !pt.cpuClock || !pt.cpuArmed || pt.cpuNow() < pt.cpuExp {
			continue
		}
		pt.cpuArmed = false
		pt.fire(c, now)
	}
}

func (p *Process) timerIDs() []int {
	ids := make([]int, 0, len(p.timers))
	for id := range p.timers {
		ids = append(ids, id)
	}
	for i := 1; i < len(ids); i++ { // insertion sort: tiny sets, deterministic order
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}

func ptrOf(t *HRTimer) string { return trace.Ptr(uint64(t.ID)) }
