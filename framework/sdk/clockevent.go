package sdk

import (
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/spread"
)

// DeviceFeatures mirror CLOCK_EVT_FEAT_* (include/linux/clockchips.h).
type DeviceFeatures uint32

// Device features.
const (
	FeatPeriodic DeviceFeatures = 1 << iota // CLOCK_EVT_FEAT_PERIODIC
	FeatOneshot                             // CLOCK_EVT_FEAT_ONESHOT
	FeatC3Stop                              // CLOCK_EVT_FEAT_C3STOP: stops in deep idle
	FeatPerCPU                              // one channel per CPU (a local timer)
)

// DeviceState mirrors enum clock_event_state.
type DeviceState int

// Device states.
const (
	StateDetached DeviceState = iota
	StateShutdown
	StatePeriodic
	StateOneshot
	StateOneshotStopped
)

// String returns the kernel's name of the state.
func (s DeviceState) String() string {
	return [...]string{"detached", "shutdown", "periodic", "oneshot", "oneshot_stopped"}[s]
}

// DeviceSpec describes a configured clockevent device: what clockevents_config()
// needs to compute mult/shift and the delta limits.
type DeviceSpec struct {
	Name     string // e.g. "lapic-deadline", "hpet", "arch_sys_timer"
	Features DeviceFeatures
	FreqHz   float64 // rate of the ticks set_next_event() counts
	// MinDeltaTicks and MaxDeltaTicks are the limits passed to
	// clockevents_config_and_register().
	MinDeltaTicks, MaxDeltaTicks uint64
	Rating                       int
	// Channels: 1 for a global device, CPUs for a per-CPU one (or the number
	// of HPET comparators).
	Channels int
	// Mult and Shift are set (Mult != 0) only by drivers that compute their
	// ns->ticks factors themselves instead of letting clockevents_config() do
	// it, e.g. lapic_init_clockevent() (div_sc(), shift 32); the core then
	// derives the delta limits with clockevent_delta2ns().
	Mult, Shift uint32
}

// ProgramResult is the result of SetNextEvent.
type ProgramResult struct {
	// ETIME: set_next_event() returned -ETIME (the event is already in the past,
	// e.g. the HPET counter passed the comparator during the write). FireAt is
	// then meaningless.
	ETIME  bool
	FireAt ktime.Time // when the interrupt will be raised
	Cost   int64      // ns the write took on the programming CPU
}

// ClockEventDevice models a clock_event_device and its driver. A channel is a CPU
// for per-CPU devices, or a comparator.
type ClockEventDevice interface {
	Plugin
	// Spec describes the device; valid after Configure.
	Spec() DeviceSpec
	// SetNextEvent is ->set_next_event(delta ticks) on channel ch at now.
	SetNextEvent(ch int, now ktime.Time, ticks uint64) ProgramResult
	// SetState is ->set_state_*(); for StatePeriodic, period is the period in
	// ns. It returns the cost and when the device will next raise its
	// interrupt after the transition: the first periodic tick, an event left
	// armed by a driver without that state's callback, or ktime.Max.
	SetState(ch int, now ktime.Time, st DeviceState, period int64) (cost int64, firstFire ktime.Time)
	// Ack is the driver's interrupt handler prologue when the device fires at
	// now (EOI, status read); in periodic mode it also returns the next fire
	// time (ktime.Max otherwise).
	Ack(ch int, now ktime.Time) (cost int64, nextFire ktime.Time)
}

// DeadlineModel declares, in closed form, how a oneshot comparator device
// answers: a free-running counter compared against a deadline written as
// counter + ticks*Scale (IA32_TSC_DEADLINE, the Arm CNTV_CVAL), no -ETIME, no
// periodic mode, costs and latencies that are constants or drawn from
// declared spreads. A host that knows the model computes the answers to
// SetNextEvent, Ack and the oneshot state changes itself, so it need not
// wait for an out-of-process device; the calls are still made, in order,
// later (the plugin's counters stay exact), and their answers are checked
// against the model: a difference is the plugin's fault.
//
// The answers the model gives (framework/sdk/model evaluates them):
//
//	SetNextEvent(ch, now, ticks): Cost = WriteCost; the counter is read at
//	    now+ReadOffset (value c = floor(t*CounterNum/CounterDen)); the deadline
//	    d = c + ticks*Scale, ktime.Max when d overflows 64 bits (nothing
//	    drawn); the write lands at land = now+WriteCost; with PastDeadline
//	    and TimeOf(d) <= land, FireAt = land + draw(PastLatency,
//	    PastLatencySpread); otherwise FireAt = max(TimeOf(d), land) +
//	    draw(Latency, LatencySpread).
//	Ack(ch, now): draw(AckCost, AckCostSpread), ktime.Max.
//	SetState(ch, now, st, _): StopCost for shutdown, detached and
//	    oneshot_stopped, OneshotCost for oneshot, ktime.Max. (Periodic is
//	    not modelled: the host asks.)
//
// draw(c, q) is q.Draw(c, r) (framework/sdk/spread): c itself when q is the
// zero Quantiles (no spread), else c plus a deviation drawn from the
// device's random stream r = simrand.New(Seed, Stream). The device draws
// from r only in the answers above, one number per draw, so the host that
// makes the same calls in the same order draws the same numbers: r is fresh
// at Configure, and a device with a spread keeps every other random number
// it needs on another stream.
type DeadlineModel struct {
	// CounterNum/CounterDen is the counter's rate in ticks per ns (> 0).
	CounterNum, CounterDen uint64
	// Scale is the counter ticks per programmed tick (TSC_DIVISOR = 8 for the
	// LAPIC deadline device, 1 for the Arm timer's CVAL).
	Scale uint64
	// ReadOffset is how far into the write the counter is read, in ns.
	ReadOffset int64
	// WriteCost, AckCost, StopCost and OneshotCost are the costs in ns.
	WriteCost, AckCost, StopCost, OneshotCost int64
	// Latency is the delay from the deadline to interrupt entry, in ns.
	Latency int64
	// PastDeadline: a write whose deadline the counter has reached by the
	// time the write lands fires PastLatency ns after it lands, not
	// Latency (a KVM guest's TSC-deadline write: start_sw_tscdeadline()
	// expires such a timer at once, with no host timer between).
	PastDeadline bool
	PastLatency  int64
	// LatencySpread, PastLatencySpread and AckCostSpread spread Latency,
	// PastLatency and AckCost (the zero value: constant).
	LatencySpread, PastLatencySpread, AckCostSpread spread.Quantiles
	// Seed and Stream name the random stream the spreads are drawn from
	// (simrand.New(Seed, Stream)); unused without a spread.
	Seed   uint64
	Stream string
}

// DeadlineDevice is implemented by a ClockEventDevice that can declare a
// DeadlineModel for its configured mode; ok is false when it cannot (e.g. a
// count-down mode). It is asked after Configure.
type DeadlineDevice interface {
	DeadlineModel() (m DeadlineModel, ok bool)
}
