package clockevents

import (
	"fmt"
	"math"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// MinDeltaPolicy selects the build variant of
// kernel/time/clockevents.c:clockevents_program_min_delta().
type MinDeltaPolicy int

// Min-delta retry policies.
const (
	// MinAdjust is CONFIG_GENERIC_CLOCKEVENTS_MIN_ADJUST (selected by x86):
	// retry at min_delta_ns; after 3 failures raise min_delta_ns for good
	// (to 5 us if lower, else by 50%, capped at one jiffy) and try 3 more
	// times; give up once the cap itself failed 3 times.
	MinAdjust MinDeltaPolicy = iota
	// RetryTenfold is the generic variant since "clockevents: Retry
	// programming min delta up to 10 times" (v4.15): tries at k*min_delta_ns,
	// k = 1..10, min_delta_ns unchanged.
	RetryTenfold
	// RetryOnce is the generic variant before v4.15: a single try at
	// min_delta_ns.
	RetryOnce
)

// String names the policy as the HCL value would.
func (p MinDeltaPolicy) String() string {
	switch p {
	case MinAdjust:
		return "min_adjust"
	case RetryTenfold:
		return "retry10"
	case RetryOnce:
		return "once"
	}
	return fmt.Sprintf("MinDeltaPolicy(%d)", int(p))
}

// Options are the kernel build and version choices of the core.
type Options struct {
	// HZ is CONFIG_HZ; it sets MIN_DELTA_LIMIT (NSEC_PER_SEC / HZ).
	HZ int
	// MinDelta is the min-delta retry variant.
	MinDelta MinDeltaPolicy
	// StarvationGuard selects the clockevents_program_event() of 7.0
	// (d6e152d905bd "clockevents: Prevent timer interrupt starvation" with
	// 4096fd0e8eae "Add missing resets of the next_event_forced flag"): a
	// delta at or below min_delta_ns programs min_delta_ticks once and sets
	// next_event_forced; later such programmings leave the hardware alone
	// until the interrupt (Ack), a state change or a normal programming
	// clears the flag.
	StarvationGuard bool
}

// channel is one struct clock_event_device: a CPU's local timer or one HPET
// comparator. Each has its own state, next_event and min_delta_ns (the kernel
// raises min_delta_ns per device, so per CPU for per-CPU devices).
//
// Layout: what every programming and interrupt reads or bumps comes first
// and fills one 64-byte line; the rest pads the record to two lines, so that
// in a slice of them (one per CPU, unvisited for a whole sleep) an interrupt
// and its reprogramming touch one line of the channel, not three.
type channel struct {
	next       ktime.Time // dev->next_event
	fireAt     ktime.Time // when the hardware will raise its interrupt
	minDeltaNs uint64     // dev->min_delta_ns (may grow under MinAdjust)
	// The counters of the hot path (ChannelStats Programs, Writes, Cost,
	// Interrupt).
	programs, writes, cost, interrupts int64
	state                              uint8 // an sdk.DeviceState
	forced                             bool  // dev->next_event_forced (StarvationGuard)

	period int64 // ns, while periodic
	// The other ChannelStats counters.
	etime, failures, retries, raises, giveUps, skipped, states int64
}

func (c *channel) st() sdk.DeviceState { return sdk.DeviceState(c.state) }

// stats assembles the channel's counters.
func (c *channel) stats() ChannelStats {
	return ChannelStats{Programs: c.programs, Writes: c.writes, Cost: c.cost, ETIME: c.etime, Failures: c.failures,
		Retries: c.retries, Raises: c.raises, GiveUps: c.giveUps, Skipped: c.skipped, States: c.states, Interrupt: c.interrupts}
}

// ChannelStats are the per-channel counters.
type ChannelStats struct {
	Programs  int64 // Program/ProgramEvent calls that reached the device path
	Writes    int64 // ->set_next_event() calls
	Cost      int64 // ns spent in device writes and state changes
	ETIME     int64 // -ETIME answers from ->set_next_event()
	Failures  int64 // programmings that returned -ETIME to the caller
	Retries   int64 // dev->retries: attempts made by the min-delta loop
	Raises    int64 // min_delta_ns increases (MinAdjust)
	GiveUps   int64 // "CE: Reprogramming failure. Giving up"
	Skipped   int64 // programmings absorbed by next_event_forced
	States    int64 // state transitions performed
	Interrupt int64 // Ack calls
}

// Device models the clockevents core's view of one configured
// sdk.ClockEventDevice: a struct clock_event_device per channel sharing one
// driver, one mult/shift and one set of tick limits.
type Device struct {
	dev sdk.ClockEventDevice
	// raw is dev, or the plugin behind dev's contract checker (chk): the
	// hot SetNextEvent and Ack go to raw, their answers are tested in line
	// against maxCost and handed to chk only when they fail (the checker's
	// pass-through copied every answer once more).
	raw     sdk.ClockEventDevice
	chk     checkedDevice
	maxCost int64

	spec  sdk.DeviceSpec
	opts  Options
	scale clockmath.Scale
	// minDeltaLimitNs is MIN_DELTA_LIMIT (NSEC_PER_SEC / HZ).
	minDeltaLimitNs uint64
	ch              []channel
	// full is Reprogram's outcome when it was not the common case.
	full ProgramResult
}

// checkedDevice is a device behind framework/contract's checker.
type checkedDevice interface {
	Unchecked() sdk.ClockEventDevice
	MaxCost() int64
	CheckSetNextEvent(ch int, now ktime.Time, ticks uint64, r sdk.ProgramResult)
	CheckAck(now ktime.Time, cost int64, next ktime.Time)
}

// New wraps a configured device plugin. It computes mult/shift and the delta
// limits as kernel/time/clockevents.c:clockevents_config_and_register() does
// (or, when the spec carries the driver's own Mult/Shift, as
// clockevent_delta2ns() on them) and puts every channel in the DETACHED state
// with next_event KTIME_MAX, as clockevents_register_device() does.
func New(dev sdk.ClockEventDevice, opts Options) (*Device, error) {
	spec := dev.Spec()
	if opts.HZ <= 0 {
		return nil, ErrBadHZ
	}
	if spec.Features&sdk.FeatOneshot == 0 {
		return nil, fmt.Errorf("%w: %q", ErrNoOneshot, spec.Name)
	}
	if spec.Channels < 1 || spec.FreqHz <= 0 || spec.MinDeltaTicks == 0 || spec.MaxDeltaTicks < spec.MinDeltaTicks {
		return nil, fmt.Errorf("%w: %+v", ErrBadSpec, spec)
	}
	var scale clockmath.Scale
	if spec.Mult != 0 {
		scale = clockmath.ScaleFromDriver(spec.Mult, spec.Shift, spec.MinDeltaTicks, spec.MaxDeltaTicks)
	} else {
		if spec.FreqHz > math.MaxUint32 {
			return nil, fmt.Errorf("%w: %q frequency %g Hz does not fit the kernel's u32", ErrBadSpec, spec.Name, spec.FreqHz)
		}
		scale = clockmath.Config(spec.Features, uint32(spec.FreqHz), spec.MinDeltaTicks, spec.MaxDeltaTicks)
	}
	d := &Device{
		dev:             dev,
		spec:            spec,
		opts:            opts,
		scale:           scale,
		minDeltaLimitNs: uint64(clockmath.NsecPerSec / opts.HZ),
		ch:              make([]channel, spec.Channels),
	}
	d.raw = dev
	if c, ok := dev.(checkedDevice); ok {
		d.raw, d.chk, d.maxCost = c.Unchecked(), c, c.MaxCost()
	}
	for i := range d.ch {
		d.ch[i] = channel{state: uint8(sdk.StateDetached), next: ktime.Max, fireAt: ktime.Max, minDeltaNs: scale.MinDeltaNs}
	}
	return d, nil
}

// Spec is the device plugin's spec.
func (d *Device) Spec() sdk.DeviceSpec { return d.spec }

// Name is the device name ("lapic-deadline", "hpet", ...).
func (d *Device) Name() string { return d.spec.Name }

// Scale is the device's mult/shift and its initial delta limits.
func (d *Device) Scale() clockmath.Scale { return d.scale }

// Channels is the number of channels.
func (d *Device) Channels() int { return len(d.ch) }

// Has reports whether the device has all of the features f.
func (d *Device) Has(f sdk.DeviceFeatures) bool { return d.spec.Features&f == f }

// State is the channel's clock_event_state.
func (d *Device) State(ch int) sdk.DeviceState { return d.ch[ch].st() }

// NextEvent is the channel's dev->next_event (ktime.Max for none).
func (d *Device) NextEvent(ch int) ktime.Time { return d.ch[ch].next }

// FireAt is when the channel's hardware will next raise its interrupt,
// ktime.Max if it will not. The engine keeps one pending event per channel at
// this time.
func (d *Device) FireAt(ch int) ktime.Time { return d.ch[ch].fireAt }

// MinDeltaNs is the channel's current dev->min_delta_ns.
func (d *Device) MinDeltaNs(ch int) uint64 { return d.ch[ch].minDeltaNs }

// MaxDeltaNs is dev->max_delta_ns.
func (d *Device) MaxDeltaNs() uint64 { return d.scale.MaxDeltaNs }

// Forced reports dev->next_event_forced (StarvationGuard only).
func (d *Device) Forced(ch int) bool { return d.ch[ch].forced }

// Stats returns the channel's counters.
func (d *Device) Stats(ch int) ChannelStats { return d.ch[ch].stats() }

// StateResult is the outcome of a state change.
type StateResult struct {
	// OK is false when the transition was refused (the kernel's -ENOSYS for
	// a mode the device lacks, -EINVAL for ONESHOT_STOPPED from a state
	// other than ONESHOT); the state is then unchanged.
	OK   bool
	Cost int64
	// FireAt is when the channel will raise its interrupt afterwards
	// (first periodic tick, ktime.Max when stopped).
	FireAt ktime.Time
}

// SetState models kernel/time/clockevents.c:clockevents_switch_state() with
// __clockevents_switch_state() (v6.12): nothing happens when the channel is
// already in st; PERIODIC needs FeatPeriodic and ONESHOT FeatOneshot;
// ONESHOT_STOPPED is only entered from ONESHOT; DETACHED shuts the hardware
// down. The driver's callback runs and the state is committed. period is the
// periodic tick length in ns (used for StatePeriodic only).
//
// With StarvationGuard every transition clears next_event_forced
// (4096fd0e8eae).
func (d *Device) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) StateResult {
	c := &d.ch[ch]
	if c.st() == st {
		return StateResult{OK: true, FireAt: c.fireAt}
	}
	switch st {
	case sdk.StatePeriodic:
		if !d.Has(sdk.FeatPeriodic) {
			return StateResult{FireAt: c.fireAt}
		}
	case sdk.StateOneshot:
		if !d.Has(sdk.FeatOneshot) {
			return StateResult{FireAt: c.fireAt}
		}
	case sdk.StateOneshotStopped:
		if c.st() != sdk.StateOneshot {
			return StateResult{FireAt: c.fireAt}
		}
	case sdk.StateDetached, sdk.StateShutdown:
	default:
		return StateResult{FireAt: c.fireAt}
	}
	if d.opts.StarvationGuard {
		c.forced = false
	}
	cost, fire := d.dev.SetState(ch, now, st, period)
	c.state = uint8(st)
	c.fireAt = fire
	if st == sdk.StatePeriodic {
		c.period = period
	} else {
		c.period = 0
	}
	c.states++
	c.cost += cost
	return StateResult{OK: true, Cost: cost, FireAt: fire}
}

// Shutdown models kernel/time/clockevents.c:clockevents_shutdown(): switch to
// SHUTDOWN and forget next_event (and next_event_forced).
func (d *Device) Shutdown(ch int, now ktime.Time) StateResult {
	r := d.SetState(ch, now, sdk.StateShutdown, 0)
	c := &d.ch[ch]
	c.next = ktime.Max
	c.forced = false
	return r
}

// AckResult is the outcome of Ack.
type AckResult struct {
	Cost int64
	// Event is the channel's next_event when it fired: the expiry the
	// handler was programmed for (ktime.Max for a periodic tick).
	Event ktime.Time
	// FireAt is the next time the channel raises its interrupt (the next
	// periodic tick), ktime.Max in oneshot mode.
	FireAt ktime.Time
}

// Ack is the common prologue of the handlers the tick layer installs, run when
// the channel raises its interrupt at now: the driver's acknowledge (EOI,
// status read; ->Ack), then, in oneshot mode, next_event = KTIME_MAX as
// hrtimer_interrupt(), tick_nohz_lowres_handler() and
// tick_handle_oneshot_broadcast() do first, and with StarvationGuard
// next_event_forced = 0 (d6e152d905bd clears it in those handlers and in
// tick_handle_periodic()).
//
// Divergence: tick_handle_periodic() on a oneshot-only device computes its
// next tick from dev->next_event; callers emulating a periodic tick that way
// use Event, because Ack has already cleared next_event.
func (d *Device) Ack(ch int, now ktime.Time) AckResult {
	c := &d.ch[ch]
	cost, next := d.raw.Ack(ch, now)
	if d.chk != nil && (uint64(cost) > uint64(d.maxCost) || next <= now) {
		d.chk.CheckAck(now, cost, next)
		return AckResult{} // (not reached: CheckAck names the violation)
	}
	r := AckResult{Cost: cost, Event: c.next, FireAt: next}
	if c.st() != sdk.StatePeriodic {
		c.next = ktime.Max
		r.FireAt = ktime.Max
	}
	c.forced = false
	c.fireAt = r.FireAt
	c.interrupts++
	c.cost += cost
	return r
}

// Counters reports the core's per-channel counters in a stable order (channel,
// then a fixed name order): per CPU for a per-CPU device, machine-wide (CPU -1)
// otherwise, where channels are summed.
func (d *Device) Counters() []sdk.Counter {
	emit := func(out []sdk.Counter, cpu int, s ChannelStats) []sdk.Counter {
		return append(out,
			sdk.Counter{Name: "programs", CPU: cpu, Value: s.Programs},
			sdk.Counter{Name: "writes", CPU: cpu, Value: s.Writes},
			sdk.Counter{Name: "cost_ns", CPU: cpu, Value: s.Cost},
			sdk.Counter{Name: "etime", CPU: cpu, Value: s.ETIME},
			sdk.Counter{Name: "failures", CPU: cpu, Value: s.Failures},
			sdk.Counter{Name: "retries", CPU: cpu, Value: s.Retries},
			sdk.Counter{Name: "min_delta_raises", CPU: cpu, Value: s.Raises},
			sdk.Counter{Name: "give_ups", CPU: cpu, Value: s.GiveUps},
			sdk.Counter{Name: "forced_skips", CPU: cpu, Value: s.Skipped},
			sdk.Counter{Name: "state_changes", CPU: cpu, Value: s.States},
			sdk.Counter{Name: "interrupts", CPU: cpu, Value: s.Interrupt},
		)
	}
	if d.Has(sdk.FeatPerCPU) {
		out := make([]sdk.Counter, 0, 11*len(d.ch))
		for i := range d.ch {
			out = emit(out, i, d.ch[i].stats())
		}
		return out
	}
	var sum ChannelStats
	for i := range d.ch {
		s := d.ch[i].stats()
		sum.Programs += s.Programs
		sum.Writes += s.Writes
		sum.Cost += s.Cost
		sum.ETIME += s.ETIME
		sum.Failures += s.Failures
		sum.Retries += s.Retries
		sum.Raises += s.Raises
		sum.GiveUps += s.GiveUps
		sum.Skipped += s.Skipped
		sum.States += s.States
		sum.Interrupt += s.Interrupt
	}
	return emit(nil, -1, sum)
}
