package shim

import (
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/internal/fromproto"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/sdk/internal/toproto"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Declared answer models (sdk.HRTimerModel, sdk.NextTimerModel) travel with
// the answers: after the calls of each message the server asks the plugin for
// the model of every CPU and sends those of the CPUs a call named and of the
// CPUs whose model changed since the last message. The client keeps the last
// model of each CPU, answers the calls a model covers from it (updating it as
// the model says), holds those calls and sends them in front of its next
// waited-for call, and checks their real answers then.

// modelTracker is the server's side of one session's models: the CPU count
// (from Configure) and the last model sent for each CPU.
type modelTracker[M any] struct {
	cpus int
	last []M
	sent []bool
}

// configured notes the CPU count of a Configure call among calls.
func (t *modelTracker[M]) configured(calls []proto.Message) {
	for _, c := range calls {
		if cfg := pluginCall(c).GetConfigure(); cfg != nil {
			t.cpus = int(cfg.GetSetup().GetCpus())
			t.last, t.sent = make([]M, t.cpus), make([]bool, t.cpus)
		}
	}
}

// changed reports the CPUs to send: called ones and those whose model differs
// from the last sent; it records what it returns as sent.
func (t *modelTracker[M]) changed(calls []proto.Message, model func(cpu int) M, equal func(a, b M) bool, each func(cpu int, m M)) {
	called := make(map[int]bool, 2)
	for _, c := range calls {
		if cpu, ok := callCPU(c); ok {
			called[int(cpu)] = true
		}
	}
	for cpu := 0; cpu < t.cpus; cpu++ {
		m := model(cpu)
		if called[cpu] || !t.sent[cpu] || !equal(m, t.last[cpu]) {
			t.last[cpu], t.sent[cpu] = m, true
			each(cpu, m)
		}
	}
}

// pluginCall returns the PluginRequest of a kind's call message, or nil.
func pluginCall(c proto.Message) *pb.PluginRequest {
	pr, _ := oneofValue(c).(*pb.PluginRequest)
	return pr
}

// callCPU returns the cpu argument of a kind's call message.
func callCPU(c proto.Message) (int64, bool) {
	if g, ok := oneofValue(c).(interface{ GetCpu() int64 }); ok {
		return g.GetCpu(), true
	}
	return 0, false
}

// oneofValue returns the message set in c's oneof (a call's arguments).
func oneofValue(c proto.Message) proto.Message {
	m := c.ProtoReflect()
	od := m.Descriptor().Oneofs().Get(0)
	fd := m.WhichOneof(od)
	if fd == nil || fd.Kind() != protoreflect.MessageKind {
		return nil
	}
	return m.Get(fd).Message().Interface()
}

func hrModelEqual(a, b sdk.HRTimerModel) bool {
	return a.Valid == b.Valid && a.StartCost == b.StartCost && a.ExpiresNext == b.ExpiresNext &&
		a.NextTimer == b.NextTimer && a.Interrupts == b.Interrupts && a.Migrates == b.Migrates && a.EntryCost == b.EntryCost &&
		a.PassCost == b.PassCost && a.ExpiryCost == b.ExpiryCost && slices.Equal(a.Queue, b.Queue)
}

func hrModelToProto(cpu int, m sdk.HRTimerModel) *pb.HRTimerModel {
	out := &pb.HRTimerModel{Cpu: int64(cpu), Valid: m.Valid, StartCost: m.StartCost,
		ExpiresNext: int64(m.ExpiresNext), NextTimer: uint64(m.NextTimer), Interrupts: m.Interrupts, Migrates: m.Migrates,
		EntryCost: m.EntryCost, PassCost: m.PassCost, ExpiryCost: m.ExpiryCost}
	for _, q := range m.Queue {
		out.Queue = append(out.Queue, &pb.HRQueued{Id: uint64(q.ID), Expires: int64(q.Expires),
			SoftExpires: int64(q.SoftExpires), CallbackCost: q.CallbackCost, Period: q.Period})
	}
	return out
}

func hrModelFromProto(m *pb.HRTimerModel) sdk.HRTimerModel {
	out := sdk.HRTimerModel{Valid: m.GetValid(), StartCost: m.GetStartCost(),
		ExpiresNext: ktime.Time(m.GetExpiresNext()), NextTimer: sdk.TimerID(m.GetNextTimer()),
		Interrupts: m.GetInterrupts(), Migrates: m.GetMigrates(), EntryCost: m.GetEntryCost(), PassCost: m.GetPassCost(), ExpiryCost: m.GetExpiryCost()}
	for _, q := range m.GetQueue() {
		out.Queue = append(out.Queue, sdk.HRQueued{ID: sdk.TimerID(q.GetId()), Expires: ktime.Time(q.GetExpires()),
			SoftExpires: ktime.Time(q.GetSoftExpires()), CallbackCost: q.GetCallbackCost(), Period: q.GetPeriod()})
	}
	return out
}

func ntModelToProto(cpu int, m sdk.NextTimerModel) *pb.NextTimerModel {
	return &pb.NextTimerModel{Cpu: int64(cpu), Valid: m.Valid, Expiry: m.Expiry, Pending: m.Pending,
		Cost: m.Cost, RepeatCost: m.RepeatCost, State: toproto.WheelState(m.State)}
}

func ntModelFromProto(m *pb.NextTimerModel) sdk.NextTimerModel {
	return sdk.NextTimerModel{Valid: m.GetValid(), Expiry: m.GetExpiry(), Pending: m.GetPending(),
		Cost: m.GetCost(), RepeatCost: m.GetRepeatCost(), State: fromproto.WheelState(m.GetState())}
}

// messages converts a kind's calls to proto.Message values.
func messages[C any, PC interface {
	*C
	proto.Message
}](calls []*C) []proto.Message {
	out := make([]proto.Message, len(calls))
	for i, c := range calls {
		out[i] = PC(c)
	}
	return out
}

// maxModelCPUs bounds the CPU numbers a client keeps models for (a plugin
// cannot make it allocate without bound).
const maxModelCPUs = 1 << 16
