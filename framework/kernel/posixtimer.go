package kernel

import (
	"strconv"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace"
)

// POSIX timers (kernel/time/posix-timers.c; the CPU-time clocks are in
// cputimers.go, interval timers in itimer.go), in two eras selected by the
// kernel block's posix_timer_signals:
//
//   - "legacy" follows v6.12 (and everything back to the 4.x rework checked
//     against the 010e85f9e47c copy): a queued timer signal is always
//     delivered; timer_settime() and timer_delete() only prevent the re-arm
//     at dequeue, through the it_requeue_pending sequence carried in
//     si_sys_private.
//   - "consistent" follows v6.13+ (513793bc6ab3 "posix-timers: Make signal
//     delivery consistent", b06b0345fff3 "Make signal overrun accounting
//     sensible" and the rest of that series, read at a v6.15+ copy): every
//     timer_settime()/timer_delete() bumps it_signal_seq, the queued signal
//     carries the value it had when it was queued (it_sigqueue_seq), and
//     posixtimer_deliver_signal() drops a signal whose value is stale.
//
// In both eras a periodic timer is not re-armed by its expiry: posix_timer_fn()
// returns HRTIMER_NORESTART and the timer is re-armed when its signal is
// dequeued, with hrtimer_forward() counting the missed periods as overruns.
// One timer therefore has at most one queued signal (its preallocated
// sigqueue).

// Notification kinds (struct sigevent.sigev_notify).
const (
	SigevSignal   = 0
	SigevNone     = 1
	SigevThreadID = 4
)

// intMax is INT_MAX: si_overrun and timer_getoverrun() are clamped to it.
const intMax = 1<<31 - 1

// timerStatus is enum posix_timer_state (6.13+). The legacy era's it_active
// is status == timerArmed.
type timerStatus int

const (
	timerDisarmed timerStatus = iota
	timerArmed
	timerRequeuePending // expired, signal queued, re-armed at dequeue
)

// PosixTimer is a struct k_itimer. The sequence fields are the heart of the
// two eras:
//
//   - requeuePending (legacy it_requeue_pending): bumped by posix_timer_fn()
//     for periodic timers and stored in the sigqueue's si_sys_private; the
//     dequeue re-arms only if they still match, then bumps it again;
//     timer_settime() moves it on to the next even value. Bit 0 set means
//     "expired, re-arm pending" (REQUEUE_PENDING).
//   - signalSeq/sigqueueSeq (6.13+ it_signal_seq/it_sigqueue_seq): signalSeq
//     is bumped by timer_settime(), timer_delete() and each re-arm at
//     delivery; sigqueueSeq is copied from it every time the timer queues its
//     signal (also when the signal is already queued). The legacy era keeps
//     them too, only to count the stale signals it delivers.
//
// Fields: struct k_itimer's, both eras' (many: each era reads its own, and
// the kernel's struct has as many). They are grouped by use: the id, the
// flags and the preallocated sigqueue (what a dequeue reads), what an expiry
// and the era's rules read, the hrtimer's arming and the overrun accounting.
type PosixTimer struct {
	ID int
	// The flags share a word.
	cpuClock    bool     // CLOCK_PROCESS/THREAD_CPUTIME_ID: expired from the tick
	valid       bool     // posixtimer_valid(): not deleted
	sigPeriodic bool     // it_sig_periodic
	ignored     bool     // on signal->ignored_posix_timers
	sigq        sigEntry // the preallocated sigqueue

	k           *Kernel // proc's, here so that an expiry or a dequeue does not read the process for it
	proc        *Process
	thread      *Task // SIGEV_THREAD_ID target (PIDTYPE_PID), nil for the process
	Notify      int
	Signo       int
	status      timerStatus
	signalSeq   uint32 // it_signal_seq
	sigqueueSeq uint32 // it_sigqueue_seq
	interval    int64  // it_interval

	hr          *HRTimer    // hrtimer clocks: it.real.timer
	overrunLast int64       // it_overrun_last
	overrun     int64       // it_overrun, -1 when nothing is accumulated
	expires     int64       // hrtimer_get_expires() in baseClock, or the CPU-time expiry
	baseClock   sdk.ClockID // the clock the hrtimer runs on (REL CLOCK_REALTIME -> MONOTONIC)
	Clock       sdk.ClockID // it_clock as created
	// clockTask is the thread whose CPU time a CLOCK_THREAD_CPUTIME_ID timer
	// measures (the creator), independent of where its signal goes.
	clockTask      *Task
	requeuePending uint64 // legacy it_requeue_pending
}

// signalEra is the POSIX timer signal rules of one era (see above):
// legacySignals (signals_legacy.go) or consistentSignals
// (signals_consistent.go), chosen by the kernel block's posix_timer_signals.
// Each method is the era's version of one step of a timer's life; what the
// eras share stays in the PosixTimer methods that call them.
type signalEra interface {
	// settime is the era's common_timer_set() before the timer is armed
	// again: cancel, disarm, reset the interval to interval (0 when value is
	// 0) and the overrun accounting. It returns the cost.
	settime(pt *PosixTimer, c *CPU, now ktime.Time, value, interval int64) int64
	// forwardOnGet reports whether timer_gettime() forwards the expiry of an
	// interval timer as if it had been re-armed now.
	forwardOnGet(pt *PosixTimer) bool
	// expire queues the signal of a timer that expired on c (posix_timer_fn()
	// for hrtimer clocks, cpu_timer_fire() for CPU clocks); baseNow is the
	// expiry time in the timer's clock.
	expire(pt *PosixTimer, c *CPU, now ktime.Time, baseNow int64)
	// sigIgnored is sigqueue_free_ignored() for the timer's sigqueue, flushed
	// by sigaction(SIG_IGN).
	sigIgnored(pt *PosixTimer)
	// deliver is the timer half of dequeue_signal() for the timer's sigqueue
	// e, run by the dequeuing task t at now: whether the signal is delivered
	// and the cost of a re-arm; it fills in si_overrun.
	deliver(pt *PosixTimer, t *Task, now ktime.Time, e *sigEntry, info *SigInfo) (bool, int64)
}

// newSignalEra is the era the posix_timer_signals setting names.
func newSignalEra(setting string) signalEra {
	if setting == "legacy" {
		return &legacySignals{}
	}
	return &consistentSignals{}
}

// hrtimerResolution is hrtimer_resolution: 1 ns with high resolution timers,
// a tick otherwise.
func (k *Kernel) hrtimerResolution() int64 {
	if k.m.HighRes {
		return 1
	}
	return k.tickNsec
}

// hrForward is hrtimer_forward(): move expires forward by whole intervals
// until it is after now; it returns the new expiry and the number of
// intervals added (0 if expires is already after now). An interval below the
// resolution is raised to it.
func hrForward(expires, now, interval, resolution int64) (int64, int64) {
	delta := now - expires
	if delta < 0 {
		return expires, 0
	}
	interval = max(interval, resolution)
	orun := int64(1)
	if delta >= interval {
		orun = delta / interval
		expires += orun * interval
		if expires > now {
			return expires, orun
		}
		orun++
	}
	return expires + interval, orun
}

func clampInt(v int64) int64 { return min(v, intMax) }

// timerCreate is do_timer_create() with good_sigevent() and
// common_timer_create(): ids count from 0 per process, it_overrun starts at -1.
func (t *Task) timerCreate(now ktime.Time, a TimerCreate) (*PosixTimer, Errno) {
	k := t.k
	p := t.Proc
	pt := &PosixTimer{Clock: a.Clock, Notify: a.Notify, Signo: a.Signo, k: k, proc: p, overrun: -1, valid: true, baseClock: a.Clock}
	switch a.Notify {
	case SigevThreadID:
		pt.thread = t
		if a.TID != 0 {
			pt.thread = nil
			for _, o := range p.tasks {
				if o.Pid == a.TID && o.state != taskDead {
					pt.thread = o
				}
			}
			if pt.thread == nil {
				return nil, EINVAL // not a thread of the caller's group
			}
		}
		fallthrough
	case SigevSignal:
		if a.Signo < 1 || a.Signo > maxSignal {
			return nil, EINVAL
		}
	case SigevNone:
	default:
		return nil, EINVAL
	}
	switch a.Clock {
	case ClockProcessCPUTime, ClockThreadCPUTime:
		pt.cpuClock = true
		if a.Clock == ClockThreadCPUTime {
			pt.clockTask = t // a thread clock measures the creating thread
		}
	case sdk.ClockRealtime, sdk.ClockMonotonic, sdk.ClockBoottime, sdk.ClockTAI:
		pt.hr = k.NewHRTimer("posix_timer_fn", a.Clock, sdk.HRModeAbs, k.costs.SignalGenerate, func(cpu *CPU, now ktime.Time, e *sdk.HRExpiry) {
			pt.fire(cpu, now, int64(e.BaseNow))
		})
		k.traceHRInit(now, t.cpu, pt.hr, a.Clock, sdk.HRModeAbs)
	default:
		return nil, EINVAL
	}
	pt.sigq = sigEntry{signo: a.Signo, code: siTimer, timer: pt}
	pt.ID = p.nextTimerID
	p.nextTimerID++
	p.timers[pt.ID] = pt
	if pt.cpuClock {
		p.cpuTimers++
	}
	return pt, 0
}

// traceHRInit writes the event of hrtimer_setup(): hrtimer_init, named
// hrtimer_setup from v6.15 (trace.ABI.HRSetup; the fields are the same).
// Only the nil test is inlined into the syscalls.
func (k *Kernel) traceHRInit(now ktime.Time, c *CPU, t *HRTimer, clock sdk.ClockID, mode sdk.HRMode) {
	if k.tr != nil {
		k.writeHRInit(now, c, t, clock, mode)
	}
}

func (k *Kernel) writeHRInit(now ktime.Time, c *CPU, t *HRTimer, clock sdk.ClockID, mode sdk.HRMode) {
	if ev := k.abi.HRSetup; k.tr.Enabled(ev) {
		k.tr.Event(now, c.traceCtx(), ev, "hrtimer="+ptrOf(t)+" clockid="+clock.String()+" mode="+mode.String())
	}
}

// set is timer_settime() -> common_timer_set(): disarm, invalidate what is
// pending, reset the overrun accounting, then arm. It returns the cost.
func (pt *PosixTimer) set(c *CPU, now ktime.Time, abs bool, value, interval int64) int64 {
	pt.signalSeq++ // 6.13+ do_timer_settime(): prevent signal delivery and rearming
	cost := pt.k.signals.settime(pt, c, now, value, interval)
	if value == 0 {
		return cost
	}
	return cost + pt.arm(c, now+ktime.Time(cost), abs, value)
}

// arm is common_hrtimer_arm() (or the CPU-timer arm): hrtimer_setup() in the
// requested mode (a relative CLOCK_REALTIME timer runs on CLOCK_MONOTONIC),
// the expiry made absolute, then hrtimer_start_expires(ABS) unless the timer
// is SIGEV_NONE.
func (pt *PosixTimer) arm(c *CPU, now ktime.Time, abs bool, value int64) int64 {
	k := pt.k
	sigNone := pt.Notify == SigevNone
	if !sigNone {
		pt.status = timerArmed
	}
	if pt.cpuClock {
		pt.expires = value
		if !abs {
			pt.expires += pt.cpuNow()
		}
		return 0
	}
	mode := sdk.HRModeAbs
	pt.baseClock = pt.Clock
	if !abs {
		mode = sdk.HRModeRel
		if pt.Clock == sdk.ClockRealtime {
			pt.baseClock = sdk.ClockMonotonic
		}
	}
	k.traceHRInit(now, c, pt.hr, pt.Clock, mode)
	pt.hr.Clock = pt.baseClock
	pt.expires = value
	if !abs {
		pt.expires = value + int64(now) + k.clockOffset(pt.baseClock)
	}
	if sigNone {
		return 0
	}
	return k.hrStart(c, now, pt.hr, ktime.Time(pt.expires), 0, sdk.HRModeAbs)
}

// resolution is the forward granularity: hrtimer_resolution for hrtimer
// clocks; CPU-time clocks (bump_cpu_timer()) have none.
func (pt *PosixTimer) resolution() int64 {
	if pt.cpuClock {
		return 1
	}
	return pt.k.hrtimerResolution()
}

// cancel is the timer_try_to_cancel() hook.
func (pt *PosixTimer) cancel(c *CPU, now ktime.Time) int64 {
	if pt.hr != nil {
		return pt.k.hrCancel(c, now, pt.hr)
	}
	return 0
}

// delete is timer_delete(). Legacy: the timer is cancelled and freed, but a
// queued signal stays queued (sigqueue_free() only clears SIGQUEUE_PREALLOC)
// and is delivered later, without a re-arm. 6.13+: it_signal_seq is bumped
// and the timer invalidated, so a queued signal is dropped at dequeue.
func (pt *PosixTimer) delete(c *CPU, now ktime.Time) int64 {
	pt.signalSeq++
	pt.valid = false
	pt.unpark()
	pt.interval = 0
	cost := pt.cancel(c, now)
	pt.status = timerDisarmed
	return cost
}

// cpuNow is the CPU-time clock's current value.
func (pt *PosixTimer) cpuNow() int64 {
	if pt.clockTask != nil {
		return pt.clockTask.cpuTime
	}
	return pt.proc.cpuTime()
}

// clockNow is kclock->clock_get_ktime() of the clock the timer runs on.
func (pt *PosixTimer) clockNow(now ktime.Time) int64 {
	if pt.cpuClock {
		return pt.cpuNow()
	}
	return int64(now) + pt.k.clockOffset(pt.baseClock)
}

// remaining is common_timer_get()'s it_value. An interval timer whose
// signal is pending is reported as if it had been re-armed now: the expiry is
// forwarded (adding to it_overrun); a timer that is still due reports 1 ns
// until its signal is delivered.
func (pt *PosixTimer) remaining(now ktime.Time) int64 {
	sigNone := pt.Notify == SigevNone
	iv := pt.interval
	if iv == 0 && pt.status != timerArmed && !sigNone {
		return 0 // one-shot, expired or disarmed
	}
	nowc := pt.clockNow(now)
	if iv != 0 && pt.k.signals.forwardOnGet(pt) {
		var orun int64
		pt.expires, orun = hrForward(pt.expires, nowc, iv, pt.resolution())
		pt.overrun += orun
	}
	rem := pt.expires - nowc
	if rem <= 0 {
		if sigNone {
			return 0
		}
		return 1
	}
	return rem
}

// fire is posix_timer_fn() (hrtimer clocks; baseNow is the expiry time in
// the timer's clock) or cpu_timer_fire() (CPU clocks), running on c: queue
// the timer's signal (signalEra.expire). A periodic timer is re-armed when
// the signal is dequeued, not here.
func (pt *PosixTimer) fire(c *CPU, now ktime.Time, baseNow int64) {
	k := pt.k
	c.cnt.b.Add(cPosixTimerFires, 1)
	if pt.Notify == SigevNone {
		return
	}
	k.signals.expire(pt, c, now, baseNow)
}

// target is posixtimer_get_target(): the SIGEV_THREAD_ID thread, or for a
// process-directed timer the task running on the CPU if it belongs to the
// process (no need to wake anybody), else the group leader.
func (pt *PosixTimer) target(c *CPU) *Task {
	if pt.thread != nil {
		if pt.thread.state == taskDead {
			return nil
		}
		return pt.thread
	}
	if cur := c.rq.curr; cur != nil && cur.Proc == pt.proc && cur.state != taskDead {
		return cur
	}
	return pt.proc.leader()
}

// queue puts the sigqueue on t's (thread-directed) or the process's pending
// list and completes the signal (posixtimer_queue_sigqueue()).
func (pt *PosixTimer) queue(c *CPU, now ktime.Time, t *Task) int64 {
	list := &pt.proc.shared
	if pt.thread != nil {
		list = &t.pending
	}
	list.add(&pt.sigq)
	return pt.k.completeSignal(now, c, pt.Signo, pt.proc, t, pt.thread != nil)
}

// stale reports whether the queued signal belongs to an earlier arming of the
// timer (it_sigqueue_seq behind it_signal_seq) or to a deleted timer.
func (pt *PosixTimer) stale() bool { return !pt.valid || pt.signalSeq != pt.sigqueueSeq }

// rearm is kclock->timer_rearm(): common_hrtimer_rearm() forwards the expiry
// past now, adding the periods to it_overrun, and restarts the hrtimer
// (hrtimer_restart(), ABS); posix_cpu_timer_rearm() bumps the CPU-time expiry
// the same way. It returns the cost, charged to the dequeuing task.
func (pt *PosixTimer) rearm(c *CPU, now ktime.Time) int64 {
	k := pt.k
	var orun int64
	pt.expires, orun = hrForward(pt.expires, pt.clockNow(now), pt.interval, pt.resolution())
	pt.overrun += orun
	if pt.cpuClock {
		return 0
	}
	c.heldLocks++ // it_lock
	cost := k.hrStart(c, now, pt.hr, ktime.Time(pt.expires), 0, sdk.HRModeAbs)
	c.heldLocks--
	return cost
}

// traceFunction writes a function tracer line ("callee <-caller"), as the
// report's traces show the dequeue path.
func (k *Kernel) traceFunction(now ktime.Time, c *CPU, text string) {
	if k.tr != nil {
		k.writeFunction(now, c, text)
	}
}

func (k *Kernel) writeFunction(now ktime.Time, c *CPU, text string) {
	if k.tr.Enabled("function") {
		k.tr.Raw(now, c.traceCtxLocks(1), "function", text)
	}
}

func ptrOf(t *HRTimer) string { return trace.Ptr(uint64(t.ID)) }

// hex formats v as the syscall tracer prints arguments and return values
// (%lx of the unsigned long).
func hex(v int64) string { return strconv.FormatUint(uint64(v), 16) }
