package kernel

import "github.com/tickemu/tickemu/framework/sdk/ktime"

// consistentSignals are the POSIX timer signal rules of v6.13+ (513793bc6ab3
// "posix-timers: Make signal delivery consistent" and its series; see the top
// of posixtimer.go): every timer_settime()/timer_delete() bumps
// it_signal_seq, the queued signal carries the value it had when it was
// queued (it_sigqueue_seq), and posixtimer_deliver_signal() drops a signal
// whose value is stale. An ignored periodic timer is parked on
// signal->ignored_posix_timers instead of being re-armed.
type consistentSignals struct{}

// settime is common_timer_set() -> posix_timer_set_common().
func (*consistentSignals) settime(pt *PosixTimer, c *CPU, now ktime.Time, value, interval int64) int64 {
	cost := pt.cancel(c, now)
	pt.status = timerDisarmed
	pt.interval = 0
	if value != 0 {
		pt.interval = interval
	}
	pt.overrunLast = 0
	pt.overrun = -1
	return cost
}

// forwardOnGet: common_timer_get() forwards a timer that is not armed (its
// signal is queued or its re-arm pending).
func (*consistentSignals) forwardOnGet(pt *PosixTimer) bool { return pt.status != timerArmed }

// expire is posix_timer_queue_signal().
func (*consistentSignals) expire(pt *PosixTimer, c *CPU, now ktime.Time, _ int64) {
	if !pt.valid {
		return
	}
	pt.status = timerDisarmed
	if pt.interval != 0 {
		pt.status = timerRequeuePending
	}
	pt.sendSigqueue(c, now)
}

// sigIgnored: a valid periodic timer is parked, anything else dropped.
func (*consistentSignals) sigIgnored(pt *PosixTimer) {
	if pt.valid && pt.sigPeriodic {
		pt.park()
	}
}

// deliver is posixtimer_deliver_signal(): drop the signal if the timer was
// re-armed, disarmed or deleted since it was queued, else re-arm a periodic
// timer.
func (*consistentSignals) deliver(pt *PosixTimer, t *Task, now ktime.Time, _ *sigEntry, info *SigInfo) (bool, int64) {
	k := pt.k
	c := t.cpu
	k.traceFunction(now, c, "posixtimer_deliver_signal <-dequeue_signal")
	if pt.stale() {
		return false, 0
	}
	info.Overrun = 0
	if pt.interval == 0 || pt.status != timerRequeuePending {
		return true, 0
	}
	cost := pt.rearm(c, now)
	pt.status = timerArmed
	pt.overrunLast = pt.overrun
	pt.overrun = -1
	pt.signalSeq++
	info.Overrun = clampInt(pt.overrunLast)
	return true, cost
}

// sendSigqueue is posixtimer_send_sigqueue() (6.13+): record the sequence the
// signal belongs to, even when it is already queued; an ignored periodic
// timer is parked on the ignored list instead of being re-armed.
func (pt *PosixTimer) sendSigqueue(c *CPU, now ktime.Time) {
	k := pt.k
	t := pt.target(c)
	if t == nil {
		return
	}
	q := &pt.sigq
	pt.sigqueueSeq = pt.signalSeq
	pt.sigPeriodic = pt.status == timerRequeuePending
	res := traceSignalDelivered
	switch {
	case pt.proc.ignored(t, pt.Signo):
		res = traceSignalIgnored
		switch {
		case q.queued():
			// Queued while blocked, then ignored: leave it like a regular signal.
		case pt.sigPeriodic:
			pt.park()
		default:
			pt.unpark()
		}
	case q.queued():
		res = traceSignalAlreadyPending
		c.cnt.b.Add(cPosixTimerAlreadyPending, 1)
	default:
		pt.unpark()
		q.overrun = 0
		pt.queue(c, now, t)
	}
	k.traceSignalGenerate(now, c, pt.Signo, siTimer, t, pt.thread == nil, res)
}

// park puts the timer on signal->ignored_posix_timers (posixtimer_sig_ignore()).
func (pt *PosixTimer) park() {
	if pt.ignored || !pt.valid {
		return
	}
	pt.ignored = true
	pt.proc.ignoredTimers = append(pt.proc.ignoredTimers, pt)
}

// unpark takes the timer off the ignored list.
func (pt *PosixTimer) unpark() {
	if !pt.ignored {
		return
	}
	pt.ignored = false
	l := pt.proc.ignoredTimers
	for i, o := range l {
		if o == pt {
			copy(l[i:], l[i+1:])
			l[len(l)-1] = nil
			pt.proc.ignoredTimers = l[:len(l)-1]
			return
		}
	}
}

// unignoreTimers is posixtimer_sig_unignore() (6.13+): when SIG_IGN is lifted
// the parked sigqueues of signo are queued again; the delivery path decides
// whether they still re-arm their timer.
func (p *Process) unignoreTimers(now ktime.Time, from *CPU, signo int) {
	for i := 0; i < len(p.ignoredTimers); {
		pt := p.ignoredTimers[i]
		if pt.Signo != signo {
			i++
			continue
		}
		pt.unpark()
		if pt.sigq.queued() {
			continue
		}
		if t := pt.target(from); t != nil {
			pt.queue(from, now, t)
		}
	}
}
