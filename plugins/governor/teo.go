package governor

import (
	"math"

	"github.com/tickemu/tickemu/framework/sdk"
)

// teo.c constants.
const (
	teoPulse              = 1024
	teoDecayShift         = 3
	teoNrRecent           = 9
	teoUtilThresholdShift = 6
)

// teoBin is struct teo_bin.
type teoBin struct{ intercepts, hits, recent uint32 }

// teoCPU is struct teo_cpu, with the cpuidle_device fields teo reads.
type teoCPU struct {
	timeSpanNS    int64
	sleepLengthNS int64
	bins          []teoBin
	total         uint32
	nextRecentIdx int
	recentIdx     [teoNrRecent]int
	utilThreshold int64
	lastStateIdx  int // dev->last_state_idx; -1 after the update
	lastResidency int64
	tickNsec      int64
}

// Teo is drivers/cpuidle/governors/teo.c (v6.6).
type Teo struct {
	base
	cpu []teoCPU
}

// TeoFactory declares the teo governor.
var TeoFactory = factory("teo",
	"timer events oriented governor (drivers/cpuidle/governors/teo.c): hits and intercepts per state bin, keeps the tick for short or polling idle",
	func(b base) sdk.Plugin { return &Teo{base: b} })

var _ sdk.Governor = (*Teo)(nil)

// Configure implements sdk.Plugin.
func (g *Teo) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	d := g.configure(s, c)
	g.cpu = make([]teoCPU, max(s.CPUs, 0))
	return d
}

// Counters implements sdk.Plugin.
func (g *Teo) Counters() []sdk.Counter { return g.counters() }

// Enable is teo_enable_device().
func (g *Teo) Enable(cpu int, states []sdk.CPUIdleState) {
	g.enable(cpu, states)
	c := &g.cpu[cpu]
	*c = teoCPU{bins: make([]teoBin, len(states)), utilThreshold: sdk.CapacityScale >> teoUtilThresholdShift, lastStateIdx: -1}
	for i := range c.recentIdx {
		c.recentIdx[i] = -1
	}
}

// update is teo_update(): classify the last idle period as a hit or an
// intercept of its bin and decay the metrics.
func (g *Teo) update(st []sdk.CPUIdleState, c *teoCPU) {
	var measured int64
	if c.timeSpanNS >= c.sleepLengthNS {
		// A safety net triggered or the wakeup was close to the timer.
		measured = math.MaxInt64
	} else {
		lat := st[c.lastStateIdx].ExitLatency
		measured = c.lastResidency
		if measured >= lat {
			measured -= lat / 2
		} else {
			measured /= 2
		}
	}
	c.total = 0
	idxTimer, idxDuration := 0, 0
	for i := range st {
		b := &c.bins[i]
		b.hits -= b.hits >> teoDecayShift
		b.intercepts -= b.intercepts >> teoDecayShift
		c.total += b.hits + b.intercepts
		if st[i].TargetResidency <= c.sleepLengthNS {
			idxTimer = i
			if st[i].TargetResidency <= measured {
				idxDuration = i
			}
		}
	}
	i := c.nextRecentIdx
	c.nextRecentIdx = (c.nextRecentIdx + 1) % teoNrRecent
	if c.recentIdx[i] >= 0 {
		c.bins[c.recentIdx[i]].recent--
	}
	if idxTimer == idxDuration {
		c.bins[idxTimer].hits += teoPulse
		c.recentIdx[i] = -1
	} else {
		c.bins[idxDuration].intercepts += teoPulse
		c.bins[idxDuration].recent++
		c.recentIdx[i] = idxDuration
	}
	c.total += teoPulse
}

// timeOK is teo_time_ok().
func timeOK(r sdk.IdleSelect, ns int64) bool { return !r.TickStopped || ns >= r.TickNsec }

// middleOfBin is teo_middle_of_bin().
func middleOfBin(st []sdk.CPUIdleState, i int) int64 {
	return (st[i].TargetResidency + st[i+1].TargetResidency) / 2
}

// findShallower is teo_find_shallower_state().
func findShallower(st []sdk.CPUIdleState, idx int, duration int64, noPoll bool) int {
	for i := idx - 1; i >= 0; i-- {
		if noPoll && st[i].Polling {
			continue
		}
		idx = i
		if st[i].TargetResidency <= duration {
			break
		}
	}
	return idx
}

// Select is teo_select().
func (g *Teo) Select(r sdk.IdleSelect) sdk.IdleChoice {
	st := g.cpuStates(r.CPU)
	c := &g.cpu[r.CPU]
	if c.lastStateIdx >= 0 {
		g.update(st, c)
		c.lastStateIdx = -1
	}
	c.tickNsec = r.TickNsec
	duration := r.SleepLength
	c.sleepLengthNS = duration
	latencyReq := r.LatencyReq
	retain := func(idx int) sdk.IdleChoice { return g.answer(r.CPU, idx, false) }

	if len(st) < 2 {
		return retain(0)
	}
	idx := 0
	if st[1].TargetResidency > duration {
		return retain(0)
	}
	utilized := r.Util > c.utilThreshold
	if len(st) < 3 && utilized {
		duration = middleOfBin(st, 0)
		if !st[0].Polling && timeOK(r, duration) {
			return retain(0)
		}
		return g.end(r, st, 1, 0, duration)
	}
	var interceptSum, hitSum, recentSum, idxInterceptSum, idxHitSum, idxRecentSum uint32
	// State 0 is always enabled, so it is idx0, the first enabled state.
	constraintIdx, idx0 := 0, 0
	for i := 1; i < len(st); i++ {
		prev := &c.bins[i-1]
		interceptSum += prev.intercepts
		hitSum += prev.hits
		recentSum += prev.recent
		if st[i].TargetResidency > duration {
			break
		}
		idx = i
		if st[i].ExitLatency <= latencyReq {
			constraintIdx = i
		}
		idxInterceptSum, idxHitSum, idxRecentSum = interceptSum, hitSum, recentSum
	}
	if idx == idx0 {
		// The first enabled state: use it, keeping the tick if it is shallow.
		duration = st[idx].TargetResidency
		return g.end(r, st, idx, idx0, duration)
	}
	altIntercepts := 2*idxInterceptSum > c.total-idxHitSum
	altRecent := idxRecentSum > teoNrRecent/2
	if altRecent || altIntercepts {
		firstSpan, firstIdx := duration, idx
		interceptSum, recentSum = 0, 0
		for i := idx - 1; i >= 0; i-- {
			b := &c.bins[i]
			interceptSum += b.intercepts
			recentSum += b.recent
			span := middleOfBin(st, i)
			if (!altRecent || 2*recentSum > idxRecentSum) && (!altIntercepts || 2*interceptSum > idxInterceptSum) {
				if timeOK(r, span) {
					idx, duration = i, span
				} else {
					idx, duration = firstIdx, firstSpan
				}
				break
			}
			if !timeOK(r, span) {
				if firstIdx != idx {
					continue
				}
				break
			}
			firstSpan, firstIdx = span, i
		}
	}
	if idx > constraintIdx {
		idx = constraintIdx
	}
	if utilized {
		i := findShallower(st, idx, duration, true)
		if span := middleOfBin(st, i); timeOK(r, span) {
			idx, duration = i, span
		}
	}
	return g.end(r, st, idx, idx0, duration)
}

// end is the tail of teo_select() from its "end" label: stop the tick unless
// the state polls or the expected duration is under a tick (and the tick is
// not stopped already); with the tick kept, a state that does not fit before
// the next tick is replaced by a shallower one.
func (g *Teo) end(r sdk.IdleSelect, st []sdk.CPUIdleState, idx, idx0 int, duration int64) sdk.IdleChoice {
	if (!st[idx].Polling && duration >= r.TickNsec) || r.TickStopped {
		return g.answer(r.CPU, idx, true)
	}
	if idx > idx0 && st[idx].TargetResidency > r.DeltaTick {
		idx = findShallower(st, idx, r.DeltaTick, false)
	}
	return g.answer(r.CPU, idx, false)
}

// Reflect is teo_reflect().
func (g *Teo) Reflect(r sdk.IdleReflect) {
	g.cpuStates(r.CPU)
	c := &g.cpu[r.CPU]
	c.lastStateIdx = r.State
	c.lastResidency = r.Residency
	if r.TickWakeup && c.sleepLengthNS > c.tickNsec {
		// Not a "natural" wakeup: assume the CPU could have slept the whole
		// sleep length.
		c.timeSpanNS = c.sleepLengthNS
	} else {
		c.timeSpanNS = r.Span
	}
}
