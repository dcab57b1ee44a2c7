package clockevents

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// fakeDev is a scripted sdk.ClockEventDevice: a counter at spec.FreqHz whose
// writes cost writeCost ns and fail with -ETIME when etime says so.
type fakeDev struct {
	spec      sdk.DeviceSpec
	clock     clockmath.Clock
	writeCost int64
	stateCost int64
	// etime decides the answer of the n-th write (0-based).
	etime  func(n int, ch int, now ktime.Time, ticks uint64) bool
	writes []fakeWrite
	states []sdk.DeviceState
	period int64
	fire   []ktime.Time
}

type fakeWrite struct {
	ch    int
	at    ktime.Time
	ticks uint64
}

func newFake(spec sdk.DeviceSpec, writeCost int64) *fakeDev {
	return &fakeDev{spec: spec, clock: clockmath.ClockHz(uint64(spec.FreqHz)), writeCost: writeCost, stateCost: 7, fire: make([]ktime.Time, spec.Channels)}
}

func (f *fakeDev) Info() sdk.Info {
	return sdk.Info{Kind: sdk.KindClockEvent, Name: "fake", Version: "0"}
}
func (f *fakeDev) Schema() sdk.Schema                              { return sdk.Schema{} }
func (f *fakeDev) Configure(sdk.Setup, sdk.Config) sdk.Diagnostics { return nil }
func (f *fakeDev) Counters() []sdk.Counter                         { return nil }
func (f *fakeDev) Spec() sdk.DeviceSpec                            { return f.spec }

func (f *fakeDev) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	n := len(f.writes)
	f.writes = append(f.writes, fakeWrite{ch, now, ticks})
	if f.etime != nil && f.etime(n, ch, now, ticks) {
		return sdk.ProgramResult{ETIME: true, Cost: f.writeCost}
	}
	at := f.clock.TimeOf(f.clock.TicksAt(now) + ticks)
	f.fire[ch] = at
	return sdk.ProgramResult{FireAt: at, Cost: f.writeCost}
}

func (f *fakeDev) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
	f.states = append(f.states, st)
	if st == sdk.StatePeriodic {
		f.period = period
		f.fire[ch] = now.Add(period)
		return f.stateCost, f.fire[ch]
	}
	f.fire[ch] = ktime.Max
	return f.stateCost, ktime.Max
}

func (f *fakeDev) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	if f.period > 0 && f.fire[ch] != ktime.Max {
		f.fire[ch] = f.fire[ch].Add(f.period)
		return 3, f.fire[ch]
	}
	return 3, ktime.Max
}

var (
	hpetSpec = sdk.DeviceSpec{Name: "hpet", Features: sdk.FeatOneshot | sdk.FeatPeriodic, FreqHz: 14_318_180,
		MinDeltaTicks: 192, MaxDeltaTicks: 0x7FFFFFFF, Rating: 50, Channels: 1}
	lapicSpec = sdk.DeviceSpec{Name: "lapic-deadline", Features: sdk.FeatOneshot | sdk.FeatC3Stop | sdk.FeatPerCPU,
		FreqHz: 375_000_000, MinDeltaTicks: 0xF, MaxDeltaTicks: ^uint64(0), Rating: 100, Channels: 4}
)

// newDevice builds a Device over a fake with every channel in ONESHOT mode.
func newDevice(spec sdk.DeviceSpec, writeCost int64, opts Options) (*Device, *fakeDev) {
	f := newFake(spec, writeCost)
	if opts.HZ == 0 {
		opts.HZ = 1000
	}
	d, err := New(f, opts)
	if err != nil {
		panic(err)
	}
	for ch := range spec.Channels {
		d.SetState(ch, 0, sdk.StateOneshot, 0)
	}
	f.states = nil
	return d, f
}
