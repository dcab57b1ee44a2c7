package hrtimer

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// write records one tick_program_event(expires, force=1) by cb's CPU, the
// CPU of the call in progress (the interrupt's own; reprogram checks its
// callers').
func (p *Plugin) write(cb *cpuBase, expires ktime.Time) {
	if len(p.prog) == cap(p.prog) {
		p.growProg()
	}
	p.prog = append(p.prog, expires) // in place: it fits
	cb.deviceWrites++
}

// growProg makes room for a write that does not fit the call's Program
// list (a second write): the list moves from the entry inline in the CPU's
// record to its overflow buffer.
//
//go:noinline
func (p *Plugin) growProg() {
	cb := p.progCB
	m := &cb.opMore
	if first := &p.prog[:1][0]; first == &cb.irqFirst[0] || len(cb.irqMore) > 0 && first == &cb.irqMore[0] {
		m = &cb.irqMore
	}
	*m = append(append((*m)[:0], p.prog...), 0)
	p.prog = (*m)[:len(p.prog)]
}

//go:noinline
func remoteWrite(cb *cpuBase) {
	panic(fmt.Sprintf("hrtimer: device write on cpu %d outside a call on that cpu (remote reprogramming)", int(cb.cpu)))
}

// reprogram models __hrtimer_reprogram() (v6.15): record the new
// expires_next, and write the device unless high-res mode is off or the last
// interrupt detected a hang ("we leave the hang delay active in the hardware",
// the T1 50 ms / T2 5 s comment).
func (p *Plugin) reprogram(cb *cpuBase, expires ktime.Time) {
	cb.expiresNext = expires
	if !p.highRes || cb.hangDetected {
		return
	}
	if p.progCB != cb {
		remoteWrite(cb)
		return // (never reached: nothing is live across the panic's call)
	}
	p.write(cb, expires)
}

// forceReprogram models hrtimer_force_reprogram(cpu_base, skip_equal): re-
// evaluate all bases and program the result unless skipEqual and unchanged.
// With softirq_next = "stale" the evaluation is the v5.10 one.
func (p *Plugin) forceReprogram(cb *cpuBase, skipEqual bool) {
	var e ktime.Time
	if p.cfg.SoftirqNext == SoftirqStale {
		e = cb.staleForceNextEvent()
	} else {
		e = cb.updateNextEvent()
	}
	if skipEqual && e == cb.expiresNext {
		return
	}
	p.reprogram(cb, e)
}

// interruptNextEvent is the re-evaluation at the end of each interrupt pass:
// hrtimer_update_next_event() since 46eb1701c046, before it
// __hrtimer_get_next_event(cpu_base, HRTIMER_ACTIVE_ALL), which never touched
// softirq_expires_next.
func (p *Plugin) interruptNextEvent(cb *cpuBase) ktime.Time {
	if p.cfg.SoftirqNext == SoftirqStale {
		return cb.getNextEvent(activeAll)
	}
	return cb.updateNextEvent()
}

// hrtimerReprogram models hrtimer_reprogram(timer, reprogram) (v6.15; the
// v5.10 function has the same decisions in a different order), called by this
// CPU after t became the leftmost timer of its base.
func (p *Plugin) hrtimerReprogram(this *cpuBase, t *timer, reprogram bool) {
	tcb := this // t's CPU, nearly always the caller's
	if int(t.cpu) != int(this.cpu) {
		tcb = p.cpus[t.cpu]
	}
	expires := clampTime(toMono(t.expires, tcb.offset(int(t.base))))
	if t.soft {
		// A soft timer may sit on a remote CPU: its softirq_expires_next is
		// updated there; the remote hardware is not touched.
		if tcb.softirqActivated || expires >= tcb.softirqExpiresNext {
			return
		}
		tcb.setSoftirqNextTimer(t)
		tcb.softirqExpiresNext = expires
		if expires >= tcb.expiresNext || !reprogram {
			return
		}
	}
	if tcb != this {
		return // the other CPU's clockevent cannot be reprogrammed from here
	}
	if expires >= this.expiresNext {
		return
	}
	if this.inHrtirq {
		return // the running interrupt re-evaluates before it programs
	}
	this.setNextTimer(t)
	p.reprogram(this, expires)
}
