package contract

import (
	"time"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// --plugin-stats: every call the kernel makes into a plugin passes the
// checker Wrap returns, linked in or out of process, so Count puts a meter
// in front of it: per call, the number of calls, the transport round trips
// they cost and the wall time the host spent in them. The meter is another
// type in front of the checker, used only when asked for, so a run without
// it runs the checkers' code alone and pays nothing.
//
// Calls and round trips are deterministic: the kernel makes the same calls
// for the same configuration and seed, and the transport's batching is
// decided by counts and declared models, never by time. Wall times are not.

// TripCounter is implemented by the out-of-process clients of
// framework/sdk/shim: the round trips their session has made.
type TripCounter interface {
	SessionRoundTrips() uint64
}

// call numbers the calls a meter counts, in the order reports list them.
type call uint8

const (
	callInfo call = iota
	callSchema
	callConfigure
	callCounters
	callModTimer
	callDelTimer
	callRunTimers
	callNextTimerInterrupt
	callExpireRemote
	callStart
	callCancel
	callClockWasSet
	callRetriggerNextEvent
	callInterrupt
	callInterruptETIME
	callRunSoftirq
	callRunQueues
	callNextEvent
	callSpec
	callSetNextEvent
	callSetState
	callAck
	callEnable
	callSelect
	callReflect
	callHang
	callCatchup
	callRestart
	numCalls
)

// callNames are the calls' names: the sdk methods.
var callNames = [numCalls]string{
	"Info", "Schema", "Configure", "Counters",
	"ModTimer", "DelTimer", "RunTimers", "NextTimerInterrupt", "ExpireRemote",
	"Start", "Cancel", "ClockWasSet", "RetriggerNextEvent", "Interrupt", "InterruptETIME", "RunSoftirq", "RunQueues", "NextEvent",
	"Spec", "SetNextEvent", "SetState", "Ack",
	"Enable", "Select", "Reflect",
	"Hang", "Catchup", "Restart",
}

// CallStats is what a meter counted of one call.
type CallStats struct {
	// Call is the sdk method ("Interrupt", "Hang"). A split NextEvent
	// (sdk.NextEventStarter, out of process) is counted as NextEvent.
	Call string
	// Calls is the number of calls the kernel made.
	Calls uint64
	// RoundTrips is the number of transport round trips the calls made
	// (0 linked in). A call answered from a declared model, or held to
	// travel with a later one, makes none; the call it travels with makes
	// the round trip.
	RoundTrips uint64
	// Wall is the wall time the host spent in the calls: the plugin's
	// work, the transport's, and for a base plugin the policies it asked
	// meanwhile.
	Wall time.Duration
}

// Meter counts one plugin's calls (Count).
type Meter struct {
	trips TripCounter // nil linked in
	calls [numCalls]tally
}

type tally struct {
	n, trips uint64
	wall     time.Duration
}

// mark is where a call started: the time and the session's round trips.
type mark struct {
	t     time.Time
	trips uint64
}

func (m *Meter) begin() mark {
	k := mark{t: time.Now()}
	if m.trips != nil {
		k.trips = m.trips.SessionRoundTrips()
	}
	return k
}

// end counts a call of c that began at k. Deferred, so that a call that
// panics (a contract violation, a transport failure) is counted too.
func (m *Meter) end(c call, k mark) {
	t := &m.calls[c]
	t.wall += time.Since(k.t)
	t.n++
	if m.trips != nil {
		t.trips += m.trips.SessionRoundTrips() - k.trips
	}
}

// OutOfProcess reports whether the plugin runs in a process of its own
// (its calls cross a transport).
func (m *Meter) OutOfProcess() bool { return m.trips != nil }

// Calls returns the counts of the calls made at least once, in a fixed
// order (the plugin calls every kind has first, then the kind's).
func (m *Meter) Calls() []CallStats {
	var out []CallStats
	for c := range m.calls {
		if t := &m.calls[c]; t.n > 0 {
			out = append(out, CallStats{Call: callNames[c], Calls: t.n, RoundTrips: t.trips, Wall: t.wall})
		}
	}
	return out
}

// Count returns w, a plugin as Wrap returned it, behind a meter of its
// calls, and the meter; w itself and nil when it is no checker. The round
// trips are those of the plugin's session when it runs out of process
// (TripCounter).
func Count(w sdk.Plugin) (sdk.Plugin, *Meter) {
	m := &Meter{}
	m.trips, _ = Unwrap(w).(TripCounter)
	mp := metered{m: m}
	switch c := w.(type) {
	case *timerBase:
		mp.p = c
		return &meteredTimerBase{metered: mp, c: c}, m
	case *hrTimerBase:
		mp.p = c
		return &meteredHRTimerBase{metered: mp, c: c}, m
	case hrTimerBaseStarter:
		mp.p = c
		return &meteredHRTimerBaseStarter{meteredHRTimerBase: meteredHRTimerBase{metered: mp, c: c.hrTimerBase}, st: c.st}, m
	case *clockEvent:
		mp.p = c
		return &meteredClockEvent{metered: mp, c: c}, m
	case *governor:
		mp.p = c
		return &meteredGovernor{metered: mp, g: c}, m
	case *hangPolicy:
		mp.p = c
		return &meteredHangPolicy{metered: mp, h: c}, m
	case *catchupPolicy:
		mp.p = c
		return &meteredCatchupPolicy{metered: mp, c: c}, m
	case *restartPolicy:
		mp.p = c
		return &meteredRestartPolicy{metered: mp, r: c}, m
	}
	return w, nil
}

// metered meters the calls every kind shares.
type metered struct {
	m *Meter
	p sdk.Plugin // the checker
}

func (p *metered) unwrap() sdk.Plugin { return p.p }

// Info implements sdk.Plugin.
func (p *metered) Info() sdk.Info {
	defer p.m.end(callInfo, p.m.begin())
	return p.p.Info()
}

// Schema implements sdk.Plugin.
func (p *metered) Schema() sdk.Schema {
	defer p.m.end(callSchema, p.m.begin())
	return p.p.Schema()
}

// Configure implements sdk.Plugin.
func (p *metered) Configure(s sdk.Setup, cfg sdk.Config) sdk.Diagnostics {
	defer p.m.end(callConfigure, p.m.begin())
	return p.p.Configure(s, cfg)
}

// Counters implements sdk.Plugin.
func (p *metered) Counters() []sdk.Counter {
	defer p.m.end(callCounters, p.m.begin())
	return p.p.Counters()
}

// meteredTimerBase meters a checked sdk.TimerBase. Like the checker, it
// implements sdk.InPlaceNextTimer, sdk.RepeatFreeNextTimer and
// sdk.RemoteTimerBase whatever the plugin does.
type meteredTimerBase struct {
	metered
	c *timerBase
}

// ModTimer implements sdk.TimerBase.
func (p *meteredTimerBase) ModTimer(cpu int, jiffies uint64, t sdk.WheelTimer) sdk.WheelOpResult {
	defer p.m.end(callModTimer, p.m.begin())
	return p.c.ModTimer(cpu, jiffies, t)
}

// DelTimer implements sdk.TimerBase.
func (p *meteredTimerBase) DelTimer(cpu int, jiffies uint64, id sdk.TimerID) sdk.WheelOpResult {
	defer p.m.end(callDelTimer, p.m.begin())
	return p.c.DelTimer(cpu, jiffies, id)
}

// RunTimers implements sdk.TimerBase.
func (p *meteredTimerBase) RunTimers(cpu int, jiffies uint64) sdk.RunTimersResult {
	defer p.m.end(callRunTimers, p.m.begin())
	return p.c.RunTimers(cpu, jiffies)
}

// NextTimerInterrupt implements sdk.TimerBase.
func (p *meteredTimerBase) NextTimerInterrupt(cpu int, jiffies uint64) sdk.NextTimerResult {
	defer p.m.end(callNextTimerInterrupt, p.m.begin())
	return p.c.NextTimerInterrupt(cpu, jiffies)
}

// NextTimerInterruptInto implements sdk.InPlaceNextTimer: a
// NextTimerInterrupt.
func (p *meteredTimerBase) NextTimerInterruptInto(cpu int, jiffies uint64, r *sdk.NextTimerResult) {
	defer p.m.end(callNextTimerInterrupt, p.m.begin())
	p.c.NextTimerInterruptInto(cpu, jiffies, r)
}

// NextTimerRepeatFree implements sdk.RepeatFreeNextTimer. It is asked once,
// as the kernel is built, and is no call the plugin answers out of process:
// not counted.
func (p *meteredTimerBase) NextTimerRepeatFree() bool { return p.c.NextTimerRepeatFree() }

// ExpireRemote implements sdk.RemoteTimerBase.
func (p *meteredTimerBase) ExpireRemote(cpu int, jiffies uint64) sdk.RunTimersResult {
	defer p.m.end(callExpireRemote, p.m.begin())
	return p.c.ExpireRemote(cpu, jiffies)
}

// meteredHRTimerBase meters a checked sdk.HRTimerBase.
type meteredHRTimerBase struct {
	metered
	c *hrTimerBase
}

// Start implements sdk.HRTimerBase.
func (p *meteredHRTimerBase) Start(cpu int, now ktime.Time, t sdk.HRTimer, expires ktime.Time, slack int64) sdk.HROpResult {
	defer p.m.end(callStart, p.m.begin())
	return p.c.Start(cpu, now, t, expires, slack)
}

// Cancel implements sdk.HRTimerBase.
func (p *meteredHRTimerBase) Cancel(cpu int, now ktime.Time, id sdk.TimerID) sdk.HROpResult {
	defer p.m.end(callCancel, p.m.begin())
	return p.c.Cancel(cpu, now, id)
}

// ClockWasSet implements sdk.HRTimerBase.
func (p *meteredHRTimerBase) ClockWasSet(cpu int, now ktime.Time, off sdk.ClockOffsets) sdk.HROpResult {
	defer p.m.end(callClockWasSet, p.m.begin())
	return p.c.ClockWasSet(cpu, now, off)
}

// RetriggerNextEvent implements sdk.HRTimerBase.
func (p *meteredHRTimerBase) RetriggerNextEvent(cpu int, now ktime.Time) sdk.HROpResult {
	defer p.m.end(callRetriggerNextEvent, p.m.begin())
	return p.c.RetriggerNextEvent(cpu, now)
}

// Interrupt implements sdk.HRTimerBase.
func (p *meteredHRTimerBase) Interrupt(cpu int, now ktime.Time) sdk.InterruptResult {
	defer p.m.end(callInterrupt, p.m.begin())
	return p.c.Interrupt(cpu, now)
}

// InterruptETIME implements sdk.HRTimerBase.
func (p *meteredHRTimerBase) InterruptETIME(cpu int, now ktime.Time) sdk.InterruptResult {
	defer p.m.end(callInterruptETIME, p.m.begin())
	return p.c.InterruptETIME(cpu, now)
}

// RunSoftirq implements sdk.HRTimerBase.
func (p *meteredHRTimerBase) RunSoftirq(cpu int, now ktime.Time) sdk.InterruptResult {
	defer p.m.end(callRunSoftirq, p.m.begin())
	return p.c.RunSoftirq(cpu, now)
}

// RunQueues implements sdk.HRTimerBase.
func (p *meteredHRTimerBase) RunQueues(cpu int, now ktime.Time) sdk.InterruptResult {
	defer p.m.end(callRunQueues, p.m.begin())
	return p.c.RunQueues(cpu, now)
}

// NextEvent implements sdk.HRTimerBase.
func (p *meteredHRTimerBase) NextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) ktime.Time {
	defer p.m.end(callNextEvent, p.m.begin())
	return p.c.NextEvent(cpu, now, exclude)
}

// meteredHRTimerBaseStarter is meteredHRTimerBase for a plugin that
// implements sdk.NextEventStarter (the out-of-process client).
type meteredHRTimerBaseStarter struct {
	meteredHRTimerBase
	st sdk.NextEventStarter
}

// StartNextEvent implements sdk.NextEventStarter: one NextEvent call, its
// time that of the send and of the wait, not of what the host did in
// between.
func (p *meteredHRTimerBaseStarter) StartNextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) (wait func() ktime.Time) {
	defer p.m.end(callNextEvent, p.m.begin())
	w := p.st.StartNextEvent(cpu, now, exclude)
	return func() ktime.Time {
		t0 := time.Now()
		defer func() { p.m.calls[callNextEvent].wall += time.Since(t0) }()
		return w()
	}
}

// meteredClockEvent meters a checked sdk.ClockEventDevice. The clockevents
// core calls SetNextEvent and Ack on the device behind the checker
// (Unchecked) and checks the answers itself: Unchecked returns that device
// metered too.
type meteredClockEvent struct {
	metered
	c *clockEvent
}

// Spec implements sdk.ClockEventDevice.
func (p *meteredClockEvent) Spec() sdk.DeviceSpec {
	defer p.m.end(callSpec, p.m.begin())
	return p.c.Spec()
}

// SetNextEvent implements sdk.ClockEventDevice.
func (p *meteredClockEvent) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	defer p.m.end(callSetNextEvent, p.m.begin())
	return p.c.SetNextEvent(ch, now, ticks)
}

// SetState implements sdk.ClockEventDevice.
func (p *meteredClockEvent) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
	defer p.m.end(callSetState, p.m.begin())
	return p.c.SetState(ch, now, st, period)
}

// Ack implements sdk.ClockEventDevice.
func (p *meteredClockEvent) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	defer p.m.end(callAck, p.m.begin())
	return p.c.Ack(ch, now)
}

// Unchecked returns the device behind the checker, metered.
func (p *meteredClockEvent) Unchecked() sdk.ClockEventDevice {
	return &meteredDevice{ClockEventDevice: p.c.Unchecked(), m: p.m}
}

// MaxCost is the checker's (clockevents.checkedDevice).
func (p *meteredClockEvent) MaxCost() int64 { return p.c.MaxCost() }

// CheckSetNextEvent is the checker's.
func (p *meteredClockEvent) CheckSetNextEvent(ch int, now ktime.Time, ticks uint64, r sdk.ProgramResult) {
	p.c.CheckSetNextEvent(ch, now, ticks, r)
}

// CheckAck is the checker's.
func (p *meteredClockEvent) CheckAck(now ktime.Time, cost int64, next ktime.Time) {
	p.c.CheckAck(now, cost, next)
}

// meteredDevice is the unchecked device with the hot path's calls metered.
type meteredDevice struct {
	sdk.ClockEventDevice
	m *Meter
}

// SetNextEvent implements sdk.ClockEventDevice.
func (d *meteredDevice) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	defer d.m.end(callSetNextEvent, d.m.begin())
	return d.ClockEventDevice.SetNextEvent(ch, now, ticks)
}

// Ack implements sdk.ClockEventDevice.
func (d *meteredDevice) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	defer d.m.end(callAck, d.m.begin())
	return d.ClockEventDevice.Ack(ch, now)
}

// meteredGovernor meters a checked sdk.Governor.
type meteredGovernor struct {
	metered
	g *governor
}

// Enable implements sdk.Governor.
func (p *meteredGovernor) Enable(cpu int, states []sdk.CPUIdleState) {
	defer p.m.end(callEnable, p.m.begin())
	p.g.Enable(cpu, states)
}

// Select implements sdk.Governor.
func (p *meteredGovernor) Select(r sdk.IdleSelect) sdk.IdleChoice {
	defer p.m.end(callSelect, p.m.begin())
	return p.g.Select(r)
}

// Reflect implements sdk.Governor.
func (p *meteredGovernor) Reflect(r sdk.IdleReflect) {
	defer p.m.end(callReflect, p.m.begin())
	p.g.Reflect(r)
}

// meteredHangPolicy meters a checked sdk.HangPolicy.
type meteredHangPolicy struct {
	metered
	h *hangPolicy
}

// Hang implements sdk.HangPolicy.
func (p *meteredHangPolicy) Hang(r sdk.HangRequest) sdk.HangDecision {
	defer p.m.end(callHang, p.m.begin())
	return p.h.Hang(r)
}

// meteredCatchupPolicy meters a checked sdk.CatchupPolicy.
type meteredCatchupPolicy struct {
	metered
	c *catchupPolicy
}

// Catchup implements sdk.CatchupPolicy.
func (p *meteredCatchupPolicy) Catchup(r sdk.CatchupRequest) sdk.CatchupDecision {
	defer p.m.end(callCatchup, p.m.begin())
	return p.c.Catchup(r)
}

// meteredRestartPolicy meters a checked sdk.RestartPolicy.
type meteredRestartPolicy struct {
	metered
	r *restartPolicy
}

// Restart implements sdk.RestartPolicy.
func (p *meteredRestartPolicy) Restart(r sdk.RestartRequest) sdk.RestartDecision {
	defer p.m.end(callRestart, p.m.begin())
	return p.r.Restart(r)
}

var (
	_ sdk.InPlaceNextTimer    = (*meteredTimerBase)(nil)
	_ sdk.RepeatFreeNextTimer = (*meteredTimerBase)(nil)
	_ sdk.RemoteTimerBase     = (*meteredTimerBase)(nil)
	_ sdk.HRTimerBase         = (*meteredHRTimerBase)(nil)
	_ sdk.NextEventStarter    = (*meteredHRTimerBaseStarter)(nil)
	_ sdk.ClockEventDevice    = (*meteredClockEvent)(nil)
	_ sdk.Governor            = (*meteredGovernor)(nil)
	_ sdk.HangPolicy          = (*meteredHangPolicy)(nil)
	_ sdk.CatchupPolicy       = (*meteredCatchupPolicy)(nil)
	_ sdk.RestartPolicy       = (*meteredRestartPolicy)(nil)
)
