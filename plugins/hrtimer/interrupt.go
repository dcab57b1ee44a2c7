package hrtimer

import (
	"fmt"
	"math/bits"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// beginIRQ prepares cb's interrupt-family buffers for a new call. (Its
// callers then recycle cb's listed timers, reclaimLazily: apart, both
// inline.)
func (p *Plugin) beginIRQ(cb *cpuBase) {
	p.progCB, p.prog = cb, cb.irqFirst[:0:1]
	p.exp = cb.expFirst[:0:1]
}

// updateBase models hrtimer_update_base(): read the time and, when the
// timekeeper's clock_was_set_seq moved, refresh this CPU's base offsets
// (ktime_get_update_offsets_now()).
//
// Divergence: the leap-second adjustment of offs_real is not modelled.
func (p *Plugin) updateBase(cb *cpuBase, now ktime.Time) ktime.Time {
	p.refreshOffsets(cb)
	return now
}

// refreshOffsets is the offset half of hrtimer_update_base().
func (p *Plugin) refreshOffsets(cb *cpuBase) {
	if cb.cwsSeq != p.tkSeq {
		cb.off = p.tk
		cb.cwsSeq = p.tkSeq
	}
}

// forward models hrtimer_forward(timer, now, interval) on a dequeued timer:
// move both expiries past now by whole intervals and return the overrun count.
// now is in the timer's clock.
//
// Divergence: when now is before the hard expiry (a callback that ran early
// inside its slack range) the kernel returns 0 without moving the timer, and a
// restarting callback would then run again in the same pass, forever. The model
// forwards from the expiry instead (one interval, overrun 1).
func (p *Plugin) forward(t *timer, now int64, interval int64) int64 {
	exp := int64(t.expires)
	if now < exp {
		now = exp
	}
	delta := now - exp
	if interval < p.resolution {
		interval = p.resolution
	}
	orun := int64(1)
	if delta >= interval {
		orun = delta / interval
		incr := orun * interval
		if incr/interval != orun { // overflow: the timer ends at KTIME_MAX
			incr = never
		}
		t.expires = ktime.Time(addSafe(exp, incr))
		t.softexpires = ktime.Time(addSafe(int64(t.softexpires), incr))
		if int64(t.expires) > now {
			return orun
		}
		orun++ // "the correction for exact"
	}
	t.expires = ktime.Time(addSafe(int64(t.expires), interval))
	t.softexpires = ktime.Time(addSafe(int64(t.softexpires), interval))
	return orun
}

// runQueues models __hrtimer_run_queues(cpu_base, now, flags, mask) with
// __run_hrtimer(): for each active base in index order, run every timer whose
// softexpires has been reached at the pass's sampled time passNow, stopping at
// the first one that has not (even if later ones have). t is the simulated
// clock on entry; the clock on return includes every expiry's overhead and
// declared callback cost.
//
// Divergence: HRExpiry.BaseNow is the callback's own start time in the
// timer's clock, as the SDK defines it; the kernel's hrtimer_expire_entry
// event prints the pass's sampled basenow, earlier by the time the pass has
// already spent.
func (p *Plugin) runQueues(cb *cpuBase, passNow, t ktime.Time, mask uint8) ktime.Time {
	for active := cb.activeBases & mask; active != 0; active &= active - 1 {
		idx := bits.TrailingZeros8(active)
		q := &cb.bases[idx]
		// basenow = ktime_add(now, base->offset). CLOCK_MONOTONIC (hard
		// or soft), the base of nearly every expiry, has offset 0: its
		// basenow is the pass time and no offset is looked up or added.
		var off int64
		basenow := passNow
		if idx&3 != baseMonotonic {
			off = cb.offset(idx)
			basenow = ktime.Time(addSafe(int64(passNow), off))
		}
		for {
			tm := q.first()
			if tm == nil || basenow < tm.softexpires {
				break
			}
			t = t.AddCost(p.cfg.Costs.Expiry)
			// base->running = timer; __remove_hrtimer(..., reprogram=0):
			// the timer is the queue's first, so the erase is the heap's
			// pop (removeTimer's checks and search are known answers).
			tm.enqueued = false
			if !q.popFirst() {
				cb.activeBases &^= 1 << idx
			}
			// The expiry is written in place, field by field (every field:
			// the slot may hold an earlier call's record).
			n := len(p.exp)
			p.growExpiriesIfFull(cb)
			p.exp = p.exp[:n+1]
			exp := &p.exp[n]
			expBase := t
			if off != 0 {
				expBase = ktime.Time(addSafe(int64(t), off))
			}
			exp.ID, exp.Now, exp.BaseNow, exp.Soft = tm.id, t, expBase, tm.soft
			if tm.period <= 0 {
				// HRTIMER_NORESTART, the common case.
				exp.Overruns, exp.Restarted, exp.NewExpires = 0, false, 0
				t = t.Add(tm.cbCost)
				tm.runEnd = t
				p.markInactive(tm)
			} else {
				// The declared callback starts with hrtimer_forward_now()
				// and returns HRTIMER_RESTART: re-enqueue ABS, no device
				// write here.
				exp.Overruns = p.forward(tm, int64(expBase), tm.period)
				t = t.Add(tm.cbCost)
				tm.runEnd = t
				p.enqueue(cb, tm)
				exp.Restarted, exp.NewExpires = true, tm.expires
			}
			if tm.soft {
				cb.stats.expiriesSoft++
			} else {
				cb.expiriesHard++
			}
		}
	}
	return t
}

// growExpiriesIfFull makes room for one more expiry in the call's list.
func (p *Plugin) growExpiriesIfFull(cb *cpuBase) {
	if len(p.exp) == cap(p.exp) {
		p.growExpiries(cb)
	}
}

// growExpiries makes room for an expiry that does not fit the call's list
// (a second one): the list moves from the entry inline in cb to cb's
// overflow buffer.
//
//go:noinline
func (p *Plugin) growExpiries(cb *cpuBase) {
	cb.expMore = append(append(cb.expMore[:0], p.exp...), sdk.HRExpiry{})
	p.exp = cb.expMore[:len(p.exp)]
}

// raiseIfDue is the softirq check at the top of every interrupt pass and of
// hrtimer_run_queues(): raise HRTIMER_SOFTIRQ when now has reached the cached
// softirq_expires_next.
func (p *Plugin) raiseIfDue(cb *cpuBase, now ktime.Time) bool {
	if now < cb.softirqExpiresNext {
		return false
	}
	cb.softirqExpiresNext = ktime.Max
	cb.softirqActivated = true
	cb.stats.softirqRaises++
	return true
}

// Interrupt models hrtimer_interrupt() entered at now, with the retry loop
// and hang handling of the configured era (see the package doc):
//
//	proportional  kernel/time/hrtimer.c:hrtimer_interrupt() as of v6.15 (unchanged
//	              since 41d2e4949377, 2009): up to 3 passes, each ending with
//	              tick_program_event(expires_next, force=0), which the host
//	              makes on the device (InterruptResult.TryProgram); its -ETIME
//	              (expires_next already past, or an HPET comparator race)
//	              comes back as InterruptETIME, the next pass; after the third
//	              failure: nr_hangs++, hang_detected = 1, next event = now +
//	              min(now - entry_time, 100 ms), written with force = 1.
//	fixed_100ms   2889243848560: the pass fails when expires_next < now (no
//	              device involved, nr_retries no longer counted); after the third
//	              failure hrtimer_rearm() programs now + 100 ms and clears
//	              hang_detected at once, leaving expires_next in the past.
//	max_hang_time the fix: hang_detected is cleared at each pass and set on the
//	              third failure; hrtimer_rearm() programs
//	              ktime_get() + min(100 ms, max_hang_time) and keeps the flag
//	              until the next interrupt.
//
// Divergence: CONFIG_HRTIMER_REARM_DEFERRED (E-2026) moves the final device
// write to the interrupt return path; the model writes at the end of the
// interrupt, which is the same instant for the host. And because the whole
// interrupt is one call, a Start the host makes as a callback's side effect
// arrives after the interrupt's own reprogramming: the kernel would skip its
// write (in_hrtirq) and fold it into the end-of-interrupt evaluation, the model
// may make one extra write. Clearing dev->next_event at entry is the host's
// (clockevents) part.
func (p *Plugin) Interrupt(cpu int, now ktime.Time) (res sdk.InterruptResult) {
	cb := p.cpu(cpu)
	if !p.highRes {
		panic(fmt.Sprintf("hrtimer: Interrupt on cpu %d in low-res mode (hrtimer_interrupt BUG_ON(!hres_active)); use RunQueues", cpu))
	}
	p.beginIRQ(cb)
	p.reclaimLazily(cb, now)

	cb.nrEvents++
	t := now.AddCost(p.cfg.Costs.Entry)
	entry := p.updateBase(cb, t)
	passNow := entry
	retries := 0
	for {
		cb.inHrtirq = true
		// expires_next = KTIME_MAX keeps remote CPUs from queueing a first
		// timer here while the bases are being expired.
		cb.expiresNext = ktime.Max
		t = t.AddCost(p.cfg.Costs.Pass)
		if p.raiseIfDue(cb, passNow) {
			res.RaiseSoftirq = true
		}
		t = p.runQueues(cb, passNow, t, activeHard)

		if p.cfg.HangDelay == HangProportional {
			e := p.interruptNextEvent(cb)
			cb.expiresNext = e
			cb.inHrtirq = false
			// tick_program_event(expires_next, 0): KTIME_MAX stops the
			// device and succeeds; otherwise the device answers. The
			// host writes e with force = 0 and, on -ETIME (the event is
			// already past, or the comparator raced), calls
			// InterruptETIME for the next pass.
			p.write(cb, e)
			if e != ktime.Max {
				res.TryProgram = true
				cb.tryPending, cb.irqEntry, cb.irqRetries = true, entry, retries
			}
			cb.hangDetected = false
			break
		}

		now2 := p.updateBase(cb, t)
		// interruptNextEvent, in line (it does not inline: two calls).
		var e ktime.Time
		if p.cfg.SoftirqNext == SoftirqStale {
			e = cb.getNextEvent(activeAll)
		} else {
			e = cb.updateNextEvent()
		}
		// The fix clears hang_detected at each pass; under 2889243848560
		// it is never set here (cleared at once after a hang), so clearing
		// it changes nothing there.
		cb.hangDetected = false
		hung := false
		if e < now2 {
			if retries++; retries < 3 {
				passNow = now2
				continue
			}
			if d := uint32(now2.Sub(entry)); d > cb.maxHangTime {
				cb.maxHangTime = d
			}
			cb.nrHangs++
			hung = true
		}
		// hrtimer_rearm()
		cb.expiresNext = e
		cb.inHrtirq = false
		target := e
		if hung {
			// The hang policy decides the delay and the flag.
			d := p.hang.Hang(sdk.HangRequest{CPU: cpu, Now: now2, Entry: entry,
				NrHangs: int64(cb.nrHangs), MaxHangTime: int64(cb.maxHangTime)})
			res.HangDelay, cb.hangDetected = d.Delay, d.KeepDetected
			res.Hang = true
			target = t.Add(res.HangDelay)
		}
		p.write(cb, target)
		break
	}
	res.Retries = retries
	if res.Hang {
		// Every pass failed; retries counts them all, the extra passes are 2.
		res.Retries = 2
	}
	if res.Retries != 0 {
		cb.stats.retryPasses += int64(res.Retries)
	}
	p.endCall()
	res.End = t
	res.Expired = p.exp
	res.Program = p.prog
	return res
}

// InterruptETIME continues hrtimer_interrupt() of the proportional era on
// cpu after the host's tick_program_event(expires_next, 0) of the last
// Interrupt or InterruptETIME result returned -ETIME at now: re-read the time
// (hrtimer_update_base()), count nr_retries, and make another pass, up to 3;
// after the third failure declare the hang and program now + min(now -
// entry_time, 100 ms) with force = 1.
func (p *Plugin) InterruptETIME(cpu int, now ktime.Time) (res sdk.InterruptResult) {
	cb := p.cpu(cpu)
	if !cb.tryPending {
		panic(fmt.Sprintf("hrtimer: InterruptETIME on cpu %d without a pending tick_program_event(expires_next, 0)", cpu))
	}
	cb.tryPending = false
	p.beginIRQ(cb)
	p.reclaimLazily(cb, now)
	entry, retries := cb.irqEntry, cb.irqRetries
	t := now
	passNow := p.updateBase(cb, t)
	cb.nrRetries++
	if retries++; retries < 3 {
		cb.inHrtirq = true
		cb.expiresNext = ktime.Max
		t = t.AddCost(p.cfg.Costs.Pass)
		if p.raiseIfDue(cb, passNow) {
			res.RaiseSoftirq = true
		}
		t = p.runQueues(cb, passNow, t, activeHard)
		e := p.interruptNextEvent(cb)
		cb.expiresNext = e
		cb.inHrtirq = false
		p.write(cb, e)
		if e != ktime.Max {
			res.TryProgram = true
			cb.tryPending, cb.irqEntry, cb.irqRetries = true, entry, retries
		}
		res.Retries = 1
	} else {
		cb.nrHangs++
		delta := t.Sub(entry)
		if uint32(delta) > cb.maxHangTime {
			cb.maxHangTime = uint32(delta)
		}
		// The hang policy decides the delay and the flag.
		d := p.hang.Hang(sdk.HangRequest{CPU: cpu, Now: t, Entry: entry,
			NrHangs: int64(cb.nrHangs), MaxHangTime: int64(cb.maxHangTime)})
		res.HangDelay, cb.hangDetected = d.Delay, d.KeepDetected
		res.Hang = true
		p.write(cb, t.Add(res.HangDelay))
	}
	if res.Retries != 0 {
		cb.stats.retryPasses += int64(res.Retries)
	}
	p.endCall()
	res.End = t
	res.Expired = p.exp
	res.Program = p.prog
	return res
}

// RunSoftirq models hrtimer_run_softirq() (HRTIMER_SOFTIRQ) entered at now:
// expire the soft bases, clear softirq_activated and re-arm the soft expiry
// with hrtimer_update_softirq_timer(cpu_base, reprogram=true).
func (p *Plugin) RunSoftirq(cpu int, now ktime.Time) (res sdk.InterruptResult) {
	cb := p.cpu(cpu)
	p.beginIRQ(cb)
	p.reclaimLazily(cb, now)

	t := now.AddCost(p.cfg.Costs.Softirq)
	passNow := p.updateBase(cb, t)
	t = p.runQueues(cb, passNow, t, activeSoft)
	cb.softirqActivated = false
	// hrtimer_update_softirq_timer(): "reprogramming needs to be triggered,
	// even if the next soft hrtimer expires at the same time than the next
	// hard hrtimer".
	if cb.getNextEvent(activeSoft) != ktime.Max {
		p.hrtimerReprogram(cb, cb.softirqNextTimer, true)
	}
	p.endCall()
	res.End, res.Expired, res.Program = t, p.exp, p.prog
	return res
}

// RunQueues models hrtimer_run_queues(), called from the tick in low-res mode:
// raise the softirq when due and expire the hard bases. It does nothing once
// high-res mode is active, and it never writes the device.
//
// Divergence: the periodic tick_check_oneshot_change() switch to high-res mode
// is not modelled; the mode is fixed by Setup.HighRes for the whole run.
func (p *Plugin) RunQueues(cpu int, now ktime.Time) (res sdk.InterruptResult) {
	cb := p.cpu(cpu)
	if p.highRes {
		res.End = now
		return res
	}
	p.beginIRQ(cb)
	p.reclaimLazily(cb, now)

	passNow := p.updateBase(cb, now)
	t := now.AddCost(p.cfg.Costs.Pass)
	res.RaiseSoftirq = p.raiseIfDue(cb, passNow)
	t = p.runQueues(cb, passNow, t, activeHard)
	p.endCall()
	res.End = t
	res.Expired = p.exp
	res.Program = p.prog
	return res
}
