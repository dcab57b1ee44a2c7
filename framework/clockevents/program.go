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
	c := &d.ch[ch]
	if expires == ktime.Max {
		sr := d.SetState(ch, now, sdk.StateOneshotStopped, 0)
		c.next = ktime.Max
		return ProgramResult{FireAt: c.fireAt, Cost: sr.Cost, MinDeltaFrom: c.minDeltaNs, MinDeltaNs: c.minDeltaNs}
	}
	var cost int64
	if c.state == sdk.StateOneshotStopped {
		sr := d.SetState(ch, now, sdk.StateOneshot, 0)
		cost = sr.Cost
	}
	r := d.ProgramEvent(ch, now.Add(cost), expires, force)
	r.Cost += cost
	return r
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
	c := &d.ch[ch]
	p := programming{d: d, c: c, ch: ch, t: now}
	p.r.MinDeltaFrom = c.minDeltaNs
	if expires < 0 {
		p.r.ETIME = true
		return p.done()
	}
	c.next = expires
	if c.state == sdk.StateShutdown {
		p.r.FireAt = ktime.Max
		c.fireAt = ktime.Max
		return p.done()
	}
	c.stats.Programs++
	delta := expires.Sub(now)
	if d.opts.StarvationGuard {
		return p.guarded(delta, force)
	}
	if delta <= 0 {
		if force {
			p.minDelta()
		} else {
			p.r.ETIME = true
		}
		return p.done()
	}
	delta = clampDelta(delta, c.minDeltaNs, d.scale.MaxDeltaNs)
	if p.write(d.scale.NsToTicks(uint64(delta))) {
		return p.done()
	}
	if force {
		p.minDelta()
	} else {
		p.r.ETIME = true
	}
	return p.done()
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
	r  ProgramResult
	ok bool // the last write succeeded
}

// write is one ->set_next_event(ticks) at the current time; it reports
// success.
func (p *programming) write(ticks uint64) bool {
	res := p.d.dev.SetNextEvent(p.ch, p.t, ticks)
	p.r.Writes++
	p.r.Cost += res.Cost
	p.c.stats.Writes++
	p.c.stats.Cost += res.Cost
	p.t = p.t.Add(res.Cost)
	if res.ETIME {
		p.r.ETIMEs++
		p.c.stats.ETIME++
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
				p.c.stats.GiveUps++
				p.c.next = ktime.Max
				p.r.ETIME = true
				return false
			}
			p.c.minDeltaNs = raiseMinDelta(p.c.minDeltaNs, p.d.minDeltaLimitNs)
			p.r.Raises++
			p.c.stats.Raises++
			i = 0
		}
	}
}

// tryDelta is one attempt of the min-delta loop: next_event = now + delta,
// dev->retries++, then a write of delta unless the device was shut down
// meanwhile. It reports whether the loop is done.
func (p *programming) tryDelta(delta uint64) bool {
	p.c.next = p.t.Add(int64(delta))
	if p.c.state == sdk.StateShutdown {
		return true
	}
	p.r.Retries++
	p.c.stats.Retries++
	return p.write(p.d.scale.NsToTicks(delta))
}

// guarded is the tail of clockevents_program_event() with the starvation
// guard (7.0): a delta beyond min_delta_ns is written normally and clears
// next_event_forced; otherwise, or if that write failed, a pending forced
// event absorbs the call; else min_delta_ticks is written once, with the
// min-delta loop behind it when force is set, and next_event_forced is set.
func (p *programming) guarded(delta int64, force bool) ProgramResult {
	d, c := p.d, p.c
	if delta <= 0 && !force {
		p.r.ETIME = true
		return p.done()
	}
	if delta > int64(c.minDeltaNs) {
		delta = clampDelta(delta, 0, d.scale.MaxDeltaNs)
		if p.write(d.scale.NsToTicks(uint64(delta))) {
			c.forced = false
			return p.done()
		}
	}
	if c.forced {
		p.r.Skipped = true
		c.stats.Skipped++
		return p.done()
	}
	if !p.write(d.spec.MinDeltaTicks) {
		if !force || !p.minDelta() {
			p.r.ETIME = true
			return p.done()
		}
	}
	c.forced = true
	return p.done()
}

// done fills the result's final fields and counts a failed call.
func (p *programming) done() ProgramResult {
	p.r.MinDeltaNs = p.c.minDeltaNs
	if p.r.ETIME {
		p.c.stats.Failures++
		if p.r.Writes > 0 && !p.ok {
			p.c.fireAt = ktime.Max
		}
	}
	p.r.FireAt = p.c.fireAt
	return p.r
}
