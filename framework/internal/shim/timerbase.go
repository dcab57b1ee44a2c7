package shim

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/tickemu/tickemu/framework/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/internal/shim/fromproto"
	"github.com/tickemu/tickemu/framework/internal/shim/toproto"
	"github.com/tickemu/tickemu/framework/sdk"
)

var timerBaseShim = kindShim{
	implements: func(p sdk.Plugin) bool { _, ok := p.(sdk.TimerBase); return ok },
	register: func(s *grpc.Server, r *registry) {
		pb.RegisterTimerBaseServiceServer(s, &timerBaseServer{r: r})
	},
	stream: func(ctx context.Context, cc grpc.ClientConnInterface) (grpc.ClientStream, error) {
		return pb.NewTimerBaseServiceClient(cc).TimerBaseSession(ctx)
	},
	client: func(s *session) (sdk.Plugin, *base) {
		c := &timerBaseClient{}
		c.b = batcher[pb.TimerBaseCall, pb.TimerBaseResult]{s: s, exchange: func(call string, calls []*pb.TimerBaseCall) ([]*pb.TimerBaseResult, proto.Message) {
			resp := new(pb.TimerBaseSessionResponse)
			s.roundTrip(call, &pb.TimerBaseSessionRequest{Calls: calls}, resp)
			return resp.GetResults(), resp
		}}
		c.base = base{s: s, plugin: c.plugin}
		return c, &c.base
	},
}

// timerBaseClient implements sdk.TimerBase over a session. Every call waits
// for its answer (the host uses each one at once).
type timerBaseClient struct {
	base
	b batcher[pb.TimerBaseCall, pb.TimerBaseResult]
}

var _ sdk.TimerBase = (*timerBaseClient)(nil)

func (c *timerBaseClient) do(call string, req *pb.TimerBaseCall) *pb.TimerBaseResult {
	return c.b.call(call, req)
}

func (c *timerBaseClient) plugin(call string, req *pb.PluginRequest) *pb.PluginResponse {
	resp := c.do(call, &pb.TimerBaseCall{Call: &pb.TimerBaseCall_Plugin{Plugin: req}})
	return expect(c.s, call, resp.GetPlugin(), resp)
}

// ModTimer implements sdk.TimerBase.
func (c *timerBaseClient) ModTimer(cpu int, jiffies uint64, t sdk.WheelTimer) sdk.WheelOpResult {
	resp := c.do("ModTimer", &pb.TimerBaseCall{Call: &pb.TimerBaseCall_ModTimer{
		ModTimer: &pb.ModTimerRequest{Cpu: int64(cpu), Jiffies: jiffies, Timer: toproto.WheelTimer(t)}}})
	return fromproto.WheelOpResult(expect(c.s, "ModTimer", resp.GetModTimer(), resp).GetResult())
}

// DelTimer implements sdk.TimerBase.
func (c *timerBaseClient) DelTimer(cpu int, jiffies uint64, id sdk.TimerID) sdk.WheelOpResult {
	resp := c.do("DelTimer", &pb.TimerBaseCall{Call: &pb.TimerBaseCall_DelTimer{
		DelTimer: &pb.DelTimerRequest{Cpu: int64(cpu), Jiffies: jiffies, Id: uint64(id)}}})
	return fromproto.WheelOpResult(expect(c.s, "DelTimer", resp.GetDelTimer(), resp).GetResult())
}

// RunTimers implements sdk.TimerBase.
func (c *timerBaseClient) RunTimers(cpu int, jiffies uint64) sdk.RunTimersResult {
	resp := c.do("RunTimers", &pb.TimerBaseCall{Call: &pb.TimerBaseCall_RunTimers{
		RunTimers: &pb.RunTimersRequest{Cpu: int64(cpu), Jiffies: jiffies}}})
	return fromproto.RunTimersResult(expect(c.s, "RunTimers", resp.GetRunTimers(), resp).GetResult())
}

// NextTimerInterrupt implements sdk.TimerBase.
func (c *timerBaseClient) NextTimerInterrupt(cpu int, jiffies uint64) sdk.NextTimerResult {
	resp := c.do("NextTimerInterrupt", &pb.TimerBaseCall{Call: &pb.TimerBaseCall_NextTimerInterrupt{
		NextTimerInterrupt: &pb.NextTimerInterruptRequest{Cpu: int64(cpu), Jiffies: jiffies}}})
	return fromproto.NextTimerResult(expect(c.s, "NextTimerInterrupt", resp.GetNextTimerInterrupt(), resp).GetResult())
}

// timerBaseServer serves sdk.TimerBase sessions.
type timerBaseServer struct {
	pb.UnimplementedTimerBaseServiceServer
	r *registry
}

// TimerBaseSession implements pb.TimerBaseServiceServer.
func (s *timerBaseServer) TimerBaseSession(stream pb.TimerBaseService_TimerBaseSessionServer) error {
	return serveSession(s.r, stream,
		func(req *pb.TimerBaseSessionRequest) *pb.OpenRequest {
			return onlyCall(req.GetCalls()).GetPlugin().GetOpen()
		},
		func(o *pb.OpenResponse) *pb.TimerBaseSessionResponse {
			return &pb.TimerBaseSessionResponse{Results: []*pb.TimerBaseResult{{Result: &pb.TimerBaseResult_Plugin{
				Plugin: &pb.PluginResponse{Result: &pb.PluginResponse_Open{Open: o}}}}}}
		},
		batchOf(func(req *pb.TimerBaseSessionRequest) []*pb.TimerBaseCall { return req.GetCalls() },
			func(rs []*pb.TimerBaseResult) *pb.TimerBaseSessionResponse {
				return &pb.TimerBaseSessionResponse{Results: rs}
			},
			dispatchTimerBase))
}

// dispatchTimerBase makes one sdk.TimerBase call.
func dispatchTimerBase(p sdk.Plugin, req *pb.TimerBaseCall) (*pb.TimerBaseResult, error) {
	tb := p.(sdk.TimerBase)
	switch c := req.GetCall().(type) {
	case *pb.TimerBaseCall_Plugin:
		r, err := servePlugin(p, c.Plugin)
		if err != nil {
			return nil, err
		}
		return &pb.TimerBaseResult{Result: &pb.TimerBaseResult_Plugin{Plugin: r}}, nil
	case *pb.TimerBaseCall_ModTimer:
		m := c.ModTimer
		r := tb.ModTimer(int(m.GetCpu()), m.GetJiffies(), fromproto.WheelTimer(m.GetTimer()))
		return &pb.TimerBaseResult{Result: &pb.TimerBaseResult_ModTimer{
			ModTimer: &pb.ModTimerResponse{Result: toproto.WheelOpResult(r)}}}, nil
	case *pb.TimerBaseCall_DelTimer:
		m := c.DelTimer
		r := tb.DelTimer(int(m.GetCpu()), m.GetJiffies(), sdk.TimerID(m.GetId()))
		return &pb.TimerBaseResult{Result: &pb.TimerBaseResult_DelTimer{
			DelTimer: &pb.DelTimerResponse{Result: toproto.WheelOpResult(r)}}}, nil
	case *pb.TimerBaseCall_RunTimers:
		m := c.RunTimers
		r := tb.RunTimers(int(m.GetCpu()), m.GetJiffies())
		return &pb.TimerBaseResult{Result: &pb.TimerBaseResult_RunTimers{
			RunTimers: &pb.RunTimersResponse{Result: toproto.RunTimersResult(r)}}}, nil
	case *pb.TimerBaseCall_NextTimerInterrupt:
		m := c.NextTimerInterrupt
		r := tb.NextTimerInterrupt(int(m.GetCpu()), m.GetJiffies())
		return &pb.TimerBaseResult{Result: &pb.TimerBaseResult_NextTimerInterrupt{
			NextTimerInterrupt: &pb.NextTimerInterruptResponse{Result: toproto.NextTimerResult(r)}}}, nil
	default:
		return nil, errUnknownCall(c)
	}
}
