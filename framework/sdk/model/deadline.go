package model

import (
	"math/bits"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/simrand"
	"github.com/tickemu/tickemu/framework/sdk/spread"
)

// Deadline evaluates a device's declared sdk.DeadlineModel: the answers the
// device promises to give, computed without asking it (the out-of-process
// transport uses it to avoid waiting for the device, and checks the
// device's real answers against it later). With a spread it draws from its
// own copy of the device's stream, so it must see the device's calls, all
// of them and in their order, from the device's Configure on; copies of a
// Deadline share that stream.
type Deadline struct {
	m     sdk.DeadlineModel
	clock clockmath.Clock
	// rng is the spreads' stream, nil without a spread.
	rng *simrand.Rand
}

// NewDeadline returns the evaluator of m, or false when m is malformed (a zero
// rate or scale, a negative cost or latency, a spread Draw cannot sample).
func NewDeadline(m sdk.DeadlineModel) (Deadline, bool) {
	if m.CounterNum == 0 || m.CounterDen == 0 || m.Scale == 0 || m.ReadOffset < 0 || m.WriteCost < 0 ||
		m.AckCost < 0 || m.StopCost < 0 || m.OneshotCost < 0 || m.Latency < 0 || m.PastLatency < 0 {
		return Deadline{}, false
	}
	e := Deadline{m: m, clock: clockmath.Clock{Num: m.CounterNum, Den: m.CounterDen}}
	for _, q := range []spread.Quantiles{m.LatencySpread, m.PastLatencySpread, m.AckCostSpread} {
		if q.Check() != nil {
			return Deadline{}, false
		}
		if !q.Zero() && e.rng == nil {
			e.rng = simrand.New(m.Seed, m.Stream)
		}
	}
	return e, true
}

// SetNextEvent is the model's answer to SetNextEvent(ch, now, ticks).
func (e Deadline) SetNextEvent(now ktime.Time, ticks uint64) sdk.ProgramResult {
	r := sdk.ProgramResult{Cost: e.m.WriteCost, FireAt: ktime.Max}
	hi, d := bits.Mul64(ticks, e.m.Scale)
	if hi != 0 {
		return r
	}
	d, carry := bits.Add64(d, e.clock.TicksAt(now.Add(e.m.ReadOffset)), 0)
	if carry != 0 {
		return r
	}
	due, land := e.clock.TimeOf(d), now.Add(e.m.WriteCost)
	if e.m.PastDeadline && due <= land {
		r.FireAt = land.Add(e.m.PastLatencySpread.Draw(e.m.PastLatency, e.rng))
	} else {
		r.FireAt = max(due, land).Add(e.m.LatencySpread.Draw(e.m.Latency, e.rng))
	}
	return r
}

// Ack is the model's answer to Ack.
func (e Deadline) Ack() (cost int64, next ktime.Time) {
	return e.m.AckCostSpread.Draw(e.m.AckCost, e.rng), ktime.Max
}

// SetState is the model's answer to SetState(st); ok is false for the states
// the model does not cover (periodic), which the host must ask for.
func (e Deadline) SetState(st sdk.DeviceState) (cost int64, fire ktime.Time, ok bool) {
	switch st {
	case sdk.StateShutdown, sdk.StateDetached, sdk.StateOneshotStopped:
		return e.m.StopCost, ktime.Max, true
	case sdk.StateOneshot:
		return e.m.OneshotCost, ktime.Max, true
	}
	return 0, 0, false
}
