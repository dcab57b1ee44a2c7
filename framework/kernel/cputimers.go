package kernel

// CPU-time timers (kernel/time/posix-cpu-timers.c): the CPU-time clocks and
// run_posix_cpu_timers(), which the tick calls for the running task to expire
// ITIMER_VIRTUAL/ITIMER_PROF and the CPU-time POSIX timers.

import (
	"strconv"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// CPU-time clock ids.
const (
	ClockProcessCPUTime sdk.ClockID = 2
	ClockThreadCPUTime  sdk.ClockID = 3
)

// runCPUTimers is run_posix_cpu_timers() from the tick for the running task:
// check_cpu_itimer() for ITIMER_PROF and ITIMER_VIRTUAL (one signal per tick
// at most; a periodic expiry advances by one interval), then the CPU-time
// POSIX timers (cpu_timer_fire()). So these timers run at most HZ times a
// second.
//
// Divergence: process CPU time is the scheduler's exact runtime, not the
// tick-sampled utime/stime, and ITIMER_VIRTUAL counts system time as well.
func (k *Kernel) runCPUTimers(c *CPU, now ktime.Time) {
	t := c.rq.curr
	if t == nil {
		return
	}
	p := t.Proc
	for _, which := range [2]int{ItimerProf, ItimerVirtual} {
		it := p.itimers[which]
		if it == nil || it.expires == 0 || p.cpuTime() < it.expires {
			continue
		}
		if it.incr != 0 {
			it.expires += it.incr
		} else {
			it.expires = 0
		}
		if k.tr.Enabled("itimer_expire") {
			k.tr.Event(now, c.traceCtx(), "itimer_expire", "which="+strconv.Itoa(which)+" pid="+strconv.Itoa(p.Tgid)+
				" now="+strconv.FormatInt(p.cpuTime(), 10))
		}
		k.sendSignal(now, c, p, nil, itimerSignal[which])
	}
	if p.cpuTimers == 0 {
		return
	}
	for _, id := range p.timerIDs() {
		pt := p.timers[id]
		if !pt.cpuClock || pt.status != timerArmed || pt.cpuNow() < pt.expires {
			continue
		}
		if pt.clockTask != nil && pt.clockTask != t {
			continue // a thread clock only advances while its thread runs
		}
		pt.fire(c, now, pt.cpuNow())
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
