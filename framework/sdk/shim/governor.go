package shim

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tickemu/tickemu/framework/sdk"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

var governorShim = kindShim{
	implements: func(p sdk.Plugin) bool { _, ok := p.(sdk.Governor); return ok },
	register: func(s *grpc.Server, r *registry) {
		pb.RegisterGovernorServiceServer(s, &governorServer{r: r})
	},
	stream: func(ctx context.Context, cc grpc.ClientConnInterface) (grpc.ClientStream, error) {
		return pb.NewGovernorServiceClient(cc).GovernorSession(ctx)
	},
	client: func(s *session) (sdk.Plugin, *base) {
		c := &governorClient{}
		c.b = batcher[pb.GovernorCall, pb.GovernorResult]{s: s, exchange: func(call string, calls []*pb.GovernorCall) ([]*pb.GovernorResult, proto.Message) {
			resp := new(pb.GovernorSessionResponse)
			s.roundTrip(call, &pb.GovernorSessionRequest{Calls: calls}, resp)
			return resp.GetResults(), resp
		}}
		c.base = base{s: s, plugin: c.plugin}
		return c, &c.base
	},
}

// governorClient implements sdk.Governor over a session. Reflect has no
// result: the batcher holds it and sends it in front of the next call, so an
// idle entry costs one round trip (Select) instead of two.
type governorClient struct {
	base
	b batcher[pb.GovernorCall, pb.GovernorResult]
}

var _ sdk.Governor = (*governorClient)(nil)

func (c *governorClient) plugin(call string, req *pb.PluginRequest) *pb.PluginResponse {
	resp := c.b.call(call, &pb.GovernorCall{Call: &pb.GovernorCall_Plugin{Plugin: req}})
	return expect(c.s, call, resp.GetPlugin(), resp)
}

// Enable implements sdk.Governor.
func (c *governorClient) Enable(cpu int, states []sdk.CPUIdleState) {
	m := &pb.EnableRequest{Cpu: int64(cpu)}
	for _, s := range states {
		m.States = append(m.States, &pb.CPUIdleState{Name: s.Name, ExitLatency: s.ExitLatency,
			TargetResidency: s.TargetResidency, Polling: s.Polling, StopsLocalTimer: s.StopsLocalTimer})
	}
	resp := c.b.call("Enable", &pb.GovernorCall{Call: &pb.GovernorCall_Enable{Enable: m}})
	expect(c.s, "Enable", resp.GetEnable(), resp)
}

// Select implements sdk.Governor.
func (c *governorClient) Select(r sdk.IdleSelect) sdk.IdleChoice {
	resp := c.b.call("Select", &pb.GovernorCall{Call: &pb.GovernorCall_Select{Select: &pb.SelectRequest{
		Cpu: int64(r.CPU), Now: int64(r.Now), SleepLength: r.SleepLength, DeltaTick: r.DeltaTick,
		TickStopped: r.TickStopped, LatencyReq: r.LatencyReq, TickNsec: r.TickNsec, Util: r.Util}}})
	a := expect(c.s, "Select", resp.GetSelect(), resp)
	return sdk.IdleChoice{State: int(a.GetState()), StopTick: a.GetStopTick(), Cost: a.GetCost()}
}

// Reflect implements sdk.Governor: it travels with the next call.
func (c *governorClient) Reflect(r sdk.IdleReflect) {
	c.b.later("Reflect", &pb.GovernorCall{Call: &pb.GovernorCall_Reflect{Reflect: &pb.ReflectRequest{
		Cpu: int64(r.CPU), State: int64(r.State), Residency: r.Residency, Span: r.Span, TickWakeup: r.TickWakeup}}}, nil)
}

// governorServer serves sdk.Governor sessions.
type governorServer struct {
	pb.UnimplementedGovernorServiceServer
	r *registry
}

// GovernorSession implements pb.GovernorServiceServer.
func (s *governorServer) GovernorSession(stream pb.GovernorService_GovernorSessionServer) error {
	return serveSession(s.r, stream,
		func(req *pb.GovernorSessionRequest) *pb.OpenRequest {
			return onlyCall(req.GetCalls()).GetPlugin().GetOpen()
		},
		func(o *pb.OpenResponse) *pb.GovernorSessionResponse {
			return &pb.GovernorSessionResponse{Results: []*pb.GovernorResult{{Result: &pb.GovernorResult_Plugin{
				Plugin: &pb.PluginResponse{Result: &pb.PluginResponse_Open{Open: o}}}}}}
		},
		batchOf(func(req *pb.GovernorSessionRequest) []*pb.GovernorCall { return req.GetCalls() },
			func(rs []*pb.GovernorResult) *pb.GovernorSessionResponse {
				return &pb.GovernorSessionResponse{Results: rs}
			},
			dispatchGovernor), nil)
}

// dispatchGovernor makes one sdk.Governor call.
func dispatchGovernor(p sdk.Plugin, req *pb.GovernorCall) (*pb.GovernorResult, error) {
	g := p.(sdk.Governor)
	switch c := req.GetCall().(type) {
	case *pb.GovernorCall_Plugin:
		r, err := servePlugin(p, c.Plugin)
		if err != nil {
			return nil, err
		}
		return &pb.GovernorResult{Result: &pb.GovernorResult_Plugin{Plugin: r}}, nil
	case *pb.GovernorCall_Enable:
		var states []sdk.CPUIdleState
		for _, s := range c.Enable.GetStates() {
			states = append(states, sdk.CPUIdleState{Name: s.GetName(), ExitLatency: s.GetExitLatency(),
				TargetResidency: s.GetTargetResidency(), Polling: s.GetPolling(), StopsLocalTimer: s.GetStopsLocalTimer()})
		}
		g.Enable(int(c.Enable.GetCpu()), states)
		return &pb.GovernorResult{Result: &pb.GovernorResult_Enable{Enable: &pb.EnableResponse{}}}, nil
	case *pb.GovernorCall_Select:
		m := c.Select
		a := g.Select(sdk.IdleSelect{CPU: int(m.GetCpu()), Now: ktime.Time(m.GetNow()), SleepLength: m.GetSleepLength(),
			DeltaTick: m.GetDeltaTick(), TickStopped: m.GetTickStopped(), LatencyReq: m.GetLatencyReq(),
			TickNsec: m.GetTickNsec(), Util: m.GetUtil()})
		return &pb.GovernorResult{Result: &pb.GovernorResult_Select{
			Select: &pb.SelectResponse{State: int64(a.State), StopTick: a.StopTick, Cost: a.Cost}}}, nil
	case *pb.GovernorCall_Reflect:
		m := c.Reflect
		g.Reflect(sdk.IdleReflect{CPU: int(m.GetCpu()), State: int(m.GetState()), Residency: m.GetResidency(),
			Span: m.GetSpan(), TickWakeup: m.GetTickWakeup()})
		return &pb.GovernorResult{Result: &pb.GovernorResult_Reflect{Reflect: &pb.ReflectResponse{}}}, nil
	default:
		return nil, errUnknownCall(c)
	}
}
