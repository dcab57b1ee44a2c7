// Package toproto converts framework/sdk values to their tickemu.plugin.v2
// messages. Each function is named after the message it returns
// (the style of
// hashicorp/terraform-plugin-go:internal/toproto); fromproto is the inverse.
//
// Empty slices and maps become empty repeated fields, so the round trip
// toproto → fromproto turns an empty, non-nil slice into nil.
package toproto

import (
	"sort"

	"github.com/tickemu/tickemu/framework/sdk"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/spread"
)

// Info converts an sdk.Info.
func Info(i sdk.Info) *pb.Info {
	return &pb.Info{Kind: string(i.Kind), Name: i.Name, Version: i.Version, Description: i.Description}
}

// Attribute converts an sdk.Attribute.
func Attribute(a sdk.Attribute) *pb.Attribute {
	return &pb.Attribute{
		Name:         a.Name,
		Type:         string(a.Type),
		Required:     a.Required,
		DefaultValue: a.Default,
		OneOf:        a.OneOf,
		MinValue:     a.Min,
		MaxValue:     a.Max,
		Doc:          a.Doc,
		Eras:         Eras(a.Eras),
		Unversioned:  a.Unversioned,
	}
}

// Eras converts an attribute's eras, keeping their order.
func Eras(es []sdk.Era) []*pb.Era {
	out := make([]*pb.Era, len(es))
	for i, e := range es {
		out[i] = &pb.Era{Since: e.Since, Value: e.Value, Commit: e.Commit, Title: e.Title, Note: e.Note, Backports: e.Backports}
	}
	return out
}

// Schema converts an sdk.Schema, keeping the attribute order.
func Schema(s sdk.Schema) *pb.Schema {
	out := &pb.Schema{Attributes: make([]*pb.Attribute, len(s.Attributes))}
	for i, a := range s.Attributes {
		out.Attributes[i] = Attribute(a)
	}
	return out
}

// Setup converts an sdk.Setup.
func Setup(s sdk.Setup) *pb.Setup {
	out := &pb.Setup{Cpus: int64(s.CPUs), Hz: int64(s.HZ), HighRes: s.HighRes, Seed: s.Seed, Role: string(s.Role),
		TimerMigration: s.TimerMigration}
	if s.TimerHousekeeping != nil {
		out.TimerHousekeeping = &pb.CPUSet{Words: *s.TimerHousekeeping}
	}
	return out
}

// Placement converts an sdk.Placement; nil stays nil.
func Placement(p *sdk.Placement) *pb.Placement {
	if p == nil {
		return nil
	}
	return &pb.Placement{Idle: p.Idle}
}

// ConfigEntries converts an sdk.Config, sorted by key so that the same
// config always encodes to the same bytes.
func ConfigEntries(c sdk.Config) []*pb.ConfigEntry {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*pb.ConfigEntry, len(keys))
	for i, k := range keys {
		out[i] = &pb.ConfigEntry{Key: k, Value: c[k]}
	}
	return out
}

// Diagnostic converts an sdk.Diagnostic.
func Diagnostic(d sdk.Diagnostic) *pb.Diagnostic {
	return &pb.Diagnostic{
		Severity:  pb.Severity(d.Severity),
		Summary:   d.Summary,
		Detail:    d.Detail,
		Attribute: d.Attribute,
	}
}

// Diagnostics converts sdk.Diagnostics, keeping their order.
func Diagnostics(ds sdk.Diagnostics) []*pb.Diagnostic {
	out := make([]*pb.Diagnostic, len(ds))
	for i, d := range ds {
		out[i] = Diagnostic(d)
	}
	return out
}

// Counter converts an sdk.Counter.
func Counter(c sdk.Counter) *pb.Counter {
	return &pb.Counter{Name: c.Name, Cpu: int64(c.CPU), Value: c.Value}
}

// Counters converts counters, keeping their order.
func Counters(cs []sdk.Counter) []*pb.Counter {
	out := make([]*pb.Counter, len(cs))
	for i, c := range cs {
		out[i] = Counter(c)
	}
	return out
}

// Times converts a list of times (a plugin's clockevent writes) to
// nanoseconds.
func Times(ts []ktime.Time) []int64 {
	if len(ts) == 0 {
		return nil
	}
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = int64(t)
	}
	return out
}

// WheelTimer converts an sdk.WheelTimer.
func WheelTimer(t sdk.WheelTimer) *pb.WheelTimer {
	return &pb.WheelTimer{
		Id:           uint64(t.ID),
		Expires:      t.Expires,
		Flags:        uint32(t.Flags),
		CallbackCost: t.CallbackCost,
		Period:       t.Period,
		Placement:    Placement(t.Placement),
	}
}

// WheelState converts an sdk.WheelState.
func WheelState(s sdk.WheelState) *pb.WheelState {
	return &pb.WheelState{RaiseAt: s.RaiseAt, NextExpiry: s.NextExpiry, Pending: int64(s.Pending),
		Split: s.Split, LocalNext: s.LocalNext, GlobalNext: s.GlobalNext}
}

// WheelOpResult converts an sdk.WheelOpResult.
func WheelOpResult(r sdk.WheelOpResult) *pb.WheelOpResult {
	return &pb.WheelOpResult{Cost: r.Cost, WasPending: r.WasPending, State: WheelState(r.State),
		BucketExpiry: r.BucketExpiry, Index: int64(r.Index), Moved: r.Moved, Cpu: int64(r.CPU)}
}

// WheelExpiry converts an sdk.WheelExpiry.
func WheelExpiry(e sdk.WheelExpiry) *pb.WheelExpiry {
	return &pb.WheelExpiry{
		Id:         uint64(e.ID),
		Offset:     e.Offset,
		Jiffy:      e.Jiffy,
		Rearmed:    e.Rearmed,
		NewExpires: e.NewExpires,
	}
}

// RunTimersResult converts an sdk.RunTimersResult.
func RunTimersResult(r sdk.RunTimersResult) *pb.RunTimersResult {
	out := &pb.RunTimersResult{
		Cost:       r.Cost,
		Gap:        r.Gap,
		Iterations: r.Iterations,
		Cascades:   r.Cascades,
		State:      WheelState(r.State),
	}
	if len(r.Expired) > 0 {
		out.Expired = make([]*pb.WheelExpiry, len(r.Expired))
		for i, e := range r.Expired {
			out.Expired[i] = WheelExpiry(e)
		}
	}
	return out
}

// NextTimerResult converts an sdk.NextTimerResult.
func NextTimerResult(r sdk.NextTimerResult) *pb.NextTimerResult {
	return &pb.NextTimerResult{Next: r.Next, Cost: r.Cost, State: WheelState(r.State)}
}

// HRTimer converts an sdk.HRTimer.
func HRTimer(t sdk.HRTimer) *pb.HRTimer {
	return &pb.HRTimer{
		Id:           uint64(t.ID),
		Clock:        int64(t.Clock),
		Mode:         uint32(t.Mode),
		CallbackCost: t.CallbackCost,
		Period:       t.Period,
		Placement:    Placement(t.Placement),
	}
}

// HROpResult converts an sdk.HROpResult.
func HROpResult(r sdk.HROpResult) *pb.HROpResult {
	return &pb.HROpResult{
		Cost:        r.Cost,
		Program:     Times(r.Program),
		Ret:         int64(r.Ret),
		Expires:     int64(r.Expires),
		SoftExpires: int64(r.SoftExpires),
		Moved:       r.Moved,
		Cpu:         int64(r.CPU),
	}
}

// HRExpiry converts an sdk.HRExpiry.
func HRExpiry(e sdk.HRExpiry) *pb.HRExpiry {
	return &pb.HRExpiry{
		Id:         uint64(e.ID),
		Now:        int64(e.Now),
		BaseNow:    int64(e.BaseNow),
		Soft:       e.Soft,
		Restarted:  e.Restarted,
		NewExpires: int64(e.NewExpires),
		Overruns:   e.Overruns,
	}
}

// InterruptResult converts an sdk.InterruptResult.
func InterruptResult(r sdk.InterruptResult) *pb.InterruptResult {
	out := &pb.InterruptResult{
		End:          int64(r.End),
		Program:      Times(r.Program),
		RaiseSoftirq: r.RaiseSoftirq,
		Retries:      int64(r.Retries),
		Hang:         r.Hang,
		HangDelay:    r.HangDelay,
		TryProgram:   r.TryProgram,
	}
	if len(r.Expired) > 0 {
		out.Expired = make([]*pb.HRExpiry, len(r.Expired))
		for i, e := range r.Expired {
			out.Expired[i] = HRExpiry(e)
		}
	}
	return out
}

// ClockOffsets converts sdk.ClockOffsets.
func ClockOffsets(o sdk.ClockOffsets) *pb.ClockOffsets {
	return &pb.ClockOffsets{Real: o.Real, Boot: o.Boot, Tai: o.TAI}
}

// DeviceSpec converts an sdk.DeviceSpec.
func DeviceSpec(s sdk.DeviceSpec) *pb.DeviceSpec {
	return &pb.DeviceSpec{
		Name:          s.Name,
		Features:      uint32(s.Features),
		FreqHz:        s.FreqHz,
		MinDeltaTicks: s.MinDeltaTicks,
		MaxDeltaTicks: s.MaxDeltaTicks,
		Rating:        int64(s.Rating),
		Channels:      int64(s.Channels),
		Mult:          s.Mult,
		Shift:         s.Shift,
	}
}

// ProgramResult converts an sdk.ProgramResult.
func ProgramResult(r sdk.ProgramResult) *pb.ProgramResult {
	return &pb.ProgramResult{Etime: r.ETIME, FireAt: int64(r.FireAt), Cost: r.Cost}
}

// DeadlineModel converts an sdk.DeadlineModel.
func DeadlineModel(m sdk.DeadlineModel) *pb.DeadlineModel {
	return &pb.DeadlineModel{
		CounterNum: m.CounterNum, CounterDen: m.CounterDen, Scale: m.Scale, ReadOffset: m.ReadOffset,
		WriteCost: m.WriteCost, AckCost: m.AckCost, StopCost: m.StopCost, OneshotCost: m.OneshotCost, Latency: m.Latency,
		PastDeadline: m.PastDeadline, PastLatency: m.PastLatency,
		LatencySpread: Spread(m.LatencySpread), PastLatencySpread: Spread(m.PastLatencySpread),
		AckCostSpread: Spread(m.AckCostSpread), Seed: m.Seed, Stream: m.Stream,
	}
}

// Spread converts a spread.Quantiles; nil for no spread.
func Spread(q spread.Quantiles) *pb.Spread {
	if len(q.P) == 0 && len(q.Dev) == 0 {
		return nil
	}
	return &pb.Spread{P: q.P, Dev: q.Dev}
}
