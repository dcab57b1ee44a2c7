package archtimer

import (
	"math"
	"math/bits"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Version is the plugin's version.
const Version = "1.0.0"

// Driver constants (drivers/clocksource/arm_arch_timer.c).
const (
	minDeltaTicks   = 0xf
	tvalMaxTicks    = 0x7fffffff           // CLOCKSOURCE_MASK(31) / old 0x7fffffff
	minRolloverSecs = 40 * 365 * 24 * 3600 // MIN_ROLLOVER_SECS
)

// Programming modes.
const (
	ModeCVAL = "cval"
	ModeTVAL = "tval"
)

// programmings are the programming attribute's values.
var programmings = []string{ModeCVAL, ModeTVAL}

// Plugin is the architected timer of every CPU.
type Plugin struct {
	mode    string
	spec    sdk.DeviceSpec
	counter clockmath.Clock
	reg     int64 // one system register access
	ack     int64 // GIC acknowledge/EOI
	latency int64
	ch      []stats
}

type stats struct {
	writes, cost, interrupts, states int64
}

// New returns an unconfigured arch timer plugin.
func New() sdk.Plugin { return &Plugin{} }

// Factory declares the plugin: its kind, the name `plugin = "archtimer"` selects,
// and its constructor; Info and plugins/builtin take them from here.
var Factory = sdk.Factory{Kind: sdk.KindClockEvent, Name: "archtimer", New: New}

var _ sdk.ClockEventDevice = (*Plugin)(nil)

// Info describes the plugin.
func (p *Plugin) Info() sdk.Info {
	return sdk.Info{Kind: Factory.Kind, Name: Factory.Name, Version: Version,
		Description: "Arm architected timer per CPU, CVAL or TVAL programming (drivers/clocksource/arm_arch_timer.c)"}
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
		{Name: "freq", Type: sdk.TypeFrequency, Default: "24MHz",
			Doc: "system counter frequency, CNTFRQ (19.2 MHz Qualcomm, 24 MHz Apple/Rockchip/Allwinner, 25 MHz Ampere, 1 GHz Armv8.6+)"},
		{Name: "programming", Type: sdk.TypeString, Default: ModeCVAL, OneOf: programmings,
			Doc: "cval: CVAL = counter + delta (5.16+, max delta = counter width); tval: TVAL = delta, the hardware adds the counter at the write (older kernels, max 0x7fffffff)",
			Eras: []sdk.Era{
				{Since: "3.10", Value: ModeTVAL},
				{Since: "5.16", Value: ModeCVAL, Commit: "a38b71b0833e", Title: "clocksource/drivers/arm_arch_timer: Move system register timer programming over to CVAL",
					Note: "with 8b82c4f883a7 (the MMIO timers) in the same series"},
			}},
		{Name: "c3stop", Type: sdk.TypeBool, Default: "false",
			Doc:         "the timer stops in deep idle (CLOCK_EVT_FEAT_C3STOP): the kernel sets it unless firmware marks the timer always-on",
			Unversioned: "a property of the platform: the firmware's always-on marking (device tree or ACPI GTDT), on every release"},
		{Name: "sysreg_cost", Type: sdk.TypeDuration, Default: "10ns", Max: maxCost,
			Doc: "cost of one timer system register access (CTL, CVAL/TVAL, counter read); a programming makes 4 (cval) or 3 (tval)"},
		{Name: "ack_cost", Type: sdk.TypeDuration, Default: "50ns", Max: maxCost,
			Doc: "cost of the GIC acknowledge and EOI of the timer PPI (the handler's CTL read and masking write are charged as sysreg accesses)"},
		{Name: "irq_latency", Type: sdk.TypeDuration, Default: "50ns", Max: maxCost,
			Doc: "delay from the timer condition to interrupt entry"},
	}}
}

// counterWidth models arch_counter_get_width(): enough bits for a 40-year
// roll-over at rate, clamped to 56..64.
func counterWidth(rate uint64) int {
	hi, lo := bits.Mul64(minRolloverSecs, rate)
	if hi != 0 {
		return 64
	}
	w := bits.Len64(lo - 1) // ilog2(min_cycles - 1) + 1
	return min(max(w, 56), 64)
}

// Configure validates the attributes and derives the device.
func (p *Plugin) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	var d sdk.Diagnostics
	r := c.Reader()
	if s.CPUs < 1 {
		return d.Errorf("", "machine needs cpus >= 1 (got %d)", s.CPUs)
	}
	if s.Role == "broadcast" {
		d = d.Errorf("plugin", "the arch timer is a per-CPU device and cannot be the broadcast device (tick_check_broadcast_device()); arm_arch_timer's memory-mapped timer is not modelled")
	}
	rate := r.Float("freq")
	if rate < 1e6 || rate > math.MaxUint32 || rate != math.Trunc(rate) {
		d = d.Errorf("freq", "freq %g Hz: arch_timer_rate is a whole u32 number of Hz of at least 1 MHz", rate)
		rate = 24e6
	}
	p.mode = programmings[r.Enum("programming", programmings)]
	var maxDelta uint64
	switch p.mode {
	case ModeCVAL:
		maxDelta = uint64(1)<<counterWidth(uint64(rate)) - 1
		if counterWidth(uint64(rate)) == 64 {
			maxDelta = math.MaxUint64
		}
	case ModeTVAL:
		maxDelta = tvalMaxTicks
	}
	p.reg = r.Duration("sysreg_cost")
	p.ack = r.Duration("ack_cost")
	p.latency = r.Duration("irq_latency")
	for _, a := range []string{"sysreg_cost", "ack_cost", "irq_latency"} {
		if r.Duration(a) < 0 {
			d = d.Errorf(a, "%s must not be negative", a)
		}
	}
	feat := sdk.FeatOneshot | sdk.FeatPerCPU
	if r.Bool("c3stop") {
		feat |= sdk.FeatC3Stop
	}
	p.counter = clockmath.ClockHz(uint64(rate))
	p.spec = sdk.DeviceSpec{Name: "arch_sys_timer", Features: feat, FreqHz: rate,
		MinDeltaTicks: minDeltaTicks, MaxDeltaTicks: maxDelta, Rating: 450, Channels: s.CPUs}
	p.ch = make([]stats, s.CPUs)
	return append(r.Diagnostics(), d...)
}

// Spec describes the configured device.
func (p *Plugin) Spec() sdk.DeviceSpec { return p.spec }

// SetNextEvent is set_next_event() (CVAL) or the older TVAL write on CPU ch.
func (p *Plugin) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	var r sdk.ProgramResult
	var cval uint64
	if p.mode == ModeTVAL {
		// Read CTL, write TVAL: the hardware latches CVAL = counter +
		// (s32)TVAL at the write; write CTL to enable.
		tvalAt := now.Add(2 * p.reg)
		cval = uint64(int64(p.counter.TicksAt(tvalAt)) + int64(int32(uint32(ticks))))
		r.Cost = 3 * p.reg
	} else {
		// Read CTL, read the counter, write CVAL = cnt + evt, write CTL.
		cnt := p.counter.TicksAt(now.Add(2 * p.reg))
		cval = cnt + ticks
		if cval < cnt {
			cval = math.MaxUint64 // beyond the counter's range: never
		}
		r.Cost = 4 * p.reg
	}
	enabled := now.Add(r.Cost)
	// The condition counter >= CVAL holds from TimeOf(cval); a CVAL already
	// reached fires as soon as CTL enables the timer.
	r.FireAt = max(p.counter.TimeOf(cval), enabled).Add(p.latency)
	if cval == math.MaxUint64 {
		r.FireAt = ktime.Max
	}
	p.ch[ch].writes++
	p.ch[ch].cost += r.Cost
	return r
}

// SetState is arch_timer_shutdown() for shutdown, detached and
// oneshot_stopped; the driver has no oneshot or periodic callback.
func (p *Plugin) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
	var cost int64
	switch st {
	case sdk.StateShutdown, sdk.StateDetached, sdk.StateOneshotStopped:
		cost = 2 * p.reg // read CTL, write CTL without ENABLE
	}
	p.ch[ch].states++
	p.ch[ch].cost += cost
	return cost, ktime.Max
}

// Ack is timer_handler(): read CTL, mask the interrupt, then the GIC EOI. The
// timer does not fire again until reprogrammed.
func (p *Plugin) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	cost := 2*p.reg + p.ack
	p.ch[ch].interrupts++
	p.ch[ch].cost += cost
	return cost, ktime.Max
}

// Counters reports, per CPU: writes, etime (always 0: the >= comparison never
// refuses), cost_ns, interrupts and state_changes.
func (p *Plugin) Counters() []sdk.Counter {
	out := make([]sdk.Counter, 0, 5*len(p.ch))
	for i, c := range p.ch {
		out = append(out,
			sdk.Counter{Name: "writes", CPU: i, Value: c.writes},
			sdk.Counter{Name: "etime", CPU: i, Value: 0},
			sdk.Counter{Name: "cost_ns", CPU: i, Value: c.cost},
			sdk.Counter{Name: "interrupts", CPU: i, Value: c.interrupts},
			sdk.Counter{Name: "state_changes", CPU: i, Value: c.states},
		)
	}
	return out
}

// DeadlineModel declares the CVAL programming's answers (sdk.DeadlineModel):
// CVAL = the counter read after the CTL read + delta. TVAL programming (a
// signed 32-bit delta) has no such model.
func (p *Plugin) DeadlineModel() (sdk.DeadlineModel, bool) {
	if p.mode != ModeCVAL || p.counter.Num == 0 {
		return sdk.DeadlineModel{}, false
	}
	return sdk.DeadlineModel{
		CounterNum: p.counter.Num, CounterDen: p.counter.Den, Scale: 1, ReadOffset: 2 * p.reg,
		WriteCost: 4 * p.reg, AckCost: 2*p.reg + p.ack, Latency: p.latency,
		StopCost: 2 * p.reg, OneshotCost: 0,
	}, true
}

var _ sdk.DeadlineDevice = (*Plugin)(nil)
