package shim

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tickemu/tickemu/framework/sdk"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// The three policy kinds share their session messages (policy.proto); each
// has its own service so the server knows the kind from the RPC.
var (
	hangPolicyShim = policyShim(sdk.KindHangPolicy,
		func(p sdk.Plugin) bool { _, ok := p.(sdk.HangPolicy); return ok },
		func(s *grpc.Server, r *registry) { pb.RegisterHangPolicyServiceServer(s, &hangPolicyServer{r: r}) },
		func(ctx context.Context, cc grpc.ClientConnInterface) (grpc.ClientStream, error) {
			return pb.NewHangPolicyServiceClient(cc).HangPolicySession(ctx)
		})
	catchupPolicyShim = policyShim(sdk.KindCatchupPolicy,
		func(p sdk.Plugin) bool { _, ok := p.(sdk.CatchupPolicy); return ok },
		func(s *grpc.Server, r *registry) {
			pb.RegisterCatchupPolicyServiceServer(s, &catchupPolicyServer{r: r})
		},
		func(ctx context.Context, cc grpc.ClientConnInterface) (grpc.ClientStream, error) {
			return pb.NewCatchupPolicyServiceClient(cc).CatchupPolicySession(ctx)
		})
	restartPolicyShim = policyShim(sdk.KindRestartPolicy,
		func(p sdk.Plugin) bool { _, ok := p.(sdk.RestartPolicy); return ok },
		func(s *grpc.Server, r *registry) {
			pb.RegisterRestartPolicyServiceServer(s, &restartPolicyServer{r: r})
		},
		func(ctx context.Context, cc grpc.ClientConnInterface) (grpc.ClientStream, error) {
			return pb.NewRestartPolicyServiceClient(cc).RestartPolicySession(ctx)
		})
)

func policyShim(k sdk.Kind, implements func(sdk.Plugin) bool, register func(*grpc.Server, *registry),
	stream func(context.Context, grpc.ClientConnInterface) (grpc.ClientStream, error)) kindShim {
	return kindShim{
		implements: implements,
		register:   register,
		stream:     stream,
		client: func(s *session) (sdk.Plugin, *base) {
			c := &policyClient{}
			c.b = batcher[pb.PolicyCall, pb.PolicyResult]{s: s, exchange: func(call string, calls []*pb.PolicyCall) ([]*pb.PolicyResult, proto.Message) {
				// The kinds' session messages differ only in name.
				var req, resp proto.Message
				var results func() []*pb.PolicyResult
				switch k {
				case sdk.KindHangPolicy:
					r := new(pb.HangPolicySessionResponse)
					req, resp, results = &pb.HangPolicySessionRequest{Calls: calls}, r, r.GetResults
				case sdk.KindCatchupPolicy:
					r := new(pb.CatchupPolicySessionResponse)
					req, resp, results = &pb.CatchupPolicySessionRequest{Calls: calls}, r, r.GetResults
				default:
					r := new(pb.RestartPolicySessionResponse)
					req, resp, results = &pb.RestartPolicySessionRequest{Calls: calls}, r, r.GetResults
				}
				s.roundTrip(call, req, resp)
				return results(), resp
			}}
			c.base = base{s: s, plugin: c.plugin}
			switch k {
			case sdk.KindHangPolicy:
				return &hangPolicyClient{c}, &c.base
			case sdk.KindCatchupPolicy:
				return &catchupPolicyClient{c}, &c.base
			default:
				return &restartPolicyClient{c}, &c.base
			}
		},
	}
}

// policyClient is the session of one policy value: every decision is one
// call the host waits for, one round trip.
type policyClient struct {
	base
	b batcher[pb.PolicyCall, pb.PolicyResult]
}

func (c *policyClient) plugin(call string, req *pb.PluginRequest) *pb.PluginResponse {
	resp := c.b.call(call, &pb.PolicyCall{Call: &pb.PolicyCall_Plugin{Plugin: req}})
	return expect(c.s, call, resp.GetPlugin(), resp)
}

type hangPolicyClient struct{ *policyClient }

var _ sdk.HangPolicy = (*hangPolicyClient)(nil)

// Hang implements sdk.HangPolicy.
func (c *hangPolicyClient) Hang(r sdk.HangRequest) sdk.HangDecision {
	resp := c.b.call("Hang", &pb.PolicyCall{Call: &pb.PolicyCall_Hang{Hang: &pb.HangRequest{
		Cpu: int64(r.CPU), Now: int64(r.Now), Entry: int64(r.Entry), NrHangs: r.NrHangs, MaxHangTime: r.MaxHangTime}}})
	a := expect(c.s, "Hang", resp.GetHang(), resp)
	return sdk.HangDecision{Delay: a.GetDelay(), KeepDetected: a.GetKeepDetected()}
}

type catchupPolicyClient struct{ *policyClient }

var _ sdk.CatchupPolicy = (*catchupPolicyClient)(nil)

// Catchup implements sdk.CatchupPolicy.
func (c *catchupPolicyClient) Catchup(r sdk.CatchupRequest) sdk.CatchupDecision {
	resp := c.b.call("Catchup", &pb.PolicyCall{Call: &pb.PolicyCall_Catchup{Catchup: &pb.CatchupRequest{
		Cpu: int64(r.CPU), Base: int64(r.Base), Jiffies: r.Jiffies, Clk: r.Clk, Pending: int64(r.Pending)}}})
	a := expect(c.s, "Catchup", resp.GetCatchup(), resp)
	return sdk.CatchupDecision{Mode: sdk.CatchupMode(a.GetMode())}
}

type restartPolicyClient struct{ *policyClient }

var _ sdk.RestartPolicy = (*restartPolicyClient)(nil)

// Restart implements sdk.RestartPolicy.
func (c *restartPolicyClient) Restart(r sdk.RestartRequest) sdk.RestartDecision {
	resp := c.b.call("Restart", &pb.PolicyCall{Call: &pb.PolicyCall_Restart{Restart: &pb.RestartRequest{
		Cpu: int64(r.CPU), Now: int64(r.Now), Old: int64(r.Old), New: int64(r.New)}}})
	a := expect(c.s, "Restart", resp.GetRestart(), resp)
	return sdk.RestartDecision{Deferred: a.GetDeferred()}
}

type hangPolicyServer struct {
	pb.UnimplementedHangPolicyServiceServer
	r *registry
}

// HangPolicySession implements pb.HangPolicyServiceServer.
func (s *hangPolicyServer) HangPolicySession(stream pb.HangPolicyService_HangPolicySessionServer) error {
	return servePolicySession(s.r, stream, (*pb.HangPolicySessionRequest).GetCalls, func(rs []*pb.PolicyResult) *pb.HangPolicySessionResponse {
		return &pb.HangPolicySessionResponse{Results: rs}
	})
}

type catchupPolicyServer struct {
	pb.UnimplementedCatchupPolicyServiceServer
	r *registry
}

// CatchupPolicySession implements pb.CatchupPolicyServiceServer.
func (s *catchupPolicyServer) CatchupPolicySession(stream pb.CatchupPolicyService_CatchupPolicySessionServer) error {
	return servePolicySession(s.r, stream, (*pb.CatchupPolicySessionRequest).GetCalls, func(rs []*pb.PolicyResult) *pb.CatchupPolicySessionResponse {
		return &pb.CatchupPolicySessionResponse{Results: rs}
	})
}

type restartPolicyServer struct {
	pb.UnimplementedRestartPolicyServiceServer
	r *registry
}

// RestartPolicySession implements pb.RestartPolicyServiceServer.
func (s *restartPolicyServer) RestartPolicySession(stream pb.RestartPolicyService_RestartPolicySessionServer) error {
	return servePolicySession(s.r, stream, (*pb.RestartPolicySessionRequest).GetCalls, func(rs []*pb.PolicyResult) *pb.RestartPolicySessionResponse {
		return &pb.RestartPolicySessionResponse{Results: rs}
	})
}

// servePolicySession serves one policy session whose messages are Req and
// Resp (the kinds' messages differ only in name).
func servePolicySession[Req, Resp any](r *registry, stream grpc.BidiStreamingServer[Req, Resp],
	calls func(*Req) []*pb.PolicyCall, answer func([]*pb.PolicyResult) *Resp) error {
	return serveSession(r, stream,
		func(req *Req) *pb.OpenRequest {
			return onlyCall(calls(req)).GetPlugin().GetOpen()
		},
		func(o *pb.OpenResponse) *Resp {
			return answer([]*pb.PolicyResult{{Result: &pb.PolicyResult_Plugin{
				Plugin: &pb.PluginResponse{Result: &pb.PluginResponse_Open{Open: o}}}}})
		},
		batchOf(calls, answer, dispatchPolicy), nil)
}

// dispatchPolicy makes one policy call; a decision the plugin's kind does
// not make is INVALID_ARGUMENT.
func dispatchPolicy(p sdk.Plugin, req *pb.PolicyCall) (*pb.PolicyResult, error) {
	wrong := func(call string) error {
		return status.Errorf(codes.InvalidArgument, "%s call to a %s plugin", call, p.Info().Kind)
	}
	switch c := req.GetCall().(type) {
	case *pb.PolicyCall_Plugin:
		r, err := servePlugin(p, c.Plugin)
		if err != nil {
			return nil, err
		}
		return &pb.PolicyResult{Result: &pb.PolicyResult_Plugin{Plugin: r}}, nil
	case *pb.PolicyCall_Hang:
		h, ok := p.(sdk.HangPolicy)
		if !ok {
			return nil, wrong("Hang")
		}
		m := c.Hang
		d := h.Hang(sdk.HangRequest{CPU: int(m.GetCpu()), Now: ktime.Time(m.GetNow()), Entry: ktime.Time(m.GetEntry()),
			NrHangs: m.GetNrHangs(), MaxHangTime: m.GetMaxHangTime()})
		return &pb.PolicyResult{Result: &pb.PolicyResult_Hang{Hang: &pb.HangDecision{Delay: d.Delay, KeepDetected: d.KeepDetected}}}, nil
	case *pb.PolicyCall_Catchup:
		cp, ok := p.(sdk.CatchupPolicy)
		if !ok {
			return nil, wrong("Catchup")
		}
		m := c.Catchup
		d := cp.Catchup(sdk.CatchupRequest{CPU: int(m.GetCpu()), Base: int(m.GetBase()), Jiffies: m.GetJiffies(),
			Clk: m.GetClk(), Pending: int(m.GetPending())})
		return &pb.PolicyResult{Result: &pb.PolicyResult_Catchup{Catchup: &pb.CatchupDecision{Mode: int32(d.Mode)}}}, nil
	case *pb.PolicyCall_Restart:
		rp, ok := p.(sdk.RestartPolicy)
		if !ok {
			return nil, wrong("Restart")
		}
		m := c.Restart
		d := rp.Restart(sdk.RestartRequest{CPU: int(m.GetCpu()), Now: ktime.Time(m.GetNow()), Old: ktime.Time(m.GetOld()), New: ktime.Time(m.GetNew())})
		return &pb.PolicyResult{Result: &pb.PolicyResult_Restart{Restart: &pb.RestartDecision{Deferred: d.Deferred}}}, nil
	default:
		return nil, errUnknownCall(c)
	}
}
