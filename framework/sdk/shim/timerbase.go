package shim

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/internal/fromproto"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/sdk/internal/toproto"
	"github.com/tickemu/tickemu/framework/sdk/model"
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
			c.takeModels(resp.GetModels())
			return resp.GetResults(), resp
		}}
		c.base = base{s: s, plugin: c.plugin}
		s.onPolicy = newPolicyAnswerer(&c.pol, (*pb.TimerBaseSessionResponse).GetPolicyCall,
			func(a *pb.PolicyResult) *pb.TimerBaseSessionRequest {
				return &pb.TimerBaseSessionRequest{PolicyAnswer: a}
			})
		return c, &c.base
	},
}

// timerBaseClient implements sdk.TimerBase over a session. Every call waits
// for its answer (the host uses each one at once), except NextTimerInterrupt
// on a CPU whose declared sdk.NextTimerModel covers it: that one is answered
// from the model and held (batcher.later). repeated[cpu] says the CPU's model
// answered a call already.
type timerBaseClient struct {
	base
	b        batcher[pb.TimerBaseCall, pb.TimerBaseResult]
	models   []sdk.NextTimerModel
	repeated []bool
	// pol answers the plugin's catch-up decisions (UsePolicy).
	pol policyHost
}

var _ sdk.PolicyUser = (*timerBaseClient)(nil)

// UsePolicy implements sdk.PolicyUser: the plugin in its process is handed a
// proxy that asks p through the host (policypeer.go); one round trip.
func (c *timerBaseClient) UsePolicy(k sdk.Kind, p sdk.Plugin) bool {
	return c.pol.usePolicy(k, p, func(u *pb.UsePolicyRequest) bool {
		resp := c.b.call("UsePolicy", &pb.TimerBaseCall{Call: &pb.TimerBaseCall_UsePolicy{UsePolicy: u}})
		return expect(c.s, "UsePolicy", resp.GetUsePolicy(), resp).GetTaken()
	})
}

// takeModels stores the models an answer carried.
func (c *timerBaseClient) takeModels(ms []*pb.NextTimerModel) {
	for _, m := range ms {
		cpu := int(m.GetCpu())
		if cpu < 0 || cpu >= maxModelCPUs {
			continue
		}
		for len(c.models) <= cpu {
			c.models = append(c.models, sdk.NextTimerModel{})
			c.repeated = append(c.repeated, false)
		}
		c.models[cpu], c.repeated[cpu] = ntModelFromProto(m), false
	}
}

var _ sdk.RemoteTimerBase = (*timerBaseClient)(nil)

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
	req := &pb.TimerBaseCall{Call: &pb.TimerBaseCall_NextTimerInterrupt{
		NextTimerInterrupt: &pb.NextTimerInterruptRequest{Cpu: int64(cpu), Jiffies: jiffies}}}
	if cpu >= 0 && cpu < len(c.models) {
		if want, ok := model.NextTimer(&c.models[cpu], jiffies, c.repeated[cpu]); ok {
			c.repeated[cpu] = true
			c.b.later("NextTimerInterrupt", req, func(res *pb.TimerBaseResult) error {
				got := fromproto.NextTimerResult(res.GetNextTimerInterrupt().GetResult())
				if got != want {
					return fmt.Errorf("answered %+v where its declared model (sdk.NextTimerModel) gives %+v", got, want)
				}
				return nil
			})
			return want
		}
	}
	resp := c.do("NextTimerInterrupt", req)
	return fromproto.NextTimerResult(expect(c.s, "NextTimerInterrupt", resp.GetNextTimerInterrupt(), resp).GetResult())
}

// ExpireRemote implements sdk.RemoteTimerBase; the host calls it only for a
// plugin whose state says Split, and a plugin without the method answers
// with an error the session reports.
func (c *timerBaseClient) ExpireRemote(cpu int, jiffies uint64) sdk.RunTimersResult {
	resp := c.do("ExpireRemote", &pb.TimerBaseCall{Call: &pb.TimerBaseCall_ExpireRemote{
		ExpireRemote: &pb.ExpireRemoteRequest{Cpu: int64(cpu), Jiffies: jiffies}}})
	return fromproto.RunTimersResult(expect(c.s, "ExpireRemote", resp.GetExpireRemote(), resp).GetResult())
}

// timerBaseServer serves sdk.TimerBase sessions.
type timerBaseServer struct {
	pb.UnimplementedTimerBaseServiceServer
	r *registry
}

// TimerBaseSession implements pb.TimerBaseServiceServer.
func (s *timerBaseServer) TimerBaseSession(stream pb.TimerBaseService_TimerBaseSessionServer) error {
	peer := new(policyPeer)
	dispatch := func(p sdk.Plugin, c *pb.TimerBaseCall) (*pb.TimerBaseResult, error) {
		if u := c.GetUsePolicy(); u != nil {
			taken, err := peer.use(p, u.GetKind())
			if err != nil {
				return nil, err
			}
			return &pb.TimerBaseResult{Result: &pb.TimerBaseResult_UsePolicy{UsePolicy: &pb.UsePolicyResponse{Taken: taken}}}, nil
		}
		return dispatchTimerBase(p, c)
	}
	return serveSession(s.r, stream,
		func(req *pb.TimerBaseSessionRequest) *pb.OpenRequest {
			return onlyCall(req.GetCalls()).GetPlugin().GetOpen()
		},
		func(o *pb.OpenResponse) *pb.TimerBaseSessionResponse {
			return &pb.TimerBaseSessionResponse{Results: []*pb.TimerBaseResult{{Result: &pb.TimerBaseResult_Plugin{
				Plugin: &pb.PluginResponse{Result: &pb.PluginResponse_Open{Open: o}}}}}}
		},
		withNextTimerModels(batchOf(func(req *pb.TimerBaseSessionRequest) []*pb.TimerBaseCall { return req.GetCalls() },
			func(rs []*pb.TimerBaseResult) *pb.TimerBaseSessionResponse {
				return &pb.TimerBaseSessionResponse{Results: rs}
			},
			dispatch)),
		bindPeer(peer, func(c *pb.PolicyCall) *pb.TimerBaseSessionResponse {
			return &pb.TimerBaseSessionResponse{PolicyCall: c}
		}, func(req *pb.TimerBaseSessionRequest) *pb.PolicyResult {
			if len(req.GetCalls()) > 0 {
				return nil
			}
			return req.GetPolicyAnswer()
		}))
}

// withNextTimerModels adds the plugin's sdk.NextTimerModel updates to each
// answer of dispatch, for a plugin that declares them.
func withNextTimerModels(dispatch func(sdk.Plugin, *pb.TimerBaseSessionRequest) (*pb.TimerBaseSessionResponse, error)) func(sdk.Plugin, *pb.TimerBaseSessionRequest) (*pb.TimerBaseSessionResponse, error) {
	var t modelTracker[sdk.NextTimerModel]
	return func(p sdk.Plugin, req *pb.TimerBaseSessionRequest) (*pb.TimerBaseSessionResponse, error) {
		resp, err := dispatch(p, req)
		md, ok := p.(sdk.NextTimerModeler)
		if err != nil || !ok {
			return resp, err
		}
		calls := messages(req.GetCalls())
		t.configured(calls)
		t.changed(calls, md.NextTimerModel, func(a, b sdk.NextTimerModel) bool { return a == b }, func(cpu int, m sdk.NextTimerModel) {
			resp.Models = append(resp.Models, ntModelToProto(cpu, m))
		})
		return resp, nil
	}
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
	case *pb.TimerBaseCall_ExpireRemote:
		rb, ok := tb.(sdk.RemoteTimerBase)
		if !ok {
			return nil, fmt.Errorf("ExpireRemote: the plugin has no BASE_GLOBAL (it does not implement sdk.RemoteTimerBase)")
		}
		m := c.ExpireRemote
		r := rb.ExpireRemote(int(m.GetCpu()), m.GetJiffies())
		return &pb.TimerBaseResult{Result: &pb.TimerBaseResult_ExpireRemote{
			ExpireRemote: &pb.ExpireRemoteResponse{Result: toproto.RunTimersResult(r)}}}, nil
	default:
		return nil, errUnknownCall(c)
	}
}
