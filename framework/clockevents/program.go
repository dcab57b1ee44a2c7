package clockevents

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// ProgramResult is the outcome of one Program or ProgramEvent call.
type ProgramResult struct {
	// FireAt is when the channel will raise its interrupt afterwards,
	// ktime.Max if it will not (stopped, shut down, given up, failed).
	FireAt ktime.Time
	// Cost is the simulated time the call took on the calling CPU: the sum
	// of the device writes and state changes it made.
	Cost int64
	// Writes counts ->set_next_event() calls.
	Writes int
	// ETIMEs counts -ETIME answers among them.
	ETIMEs int
	// Retries counts min-delta attempts (the increments of dev->retries).
	Retries int
	// ETIME is the call's result: -ETIME (the event is in the past and
	// force was not set, or every retry failed).
	ETIME bool
	// Skipped: StarvationGuard left a pending forced event in place.
	Skipped bool
	// MinDeltaFrom and MinDeltaNs are min_delta_ns before and after the
	// call; Raises counts the increases in between (MinAdjust).
	MinDeltaFrom, MinDeltaNs uint64
	Raises                   int
	// GaveUp: the MinAdjust loop reached MIN_DELTA_LIMIT and gave up
	// ("CE: Reprogramming failure. Giving up"; next_event = KTIME_MAX).
	GaveUp bool
}

// Log returns the kernel messages the call printed, in order, for device name
// (printk_deferred in clockevents_increase_min_delta()).
func (r ProgramResult) Log(name string, hz int) []string {
	if r.Raises == 0 && !r.GaveUp {
		return nil
	}
	limit := uint64(clockmath.NsecPerSec / hz)
	var out []string
	v := r.MinDeltaFrom
	for range r.Raises {
		v = raiseMinDelta(v, limit)
		out = append(out, fmt.Sprintf("CE: %s increased min_delta_ns to %d nsec", name, v))
	}
	if r.GaveUp {
		out = append(out, "CE: Reprogramming failure. Giving up")
	}
	return out
}

// raiseMinDelta is the arithmetic of clockevents_increase_min_delta(): at
// least 5 us, else +50%, capped at limit.
func raiseMinDelta(v, limit uint64) uint64 {
	if v < 5000 {
		v = 5000
	} else {
		v += v >> 1
	}
	return min(v, limit)
}

// Program models kernel/time/tick-oneshot.c:tick_program_event() (v6.12), the
// entry the hrtimer and tick-sched code use: expires == ktime.Max stops the
// channel (ONESHOT_STOPPED, next_event = KTIME_MAX, no write); a stopped channel
// is switched back to ONESHOT first; then ProgramEvent.
func (d *Device) Program(ch int, now, expires ktime.Time, force bool) ProgramResult {
	cost, fireAt, full := d.Reprogram(ch, now, expires, force)
	if full != nil {
		return *full
	}
	m := d.ch[ch].minDeltaNs
	return ProgramResult{FireAt: fireAt, Cost: cost, Writes: 1, MinDeltaFrom: m, MinDeltaNs: m}
}

// Reprogram is Program for the engine, which reprograms a CPU's device on
// every tick and hrtimer expiry and wants the answer in registers, not as a
// ProgramResult copied through each call. In the common case, one write the
// device accepted, it returns that write's cost and the fire time, and full
// is nil. Otherwise full is the call's whole outcome (cost and fireAt are
// its Cost and FireAt); it stays valid until the device's next Reprogram or
// Program.
func (d *Device) Reprogram(ch int, now, expires ktime.Time, force bool) (cost int64, fireAt ktime.Time, full *ProgramResult) {
	c := &d.ch[ch]
	if delta := expires.Sub(now); c.st() == sdk.StateOneshot && !d.opts.StarvationGuard && expires != ktime.Max && expires >= 0 && delta > 0 {
		// The common case, what program does for it without its general
		// state: a future event on a ONESHOT channel, one write of the
		// clamped delta (clockevents_program_event()).
		c.next = expires
		c.programs++
		c.writes++
		ticks := d.scale.NsToTicks(uint64(clampDelta(delta, c.minDeltaNs, d.scale.MaxDeltaNs)))
		res := d.raw.SetNextEvent(ch, now, ticks)
		if d.chk != nil && (uint64(res.Cost) > uint64(d.maxCost) || !res.ETIME && res.FireAt <= now) {
			d.chk.CheckSetNextEvent(ch, now, ticks, res)
			return 0, 0, nil // (not reached: CheckSetNextEvent names the violation)
		}
		c.cost += res.Cost
		if !res.ETIME {
			c.fireAt = res.FireAt
			return res.Cost, res.FireAt, nil
		}
		d.writeFailed(&d.full, ch, now, res.Cost, force)
	} else {
		d.program(&d.full, ch, now, expires, force)
	}
	return d.full.Cost, d.full.FireAt, &d.full
}

// program is tick_program_event() in general: Reprogram without its
// shortcut, into *r.
func (d *Device) program(r *ProgramResult, ch int, now, expires ktime.Time, force bool) {
	c := &d.ch[ch]
	if expires == ktime.Max {
		sr := d.SetState(ch, now, sdk.StateOneshotStopped, 0)
		c.next = ktime.Max
		*r = ProgramResult{FireAt: c.fireAt, Cost: sr.Cost, MinDeltaFrom: c.minDeltaNs, MinDeltaNs: c.minDeltaNs}
		return
	}
	var cost int64
	if c.st() == sdk.StateOneshotStopped {
		sr := d.SetState(ch, now, sdk.StateOneshot, 0)
		cost = sr.Cost
	}
	d.programEvent(r, ch, now.Add(cost), expires, force)
	r.Cost += cost
}

// ProgramEvent models kernel/time/clockevents.c:clockevents_program_event()
// (v6.12, or the 7.0 StarvationGuard version): record next_event; no write in
// SHUTDOWN; delta = expires - now; a past event is -ETIME unless force, which
// programs the minimum delay (clockevents_program_min_delta()); otherwise
// clamp delta to [min_delta_ns, max_delta_ns], convert (delta*mult)>>shift and
// write; a -ETIME from the driver is retried through the min-delta loop when
// force is set.
//
// Time advances through the call: each write starts when the previous one
// ended (the kernel's ktime_get() in the retry loop), which is what lets a
// slow device (HPET) lose the race again on a retry.
//
// Divergence: a state other than ONESHOT (the kernel's WARN) is programmed
// anyway, as the kernel does after warning.
func (d *Device) ProgramEvent(ch int, now, expires ktime.Time, force bool) ProgramResult {
	var r ProgramResult
	d.programEvent(&r, ch, now, expires, force)
	return r
}

// writeFailed continues Reprogram's common case after its write, made at
// now and costing cost, returned -ETIME: the rest of programEvent from there
// (programming.write's failure, then the min-delta loop when forced).
//
//go:noinline
func (d *Device) writeFailed(r *ProgramResult, ch int, now ktime.Time, cost int64, force bool) {
	c := &d.ch[ch]
	*r = ProgramResult{Cost: cost, Writes: 1, ETIMEs: 1, MinDeltaFrom: c.minDeltaNs}
	c.etime++
	c.fireAt = ktime.Max
	p := programming{d: d, c: c, ch: ch, t: now.Add(cost), r: r}
	if force {
		p.minDelta()
	} else {
		r.ETIME = true
	}
	p.done()
}

// programEvent is ProgramEvent into *r.
func (d *Device) programEvent(r *ProgramResult, ch int, now, expires ktime.Time, force bool) {
	c := &d.ch[ch]
	*r = ProgramResult{MinDeltaFrom: c.minDeltaNs}
	p := programming{d: d, c: c, ch: ch, t: now, r: r}
	if expires < 0 {
		r.ETIME = true
		p.done()
		return
	}
	c.next = expires
	if c.st() == sdk.StateShutdown {
		c.fireAt = ktime.Max
		p.done()
		return
	}
	c.programs++
	delta := expires.Sub(now)
	if d.opts.StarvationGuard {
		p.guarded(delta, force)
		return
	}
	if delta <= 0 {
		if force {
			p.minDelta()
		} else {
			r.ETIME = true
		}
		p.done()
		return
	}
	delta = clampDelta(delta, c.minDeltaNs, d.scale.MaxDeltaNs)
	if p.write(d.scale.NsToTicks(uint64(delta))) {
		p.done()
		return
	}
	if force {
		p.minDelta()
	} else {
		r.ETIME = true
	}
	p.done()
}

func clampDelta(delta int64, minNs, maxNs uint64) int64 {
	if maxNs < uint64(ktime.Max) && delta > int64(maxNs) {
		delta = int64(maxNs)
	}
	if minNs < uint64(ktime.Max) && delta < int64(minNs) {
		delta = int64(minNs)
	}
	return delta
}

// programming is the state of one ProgramEvent call.
type programming struct {
	d  *Device
	c  *channel
	ch int
	t  ktime.Time // the simulated clock inside the call
	r  *ProgramResult
	ok bool // the last write succeeded
}

// write is one ->set_next_event(ticks) at the current time; it reports
// success.
func (p *programming) write(ticks uint64) bool {
	res := p.d.dev.SetNextEvent(p.ch, p.t, ticks)
	p.r.Writes++
	p.r.Cost += res.Cost
	p.c.writes++
	p.c.cost += res.Cost
	p.t = p.t.Add(res.Cost)
	if res.ETIME {
		p.r.ETIMEs++
		p.c.etime++
		// Divergence: the comparator value of a failed HPET write is
		// assumed to be overwritten before it can match; every caller
		// reprograms after -ETIME.
		p.c.fireAt = ktime.Max
		p.ok = false
		return false
	}
	p.c.fireAt = res.FireAt
	p.ok = true
	return true
}

// minDelta models clockevents_program_min_delta() in the configured variant;
// it reports success and leaves r.ETIME set on failure.
func (p *programming) minDelta() bool {
	switch p.d.opts.MinDelta {
	case RetryTenfold:
		var delta uint64
		for range 10 {
			delta += p.c.minDeltaNs
			if p.tryDelta(delta) {
				return true
			}
		}
		p.r.ETIME = true
		return false
	case RetryOnce:
		if p.tryDelta(p.c.minDeltaNs) {
			return true
		}
		p.r.ETIME = true
		return false
	}
	// MinAdjust.
	for i := 0; ; {
		if p.tryDelta(p.c.minDeltaNs) {
			return true
		}
		if i++; i > 2 {
			// clockevents_increase_min_delta()
			if p.c.minDeltaNs >= p.d.minDeltaLimitNs {
				p.r.GaveUp = true
				p.c.giveUps++
				p.c.next = ktime.Max
				p.r.ETIME = true
				return false
			}
			p.c.minDeltaNs = raiseMinDelta(p.c.minDeltaNs, p.d.minDeltaLimitNs)
			p.r.Raises++
			p.c.raises++
			i = 0
		}
	}
}

// tryDelta is one attempt of the min-delta loop: next_event = now + delta,
// dev->retries++, then a write of delta unless the device was shut down
// meanwhile. It reports whether the loop is done.
func (p *programming) tryDelta(delta uint64) bool {
	p.c.next = p.t.Add(int64(delta))
	if p.c.st() == sdk.StateShutdown {
		return true
	}
	p.r.Retries++
	p.c.retries++
	return p.write(p.d.scale.NsToTicks(delta))
}

// guarded is the tail of clockevents_program_event() with the starvation
// guard (7.0): a delta beyond min_delta_ns is written normally and clears
// next_event_forced; otherwise, or if that write failed, a pending forced
// event absorbs the call; else min_delta_ticks is written once, with the
// min-delta loop behind it when force is set, and next_event_forced is set.
func (p *programming) guarded(delta int64, force bool) {
	d, c := p.d, p.c
	if delta <= 0 && !force {
		p.r.ETIME = true
		p.done()
		return
	}
	if delta > int64(c.minDeltaNs) {
		delta = clampDelta(delta, 0, d.scale.MaxDeltaNs)
		if p.write(d.scale.NsToTicks(uint64(delta))) {
			c.forced = false
			p.done()
			return
		}
	}
	if c.forced {
		p.r.Skipped = true
		c.skipped++
		p.done()
		return
	}
	if !p.write(d.spec.MinDeltaTicks) {
		if !force || !p.minDelta() {
			p.r.ETIME = true
			p.done()
			return
		}
	}
	c.forced = true
	p.done()
}

// done fills the result's final fields and counts a failed call.
func (p *programming) done() {
	p.r.MinDeltaNs = p.c.minDeltaNs
	if p.r.ETIME {
		p.c.failures++
		if p.r.Writes > 0 && !p.ok {
			p.c.fireAt = ktime.Max
		}
	}
	p.r.FireAt = p.c.fireAt
}
