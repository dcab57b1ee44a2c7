// Package fixed is an example third-party clock event device plugin: every
// programming costs the same simulated time and the interrupt arrives a fixed
// latency after the deadline. It models an ideal per-CPU TSC-deadline timer,
// arch/x86/kernel/apic/apic.c:lapic_next_deadline() as of v6.12: the driver
// reads the counter on entry and writes counter + delta, so the deadline is
// relative to the moment of the call and the write can never be late
// (set_next_event() never returns -ETIME).
package fixed

import (
	"fmt"
	"math"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Factory makes the plugin; cmd/tickemu-plugin-fixed serves it.
var Factory = sdk.Factory{Kind: sdk.KindClockEvent, Name: "fixed", New: func() sdk.Plugin { return New() }}

// Factories lists the module's plugins: `tickemu build --with
// github.com/tickemu/tickemu/examples/fixed` links them in process.
func Factories() []sdk.Factory { return []sdk.Factory{Factory} }

// Version is the plugin's own version.
const Version = "0.1.0"

// channel is the state of one comparator.
type channel struct {
	state  sdk.DeviceState
	period int64      // ns, in periodic mode
	next   ktime.Time // next periodic interrupt, ktime.Max when none
}

// Device is the plugin value: one device with a channel per CPU (or a single
// global channel).
type Device struct {
	log zerolog.Logger

	freq      float64 // Hz
	writeCost int64   // ns per register write
	latency   int64   // ns from deadline to interrupt
	perCPU    bool
	rating    int

	ch []channel

	writes, acks, stateChanges int64
}

var (
	_ sdk.ClockEventDevice = (*Device)(nil)
	_ sdk.LoggerSetter     = (*Device)(nil)
)

// New returns an unconfigured device.
func New() *Device { return &Device{log: zerolog.Nop()} }

// SetLogger implements sdk.LoggerSetter.
func (d *Device) SetLogger(l zerolog.Logger) { d.log = l }

// Info implements sdk.Plugin.
func (d *Device) Info() sdk.Info {
	return sdk.Info{Kind: sdk.KindClockEvent, Name: "fixed", Version: Version,
		Description: "ideal oneshot device: constant programming cost and interrupt latency"}
}

// Schema implements sdk.Plugin.
func (d *Device) Schema() sdk.Schema {
	return sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "freq", Type: sdk.TypeFrequency, Default: "1GHz", Doc: "rate of the counter the deadline is written in"},
		{Name: "write_cost", Type: sdk.TypeDuration, Default: "100ns", Doc: "CPU time of one register write (the WRMSR)"},
		{Name: "latency", Type: sdk.TypeDuration, Default: "0ns", Doc: "from the deadline to the interrupt being raised"},
		{Name: "per_cpu", Type: sdk.TypeBool, Default: "true", Doc: "one channel per CPU (a local timer); false: one global channel",
			Unversioned: "a property of the device, the same on every kernel release"},
		{Name: "rating", Type: sdk.TypeNumber, Default: "100", Doc: "clockevents rating"},
	}}
}

// Configure implements sdk.Plugin.
func (d *Device) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	// The reader reports an attribute that does not decode (the host never
	// sends one, but a test or another host might) instead of reading 0.
	r := c.Reader()
	d.freq = r.Float("freq")
	d.writeCost = r.Duration("write_cost")
	d.latency = r.Duration("latency")
	d.perCPU = r.Bool("per_cpu")
	d.rating = int(r.Int("rating"))
	diags := r.Diagnostics()
	if !(d.freq > 0) || math.IsInf(d.freq, 0) {
		diags = diags.Errorf("freq", "freq must be a positive frequency, not %g Hz", d.freq)
	}
	if d.writeCost < 0 {
		diags = diags.Errorf("write_cost", "write_cost must not be negative")
	}
	if d.latency < 0 {
		diags = diags.Errorf("latency", "latency must not be negative")
	}
	if s.CPUs < 1 {
		diags = diags.Errorf("", "the machine needs at least one CPU, has %d", s.CPUs)
	}
	if diags.HasErrors() {
		return diags
	}
	n := 1
	if d.perCPU {
		n = s.CPUs
	}
	d.ch = make([]channel, n)
	for i := range d.ch {
		d.ch[i] = channel{state: sdk.StateDetached, next: ktime.Max}
	}
	d.log.Debug().Float64("freq_hz", d.freq).Int64("write_cost_ns", d.writeCost).Int64("latency_ns", d.latency).
		Int("channels", n).Msg("configured")
	return nil
}

// Spec implements sdk.ClockEventDevice.
func (d *Device) Spec() sdk.DeviceSpec {
	f := sdk.FeatOneshot | sdk.FeatPeriodic
	if d.perCPU {
		f |= sdk.FeatPerCPU
	}
	return sdk.DeviceSpec{
		Name: "fixed", Features: f, FreqHz: d.freq,
		// clockevents_config_and_register(&lapic_clockevent, tsc_khz*...,
		// 0xF, ~0UL) for the TSC-deadline LAPIC: a small floor, no ceiling.
		MinDeltaTicks: 0xF, MaxDeltaTicks: math.MaxUint64,
		Rating: d.rating, Channels: len(d.ch),
	}
}

// ticksToNs converts counter ticks to nanoseconds, rounding up: the
// comparator matches once the counter has reached the deadline.
func (d *Device) ticksToNs(ticks uint64) int64 {
	ns := math.Ceil(float64(ticks) * 1e9 / d.freq)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(ns)
}

// SetNextEvent implements sdk.ClockEventDevice: the counter is read at now
// and the comparator set ticks later (lapic_next_deadline()).
func (d *Device) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	c := d.channel(ch)
	c.next = ktime.Max
	d.writes++
	return sdk.ProgramResult{FireAt: now.Add(d.ticksToNs(ticks)).Add(d.latency), Cost: d.writeCost}
}

// SetState implements sdk.ClockEventDevice. Entering periodic mode arms the
// first tick one period from now; any other state disarms the channel.
func (d *Device) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
	c := d.channel(ch)
	c.state, c.period, c.next = st, 0, ktime.Max
	if st == sdk.StatePeriodic && period > 0 {
		c.period = period
		c.next = now.Add(period)
	}
	d.stateChanges++
	return d.writeCost, d.fire(c.next)
}

// Ack implements sdk.ClockEventDevice: the interrupt is acknowledged with one
// register write; in periodic mode the next tick is one period after the
// previous deadline, so periodic ticks do not drift with handler latency.
func (d *Device) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	c := d.channel(ch)
	d.acks++
	if c.state != sdk.StatePeriodic || c.period == 0 {
		return d.writeCost, ktime.Max
	}
	for c.next <= now {
		c.next = c.next.Add(c.period)
	}
	return d.writeCost, d.fire(c.next)
}

// fire is when the interrupt for deadline t is raised.
func (d *Device) fire(t ktime.Time) ktime.Time {
	if t == ktime.Max {
		return ktime.Max
	}
	return t.Add(d.latency)
}

// channel returns channel ch.
//
// Preconditions: Configure succeeded and 0 <= ch < len(d.ch); anything else
// is a host bug, reported with the state that broke.
func (d *Device) channel(ch int) *channel {
	if ch < 0 || ch >= len(d.ch) {
		panic(&channelError{ch: ch, n: len(d.ch)})
	}
	return &d.ch[ch]
}

type channelError struct{ ch, n int }

func (e *channelError) Error() string {
	return fmt.Sprintf("fixed: channel %d out of range [0, %d) (configured: %v)", e.ch, e.n, e.n > 0)
}

// Counters implements sdk.Plugin.
func (d *Device) Counters() []sdk.Counter {
	return []sdk.Counter{
		{Name: "writes", CPU: -1, Value: d.writes},
		{Name: "acks", CPU: -1, Value: d.acks},
		{Name: "state_changes", CPU: -1, Value: d.stateChanges},
	}
}
