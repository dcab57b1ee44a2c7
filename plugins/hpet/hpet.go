package hpet

import (
	"math"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/simrand"
)

// Version is the plugin's version.
const Version = "1.0.0"

// Kernel and hardware constants (arch/x86/kernel/hpet.c, include/asm/hpet.h).
const (
	minCycles     = 128                     // HPET_MIN_CYCLES
	minProgDelta  = minCycles + minCycles/2 // HPET_MIN_PROG_DELTA
	maxDeltaTicks = 0x7FFFFFFF              // clockevents_config_and_register(..., 0x7FFFFFFF)
	fsPerSec      = 1_000_000_000_000_000   // FSEC_PER_SEC
	minPeriodFs   = 100_000                 // HPET_MIN_PERIOD (10 GHz)
	maxPeriodFs   = 100_000_000             // HPET_MAX_PERIOD (10 MHz)
	maxTimers     = 32                      // HPET_ID_NUMBER is 5 bits
	wrap          = uint64(1) << 32         // the comparator is 32 bits (HPET_TN_32BIT)
	udelay1       = ktime.Microsecond       // udelay(1) in hpet_clkevt_set_state_periodic()
)

// Interference delays the comparator write of a programming whose counter read
// ran over [start, end): it returns how long the CPU was kept from issuing the
// write. The default is the SMI source configured by smi_rate/smi_duration.
type Interference interface {
	Delay(start, end ktime.Time) int64
}

// Plugin is the HPET with its comparators.
type Plugin struct {
	setup    sdk.Setup
	local    bool
	spec     sdk.DeviceSpec
	counter  clockmath.Clock
	periodFs uint64
	// periodTicks is the periodic comparator increment:
	// (NSEC_PER_SEC/HZ * mult) >> shift.
	periodTicks uint64

	readCost, writeCost, ackCost, latency int64
	latchCycles                           uint64

	interference Interference
	ch           []channel
}

// channel is one comparator.
type channel struct {
	enabled  bool
	periodic bool
	// armed is when the programmed comparator will raise its interrupt
	// (ktime.Max: none).
	armed ktime.Time
	// periodic mode: 64-bit counter value of the first tick, ticks since.
	start, fired uint64
	stats        stats
}

type stats struct {
	writes, etime, cost, interrupts, states, smiHits int64
}

// New returns an unconfigured HPET plugin.
func New() sdk.Plugin { return &Plugin{} }

// Factory declares the plugin: its kind, the name `plugin = "hpet"` selects,
// and its constructor; Info and plugins/builtin take them from here.
var Factory = sdk.Factory{Kind: sdk.KindClockEvent, Name: "hpet", New: New}

var _ sdk.ClockEventDevice = (*Plugin)(nil)

// Info describes the plugin.
func (p *Plugin) Info() sdk.Info {
	return sdk.Info{Kind: Factory.Kind, Name: Factory.Name, Version: Version,
		Description: "x86 HPET comparators: legacy broadcast channel or per-CPU MSI channels, with the equal-match -ETIME race (arch/x86/kernel/hpet.c)"}
}

// maxCost bounds every cost and latency attribute (the schema's Max, refused
// at decode with the file, line and attribute): a register access, EOI or
// interrupt delivery of a millisecond is a typing mistake, and an answer
// stays far within the plugin contract's 10 s (framework/contract's
// MaxCost). The builtin runs in process without the contract checker, so its
// config must not be able to break the contract.
const maxCost = "1ms"

// Schema declares the plugin's attributes.
func (p *Plugin) Schema() sdk.Schema {
	return sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "freq", Type: sdk.TypeFrequency, Default: "14.31818MHz",
			Doc: "main counter frequency (10 MHz to 10 GHz); the hardware reports its period in fs and the kernel truncates 10^15/period to hpet_freq"},
		{Name: "channels", Type: sdk.TypeNumber, Default: "0",
			Doc: "comparators used as clockevent channels; 0 picks by role: 1 for broadcast (legacy channel 0), one per CPU for local (MSI channels); at most 32"},
		{Name: "read_cost", Type: sdk.TypeDuration, Default: "1us", Max: maxCost,
			Doc: "cost of one HPET MMIO read (counter, config); measured >= 1.4 us on large NUMA machines, ~0.5-1 us single socket"},
		{Name: "write_cost", Type: sdk.TypeDuration, Default: "100ns", Max: maxCost,
			Doc: "cost of one posted HPET MMIO write (comparator, config)"},
		{Name: "cmp_latch_cycles", Type: sdk.TypeNumber, Default: "2",
			Doc: "HPET cycles before a comparator write takes effect (up to 2 on ATI and ICH9/10 chipsets, longer on some AMD)"},
		{Name: "ack_cost", Type: sdk.TypeDuration, Default: "50ns", Max: maxCost,
			Doc: "cost of acknowledging the HPET interrupt (the LAPIC EOI; the handler does not touch the HPET)"},
		{Name: "irq_latency", Type: sdk.TypeDuration, Default: "1us", Max: maxCost,
			Doc: "delay from the comparator match to interrupt entry (IO-APIC or MSI delivery)"},
		{Name: "smi_rate", Type: sdk.TypeNumber, Default: "0", Min: "0", Max: "100",
			Doc: "System Management Interrupts per second (Poisson, machine-wide; at most 100, so SMIs of up to 1 ms keep the CPUs in SMM at most a tenth of the time and a write's chain of back-to-back SMIs stays short); one arriving between the counter read and the comparator write delays the write by smi_duration; 0 disables"},
		{Name: "smi_duration", Type: sdk.TypeDuration, Default: "10us", Max: maxCost,
			Doc: "how long each SMI keeps the CPUs in SMM"},
	}}
}

// Configure validates the attributes and derives the device.
func (p *Plugin) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	var d sdk.Diagnostics
	r := c.Reader()
	if s.CPUs < 1 || s.HZ < 1 {
		return d.Errorf("", "machine needs cpus >= 1 and hz >= 1 (got %d, %d)", s.CPUs, s.HZ)
	}
	p.setup = s
	p.local = s.Role == "local"
	freq := r.Float("freq")
	p.periodFs = uint64(math.Round(fsPerSec / freq))
	if !(freq > 0) || p.periodFs < minPeriodFs || p.periodFs > maxPeriodFs {
		d = d.Errorf("freq", "HPET frequency %g Hz out of range: the period must be 100 ns or less and 100 fs or more (hpet_enable())", freq)
		p.periodFs = 69841279
	}
	p.counter = clockmath.ClockPeriodFs(p.periodFs)
	hpetFreq := fsPerSec / p.periodFs // hpet_enable(): do_div(FSEC_PER_SEC, hpet_period)

	channels := r.Float("channels")
	n := int(channels)
	if channels != float64(n) || n < 0 || n > maxTimers {
		d = d.Errorf("channels", "channels must be a whole number from 0 to %d, got %g", maxTimers, channels)
		n = 0
	}
	if n == 0 {
		n = 1
		if p.local {
			n = s.CPUs
		}
	}
	if p.local && n != s.CPUs {
		d = d.Errorf("channels", "per-CPU use needs one comparator per CPU: channels %d, cpus %d", n, s.CPUs)
	}
	if p.local && s.CPUs > maxTimers {
		d = d.Errorf("plugin", "an HPET has at most %d comparators; it cannot serve %d CPUs as per-CPU timers", maxTimers, s.CPUs)
	}

	p.readCost = r.Duration("read_cost")
	p.writeCost = r.Duration("write_cost")
	p.ackCost = r.Duration("ack_cost")
	p.latency = r.Duration("irq_latency")
	for _, a := range []string{"read_cost", "write_cost", "ack_cost", "irq_latency", "smi_duration"} {
		if r.Duration(a) < 0 {
			d = d.Errorf(a, "%s must not be negative", a)
		}
	}
	latch := r.Float("cmp_latch_cycles")
	if latch < 0 || latch != math.Trunc(latch) || latch > 1e6 {
		d = d.Errorf("cmp_latch_cycles", "cmp_latch_cycles must be a whole number >= 0, got %g", latch)
		latch = 0
	}
	p.latchCycles = uint64(latch)

	rate := r.Float("smi_rate")
	if rate < 0 || math.IsInf(rate, 0) || math.IsNaN(rate) {
		d = d.Errorf("smi_rate", "smi_rate must be >= 0, got %g", rate)
		rate = 0
	}
	p.interference = nil
	if rate > 0 {
		p.interference = newSMISource(simrand.New(s.Seed, "hpet/"+string(s.Role)+"/smi"), rate, r.Duration("smi_duration"))
	}

	if p.local {
		p.spec = sdk.DeviceSpec{Name: "hpet", Features: sdk.FeatOneshot | sdk.FeatPerCPU, Rating: 110}
	} else {
		p.spec = sdk.DeviceSpec{Name: "hpet", Features: sdk.FeatOneshot | sdk.FeatPeriodic, Rating: 50}
	}
	p.spec.FreqHz = float64(hpetFreq)
	p.spec.MinDeltaTicks = minProgDelta
	p.spec.MaxDeltaTicks = maxDeltaTicks
	p.spec.Channels = n
	scale := clockmath.Config(p.spec.Features, uint32(hpetFreq), minProgDelta, maxDeltaTicks)
	p.periodTicks = scale.NsToTicks(uint64(clockmath.NsecPerSec / s.HZ))
	p.ch = make([]channel, n)
	for i := range p.ch {
		p.ch[i].armed = ktime.Max
	}
	return append(r.Diagnostics(), d...)
}

// SetInterference replaces the SMI source (nil: none). Tests and experiments
// use it to inject a delay at a chosen programming.
func (p *Plugin) SetInterference(i Interference) { p.interference = i }

// Spec describes the configured device.
func (p *Plugin) Spec() sdk.DeviceSpec { return p.spec }

// matchAfter is the 64-bit counter value at which a comparator holding cmp
// (32 bits), effective from land, matches: the counter's next value with
// those low 32 bits after land (a value already reached waits for the wrap).
func (p *Plugin) matchAfter(cmp uint64, land ktime.Time) uint64 {
	now := p.counter.TicksAt(land)
	v := now&^(wrap-1) | cmp
	if v <= now {
		v += wrap
	}
	return v
}

// fireAfter is when that match raises the interrupt.
func (p *Plugin) fireAfter(cmp uint64, land ktime.Time) ktime.Time {
	return p.counter.TimeOf(p.matchAfter(cmp, land)).Add(p.latency)
}

// SetNextEvent is hpet_clkevt_set_next_event() on comparator ch at now.
func (p *Plugin) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	c := &p.ch[ch]
	c.periodic = false
	c.enabled = true
	// cnt = hpet_readl(HPET_COUNTER) + (u32)delta
	readEnd := now.Add(p.readCost)
	cnt := (p.counter.TicksAt(readEnd) + uint64(uint32(ticks))) & (wrap - 1)
	var delay int64
	if p.interference != nil {
		delay = p.interference.Delay(now, readEnd)
		if delay > 0 {
			c.stats.smiHits++
		}
	}
	// hpet_writel(cnt, HPET_Tn_CMP(channel)): posted, effective a few
	// HPET cycles later.
	writeEnd := readEnd.Add(delay + p.writeCost)
	land := writeEnd.Add(p.counter.Ns(p.latchCycles))
	// res = (s32)(cnt - hpet_readl(HPET_COUNTER))
	readBack := writeEnd.Add(p.readCost)
	res := int32(uint32(cnt) - uint32(p.counter.TicksAt(readBack)))
	r := sdk.ProgramResult{Cost: readBack.Sub(now)}
	r.FireAt = p.fireAfter(cnt, land)
	c.armed = r.FireAt
	if res < minCycles {
		r.ETIME = true
		c.stats.etime++
	}
	c.stats.writes++
	c.stats.cost += r.Cost
	return r
}

// SetState is hpet_clkevt_set_state_shutdown(), _oneshot() and _periodic();
// ONESHOT_STOPPED has no callback in this driver and changes nothing.
func (p *Plugin) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
	c := &p.ch[ch]
	var cost int64
	switch st {
	case sdk.StateShutdown, sdk.StateDetached:
		cost = p.readCost + p.writeCost // Tn_CFG &= ~HPET_TN_ENABLE
		c.enabled, c.periodic, c.armed = false, false, ktime.Max
	case sdk.StateOneshot:
		if c.enabled && !c.periodic {
			// From the core's ONESHOT_STOPPED: the kernel never left
			// ONESHOT (no callback), so it calls nothing now.
			return 0, c.pending(now)
		}
		cost = p.readCost + p.writeCost // Tn_CFG: clear PERIODIC, set ENABLE|32BIT
		c.enabled, c.periodic, c.armed = true, false, ktime.Max
	case sdk.StateOneshotStopped:
		return 0, c.pending(now)
	case sdk.StatePeriodic:
		if p.spec.Features&sdk.FeatPeriodic == 0 {
			return 0, ktime.Max
		}
		// Stop the counter (CFG read+write), read COUNTER, Tn_CFG
		// read+write, CMP twice around udelay(1), start the counter.
		readCounter := now.Add(2*p.readCost + p.writeCost)
		cost = 4*p.readCost + 5*p.writeCost + udelay1
		cmp := (p.counter.TicksAt(readCounter) + p.periodTicks) & (wrap - 1)
		c.start = p.matchAfter(cmp, now.Add(cost))
		c.fired = 0
		c.enabled, c.periodic = true, true
		c.armed = p.counter.TimeOf(c.start).Add(p.latency)
	}
	c.stats.states++
	c.stats.cost += cost
	return cost, c.armed
}

// pending is the armed comparator's interrupt if it is still to come.
func (c *channel) pending(now ktime.Time) ktime.Time {
	if c.armed > now {
		return c.armed
	}
	return ktime.Max
}

// Ack acknowledges the interrupt; in periodic mode the hardware has added the
// period to the comparator and fires again.
func (p *Plugin) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	c := &p.ch[ch]
	c.stats.interrupts++
	c.stats.cost += p.ackCost
	if !c.periodic {
		c.armed = ktime.Max
		return p.ackCost, ktime.Max
	}
	c.fired++
	next := p.counter.TimeOf(c.start + c.fired*p.periodTicks).Add(p.latency)
	c.armed = next
	return p.ackCost, next
}

// Counters reports per channel (per CPU in local use, machine-wide in
// broadcast use): writes, etime, cost_ns, interrupts, state_changes, smi_hits.
func (p *Plugin) Counters() []sdk.Counter {
	out := make([]sdk.Counter, 0, 6*len(p.ch))
	emit := func(cpu int, s stats) {
		out = append(out,
			sdk.Counter{Name: "writes", CPU: cpu, Value: s.writes},
			sdk.Counter{Name: "etime", CPU: cpu, Value: s.etime},
			sdk.Counter{Name: "cost_ns", CPU: cpu, Value: s.cost},
			sdk.Counter{Name: "interrupts", CPU: cpu, Value: s.interrupts},
			sdk.Counter{Name: "state_changes", CPU: cpu, Value: s.states},
			sdk.Counter{Name: "smi_hits", CPU: cpu, Value: s.smiHits},
		)
	}
	if p.local {
		for i, c := range p.ch {
			emit(i, c.stats)
		}
		return out
	}
	var sum stats
	for _, c := range p.ch {
		sum.writes += c.stats.writes
		sum.etime += c.stats.etime
		sum.cost += c.stats.cost
		sum.interrupts += c.stats.interrupts
		sum.states += c.stats.states
		sum.smiHits += c.stats.smiHits
	}
	emit(-1, sum)
	return out
}
