// Package fromproto converts tickemu.plugin.v2 messages back to framework/sdk
// values. Each function is named after the message it takes and is the inverse
// of the toproto function of the same name; a nil message gives the zero value.
package fromproto

import (
	"github.com/tickemu/tickemu/framework/sdk"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/spread"
)

// Info converts a pb.Info.
func Info(i *pb.Info) sdk.Info {
	return sdk.Info{
		Kind:        sdk.Kind(i.GetKind()),
		Name:        i.GetName(),
		Version:     i.GetVersion(),
		Description: i.GetDescription(),
	}
}

// Attribute converts a pb.Attribute.
func Attribute(a *pb.Attribute) sdk.Attribute {
	return sdk.Attribute{
		Name:        a.GetName(),
		Type:        sdk.AttrType(a.GetType()),
		Required:    a.GetRequired(),
		Default:     a.GetDefaultValue(),
		OneOf:       a.GetOneOf(),
		Min:         a.GetMinValue(),
		Max:         a.GetMaxValue(),
		Doc:         a.GetDoc(),
		Eras:        Eras(a.GetEras()),
		Unversioned: a.GetUnversioned(),
	}
}

// Eras converts an attribute's eras; none gives nil.
func Eras(es []*pb.Era) []sdk.Era {
	if len(es) == 0 {
		return nil
	}
	out := make([]sdk.Era, len(es))
	for i, e := range es {
		out[i] = sdk.Era{Since: e.GetSince(), Value: e.GetValue(), Commit: e.GetCommit(), Title: e.GetTitle(), Note: e.GetNote(), Backports: e.GetBackports()}
	}
	return out
}

// Schema converts a pb.Schema.
func Schema(s *pb.Schema) sdk.Schema {
	attrs := s.GetAttributes()
	if len(attrs) == 0 {
		return sdk.Schema{}
	}
	out := sdk.Schema{Attributes: make([]sdk.Attribute, len(attrs))}
	for i, a := range attrs {
		out.Attributes[i] = Attribute(a)
	}
	return out
}

// Setup converts a pb.Setup.
func Setup(s *pb.Setup) sdk.Setup {
	return sdk.Setup{
		CPUs:    int(s.GetCpus()),
		HZ:      int(s.GetHz()),
		HighRes: s.GetHighRes(),
		Seed:    s.GetSeed(),
		Role:    sdk.Role(s.GetRole()),

		TimerMigration:    s.GetTimerMigration(),
		TimerHousekeeping: CPUSet(s.GetTimerHousekeeping()),
	}
}

// CPUSet converts a pb.CPUSet; nil stays nil.
func CPUSet(c *pb.CPUSet) *sdk.CPUSet {
	if c == nil {
		return nil
	}
	s := sdk.CPUSet(c.GetWords())
	return &s
}

// Placement converts a pb.Placement; nil stays nil.
func Placement(p *pb.Placement) *sdk.Placement {
	if p == nil {
		return nil
	}
	return &sdk.Placement{Idle: sdk.CPUSet(p.GetIdle())}
}

// ConfigEntries converts config entries to an sdk.Config (never nil).
func ConfigEntries(es []*pb.ConfigEntry) sdk.Config {
	out := make(sdk.Config, len(es))
	for _, e := range es {
		out[e.GetKey()] = e.GetValue()
	}
	return out
}

// Diagnostic converts a pb.Diagnostic.
func Diagnostic(d *pb.Diagnostic) sdk.Diagnostic {
	return sdk.Diagnostic{
		Severity:  sdk.Severity(d.GetSeverity()),
		Summary:   d.GetSummary(),
		Detail:    d.GetDetail(),
		Attribute: d.GetAttribute(),
	}
}

// Diagnostics converts a list of pb.Diagnostic.
func Diagnostics(ds []*pb.Diagnostic) sdk.Diagnostics {
	if len(ds) == 0 {
		return nil
	}
	out := make(sdk.Diagnostics, len(ds))
	for i, d := range ds {
		out[i] = Diagnostic(d)
	}
	return out
}

// Counter converts a pb.Counter.
func Counter(c *pb.Counter) sdk.Counter {
	return sdk.Counter{Name: c.GetName(), CPU: int(c.GetCpu()), Value: c.GetValue()}
}

// Counters converts a list of pb.Counter.
func Counters(cs []*pb.Counter) []sdk.Counter {
	if len(cs) == 0 {
		return nil
	}
	out := make([]sdk.Counter, len(cs))
	for i, c := range cs {
		out[i] = Counter(c)
	}
	return out
}

// Times converts nanoseconds to a list of times.
func Times(ns []int64) []ktime.Time {
	if len(ns) == 0 {
		return nil
	}
	out := make([]ktime.Time, len(ns))
	for i, t := range ns {
		out[i] = ktime.Time(t)
	}
	return out
}

// WheelTimer converts a pb.WheelTimer.
func WheelTimer(t *pb.WheelTimer) sdk.WheelTimer {
	return sdk.WheelTimer{
		ID:           sdk.TimerID(t.GetId()),
		Expires:      t.GetExpires(),
		Flags:        sdk.TimerFlags(t.GetFlags()),
		CallbackCost: t.GetCallbackCost(),
		Period:       t.GetPeriod(),
		Placement:    Placement(t.GetPlacement()),
	}
}

// WheelState converts a pb.WheelState.
func WheelState(s *pb.WheelState) sdk.WheelState {
	return sdk.WheelState{RaiseAt: s.GetRaiseAt(), NextExpiry: s.GetNextExpiry(), Pending: int(s.GetPending()),
		Split: s.GetSplit(), LocalNext: s.GetLocalNext(), GlobalNext: s.GetGlobalNext()}
}

// WheelOpResult converts a pb.WheelOpResult.
func WheelOpResult(r *pb.WheelOpResult) sdk.WheelOpResult {
	return sdk.WheelOpResult{Cost: r.GetCost(), WasPending: r.GetWasPending(), State: WheelState(r.GetState()),
		BucketExpiry: r.GetBucketExpiry(), Index: int(r.GetIndex()), Moved: r.GetMoved(), CPU: int(r.GetCpu())}
}

// WheelExpiry converts a pb.WheelExpiry.
func WheelExpiry(e *pb.WheelExpiry) sdk.WheelExpiry {
	return sdk.WheelExpiry{
		ID:         sdk.TimerID(e.GetId()),
		Offset:     e.GetOffset(),
		Jiffy:      e.GetJiffy(),
		Rearmed:    e.GetRearmed(),
		NewExpires: e.GetNewExpires(),
	}
}

// RunTimersResult converts a pb.RunTimersResult.
func RunTimersResult(r *pb.RunTimersResult) sdk.RunTimersResult {
	out := sdk.RunTimersResult{
		Cost:       r.GetCost(),
		Gap:        r.GetGap(),
		Iterations: r.GetIterations(),
		Cascades:   r.GetCascades(),
		State:      WheelState(r.GetState()),
	}
	if ex := r.GetExpired(); len(ex) > 0 {
		out.Expired = make([]sdk.WheelExpiry, len(ex))
		for i, e := range ex {
			out.Expired[i] = WheelExpiry(e)
		}
	}
	return out
}

// NextTimerResult converts a pb.NextTimerResult.
func NextTimerResult(r *pb.NextTimerResult) sdk.NextTimerResult {
	return sdk.NextTimerResult{Next: r.GetNext(), Cost: r.GetCost(), State: WheelState(r.GetState())}
}

// HRTimer converts a pb.HRTimer.
func HRTimer(t *pb.HRTimer) sdk.HRTimer {
	return sdk.HRTimer{
		ID:           sdk.TimerID(t.GetId()),
		Clock:        sdk.ClockID(t.GetClock()),
		Mode:         sdk.HRMode(t.GetMode()),
		CallbackCost: t.GetCallbackCost(),
		Period:       t.GetPeriod(),
		Placement:    Placement(t.GetPlacement()),
	}
}

// HROpResult converts a pb.HROpResult.
func HROpResult(r *pb.HROpResult) sdk.HROpResult {
	return sdk.HROpResult{
		Cost:        r.GetCost(),
		Program:     Times(r.GetProgram()),
		Ret:         int(r.GetRet()),
		Expires:     ktime.Time(r.GetExpires()),
		SoftExpires: ktime.Time(r.GetSoftExpires()),
		Moved:       r.GetMoved(),
		CPU:         int(r.GetCpu()),
	}
}

// HRExpiry converts a pb.HRExpiry.
func HRExpiry(e *pb.HRExpiry) sdk.HRExpiry {
	return sdk.HRExpiry{
		ID:         sdk.TimerID(e.GetId()),
		Now:        ktime.Time(e.GetNow()),
		BaseNow:    ktime.Time(e.GetBaseNow()),
		Soft:       e.GetSoft(),
		Restarted:  e.GetRestarted(),
		NewExpires: ktime.Time(e.GetNewExpires()),
		Overruns:   e.GetOverruns(),
	}
}

// InterruptResult converts a pb.InterruptResult.
func InterruptResult(r *pb.InterruptResult) sdk.InterruptResult {
	out := sdk.InterruptResult{
		End:          ktime.Time(r.GetEnd()),
		Program:      Times(r.GetProgram()),
		RaiseSoftirq: r.GetRaiseSoftirq(),
		Retries:      int(r.GetRetries()),
		Hang:         r.GetHang(),
		HangDelay:    r.GetHangDelay(),
		TryProgram:   r.GetTryProgram(),
	}
	if ex := r.GetExpired(); len(ex) > 0 {
		out.Expired = make([]sdk.HRExpiry, len(ex))
		for i, e := range ex {
			out.Expired[i] = HRExpiry(e)
		}
	}
	return out
}

// ClockOffsets converts pb.ClockOffsets.
func ClockOffsets(o *pb.ClockOffsets) sdk.ClockOffsets {
	return sdk.ClockOffsets{Real: o.GetReal(), Boot: o.GetBoot(), TAI: o.GetTai()}
}

// DeviceSpec converts a pb.DeviceSpec.
func DeviceSpec(s *pb.DeviceSpec) sdk.DeviceSpec {
	return sdk.DeviceSpec{
		Name:          s.GetName(),
		Features:      sdk.DeviceFeatures(s.GetFeatures()),
		FreqHz:        s.GetFreqHz(),
		MinDeltaTicks: s.GetMinDeltaTicks(),
		MaxDeltaTicks: s.GetMaxDeltaTicks(),
		Rating:        int(s.GetRating()),
		Channels:      int(s.GetChannels()),
		Mult:          s.GetMult(),
		Shift:         s.GetShift(),
	}
}

// ProgramResult converts a pb.ProgramResult.
func ProgramResult(r *pb.ProgramResult) sdk.ProgramResult {
	return sdk.ProgramResult{ETIME: r.GetEtime(), FireAt: ktime.Time(r.GetFireAt()), Cost: r.GetCost()}
}

// DeadlineModel converts a pb.DeadlineModel; ok is false for nil (the device
// declared none).
func DeadlineModel(m *pb.DeadlineModel) (sdk.DeadlineModel, bool) {
	if m == nil {
		return sdk.DeadlineModel{}, false
	}
	return sdk.DeadlineModel{
		CounterNum: m.GetCounterNum(), CounterDen: m.GetCounterDen(), Scale: m.GetScale(), ReadOffset: m.GetReadOffset(),
		WriteCost: m.GetWriteCost(), AckCost: m.GetAckCost(), StopCost: m.GetStopCost(), OneshotCost: m.GetOneshotCost(),
		Latency: m.GetLatency(), PastDeadline: m.GetPastDeadline(), PastLatency: m.GetPastLatency(),
		LatencySpread: Spread(m.GetLatencySpread()), PastLatencySpread: Spread(m.GetPastLatencySpread()),
		AckCostSpread: Spread(m.GetAckCostSpread()), Seed: m.GetSeed(), Stream: m.GetStream(),
	}, true
}

// Spread converts a pb.Spread (nil: no spread); an empty list is nil, as
// the zero spread.Quantiles has it.
func Spread(s *pb.Spread) spread.Quantiles {
	var q spread.Quantiles
	if len(s.GetP()) > 0 {
		q.P = s.GetP()
	}
	if len(s.GetDev()) > 0 {
		q.Dev = s.GetDev()
	}
	return q
}
