package governor

import (
	"math"

	"github.com/tickemu/tickemu/framework/sdk"
)

// menu.c constants. BUCKETS is 12, but which_bucket() uses its upper half
// only for a CPU with tasks in iowait, which the model has not: menuBuckets
// is the half the model reaches.
const (
	menuBuckets        = 6
	menuIntervalShift  = 3
	menuIntervals      = 1 << menuIntervalShift
	menuResolution     = 1024
	menuDecay          = 8
	menuMaxInteresting = 50000
)

// menuDevice is struct menu_device with the CPU's base record. The values the
// kernel keeps as unsigned int are uint32 here too: microseconds saturated
// to 32 bits (nsToUS), and correction factors, which never exceed
// RESOLUTION * DECAY (update). The arithmetic is in uint64, as before.
type menuDevice struct {
	b                baseCPU
	needsUpdate      bool
	tickWakeup       bool
	nextTimerUS      uint32
	intervalPtr      uint32
	bucket           int32
	lastStateIdx     int
	tickUS           uint64 // TICK_USEC
	lastResidencyUS  uint32
	correctionFactor [menuBuckets]uint32
	intervals        [menuIntervals]uint32
}

// Menu is drivers/cpuidle/governors/menu.c (v5.4, microsecond units).
type Menu struct {
	base
	dev []menuDevice
}

// MenuFactory declares the menu governor.
var MenuFactory = factory("menu",
	"menu governor (drivers/cpuidle/governors/menu.c): correction factors by bucket, typical-interval detection, keeps the tick for short or polling idle",
	func(b base) sdk.Plugin { return &Menu{base: b} })

var _ sdk.Governor = (*Menu)(nil)

// Configure implements sdk.Plugin.
func (g *Menu) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	d := g.configure(s, c)
	g.dev = make([]menuDevice, max(s.CPUs, 0))
	g.bind(func(cpu int) *baseCPU { return &g.dev[cpu].b })
	return d
}

// Counters implements sdk.Plugin.
func (g *Menu) Counters() []sdk.Counter { return g.counters() }

// Enable is menu_enable_device(): unity correction factors.
func (g *Menu) Enable(cpu int, states []sdk.CPUIdleState) {
	g.enable(cpu, states)
	d := &g.dev[cpu]
	*d = menuDevice{b: d.b}
	for i := range d.correctionFactor {
		d.correctionFactor[i] = menuResolution * menuDecay
	}
}

// whichBucket is which_bucket() without iowaiters.
func whichBucket(us uint64) int {
	switch {
	case us < 10:
		return 0
	case us < 100:
		return 1
	case us < 1000:
		return 2
	case us < 10000:
		return 3
	case us < 100000:
		return 4
	}
	return 5
}

// nsToUS is ktime_to_us() saturated to the unsigned int menu keeps.
func nsToUS(ns int64) uint64 {
	if ns <= 0 {
		return 0
	}
	return min(uint64(ns/1000), math.MaxUint32)
}

// nsToUS32 is nsToUS as the 32 bits it fits in.
func nsToUS32(ns int64) uint32 { return uint32(nsToUS(ns)) }

// typicalInterval is get_typical_interval(): the average of the recent idle
// durations when their spread is small, dropping the largest outliers down
// to 3/4 of the samples; math.MaxUint32 when there is none.
func (d *menuDevice) typicalInterval(predictedUS uint64) uint64 {
	thresh := uint64(math.MaxInt32)
	for {
		minV, maxV := uint64(math.MaxUint32), uint64(0)
		var sum uint64
		divisor := 0
		for _, v32 := range d.intervals {
			if v := uint64(v32); v <= thresh {
				sum += v
				divisor++
				maxV = max(maxV, v)
				minV = min(minV, v)
			}
		}
		if minV >= predictedUS {
			return math.MaxUint32
		}
		var avg uint64
		if divisor == menuIntervals {
			avg = sum >> menuIntervalShift
		} else {
			avg = sum / uint64(divisor)
		}
		var variance uint64
		for _, v32 := range d.intervals {
			if v := uint64(v32); v <= thresh {
				diff := int64(v) - int64(avg)
				variance += uint64(diff * diff)
			}
		}
		if divisor == menuIntervals {
			variance >>= menuIntervalShift
		} else {
			variance /= uint64(divisor)
		}
		if variance <= math.MaxUint64/36 {
			if (avg*avg > variance*36 && divisor*4 >= menuIntervals*3) || variance <= 400 {
				return avg
			}
		}
		if divisor*4 <= menuIntervals*3 {
			return math.MaxUint32
		}
		thresh = maxV - 1
	}
}

// Select is menu_select().
func (g *Menu) Select(r sdk.IdleSelect) sdk.IdleChoice {
	d := g.device(r.CPU)
	st := *d.b.states
	if d.needsUpdate {
		g.update(st, d)
		d.needsUpdate = false
	}
	tickUS := uint64(r.TickNsec / 1000)
	d.tickUS = tickUS
	latencyReq := r.LatencyReq
	nextTimerUS := nsToUS(r.SleepLength)
	d.nextTimerUS = uint32(nextTimerUS)
	d.bucket = int32(whichBucket(nextTimerUS))
	us := func(ns int64) uint64 { return nsToUS(ns) }

	if len(st) <= 1 || latencyReq == 0 ||
		(nextTimerUS < us(st[1].TargetResidency) || latencyReq < st[1].ExitLatency) {
		// State 0 will be used no matter what: keep the tick if it polls.
		return d.b.answer(g.cost, 0, !st[0].Polling)
	}
	deltaNextUS := nsToUS(r.DeltaTick)
	// DIV_ROUND_CLOSEST_ULL(next_timer_us * correction_factor, RESOLUTION * DECAY)
	div := uint64(menuResolution * menuDecay)
	predictedUS := (nextTimerUS*uint64(d.correctionFactor[d.bucket]) + div/2) / div
	predictedUS = min(predictedUS, d.typicalInterval(predictedUS))

	if r.TickStopped {
		// A misprediction costs more with the tick stopped: use the time
		// till the closest timer for a short prediction.
		if predictedUS < tickUS {
			predictedUS = deltaNextUS
		}
	} else if interactivity := int64(predictedUS) * 1000; latencyReq > interactivity {
		// interactivity_req = predicted_us / performance_multiplier (1), in us;
		// latency_req is compared in the states' units below.
		latencyReq = interactivity
	}

	idx := -1
	for i := range st {
		s := &st[i]
		if idx == -1 {
			idx = i
		}
		if us(s.TargetResidency) > predictedUS {
			// A physical state rather than polling, unless a timer comes soon.
			if st[idx].Polling && s.ExitLatency <= latencyReq && us(s.TargetResidency) <= nextTimerUS {
				predictedUS = us(s.TargetResidency)
				idx = i
				break
			}
			if predictedUS < tickUS {
				break
			}
			if !r.TickStopped {
				// Shallow so far: retain the tick and select again next time.
				predictedUS = us(st[idx].TargetResidency)
				break
			}
			// Shallow so far and this state matches the closest timer: take
			// it to avoid getting stuck in the shallow one.
			if us(st[idx].TargetResidency) < tickUS && us(s.TargetResidency) <= deltaNextUS {
				idx = i
			}
			return d.b.answer(g.cost, idx, true)
		}
		if s.ExitLatency > latencyReq {
			break
		}
		idx = i
	}
	if idx == -1 {
		idx = 0
	}
	stop := true
	if (st[idx].Polling || predictedUS < tickUS) && !r.TickStopped {
		stop = false
		if idx > 0 && us(st[idx].TargetResidency) > deltaNextUS {
			// The tick stays: pick a state whose residency fits before it.
			for i := idx - 1; i >= 0; i-- {
				idx = i
				if us(st[i].TargetResidency) <= deltaNextUS {
					break
				}
			}
		}
	}
	return d.b.answer(g.cost, idx, stop)
}

// device is cpu's record, panicking if Enable was not called.
func (g *Menu) device(cpu int) *menuDevice {
	if uint(cpu) >= uint(len(g.dev)) || g.dev[cpu].b.states == nil {
		panic(notEnabledError{g.name, cpu})
	}
	return &g.dev[cpu]
}

// Reflect is menu_reflect(): the update runs at the next Select.
func (g *Menu) Reflect(r sdk.IdleReflect) {
	d := g.device(r.CPU)
	d.lastStateIdx = r.State
	d.lastResidencyUS = nsToUS32(r.Residency)
	d.needsUpdate = true
	d.tickWakeup = r.TickWakeup
}

// update is menu_update(): fold the last idle duration into the bucket's
// correction factor and the interval history.
func (g *Menu) update(st []sdk.CPUIdleState, d *menuDevice) {
	target := &st[d.lastStateIdx]
	nextTimerUS := uint64(d.nextTimerUS)
	var measured uint64
	if d.tickWakeup && nextTimerUS > d.tickUS {
		// Woken by a tick that was not stopped after all: assume a long idle.
		measured = 9 * menuMaxInteresting / 10
	} else {
		measured = uint64(d.lastResidencyUS)
		lat := nsToUS(target.ExitLatency)
		if measured > 2*lat {
			measured -= lat
		} else {
			measured /= 2
		}
	}
	if measured > nextTimerUS {
		measured = nextTimerUS
	}
	// f stays at most RESOLUTION * DECAY: f - f/DECAY + RESOLUTION is at most
	// that when f is, and measured <= next_timer_us keeps the added term at
	// most RESOLUTION.
	f := uint64(d.correctionFactor[d.bucket])
	f -= f / menuDecay
	if nextTimerUS > 0 && measured < menuMaxInteresting {
		f += menuResolution * measured / nextTimerUS
	} else {
		f += menuResolution
	}
	d.correctionFactor[d.bucket] = uint32(f)
	d.intervals[d.intervalPtr] = uint32(measured)       // <= next_timer_us, 32 bits
	d.intervalPtr = (d.intervalPtr + 1) % menuIntervals // an AND: unsigned
}
