package fromproto_test

import (
	"fmt"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/internal/fromproto"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/sdk/internal/toproto"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/spread"
)

// decoder decodes wire bytes as one message and converts it with fromproto;
// again converts that value back with toproto, re-encodes and decodes it.
type decoder struct {
	name   string
	decode func(b []byte) (value any, ok bool)
	again  func(value any) any
}

// entry makes the decoder of message type M converted to S.
func entry[M proto.Message, S any](name string, newM func() M, from func(M) S, to func(S) M) decoder {
	dec := func(b []byte) (S, bool) {
		m := newM()
		if proto.Unmarshal(b, m) != nil {
			var zero S
			return zero, false
		}
		return from(m), true
	}
	return decoder{
		name:   name,
		decode: func(b []byte) (any, bool) { return dec(b) },
		again: func(v any) any {
			b, err := proto.Marshal(to(v.(S)))
			if err != nil {
				panic(fmt.Sprintf("%s: marshal of a converted value: %v", name, err))
			}
			s, ok := dec(b)
			if !ok {
				panic(fmt.Sprintf("%s: the re-encoded value does not decode", name))
			}
			return s
		},
	}
}

// decoders are every fromproto conversion, on the messages that carry it
// (lists in the message that holds them on the wire).
var decoders = []decoder{
	entry("Info", func() *pb.Info { return &pb.Info{} }, fromproto.Info, toproto.Info),
	entry("Attribute", func() *pb.Attribute { return &pb.Attribute{} }, fromproto.Attribute, toproto.Attribute),
	entry("Schema", func() *pb.Schema { return &pb.Schema{} }, fromproto.Schema, toproto.Schema),
	entry("Setup", func() *pb.Setup { return &pb.Setup{} }, fromproto.Setup, toproto.Setup),
	entry("ConfigureRequest.config", func() *pb.ConfigureRequest { return &pb.ConfigureRequest{} },
		func(m *pb.ConfigureRequest) sdk.Config { return fromproto.ConfigEntries(m.GetConfig()) },
		func(c sdk.Config) *pb.ConfigureRequest { return &pb.ConfigureRequest{Config: toproto.ConfigEntries(c)} }),
	entry("Diagnostic", func() *pb.Diagnostic { return &pb.Diagnostic{} }, fromproto.Diagnostic, toproto.Diagnostic),
	entry("ConfigureResponse.diagnostics", func() *pb.ConfigureResponse { return &pb.ConfigureResponse{} },
		func(m *pb.ConfigureResponse) sdk.Diagnostics { return fromproto.Diagnostics(m.GetDiagnostics()) },
		func(d sdk.Diagnostics) *pb.ConfigureResponse {
			return &pb.ConfigureResponse{Diagnostics: toproto.Diagnostics(d)}
		}),
	entry("Counter", func() *pb.Counter { return &pb.Counter{} }, fromproto.Counter, toproto.Counter),
	entry("CountersResponse.counters", func() *pb.CountersResponse { return &pb.CountersResponse{} },
		func(m *pb.CountersResponse) []sdk.Counter { return fromproto.Counters(m.GetCounters()) },
		func(c []sdk.Counter) *pb.CountersResponse { return &pb.CountersResponse{Counters: toproto.Counters(c)} }),
	entry("HROpResult.program", func() *pb.HROpResult { return &pb.HROpResult{} },
		func(m *pb.HROpResult) []ktime.Time { return fromproto.Times(m.GetProgram()) },
		func(t []ktime.Time) *pb.HROpResult { return &pb.HROpResult{Program: toproto.Times(t)} }),
	entry("WheelTimer", func() *pb.WheelTimer { return &pb.WheelTimer{} }, fromproto.WheelTimer, toproto.WheelTimer),
	entry("WheelState", func() *pb.WheelState { return &pb.WheelState{} }, fromproto.WheelState, toproto.WheelState),
	entry("WheelOpResult", func() *pb.WheelOpResult { return &pb.WheelOpResult{} }, fromproto.WheelOpResult, toproto.WheelOpResult),
	entry("WheelExpiry", func() *pb.WheelExpiry { return &pb.WheelExpiry{} }, fromproto.WheelExpiry, toproto.WheelExpiry),
	entry("RunTimersResult", func() *pb.RunTimersResult { return &pb.RunTimersResult{} }, fromproto.RunTimersResult, toproto.RunTimersResult),
	entry("NextTimerResult", func() *pb.NextTimerResult { return &pb.NextTimerResult{} }, fromproto.NextTimerResult, toproto.NextTimerResult),
	entry("HRTimer", func() *pb.HRTimer { return &pb.HRTimer{} }, fromproto.HRTimer, toproto.HRTimer),
	entry("HROpResult", func() *pb.HROpResult { return &pb.HROpResult{} }, fromproto.HROpResult, toproto.HROpResult),
	entry("HRExpiry", func() *pb.HRExpiry { return &pb.HRExpiry{} }, fromproto.HRExpiry, toproto.HRExpiry),
	entry("InterruptResult", func() *pb.InterruptResult { return &pb.InterruptResult{} }, fromproto.InterruptResult, toproto.InterruptResult),
	entry("ClockOffsets", func() *pb.ClockOffsets { return &pb.ClockOffsets{} }, fromproto.ClockOffsets, toproto.ClockOffsets),
	entry("DeviceSpec", func() *pb.DeviceSpec { return &pb.DeviceSpec{} }, fromproto.DeviceSpec, toproto.DeviceSpec),
	entry("ProgramResult", func() *pb.ProgramResult { return &pb.ProgramResult{} }, fromproto.ProgramResult, toproto.ProgramResult),
	entry("DeadlineModel", func() *pb.DeadlineModel { return &pb.DeadlineModel{} },
		func(m *pb.DeadlineModel) sdk.DeadlineModel { d, _ := fromproto.DeadlineModel(m); return d },
		toproto.DeadlineModel),
}

// FuzzFromProto decodes arbitrary bytes as every message the host converts
// from a plugin's answer. Whatever the bytes, no conversion may panic, and
// converting the result back (toproto), re-encoding and decoding it gives
// the same value: what the host acts on is exactly what a plugin can say.
func FuzzFromProto(f *testing.F) {
	seeds := []proto.Message{
		toproto.Info(sdk.Info{Kind: sdk.KindClockEvent, Name: "lapic", Version: "1.0.0", Description: "local APIC timer"}),
		toproto.Schema(sdk.Schema{Attributes: []sdk.Attribute{{Name: "mode", Type: sdk.TypeString, Default: "oneshot", OneOf: []string{"oneshot", "tsc_deadline"}, Min: "1", Max: "9", Doc: "d"}}}),
		toproto.Setup(sdk.Setup{CPUs: 4, HZ: 1000, HighRes: true, Seed: 1<<64 - 1, Role: "local"}),
		&pb.ConfigureRequest{Config: toproto.ConfigEntries(sdk.Config{"mode": "oneshot", "cost": "250"})},
		&pb.ConfigureResponse{Diagnostics: toproto.Diagnostics(sdk.Diagnostics{{Severity: sdk.SeverityError, Summary: "bad\x1b[2J", Detail: "d", Attribute: "mode"}})},
		&pb.CountersResponse{Counters: toproto.Counters([]sdk.Counter{{Name: "writes", CPU: -1, Value: 1 << 40}, {Name: "a\nb", CPU: 3, Value: -9}})},
		toproto.WheelTimer(sdk.WheelTimer{ID: 7, Expires: 1 << 40, Flags: 3}),
		toproto.WheelTimer(sdk.WheelTimer{ID: 8, Placement: &sdk.Placement{Idle: sdk.CPUSet{5, 1 << 63}}}),
		toproto.HRTimer(sdk.HRTimer{ID: 9, Placement: &sdk.Placement{}}),
		toproto.Setup(sdk.Setup{CPUs: 65, TimerMigration: true, TimerHousekeeping: &sdk.CPUSet{0, 1}}),
		toproto.RunTimersResult(sdk.RunTimersResult{}),
		toproto.HROpResult(sdk.HROpResult{Program: []ktime.Time{-1, 0, 1 << 62}}),
		toproto.InterruptResult(sdk.InterruptResult{}),
		toproto.DeviceSpec(sdk.DeviceSpec{Name: "hpet", FreqHz: 14318180, MinDeltaTicks: 1, MaxDeltaTicks: 1 << 32, Channels: 1 << 30}),
		toproto.ProgramResult(sdk.ProgramResult{FireAt: -1, Cost: -1_000_000_000_000}),
		toproto.DeadlineModel(sdk.DeadlineModel{CounterNum: 3, CounterDen: 1, Scale: 8, PastDeadline: true,
			LatencySpread: spread.Quantiles{P: []float64{0.1, 0.9}, Dev: []float64{-5000, 6000}},
			AckCostSpread: spread.Quantiles{Dev: []float64{1}}, Seed: 1, Stream: "lapic/local"}),
	}
	for _, m := range seeds {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}) // a length beyond the input
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range decoders {
			v, ok := d.decode(b)
			if !ok {
				continue
			}
			again := d.again(v)
			// DeepEqual follows pointers (Placement, TimerHousekeeping) and,
			// as %#v did, tells a nil slice from an empty one.
			if !reflect.DeepEqual(again, v) {
				t.Errorf("%s: converted back and decoded again = %#v, want %#v", d.name, again, v)
			}
		}
	})
}
