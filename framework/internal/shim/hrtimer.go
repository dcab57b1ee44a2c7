package shim

import (
	"context"

	"google.golang.org/grpc"

	pb "github.com/tickemu/tickemu/framework/internal/pb/tickemu/plugin/v1"
	"github.com/tickemu/tickemu/framework/internal/shim/fromproto"
	"github.com/tickemu/tickemu/framework/internal/shim/toproto"
	"github.com/tickemu/tickemu/framework/ktime"
	"github.com/tickemu/tickemu/framework/sdk"
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
		c.base = base{s: s, plugin: c.plugin}
		return c, &c.base
	},
}

// hrTimerBaseClient implements sdk.HRTimerBase over a session.
type hrTimerBaseClient struct {
	base
}

var _ sdk.HRTimerBase = (*hrTimerBaseClient)(nil)

func (c *hrTimerBaseClient) do(call string, req *pb.HRTimerBaseSessionRequest) *pb.HRTimerBaseSessionResponse {
	resp := new(pb.HRTimerBaseSessionResponse)
	c.s.roundTrip(call, req, resp)
	return resp
}

func (c *hrTimerBaseClient) plugin(call string, req *pb.PluginRequest) *pb.PluginResponse {
	resp := c.do(call, &pb.HRTimerBaseSessionRequest{Call: &pb.HRTimerBaseSessionRequest_Plugin{Plugin: req}})
	return expect(c.s, call, resp.GetPlugin(), resp)
}

// Start implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) Start(cpu int, now ktime.Time, t sdk.HRTimer, expires ktime.Time, slack int64) sdk.HROpResult {
	resp := c.do("Start", &pb.HRTimerBaseSessionRequest{Call: &pb.HRTimerBaseSessionRequest_Start{
		Start: &pb.StartRequest{Cpu: int64(cpu), Now: int64(now), Timer: toproto.HRTimer(t), Expires: int64(expires), Slack: slack}}})
	return fromproto.HROpResult(expect(c.s, "Start", resp.GetStart(), resp).GetResult())
}

// Cancel implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) Cancel(cpu int, now ktime.Time, id sdk.TimerID) sdk.HROpResult {
	resp := c.do("Cancel", &pb.HRTimerBaseSessionRequest{Call: &pb.HRTimerBaseSessionRequest_Cancel{
		Cancel: &pb.CancelRequest{Cpu: int64(cpu), Now: int64(now), Id: uint64(id)}}})
	return fromproto.HROpResult(expect(c.s, "Cancel", resp.GetCancel(), resp).GetResult())
}

// Interrupt implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) Interrupt(cpu int, now ktime.Time) sdk.InterruptResult {
	resp := c.do("Interrupt", &pb.HRTimerBaseSessionRequest{Call: &pb.HRTimerBaseSessionRequest_Interrupt{
		Interrupt: &pb.InterruptRequest{Cpu: int64(cpu), Now: int64(now)}}})
	return fromproto.InterruptResult(expect(c.s, "Interrupt", resp.GetInterrupt(), resp).GetResult())
}

// RunSoftirq implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) RunSoftirq(cpu int, now ktime.Time) sdk.InterruptResult {
	resp := c.do("RunSoftirq", &pb.HRTimerBaseSessionRequest{Call: &pb.HRTimerBaseSessionRequest_RunSoftirq{
		RunSoftirq: &pb.RunSoftirqRequest{Cpu: int64(cpu), Now: int64(now)}}})
	return fromproto.InterruptResult(expect(c.s, "RunSoftirq", resp.GetRunSoftirq(), resp).GetResult())
}

// RunQueues implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) RunQueues(cpu int, now ktime.Time) sdk.InterruptResult {
	resp := c.do("RunQueues", &pb.HRTimerBaseSessionRequest{Call: &pb.HRTimerBaseSessionRequest_RunQueues{
		RunQueues: &pb.RunQueuesRequest{Cpu: int64(cpu), Now: int64(now)}}})
	return fromproto.InterruptResult(expect(c.s, "RunQueues", resp.GetRunQueues(), resp).GetResult())
}

// ClockWasSet implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) ClockWasSet(cpu int, now ktime.Time, off sdk.ClockOffsets) sdk.HROpResult {
	resp := c.do("ClockWasSet", &pb.HRTimerBaseSessionRequest{Call: &pb.HRTimerBaseSessionRequest_ClockWasSet{
		ClockWasSet: &pb.ClockWasSetRequest{Cpu: int64(cpu), Now: int64(now), Offsets: toproto.ClockOffsets(off)}}})
	return fromproto.HROpResult(expect(c.s, "ClockWasSet", resp.GetClockWasSet(), resp).GetResult())
}

// NextEvent implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) NextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) ktime.Time {
	resp := c.do("NextEvent", &pb.HRTimerBaseSessionRequest{Call: &pb.HRTimerBaseSessionRequest_NextEvent{
		NextEvent: &pb.NextEventRequest{Cpu: int64(cpu), Now: int64(now), Exclude: uint64(exclude)}}})
	return ktime.Time(expect(c.s, "NextEvent", resp.GetNextEvent(), resp).GetNext())
}

// hrTimerBaseServer serves sdk.HRTimerBase sessions.
type hrTimerBaseServer struct {
	pb.UnimplementedHRTimerBaseServiceServer
	r *registry
}

// HRTimerBaseSession implements pb.HRTimerBaseServiceServer.
func (s *hrTimerBaseServer) HRTimerBaseSession(stream pb.HRTimerBaseService_HRTimerBaseSessionServer) error {
	return serveSession(s.r, stream,
		func(req *pb.HRTimerBaseSessionRequest) *pb.OpenRequest { return req.GetPlugin().GetOpen() },
		func(o *pb.OpenResponse) *pb.HRTimerBaseSessionResponse {
			return &pb.HRTimerBaseSessionResponse{Result: &pb.HRTimerBaseSessionResponse_Plugin{
				Plugin: &pb.PluginResponse{Result: &pb.PluginResponse_Open{Open: o}}}}
		},
		dispatchHRTimerBase)
}

// dispatchHRTimerBase makes one sdk.HRTimerBase call.
func dispatchHRTimerBase(p sdk.Plugin, req *pb.HRTimerBaseSessionRequest) (*pb.HRTimerBaseSessionResponse, error) {
	hb := p.(sdk.HRTimerBase)
	switch c := req.GetCall().(type) {
	case *pb.HRTimerBaseSessionRequest_Plugin:
		r, err := servePlugin(p, c.Plugin)
		if err != nil {
			return nil, err
		}
		return &pb.HRTimerBaseSessionResponse{Result: &pb.HRTimerBaseSessionResponse_Plugin{Plugin: r}}, nil
	case *pb.HRTimerBaseSessionRequest_Start:
		m := c.Start
		r := hb.Start(int(m.GetCpu()), ktime.Time(m.GetNow()), fromproto.HRTimer(m.GetTimer()), ktime.Time(m.GetExpires()), m.GetSlack())
		return &pb.HRTimerBaseSessionResponse{Result: &pb.HRTimerBaseSessionResponse_Start{
			Start: &pb.StartResponse{Result: toproto.HROpResult(r)}}}, nil
	case *pb.HRTimerBaseSessionRequest_Cancel:
		m := c.Cancel
		r := hb.Cancel(int(m.GetCpu()), ktime.Time(m.GetNow()), sdk.TimerID(m.GetId()))
		return &pb.HRTimerBaseSessionResponse{Result: &pb.HRTimerBaseSessionResponse_Cancel{
			Cancel: &pb.CancelResponse{Result: toproto.HROpResult(r)}}}, nil
	case *pb.HRTimerBaseSessionRequest_Interrupt:
		m := c.Interrupt
		r := hb.Interrupt(int(m.GetCpu()), ktime.Time(m.GetNow()))
		return &pb.HRTimerBaseSessionResponse{Result: &pb.HRTimerBaseSessionResponse_Interrupt{
			Interrupt: &pb.InterruptResponse{Result: toproto.InterruptResult(r)}}}, nil
	case *pb.HRTimerBaseSessionRequest_RunSoftirq:
		m := c.RunSoftirq
		r := hb.RunSoftirq(int(m.GetCpu()), ktime.Time(m.GetNow()))
		return &pb.HRTimerBaseSessionResponse{Result: &pb.HRTimerBaseSessionResponse_RunSoftirq{
			RunSoftirq: &pb.RunSoftirqResponse{Result: toproto.InterruptResult(r)}}}, nil
	case *pb.HRTimerBaseSessionRequest_RunQueues:
		m := c.RunQueues
		r := hb.RunQueues(int(m.GetCpu()), ktime.Time(m.GetNow()))
		return &pb.HRTimerBaseSessionResponse{Result: &pb.HRTimerBaseSessionResponse_RunQueues{
			RunQueues: &pb.RunQueuesResponse{Result: toproto.InterruptResult(r)}}}, nil
	case *pb.HRTimerBaseSessionRequest_ClockWasSet:
		m := c.ClockWasSet
		r := hb.ClockWasSet(int(m.GetCpu()), ktime.Time(m.GetNow()), fromproto.ClockOffsets(m.GetOffsets()))
		return &pb.HRTimerBaseSessionResponse{Result: &pb.HRTimerBaseSessionResponse_ClockWasSet{
			ClockWasSet: &pb.ClockWasSetResponse{Result: toproto.HROpResult(r)}}}, nil
	case *pb.HRTimerBaseSessionRequest_NextEvent:
		m := c.NextEvent
		r := hb.NextEvent(int(m.GetCpu()), ktime.Time(m.GetNow()), sdk.TimerID(m.GetExclude()))
		return &pb.HRTimerBaseSessionResponse{Result: &pb.HRTimerBaseSessionResponse_NextEvent{
			NextEvent: &pb.NextEventResponse{Next: int64(r)}}}, nil
	default:
		return nil, errUnknownCall(c)
	}
}
