package lapic

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/simrand"
	"github.com/tickemu/tickemu/framework/sdk/spread"
)

// Version is the plugin's version.
const Version = "1.0.0"

// Kernel constants (arch/x86/kernel/apic/apic.c).
const (
	tscDivisor    = 8          // TSC_DIVISOR
	apicDivisor   = 16         // APIC_DIVISOR
	minDeltaTicks = 0xF        // clockevents_config_and_register(..., 0xF, ...)
	maxCountTicks = 0x7FFFFFFF // lapic_init_clockevent()
	tmictMask     = 0xFFFFFFFF // TMICT is a 32-bit register
)

// Modes.
const (
	ModeDeadline = "tsc_deadline"
	ModeOneshot  = "oneshot"
)

// modes are the mode attribute's values.
var modes = []string{ModeDeadline, ModeOneshot}

// Plugin is the LAPIC timer of every CPU.
type Plugin struct {
	setup sdk.Setup
	mode  string
	// deadline is mode == ModeDeadline, the test every write makes.
	deadline bool
	arat     bool
	spec     sdk.DeviceSpec

	tsc clockmath.Clock // the TSC, at its true rate
	// tscPerNs is the TSC's ticks per ns when that is a whole number (a
	// tsc_freq of whole GHz, as the default 3 GHz), else 0: the deadline
	// write then reads the TSC with a multiply and converts the deadline
	// back with one 64-bit division instead of two 128-bit ones (tscAt,
	// tscTime; the same values as tsc.TicksAt and tsc.TimeOf).
	tscPerNs uint64
	apic     clockmath.Clock // the divided bus clock the count-down timer counts
	// perJiffy is lapic_timer_period / divide: the count reloaded every
	// jiffy in periodic mode.
	perJiffy uint64

	deadlineCost, regCost, eoiCost, latency int64
	// latencySpread is irq_latency_spread: the interrupt's delivery is
	// not the same every time (in a guest, the host schedules the vCPU
	// that takes it), so each interrupt's latency is drawn from rng around
	// latency. Empty: the constant latency, and nothing drawn.
	latencySpread spread.Quantiles
	rng           *simrand.Rand
	stream        string // rng's name
	// pastLatency is past_deadline_latency: the delay from the write to the
	// interrupt when the deadline written has already passed (-1: unset,
	// such a write fires irq_latency after it lands, as before).
	pastLatency int64
	// pastSpread is past_deadline_latency_spread, drawn as latencySpread.
	pastSpread spread.Quantiles
	// eoiSpread is eoi_cost_spread: in a guest the EOI is an MSR write that
	// exits to the hypervisor, which takes as long as the host lets it.
	eoiSpread spread.Quantiles

	ch []channel
}

// channel is one CPU's timer. It is padded to 64 bytes: in the slice of
// them (one per CPU, unvisited while the CPU sleeps) an interrupt's ack and
// the writes after it then touch one cache line, not two.
type channel struct {
	periodic   bool
	startTick  uint64 // counter value when the periodic count was loaded
	ticksFired uint64 // periods elapsed
	stats      stats
	_          [8]byte
}

type stats struct {
	writes, cost, interrupts, states int64
}

// New returns an unconfigured LAPIC plugin.
func New() sdk.Plugin { return &Plugin{} }

// Factory declares the plugin: its kind, the name `plugin = "lapic"` selects,
// and its constructor; Info and plugins/builtin take them from here.
var Factory = sdk.Factory{Kind: sdk.KindClockEvent, Name: "lapic", New: New}

var _ sdk.ClockEventDevice = (*Plugin)(nil)

// Info describes the plugin.
func (p *Plugin) Info() sdk.Info {
	return sdk.Info{Kind: Factory.Kind, Name: Factory.Name, Version: Version,
		Description: "x86 local APIC timer per CPU: TSC-deadline or count-down one-shot (arch/x86/kernel/apic/apic.c)"}
}

// maxCost bounds every cost and latency attribute (the schema's Max, refused
// at decode with the file, line and attribute): a register access, EOI or
// interrupt delivery of a millisecond is a typing mistake, and an answer
// stays far within the plugin contract's 10 s (framework/contract's
// MaxCost). The builtin runs in process without the contract checker, so its
// config must not be able to break the contract.
const (
	maxCost   = "1ms"
	maxCostNS = 1_000_000
)

// Schema declares the plugin's attributes.
func (p *Plugin) Schema() sdk.Schema {
	return sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "mode", Type: sdk.TypeString, Default: ModeDeadline, OneOf: modes,
			Doc:         "count mode: tsc_deadline (IA32_TSC_DEADLINE, device lapic-deadline at TSC/8) or oneshot (count-down TMICT on the divided bus clock, device lapic)",
			Unversioned: "a CPU feature: every modelled release (3.10 on) uses TSC-deadline mode when the CPU has it (X86_FEATURE_TSC_DEADLINE_TIMER) and the count-down otherwise"},
		{Name: "tsc_freq", Type: sdk.TypeFrequency, Default: "3GHz",
			Doc: "TSC frequency; the kernel registers the deadline device at tsc_khz*125 Hz (TSC/8)"},
		{Name: "bus_freq", Type: sdk.TypeFrequency, Default: "100MHz", Max: "10GHz",
			Doc: "APIC timer input clock for oneshot mode: the bus clock (100 MHz on Nehalem to Broadwell) or the core crystal of CPUID leaf 0x15 (24/25/38.4 MHz)"},
		{Name: "divide", Type: sdk.TypeNumber, Default: "16",
			Doc: "divide configuration (TDCR) for oneshot mode: 1, 2, 4, ..., 128; the kernel always uses 16 (APIC_DIVISOR)"},
		{Name: "arat", Type: sdk.TypeBool, Default: "true",
			Doc:         "Always Running APIC Timer (CPUID.06H:EAX[2]): true keeps the timer running in deep C-states (rating 150); false sets CLOCK_EVT_FEAT_C3STOP (rating 100) so deep idle needs the broadcast device",
			Unversioned: "a CPU feature (CPUID.06H:EAX[2]), read the same way on every modelled release"},
		{Name: "deadline_write_cost", Type: sdk.TypeDuration, Default: "60ns", Max: maxCost,
			Doc: "cost of lapic_next_deadline(): RDTSC and the IA32_TSC_DEADLINE WRMSR (estimate: 100-300 cycles bare metal; 1-3 us as a VM exit)"},
		{Name: "oneshot_write_cost", Type: sdk.TypeDuration, Default: "100ns", Max: maxCost,
			Doc: "cost of one APIC register access: the TMICT write of lapic_next_event(), and each LVTT/TDCR/TMICT access of a state change (estimate: 0.05-0.3 us bare metal)"},
		{Name: "eoi_cost", Type: sdk.TypeDuration, Default: "50ns", Max: maxCost,
			Doc: "cost of the EOI at interrupt entry: apic_eoi() in sysvec_apic_timer_interrupt(), before trace_local_timer_entry() (a WRMSR of x2APIC MSR 0x80b: " +
				"a few cycles on bare metal, an exit to the hypervisor in a guest without EOI acceleration, about as long as deadline_write_cost)"},
		{Name: "eoi_cost_spread", Type: sdk.TypeString, Default: "",
			Doc: "the spread of eoi_cost, as irq_latency_spread is irq_latency's (tickemu calibrate fits it from the past_deadline intervals, whose length is the EOI's). Empty: every EOI costs eoi_cost"},
		{Name: "irq_latency", Type: sdk.TypeDuration, Default: "50ns", Max: maxCost,
			Doc: "delay from the timer reaching its deadline (or zero) to interrupt entry"},
		{Name: "past_deadline_latency", Type: sdk.TypeString, Default: "",
			Doc: "delay from a write whose deadline has already passed to interrupt entry. In a KVM guest such a write never reaches a host timer: " +
				"start_sw_tscdeadline() (arch/x86/kvm/lapic.c) finds tscdeadline <= guest_tsc and calls apic_timer_expired() at once, so the interrupt is injected " +
				"on the write's return (about 10 us on the suite's guest, against irq_latency's 18 us for a deadline in the future). Empty: the same as irq_latency"},
		{Name: "past_deadline_latency_spread", Type: sdk.TypeString, Default: "",
			Doc: "the spread of past_deadline_latency, as irq_latency_spread is irq_latency's (tickemu calibrate fits it from the past_deadline intervals). Empty: every such interrupt takes past_deadline_latency"},
		{Name: "irq_latency_spread", Type: sdk.TypeString, Default: "",
			Doc: "the spread of irq_latency: quantiles of each interrupt's deviation from it (\"p10=-5us p50=-1us p99=+60us\", framework/sdk/spread), " +
				"drawn per interrupt from the plugin's seeded stream; tickemu calibrate fits it from a trace's expiry lateness. Empty: every interrupt takes irq_latency"},
	}}
}

// Configure validates the attributes and derives the device.
func (p *Plugin) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	var d sdk.Diagnostics
	r := c.Reader()
	if s.Role == "broadcast" {
		d = d.Errorf("plugin", "the LAPIC timer is a per-CPU device and cannot be the broadcast device (tick_check_broadcast_device()); use hpet")
	}
	if s.CPUs < 1 || s.HZ < 1 {
		d = d.Errorf("", "machine needs cpus >= 1 and hz >= 1 (got %d, %d)", s.CPUs, s.HZ)
	}
	p.setup = s
	p.mode = modes[r.Enum("mode", modes)]
	p.deadline = p.mode == ModeDeadline
	p.arat = r.Bool("arat")
	p.deadlineCost = r.Duration("deadline_write_cost")
	p.regCost = r.Duration("oneshot_write_cost")
	p.eoiCost = r.Duration("eoi_cost")
	if q, err := spread.Parse(r.String("eoi_cost_spread")); err != nil {
		d = d.Errorf("eoi_cost_spread", "eoi_cost_spread: %v", err)
	} else if top := float64(p.eoiCost) + q.At(1); top > maxCostNS {
		d = d.Errorf("eoi_cost_spread", "eoi_cost_spread: eoi_cost plus the largest deviation is %s, more than %s, the most an EOI may cost", ktime.FormatDuration(int64(top)), maxCost)
	} else {
		p.eoiSpread = q
	}
	p.latency = r.Duration("irq_latency")
	if q, err := spread.Parse(r.String("irq_latency_spread")); err != nil {
		d = d.Errorf("irq_latency_spread", "irq_latency_spread: %v", err)
	} else {
		p.latencySpread = q
	}
	p.stream = "lapic/" + string(s.Role)
	p.rng = simrand.New(s.Seed, p.stream)
	p.pastLatency = -1
	if q, err := spread.Parse(r.String("past_deadline_latency_spread")); err != nil {
		d = d.Errorf("past_deadline_latency_spread", "past_deadline_latency_spread: %v", err)
	} else {
		p.pastSpread = q
	}
	if v := r.String("past_deadline_latency"); v != "" {
		ns, err := ktime.ParseDuration(v)
		switch {
		case err != nil:
			d = d.Errorf("past_deadline_latency", "past_deadline_latency %q: %v", v, err)
		case ns < 0:
			d = d.Errorf("past_deadline_latency", "past_deadline_latency must not be negative")
		default:
			p.pastLatency = ns
		}
	}
	feat := sdk.FeatOneshot | sdk.FeatPerCPU
	rating := 100
	if p.arat {
		rating = 150 // setup_APIC_timer(): "Make LAPIC timer preferable over percpu HPET"
	} else {
		feat |= sdk.FeatC3Stop
	}
	switch p.mode {
	case ModeDeadline:
		tscHz := r.Float("tsc_freq")
		tscKHz := uint64(tscHz / 1000)
		freq := tscKHz * (1000 / tscDivisor)
		if tscKHz == 0 || freq > math.MaxUint32 {
			d = d.Errorf("tsc_freq", "tsc_freq %g Hz out of range: tsc_khz*125 must be a non-zero u32", tscHz)
		}
		p.tsc = clockmath.ClockHz(uint64(math.Round(tscHz)))
		p.tscPerNs = 0
		if p.tsc.Num%p.tsc.Den == 0 {
			p.tscPerNs = p.tsc.Num / p.tsc.Den
		}
		p.spec = sdk.DeviceSpec{Name: "lapic-deadline", Features: feat, FreqHz: float64(freq),
			MinDeltaTicks: minDeltaTicks, MaxDeltaTicks: ^uint64(0), Rating: rating, Channels: s.CPUs}
	case ModeOneshot:
		busHz := r.Float("bus_freq")
		div := r.Float("divide")
		if !validDivide(div) {
			d = d.Errorf("divide", "divide %g is not a TDCR setting (1, 2, 4, 8, 16, 32, 64, 128)", div)
			div = apicDivisor
		}
		if s.HZ < 1 {
			break
		}
		period := uint64(busHz) / uint64(s.HZ) // lapic_timer_period
		if period < uint64(1_000_000/s.HZ) {
			d = d.Errorf("bus_freq", "APIC frequency too slow, disabling apic timer (calibrate_APIC_clock(): %d bus clocks per jiffy < %d)", period, 1_000_000/s.HZ)
		}
		p.perJiffy = period / uint64(div)
		p.apic = clockmath.Clock{Num: uint64(math.Round(busHz)), Den: uint64(div) * clockmath.NsecPerSec}
		mult := clockmath.DivSC(p.perJiffy, uint64(ktime.TickNsec(s.HZ)), 32)
		if mult == 0 {
			d = d.Errorf("bus_freq", "bus_freq %g Hz gives a zero mult", busHz)
		}
		p.spec = sdk.DeviceSpec{Name: "lapic", Features: feat | sdk.FeatPeriodic, FreqHz: busHz / div,
			MinDeltaTicks: minDeltaTicks, MaxDeltaTicks: maxCountTicks, Rating: rating, Channels: s.CPUs,
			Mult: mult, Shift: 32}
	default:
		d = d.Errorf("mode", "mode %q is not one of %q, %q", p.mode, ModeDeadline, ModeOneshot)
	}
	for _, a := range []string{"deadline_write_cost", "oneshot_write_cost", "eoi_cost", "irq_latency"} {
		if r.Duration(a) < 0 {
			d = d.Errorf(a, "%s must not be negative", a)
		}
	}
	if s.CPUs >= 1 {
		p.ch = make([]channel, s.CPUs)
	}
	return append(r.Diagnostics(), d...)
}

func validDivide(v float64) bool {
	for d := 1.0; d <= 128; d *= 2 {
		if v == d {
			return true
		}
	}
	return false
}

// Spec describes the configured device.
func (p *Plugin) Spec() sdk.DeviceSpec { return p.spec }

// SetNextEvent is lapic_next_deadline() or lapic_next_event() on CPU ch.
func (p *Plugin) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	c := &p.ch[ch]
	c.periodic = false
	var r sdk.ProgramResult
	if p.deadline {
		// tsc = rdtsc(); wrmsr(TSC_DEADLINE, tsc + delta*TSC_DIVISOR)
		r.Cost = p.deadlineCost
		deadline, overflow := mulAdd(ticks, tscDivisor, p.tscAt(now))
		r.FireAt = ktime.Max
		if !overflow {
			// The interrupt comes when the TSC reaches the deadline, or
			// as soon as the write lands if it already has.
			due := p.tscTime(deadline) // when the TSC reaches the deadline
			land := now.AddCost(r.Cost)
			if due <= land && p.pastLatency >= 0 {
				// A deadline already passed when the write lands: KVM's
				// start_sw_tscdeadline() expires the timer at once
				// (apic_timer_expired()), no host hrtimer between.
				r.FireAt = land.AddCost(p.pastSpread.Draw(p.pastLatency, p.rng))
			} else {
				r.FireAt = max(due, land).AddCost(p.latencySpread.Draw(p.latency, p.rng))
			}
		}
	} else {
		// apic_write(APIC_TMICT, delta): the 32-bit count starts at the
		// next edge of the divided clock once the write lands; zero stops
		// the timer.
		r.Cost = p.regCost
		count := ticks & tmictMask
		r.FireAt = ktime.Max
		if count != 0 {
			land := now.Add(r.Cost)
			r.FireAt = p.apic.TimeOf(p.apic.TicksAt(land) + count).Add(p.latencySpread.Draw(p.latency, p.rng))
		}
	}
	c.stats.writes++
	c.stats.cost += r.Cost
	return r
}

// tscAt is p.tsc.TicksAt(t): floor(t*tscPerNs) when the rate is whole (0
// for t <= 0, ^0 past 64 bits).
func (p *Plugin) tscAt(t ktime.Time) uint64 {
	if p.tscPerNs == 0 {
		return p.tsc.TicksAt(t)
	}
	if t <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(t), p.tscPerNs)
	if hi != 0 {
		return ^uint64(0)
	}
	return lo
}

// tscTime is p.tsc.TimeOf(tick): ceil(tick/tscPerNs) when the rate is
// whole, saturating at ktime.Max.
func (p *Plugin) tscTime(tick uint64) ktime.Time {
	if p.tscPerNs == 0 {
		return p.tsc.TimeOf(tick)
	}
	return tscCeil(tick, p.tscPerNs)
}

// tscCeil is ceil(tick/n) for n >= 1, saturating at ktime.Max.
func tscCeil(tick, n uint64) ktime.Time {
	q := tick / n
	if q*n != tick { // a remainder: round up
		q++
	}
	if q > uint64(ktime.Max) {
		return ktime.Max
	}
	return ktime.Time(q)
}

// mulAdd returns a*b+c and whether it overflowed 64 bits (a 128-bit
// product and a carry: no division on the per-write path).
func mulAdd(a, b, c uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	sum, carry := bits.Add64(lo, c, 0)
	if hi != 0 || carry != 0 {
		return 0, true
	}
	return sum, false
}

// SetState is lapic_timer_shutdown() (shutdown, detached, oneshot_stopped),
// lapic_timer_set_oneshot() or lapic_timer_set_periodic() on CPU ch.
func (p *Plugin) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
	c := &p.ch[ch]
	c.periodic = false
	var cost int64
	fire := ktime.Max
	switch st {
	case sdk.StateShutdown, sdk.StateDetached, sdk.StateOneshotStopped:
		// Read LVTT, write it masked, then zero the deadline MSR or TMICT.
		cost = 2 * p.regCost
		if p.mode == ModeDeadline {
			cost += p.deadlineCost
		} else {
			cost += p.regCost
		}
	case sdk.StateOneshot:
		// __setup_APIC_LVTT(): LVTT write (+ MFENCE in deadline mode), or
		// LVTT write and the TDCR read-modify-write.
		cost = p.regCost
		if p.mode == ModeOneshot {
			cost = 3 * p.regCost
		}
	case sdk.StatePeriodic:
		if p.mode != ModeOneshot {
			break // no CLOCK_EVT_FEAT_PERIODIC in deadline mode
		}
		// LVTT, TDCR read-modify-write, TMICT = lapic_timer_period/16.
		cost = 4 * p.regCost
		land := now.Add(cost)
		c.periodic = true
		c.startTick = p.apic.TicksAt(land)
		c.ticksFired = 1
		fire = p.apic.TimeOf(c.startTick + p.perJiffy).Add(p.latencySpread.Draw(p.latency, p.rng))
	}
	c.stats.states++
	c.stats.cost += cost
	return cost, fire
}

// Ack is the EOI of sysvec_apic_timer_interrupt(); a periodic timer reloads
// itself and fires again one count later.
func (p *Plugin) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	c := &p.ch[ch]
	c.stats.interrupts++
	cost := p.eoiSpread.Draw(p.eoiCost, p.rng)
	c.stats.cost += cost
	if !c.periodic {
		return cost, ktime.Max
	}
	c.ticksFired++
	return cost, p.apic.TimeOf(c.startTick + c.ticksFired*p.perJiffy).Add(p.latencySpread.Draw(p.latency, p.rng))
}

// Counters reports, per CPU: writes, etime (always 0: the LAPIC never refuses
// a deadline), cost_ns, interrupts and state_changes.
func (p *Plugin) Counters() []sdk.Counter {
	out := make([]sdk.Counter, 0, 5*len(p.ch))
	for i, c := range p.ch {
		out = append(out,
			sdk.Counter{Name: "writes", CPU: i, Value: c.stats.writes},
			sdk.Counter{Name: "etime", CPU: i, Value: 0},
			sdk.Counter{Name: "cost_ns", CPU: i, Value: c.stats.cost},
			sdk.Counter{Name: "interrupts", CPU: i, Value: c.stats.interrupts},
			sdk.Counter{Name: "state_changes", CPU: i, Value: c.stats.states},
		)
	}
	return out
}

// String describes the configured device (for logs).
func (p *Plugin) String() string {
	return fmt.Sprintf("%s %s (%g Hz, %d CPUs)", p.Info().Name, p.spec.Name, p.spec.FreqHz, len(p.ch))
}

// DeadlineModel declares the TSC-deadline mode's answers (sdk.DeadlineModel):
// the deadline is the TSC read at the write plus delta*TSC_DIVISOR, a
// deadline already passed when the write lands fires past_deadline_latency
// after it (when set), and the latencies and the EOI are drawn from their
// spreads on the plugin's stream (rng, which nothing else draws from). The
// count-down mode (its count starts at an edge of the divided clock, and it
// can be periodic) has no such model.
func (p *Plugin) DeadlineModel() (sdk.DeadlineModel, bool) {
	if p.mode != ModeDeadline || p.tsc.Num == 0 {
		return sdk.DeadlineModel{}, false
	}
	return sdk.DeadlineModel{
		CounterNum: p.tsc.Num, CounterDen: p.tsc.Den, Scale: tscDivisor,
		WriteCost: p.deadlineCost, AckCost: p.eoiCost, Latency: p.latency,
		StopCost: 2*p.regCost + p.deadlineCost, OneshotCost: p.regCost,
		PastDeadline: p.pastLatency >= 0, PastLatency: max(p.pastLatency, 0),
		LatencySpread: p.latencySpread, PastLatencySpread: p.pastSpread, AckCostSpread: p.eoiSpread,
		Seed: p.setup.Seed, Stream: p.stream,
	}, true
}

var _ sdk.DeadlineDevice = (*Plugin)(nil)
