package model

import (
	"math/bits"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Deadline evaluates a device's declared sdk.DeadlineModel: the answers the
// device promises to give, computed without asking it (the out-of-process
// transport uses it to avoid waiting for the device, and checks the
// device's real answers against it later).
type Deadline struct {
	m     sdk.DeadlineModel
	clock clockmath.Clock
}

// NewDeadline returns the evaluator of m, or false when m is malformed (a zero
// rate or scale, negative costs).
func NewDeadline(m sdk.DeadlineModel) (Deadline, bool) {
	if m.CounterNum == 0 || m.CounterDen == 0 || m.Scale == 0 ||
		m.ReadOffset < 0 || m.WriteCost < 0 || m.AckCost < 0 || m.StopCost < 0 || m.OneshotCost < 0 || m.Latency < 0 {
		return Deadline{}, false
	}
	return Deadline{m: m, clock: clockmath.Clock{Num: m.CounterNum, Den: m.CounterDen}}, true
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
	r.FireAt = max(e.clock.TimeOf(d), now.Add(e.m.WriteCost)).Add(e.m.Latency)
	return r
}

// Ack is the model's answer to Ack.
func (e Deadline) Ack() (cost int64, next ktime.Time) { return e.m.AckCost, ktime.Max }

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
