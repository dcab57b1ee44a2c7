// Package shimtest has fake plugins of every kind for the transport's tests:
// each method calls a function field when it is set (the pattern of
// hashicorp/nomad:plugins/base/testing.go) and returns the zero value otherwise.
// They model nothing; they let a test see exactly what crossed the wire.
package shimtest

import (
	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Base is the sdk.Plugin part of every fake.
type Base struct {
	InfoValue   sdk.Info
	SchemaValue sdk.Schema
	ConfigureFn func(s sdk.Setup, c sdk.Config) sdk.Diagnostics
	CountersFn  func() []sdk.Counter
	// Log is the logger SetLogger gave; zerolog.Nop() until then.
	Log zerolog.Logger
	// LoggerSet counts SetLogger calls.
	LoggerSet int
}

// Info implements sdk.Plugin.
func (b *Base) Info() sdk.Info { return b.InfoValue }

// Schema implements sdk.Plugin.
func (b *Base) Schema() sdk.Schema { return b.SchemaValue }

// Configure implements sdk.Plugin.
func (b *Base) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	if b.ConfigureFn == nil {
		return nil
	}
	return b.ConfigureFn(s, c)
}

// Counters implements sdk.Plugin.
func (b *Base) Counters() []sdk.Counter {
	if b.CountersFn == nil {
		return nil
	}
	return b.CountersFn()
}

// SetLogger implements sdk.LoggerSetter.
func (b *Base) SetLogger(l zerolog.Logger) { b.Log = l; b.LoggerSet++ }

// TimerBase is a fake sdk.TimerBase.
type TimerBase struct {
	Base
	ModTimerFn           func(cpu int, jiffies uint64, t sdk.WheelTimer) sdk.WheelOpResult
	DelTimerFn           func(cpu int, jiffies uint64, id sdk.TimerID) sdk.WheelOpResult
	RunTimersFn          func(cpu int, jiffies uint64) sdk.RunTimersResult
	NextTimerInterruptFn func(cpu int, jiffies uint64) sdk.NextTimerResult
	ExpireRemoteFn       func(cpu int, jiffies uint64) sdk.RunTimersResult
}

var _ sdk.RemoteTimerBase = (*TimerBase)(nil)

// ExpireRemote implements sdk.RemoteTimerBase.
func (f *TimerBase) ExpireRemote(cpu int, jiffies uint64) sdk.RunTimersResult {
	if f.ExpireRemoteFn == nil {
		return sdk.RunTimersResult{}
	}
	return f.ExpireRemoteFn(cpu, jiffies)
}

// ModTimer implements sdk.TimerBase.
func (f *TimerBase) ModTimer(cpu int, jiffies uint64, t sdk.WheelTimer) sdk.WheelOpResult {
	if f.ModTimerFn == nil {
		return sdk.WheelOpResult{}
	}
	return f.ModTimerFn(cpu, jiffies, t)
}

// DelTimer implements sdk.TimerBase.
func (f *TimerBase) DelTimer(cpu int, jiffies uint64, id sdk.TimerID) sdk.WheelOpResult {
	if f.DelTimerFn == nil {
		return sdk.WheelOpResult{}
	}
	return f.DelTimerFn(cpu, jiffies, id)
}

// RunTimers implements sdk.TimerBase.
func (f *TimerBase) RunTimers(cpu int, jiffies uint64) sdk.RunTimersResult {
	if f.RunTimersFn == nil {
		return sdk.RunTimersResult{}
	}
	return f.RunTimersFn(cpu, jiffies)
}

// NextTimerInterrupt implements sdk.TimerBase.
func (f *TimerBase) NextTimerInterrupt(cpu int, jiffies uint64) sdk.NextTimerResult {
	if f.NextTimerInterruptFn == nil {
		return sdk.NextTimerResult{}
	}
	return f.NextTimerInterruptFn(cpu, jiffies)
}

// HRTimerBase is a fake sdk.HRTimerBase.
type HRTimerBase struct {
	Base
	StartFn       func(cpu int, now ktime.Time, t sdk.HRTimer, expires ktime.Time, slack int64) sdk.HROpResult
	CancelFn      func(cpu int, now ktime.Time, id sdk.TimerID) sdk.HROpResult
	InterruptFn   func(cpu int, now ktime.Time) sdk.InterruptResult
	RunSoftirqFn  func(cpu int, now ktime.Time) sdk.InterruptResult
	RunQueuesFn   func(cpu int, now ktime.Time) sdk.InterruptResult
	ClockWasSetFn func(cpu int, now ktime.Time, off sdk.ClockOffsets) sdk.HROpResult
	RetriggerFn   func(cpu int, now ktime.Time) sdk.HROpResult
	ETIMEFn       func(cpu int, now ktime.Time) sdk.InterruptResult
	NextEventFn   func(cpu int, now ktime.Time, exclude sdk.TimerID) ktime.Time
}

var _ sdk.HRTimerBase = (*HRTimerBase)(nil)

// Start implements sdk.HRTimerBase.
func (f *HRTimerBase) Start(cpu int, now ktime.Time, t sdk.HRTimer, expires ktime.Time, slack int64) sdk.HROpResult {
	if f.StartFn == nil {
		return sdk.HROpResult{}
	}
	return f.StartFn(cpu, now, t, expires, slack)
}

// Cancel implements sdk.HRTimerBase.
func (f *HRTimerBase) Cancel(cpu int, now ktime.Time, id sdk.TimerID) sdk.HROpResult {
	if f.CancelFn == nil {
		return sdk.HROpResult{}
	}
	return f.CancelFn(cpu, now, id)
}

// Interrupt implements sdk.HRTimerBase.
func (f *HRTimerBase) Interrupt(cpu int, now ktime.Time) sdk.InterruptResult {
	if f.InterruptFn == nil {
		return sdk.InterruptResult{}
	}
	return f.InterruptFn(cpu, now)
}

// RunSoftirq implements sdk.HRTimerBase.
func (f *HRTimerBase) RunSoftirq(cpu int, now ktime.Time) sdk.InterruptResult {
	if f.RunSoftirqFn == nil {
		return sdk.InterruptResult{}
	}
	return f.RunSoftirqFn(cpu, now)
}

// RunQueues implements sdk.HRTimerBase.
func (f *HRTimerBase) RunQueues(cpu int, now ktime.Time) sdk.InterruptResult {
	if f.RunQueuesFn == nil {
		return sdk.InterruptResult{}
	}
	return f.RunQueuesFn(cpu, now)
}

// InterruptETIME implements sdk.HRTimerBase.
func (f *HRTimerBase) InterruptETIME(cpu int, now ktime.Time) sdk.InterruptResult {
	if f.ETIMEFn == nil {
		return sdk.InterruptResult{End: now}
	}
	return f.ETIMEFn(cpu, now)
}

// RetriggerNextEvent implements sdk.HRTimerBase.
func (f *HRTimerBase) RetriggerNextEvent(cpu int, now ktime.Time) sdk.HROpResult {
	if f.RetriggerFn == nil {
		return sdk.HROpResult{}
	}
	return f.RetriggerFn(cpu, now)
}

// ClockWasSet implements sdk.HRTimerBase.
func (f *HRTimerBase) ClockWasSet(cpu int, now ktime.Time, off sdk.ClockOffsets) sdk.HROpResult {
	if f.ClockWasSetFn == nil {
		return sdk.HROpResult{}
	}
	return f.ClockWasSetFn(cpu, now, off)
}

// NextEvent implements sdk.HRTimerBase.
func (f *HRTimerBase) NextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) ktime.Time {
	if f.NextEventFn == nil {
		return ktime.Max
	}
	return f.NextEventFn(cpu, now, exclude)
}

// ClockEventDevice is a fake sdk.ClockEventDevice.
type ClockEventDevice struct {
	Base
	SpecValue      sdk.DeviceSpec
	SetNextEventFn func(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult
	SetStateFn     func(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time)
	AckFn          func(ch int, now ktime.Time) (int64, ktime.Time)
}

var _ sdk.ClockEventDevice = (*ClockEventDevice)(nil)

// Spec implements sdk.ClockEventDevice.
func (f *ClockEventDevice) Spec() sdk.DeviceSpec { return f.SpecValue }

// SetNextEvent implements sdk.ClockEventDevice.
func (f *ClockEventDevice) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	if f.SetNextEventFn == nil {
		return sdk.ProgramResult{}
	}
	return f.SetNextEventFn(ch, now, ticks)
}

// SetState implements sdk.ClockEventDevice.
func (f *ClockEventDevice) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
	if f.SetStateFn == nil {
		return 0, ktime.Max
	}
	return f.SetStateFn(ch, now, st, period)
}

// Ack implements sdk.ClockEventDevice.
func (f *ClockEventDevice) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	if f.AckFn == nil {
		return 0, ktime.Max
	}
	return f.AckFn(ch, now)
}

// Governor is a fake sdk.Governor.
type Governor struct {
	Base
	EnableFn  func(cpu int, states []sdk.CPUIdleState)
	SelectFn  func(r sdk.IdleSelect) sdk.IdleChoice
	ReflectFn func(r sdk.IdleReflect)
}

var _ sdk.Governor = (*Governor)(nil)

// Enable implements sdk.Governor.
func (f *Governor) Enable(cpu int, states []sdk.CPUIdleState) {
	if f.EnableFn != nil {
		f.EnableFn(cpu, states)
	}
}

// Select implements sdk.Governor.
func (f *Governor) Select(r sdk.IdleSelect) sdk.IdleChoice {
	if f.SelectFn == nil {
		return sdk.IdleChoice{}
	}
	return f.SelectFn(r)
}

// Reflect implements sdk.Governor.
func (f *Governor) Reflect(r sdk.IdleReflect) {
	if f.ReflectFn != nil {
		f.ReflectFn(r)
	}
}

// HangPolicy is a fake sdk.HangPolicy.
type HangPolicy struct {
	Base
	HangFn func(r sdk.HangRequest) sdk.HangDecision
}

var _ sdk.HangPolicy = (*HangPolicy)(nil)

// Hang implements sdk.HangPolicy.
func (f *HangPolicy) Hang(r sdk.HangRequest) sdk.HangDecision {
	if f.HangFn == nil {
		return sdk.HangDecision{}
	}
	return f.HangFn(r)
}

// CatchupPolicy is a fake sdk.CatchupPolicy.
type CatchupPolicy struct {
	Base
	CatchupFn func(r sdk.CatchupRequest) sdk.CatchupDecision
}

var _ sdk.CatchupPolicy = (*CatchupPolicy)(nil)

// Catchup implements sdk.CatchupPolicy.
func (f *CatchupPolicy) Catchup(r sdk.CatchupRequest) sdk.CatchupDecision {
	if f.CatchupFn == nil {
		return sdk.CatchupDecision{}
	}
	return f.CatchupFn(r)
}

// RestartPolicy is a fake sdk.RestartPolicy.
type RestartPolicy struct {
	Base
	RestartFn func(r sdk.RestartRequest) sdk.RestartDecision
}

var _ sdk.RestartPolicy = (*RestartPolicy)(nil)

// Restart implements sdk.RestartPolicy.
func (f *RestartPolicy) Restart(r sdk.RestartRequest) sdk.RestartDecision {
	if f.RestartFn == nil {
		return sdk.RestartDecision{}
	}
	return f.RestartFn(r)
}
