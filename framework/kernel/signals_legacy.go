package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// legacySignals are the POSIX timer signal rules of v6.12 and before (see the
// top of posixtimer.go): a queued timer signal is always delivered;
// timer_settime() and timer_delete() only keep it from re-arming the timer,
// through the it_requeue_pending sequence carried in si_sys_private.
type legacySignals struct{}

// settime is v6.12 common_timer_set(): clearing the interval prevents the
// re-arm; the sequence bump keeps a pending signal from re-arming but not
// from being delivered. it_overrun is left alone.
func (*legacySignals) settime(pt *PosixTimer, c *CPU, now ktime.Time, value, interval int64) int64 {
	pt.interval = 0
	cost := pt.cancel(c, now)
	pt.status = timerDisarmed
	pt.requeuePending = (pt.requeuePending + 2) &^ 1
	pt.overrunLast = 0
	if value != 0 {
		pt.interval = interval
	}
	return cost
}

// forwardOnGet: v6.12 common_timer_get() forwards a timer whose re-arm is
// pending (REQUEUE_PENDING) and a SIGEV_NONE timer.
func (*legacySignals) forwardOnGet(pt *PosixTimer) bool {
	return pt.requeuePending&1 != 0 || pt.Notify == SigevNone
}

// expire is v6.12 posix_timer_fn() -> posix_timer_event() -> send_sigqueue().
func (*legacySignals) expire(pt *PosixTimer, c *CPU, now ktime.Time, baseNow int64) {
	k := pt.k
	pt.status = timerDisarmed
	var siPrivate uint64
	if pt.interval != 0 {
		pt.requeuePending++
		siPrivate = pt.requeuePending
	}
	pt.sigq.sysPriv = siPrivate
	pt.sigqueueSeq = pt.signalSeq
	if pt.sendSigqueueLegacy(c, now) && pt.interval != 0 {
		// The signal is ignored, so no dequeue will re-arm the timer: it is
		// forwarded here, with now pushed a jiffy ahead for sub-jiffy
		// intervals so it cannot starve the CPU, and restarted
		// (posix_cpu_timer_rearm() for CPU clocks).
		nowb := baseNow
		if !pt.cpuClock && k.m.HighRes && pt.interval < k.tickNsec {
			nowb += k.tickNsec
		}
		var orun int64
		pt.expires, orun = hrForward(pt.expires, nowb, pt.interval, pt.resolution())
		pt.overrun += orun
		pt.requeuePending++
		pt.status = timerArmed
		if !pt.cpuClock {
			pt.restartAfterCallback(c, now)
		}
	}
}

// sigIgnored: __sigqueue_free() leaves the preallocated entry alone; nothing
// re-arms the timer until it is set again.
func (*legacySignals) sigIgnored(*PosixTimer) {}

// deliver: collect_signal() asks for a re-arm when si_sys_private is set and
// posixtimer_rearm() does it if the sequence still matches; the signal is
// delivered either way (a stale one is counted).
func (*legacySignals) deliver(pt *PosixTimer, t *Task, now ktime.Time, e *sigEntry, info *SigInfo) (bool, int64) {
	k := pt.k
	c := t.cpu
	var cost int64
	if pt.stale() {
		c.cnt.b.Add(cSignalsStaleDelivered, 1)
	}
	if pt.valid && e.sysPriv != 0 {
		k.traceFunction(now, c, "posixtimer_rearm <-dequeue_signal")
		if pt.interval != 0 && pt.requeuePending == e.sysPriv {
			cost = pt.rearm(c, now)
			pt.status = timerArmed
			pt.overrunLast = pt.overrun
			pt.overrun = -1
			pt.requeuePending++
			pt.signalSeq++ // the 6.13 bookkeeping, for the stale count only
			info.Overrun = clampInt(pt.overrunLast + e.overrun)
		}
	}
	return true, cost
}

// restartAfterCallback re-enqueues the timer as its callback's
// HRTIMER_RESTART would.
//
// Divergence: the callback's choice is made at run time here, while the
// plugin boundary declares restarts up front (sdk.HRTimer.Period), so the
// timer is started again by the host right after the interrupt that ran the
// callback, and that start's cost is not charged to the interrupt. Only the
// legacy ignored-periodic-timer path uses it.
func (pt *PosixTimer) restartAfterCallback(c *CPU, now ktime.Time) {
	k := pt.k
	exp := pt.expires
	k.At(now, "posix_timer_fn restart", func(at ktime.Time) {
		if pt.valid && pt.interval != 0 && pt.expires == exp && !pt.hr.queued {
			k.hrStart(c, at, pt.hr, ktime.Time(exp), 0, sdk.HRModeAbs)
		}
	})
}

// sendSigqueueLegacy is v6.12 send_sigqueue(): an already queued signal only
// counts an overrun in si_overrun. It reports whether the signal was ignored.
func (pt *PosixTimer) sendSigqueueLegacy(c *CPU, now ktime.Time) (ignored bool) {
	k := pt.k
	t := pt.target(c)
	if t == nil {
		return false
	}
	q := &pt.sigq
	res := traceSignalDelivered
	switch {
	case pt.proc.ignored(t, pt.Signo):
		res = traceSignalIgnored
		ignored = true
	case q.queued():
		q.overrun++
		res = traceSignalAlreadyPending
	default:
		q.overrun = 0
		pt.queue(c, now, t)
	}
	if res == traceSignalAlreadyPending {
		c.cnt.b.Add(cPosixTimerAlreadyPending, 1)
	}
	k.traceSignalGenerate(now, c, pt.Signo, siTimer, t, pt.thread == nil, res)
	return ignored
}
