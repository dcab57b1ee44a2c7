package shim

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/tickemu/tickemu/framework/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/internal/shim/fromproto"
	"github.com/tickemu/tickemu/framework/internal/shim/toproto"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

var hrTimerBaseShim = kindShim{
	implements: func(p sdk.Plugin) bool { _, ok := p.(sdk.HRTimerBase); return ok },
	register: func(s *grpc.Server, r *registry) {
		pb.RegisterHRTimerBaseServiceServer(s, &hrTimerBaseServer{r: r})
	},
	stream: func(ctx context.Context, cc grpc.ClientConnInterface) (grpc.ClientStream, error) {
		return pb.NewHRTimerBaseServiceClient(cc).HRTimerBaseSession(ctx)
	},
	client: func(s *session) (sdk.Plugin, *base) {
		c := &hrTimerBaseClient{}
		c.b = batcher[pb.HRTimerBaseCall, pb.HRTimerBaseResult]{s: s, exchange: func(call string, calls []*pb.HRTimerBaseCall) ([]*pb.HRTimerBaseResult, proto.Message) {
			resp := new(pb.HRTimerBaseSessionResponse)
			s.roundTrip(call, &pb.HRTimerBaseSessionRequest{Calls: calls}, resp)
			return resp.GetResults(), resp
		}, split: func(call string, calls []*pb.HRTimerBaseCall) func() ([]*pb.HRTimerBaseResult, proto.Message) {
			s.begin(call, &pb.HRTimerBaseSessionRequest{Calls: calls})
			return func() ([]*pb.HRTimerBaseResult, proto.Message) {
				resp := new(pb.HRTimerBaseSessionResponse)
				s.end(call, resp)
				return resp.GetResults(), resp
			}
		}}
		c.base = base{s: s, plugin: c.plugin}
		return c, &c.base
	},
}

// hrTimerBaseClient implements sdk.HRTimerBase over a session.
type hrTimerBaseClient struct {
	base
	b batcher[pb.HRTimerBaseCall, pb.HRTimerBaseResult]
}

var _ sdk.HRTimerBase = (*hrTimerBaseClient)(nil)

func (c *hrTimerBaseClient) do(call string, req *pb.HRTimerBaseCall) *pb.HRTimerBaseResult {
	return c.b.call(call, req)
}

func (c *hrTimerBaseClient) plugin(call string, req *pb.PluginRequest) *pb.PluginResponse {
	resp := c.do(call, &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_Plugin{Plugin: req}})
	return expect(c.s, call, resp.GetPlugin(), resp)
}

// Start implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) Start(cpu int, now ktime.Time, t sdk.HRTimer, expires ktime.Time, slack int64) sdk.HROpResult {
	resp := c.do("Start", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_Start{
		Start: &pb.StartRequest{Cpu: int64(cpu), Now: int64(now), Timer: toproto.HRTimer(t), Expires: int64(expires), Slack: slack}}})
	return fromproto.HROpResult(expect(c.s, "Start", resp.GetStart(), resp).GetResult())
}

// Cancel implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) Cancel(cpu int, now ktime.Time, id sdk.TimerID) sdk.HROpResult {
	resp := c.do("Cancel", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_Cancel{
		Cancel: &pb.CancelRequest{Cpu: int64(cpu), Now: int64(now), Id: uint64(id)}}})
	return fromproto.HROpResult(expect(c.s, "Cancel", resp.GetCancel(), resp).GetResult())
}

// Interrupt implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) Interrupt(cpu int, now ktime.Time) sdk.InterruptResult {
	resp := c.do("Interrupt", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_Interrupt{
		Interrupt: &pb.InterruptRequest{Cpu: int64(cpu), Now: int64(now)}}})
	return fromproto.InterruptResult(expect(c.s, "Interrupt", resp.GetInterrupt(), resp).GetResult())
}

// RunSoftirq implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) RunSoftirq(cpu int, now ktime.Time) sdk.InterruptResult {
	resp := c.do("RunSoftirq", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_RunSoftirq{
		RunSoftirq: &pb.RunSoftirqRequest{Cpu: int64(cpu), Now: int64(now)}}})
	return fromproto.InterruptResult(expect(c.s, "RunSoftirq", resp.GetRunSoftirq(), resp).GetResult())
}

// RunQueues implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) RunQueues(cpu int, now ktime.Time) sdk.InterruptResult {
	resp := c.do("RunQueues", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_RunQueues{
		RunQueues: &pb.RunQueuesRequest{Cpu: int64(cpu), Now: int64(now)}}})
	return fromproto.InterruptResult(expect(c.s, "RunQueues", resp.GetRunQueues(), resp).GetResult())
}

// ClockWasSet implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) ClockWasSet(cpu int, now ktime.Time, off sdk.ClockOffsets) sdk.HROpResult {
	resp := c.do("ClockWasSet", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_ClockWasSet{
		ClockWasSet: &pb.ClockWasSetRequest{Cpu: int64(cpu), Now: int64(now), Offsets: toproto.ClockOffsets(off)}}})
	return fromproto.HROpResult(expect(c.s, "ClockWasSet", resp.GetClockWasSet(), resp).GetResult())
}

// InterruptETIME implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) InterruptETIME(cpu int, now ktime.Time) sdk.InterruptResult {
	resp := c.do("InterruptETIME", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_InterruptEtime{
		InterruptEtime: &pb.InterruptETIMERequest{Cpu: int64(cpu), Now: int64(now)}}})
	return fromproto.InterruptResult(expect(c.s, "InterruptETIME", resp.GetInterruptEtime(), resp).GetResult())
}

// RetriggerNextEvent implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) RetriggerNextEvent(cpu int, now ktime.Time) sdk.HROpResult {
	resp := c.do("RetriggerNextEvent", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_RetriggerNextEvent{
		RetriggerNextEvent: &pb.RetriggerNextEventRequest{Cpu: int64(cpu), Now: int64(now)}}})
	return fromproto.HROpResult(expect(c.s, "RetriggerNextEvent", resp.GetRetriggerNextEvent(), resp).GetResult())
}

// NextEvent implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) NextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) ktime.Time {
	resp := c.do("NextEvent", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_NextEvent{
		NextEvent: &pb.NextEventRequest{Cpu: int64(cpu), Now: int64(now), Exclude: uint64(exclude)}}})
	return ktime.Time(expect(c.s, "NextEvent", resp.GetNextEvent(), resp).GetNext())
}

// StartNextEvent sends NextEvent and returns the function that waits for
// its answer: the kernel asks the wheel's next event in between, so the two
// round trips overlap (sdk.NextEventStarter).
func (c *hrTimerBaseClient) StartNextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) (wait func() ktime.Time) {
	w := c.b.start("NextEvent", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_NextEvent{
		NextEvent: &pb.NextEventRequest{Cpu: int64(cpu), Now: int64(now), Exclude: uint64(exclude)}}})
	return func() ktime.Time {
		resp := w()
		return ktime.Time(expect(c.s, "NextEvent", resp.GetNextEvent(), resp).GetNext())
	}
}

// hrTimerBaseServer serves sdk.HRTimerBase sessions.
type hrTimerBaseServer struct {
	pb.UnimplementedHRTimerBaseServiceServer
	r *registry
}

// HRTimerBaseSession implements pb.HRTimerBaseServiceServer.
func (s *hrTimerBaseServer) HRTimerBaseSession(stream pb.HRTimerBaseService_HRTimerBaseSessionServer) error {
	return serveSession(s.r, stream,
		func(req *pb.HRTimerBaseSessionRequest) *pb.OpenRequest {
			return onlyCall(req.GetCalls()).GetPlugin().GetOpen()
		},
		func(o *pb.OpenResponse) *pb.HRTimerBaseSessionResponse {
			return &pb.HRTimerBaseSessionResponse{Results: []*pb.HRTimerBaseResult{{Result: &pb.HRTimerBaseResult_Plugin{
				Plugin: &pb.PluginResponse{Result: &pb.PluginResponse_Open{Open: o}}}}}}
		},
		batchOf(func(req *pb.HRTimerBaseSessionRequest) []*pb.HRTimerBaseCall { return req.GetCalls() },
			func(rs []*pb.HRTimerBaseResult) *pb.HRTimerBaseSessionResponse {
				return &pb.HRTimerBaseSessionResponse{Results: rs}
			},
			dispatchHRTimerBase))
}

// dispatchHRTimerBase makes one sdk.HRTimerBase call.
func dispatchHRTimerBase(p sdk.Plugin, req *pb.HRTimerBaseCall) (*pb.HRTimerBaseResult, error) {
	hb := p.(sdk.HRTimerBase)
	switch c := req.GetCall().(type) {
	case *pb.HRTimerBaseCall_Plugin:
		r, err := servePlugin(p, c.Plugin)
		if err != nil {
			return nil, err
		}
		return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_Plugin{Plugin: r}}, nil
	case *pb.HRTimerBaseCall_Start:
		m := c.Start
		r := hb.Start(int(m.GetCpu()), ktime.Time(m.GetNow()), fromproto.HRTimer(m.GetTimer()), ktime.Time(m.GetExpires()), m.GetSlack())
		return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_Start{
			Start: &pb.StartResponse{Result: toproto.HROpResult(r)}}}, nil
	case *pb.HRTimerBaseCall_Cancel:
		m := c.Cancel
		r := hb.Cancel(int(m.GetCpu()), ktime.Time(m.GetNow()), sdk.TimerID(m.GetId()))
		return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_Cancel{
			Cancel: &pb.CancelResponse{Result: toproto.HROpResult(r)}}}, nil
	case *pb.HRTimerBaseCall_Interrupt:
		m := c.Interrupt
		r := hb.Interrupt(int(m.GetCpu()), ktime.Time(m.GetNow()))
		return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_Interrupt{
			Interrupt: &pb.InterruptResponse{Result: toproto.InterruptResult(r)}}}, nil
	case *pb.HRTimerBaseCall_RunSoftirq:
		m := c.RunSoftirq
		r := hb.RunSoftirq(int(m.GetCpu()), ktime.Time(m.GetNow()))
		return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_RunSoftirq{
			RunSoftirq: &pb.RunSoftirqResponse{Result: toproto.InterruptResult(r)}}}, nil
	case *pb.HRTimerBaseCall_RunQueues:
		m := c.RunQueues
		r := hb.RunQueues(int(m.GetCpu()), ktime.Time(m.GetNow()))
		return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_RunQueues{
			RunQueues: &pb.RunQueuesResponse{Result: toproto.InterruptResult(r)}}}, nil
	case *pb.HRTimerBaseCall_ClockWasSet:
		m := c.ClockWasSet
		r := hb.ClockWasSet(int(m.GetCpu()), ktime.Time(m.GetNow()), fromproto.ClockOffsets(m.GetOffsets()))
		return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_ClockWasSet{
			ClockWasSet: &pb.ClockWasSetResponse{Result: toproto.HROpResult(r)}}}, nil
	case *pb.HRTimerBaseCall_InterruptEtime:
		m := c.InterruptEtime
		r := hb.InterruptETIME(int(m.GetCpu()), ktime.Time(m.GetNow()))
		return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_InterruptEtime{
			InterruptEtime: &pb.InterruptETIMEResponse{Result: toproto.InterruptResult(r)}}}, nil
	case *pb.HRTimerBaseCall_RetriggerNextEvent:
		m := c.RetriggerNextEvent
		r := hb.RetriggerNextEvent(int(m.GetCpu()), ktime.Time(m.GetNow()))
		return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_RetriggerNextEvent{
			RetriggerNextEvent: &pb.RetriggerNextEventResponse{Result: toproto.HROpResult(r)}}}, nil
	case *pb.HRTimerBaseCall_NextEvent:
		m := c.NextEvent
		r := hb.NextEvent(int(m.GetCpu()), ktime.Time(m.GetNow()), sdk.TimerID(m.GetExclude()))
		return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_NextEvent{
			NextEvent: &pb.NextEventResponse{Next: int64(r)}}}, nil
	default:
		return nil, errUnknownCall(c)
	}
}
