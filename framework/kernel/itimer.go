package kernel

// Interval timers (kernel/time/itimer.c): setitimer() and the three timers of
// a process. ITIMER_REAL is an hrtimer; ITIMER_VIRTUAL and ITIMER_PROF are
// CPU-time timers checked from the tick (cputimers.go).

import (
	"strconv"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Interval timer kinds.
const (
	ItimerReal    = 0
	ItimerVirtual = 1
	ItimerProf    = 2
)

// itimer is one of a process's interval timers: ITIMER_REAL is
// signal->real_timer with it_real_incr; VIRTUAL and PROF are signal->it[]
// (struct cpu_itimer) checked from the tick.
type itimer struct {
	which   int
	hr      *HRTimer // ITIMER_REAL
	incr    int64    // it_real_incr / cpu_itimer.incr
	expires int64    // VIRTUAL/PROF: process CPU-time expiry, 0 = disarmed
}

// itimerSignal is the signal each interval timer sends.
var itimerSignal = [3]int{ItimerReal: SIGALRM, ItimerVirtual: SIGVTALRM, ItimerProf: SIGPROF}

// setitimer is do_setitimer(). ITIMER_REAL cancels real_timer and starts it
// relative to now; ITIMER_VIRTUAL/PROF are set_cpu_itimer(): the expiry is
// now + value + TICK_NSEC in process CPU time.
func (p *Process) setitimer(c *CPU, now ktime.Time, which int, value, interval int64) int64 {
	k := p.k
	it := p.itimers[which]
	if it == nil {
		it = &itimer{which: which}
		if which == ItimerReal {
			it.hr = k.NewHRTimer("it_real_fn", sdk.ClockMonotonic, sdk.HRModeRel, k.costs.SignalGenerate, func(cpu *CPU, now ktime.Time, e *sdk.HRExpiry) {
				// it_real_fn(): SIGALRM to the process, HRTIMER_NORESTART.
				if k.tr.Enabled("itimer_expire") {
					k.tr.Event(now, cpu.traceCtx(), "itimer_expire", "which=0 pid="+strconv.Itoa(p.Tgid)+" now=0")
				}
				k.Counters.Inc(cntItimerRealFires, cpu.id, 1)
				k.sendSignal(now, cpu, p, nil, SIGALRM)
			})
			k.traceHRInit(now, c, it.hr, sdk.ClockMonotonic, sdk.HRModeRel)
		}
		p.itimers[which] = it
	}
	var cost int64
	expires := int64(0)
	if it.hr != nil {
		cost += k.hrCancel(c, now, it.hr)
		it.incr = 0
		if value > 0 {
			it.incr = interval
			cost += k.hrStart(c, now+ktime.Time(cost), it.hr, ktime.Time(value), 0, sdk.HRModeRel)
		}
	} else {
		it.incr = interval
		it.expires = 0
		if value > 0 {
			it.expires = p.cpuTime() + value + k.tickNsec
			expires = it.expires
		}
	}
	if k.tr.Enabled("itimer_state") {
		k.tr.Event(now, c.traceCtx(), "itimer_state", "which="+strconv.Itoa(which)+" expires="+strconv.FormatInt(expires, 10)+
			" it_value="+secUsec(value)+" it_interval="+secUsec(interval))
	}
	return cost
}

// realRemaining is itimer_get_remtime() of ITIMER_REAL, the old it_value
// do_setitimer() reads: the time to the hrtimer's expiry, at least 1 us
// while it is queued (an expiry already due), 0 when it is not.
func (p *Process) realRemaining(now ktime.Time) int64 {
	it := p.itimers[ItimerReal]
	if it == nil || !it.hr.queued {
		return 0
	}
	return max(int64(it.hr.expires-now), ktime.Microsecond)
}

func secUsec(ns int64) string {
	us := (ns % ktime.Second) / ktime.Microsecond
	s := strconv.FormatInt(us, 10)
	for len(s) < 6 {
		s = "0" + s
	}
	return strconv.FormatInt(ns/ktime.Second, 10) + "." + s
}

// rearmRealTimer is posixtimer_rearm_itimer(), called by dequeue_signal() for
// a SIGALRM from the process's list: restart a periodic ITIMER_REAL that is
// not queued, forwarded past now. It returns the cost.
func (p *Process) rearmRealTimer(c *CPU, now ktime.Time) int64 {
	it := p.itimers[ItimerReal]
	if it == nil || it.incr == 0 || it.hr.queued {
		return 0
	}
	k := p.k
	exp, _ := hrForward(int64(it.hr.expires), int64(now), it.incr, k.hrtimerResolution())
	return k.hrStart(c, now, it.hr, ktime.Time(exp), 0, sdk.HRModeAbs)
}
