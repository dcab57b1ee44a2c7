package shim

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tickemu/tickemu/framework/sdk"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
)

// Policies of a base plugin in its own process (sdk.PolicyUser over the
// wire). The host hands the base a policy kind with a UsePolicy call on the
// base's session; the server hands its plugin a proxy of that kind
// (policyProxy). When the plugin asks the proxy in the middle of a call, the
// server answers the session's message with a response that carries only the
// decision asked (policy_call) and reads the next request, which carries only
// the answer (policy_answer); then the call goes on and its message is
// answered as usual. The host answers with the policy it configured, linked
// in or in a process of its own (whose session then makes its own round
// trip): the same policy value, behind the same contract checker, as when
// the base is linked in, so the runs are the same. A decision costs the base's
// session one more round trip (counted on the call that asked), and the
// policy's own round trip when it runs out of process too.

// exchanger sends a session response carrying a policy call and returns the
// next request of the session, which should answer it.
type exchanger[Req, Resp any] func(out *Resp) (*Req, error)

// streamExchanger is the exchanger of a session on its gRPC stream.
func streamExchanger[Req, Resp any](stream grpc.BidiStreamingServer[Req, Resp]) exchanger[Req, Resp] {
	return func(out *Resp) (*Req, error) {
		if err := stream.Send(out); err != nil {
			return nil, err
		}
		return stream.Recv()
	}
}

// socketExchanger is the exchanger of a session on its socket.
func socketExchanger[Req, Resp any](c *sockConn) exchanger[Req, Resp] {
	return func(out *Resp) (*Req, error) {
		if err := c.send(any(out).(proto.Message)); err != nil {
			return nil, err
		}
		in := new(Req)
		if err := c.recv(any(in).(proto.Message)); err != nil {
			return nil, err
		}
		return in, nil
	}
}

// policyPeer is the server end of one base session's policy calls: ask
// sends a decision to the host and waits for its answer. bind sets ask once
// the session's transport is known (the gRPC stream, or the socket).
type policyPeer struct {
	ask func(*pb.PolicyCall) (*pb.PolicyResult, error)
}

// bindPeer returns the bind function serveSession calls with the session's
// exchanger: it makes peer ask through it, wrapping each call in a Resp
// (wrap) and taking the answer from the next Req (answer; nil when the
// request is not only an answer).
func bindPeer[Req, Resp any](peer *policyPeer, wrap func(*pb.PolicyCall) *Resp,
	answer func(*Req) *pb.PolicyResult) func(exchanger[Req, Resp]) {
	return func(ex exchanger[Req, Resp]) {
		peer.ask = func(c *pb.PolicyCall) (*pb.PolicyResult, error) {
			in, err := ex(wrap(c))
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return nil, err
			}
			a := answer(in)
			if a == nil {
				return nil, status.Errorf(codes.InvalidArgument, "the host answered a policy call with %v", in)
			}
			return a, nil
		}
	}
}

// use hands p (the plugin of the session) a proxy of policy kind k, for the
// UsePolicy call; taken is p's answer.
func (peer *policyPeer) use(p sdk.Plugin, kind string) (taken bool, err error) {
	u, ok := p.(sdk.PolicyUser)
	if !ok {
		return false, nil
	}
	k := sdk.Kind(kind)
	pr := policyProxy{peer: peer, kind: k}
	switch k {
	case sdk.KindHangPolicy:
		return u.UsePolicy(k, hangProxy{pr}), nil
	case sdk.KindCatchupPolicy:
		return u.UsePolicy(k, catchupProxy{pr}), nil
	case sdk.KindRestartPolicy:
		return u.UsePolicy(k, restartProxy{pr}), nil
	}
	return false, status.Errorf(codes.InvalidArgument, "UsePolicy: %q is no policy kind (want one of %v)", kind, sdk.PolicyKinds)
}

// policyProxy is the host's policy as the base's process sees it. Its
// sdk.Plugin methods describe the proxy only: the policy itself is
// configured, counted and described by the host.
type policyProxy struct {
	peer *policyPeer
	kind sdk.Kind
}

// Info implements sdk.Plugin.
func (p policyProxy) Info() sdk.Info {
	return sdk.Info{Kind: p.kind, Name: "host", Description: "the policy the host configured, asked over the session"}
}

// Schema implements sdk.Plugin.
func (policyProxy) Schema() sdk.Schema { return sdk.Schema{} }

// Configure implements sdk.Plugin: the host configured the policy.
func (policyProxy) Configure(sdk.Setup, sdk.Config) sdk.Diagnostics { return nil }

// Counters implements sdk.Plugin: the host reports the policy's counters.
func (policyProxy) Counters() []sdk.Counter { return nil }

// decide asks the host; a failure panics, which ends the session (guard)
// as a failed call of the base would.
func (p policyProxy) decide(call string, c *pb.PolicyCall) *pb.PolicyResult {
	if p.peer.ask == nil {
		panic(fmt.Sprintf("%s asked before the session's transport was bound", call))
	}
	r, err := p.peer.ask(c)
	if err != nil {
		panic(askError{fmt.Errorf("asking the host's %s for %s: %w", p.kind, call, err)})
	}
	return r
}

// askError is a policy call the host did not answer; it ends the session
// without the log line of a plugin panic (registry.guard).
type askError struct{ error }

type hangProxy struct{ policyProxy }

// Hang implements sdk.HangPolicy.
func (p hangProxy) Hang(r sdk.HangRequest) sdk.HangDecision {
	a := p.decide("Hang", &pb.PolicyCall{Call: &pb.PolicyCall_Hang{Hang: &pb.HangRequest{
		Cpu: int64(r.CPU), Now: int64(r.Now), Entry: int64(r.Entry), NrHangs: r.NrHangs, MaxHangTime: r.MaxHangTime}}}).GetHang()
	if a == nil {
		panic("the host answered Hang with another decision")
	}
	return sdk.HangDecision{Delay: a.GetDelay(), KeepDetected: a.GetKeepDetected()}
}

type catchupProxy struct{ policyProxy }

// Catchup implements sdk.CatchupPolicy.
func (p catchupProxy) Catchup(r sdk.CatchupRequest) sdk.CatchupDecision {
	a := p.decide("Catchup", &pb.PolicyCall{Call: &pb.PolicyCall_Catchup{Catchup: &pb.CatchupRequest{
		Cpu: int64(r.CPU), Base: int64(r.Base), Jiffies: r.Jiffies, Clk: r.Clk, Pending: int64(r.Pending)}}}).GetCatchup()
	if a == nil {
		panic("the host answered Catchup with another decision")
	}
	return sdk.CatchupDecision{Mode: sdk.CatchupMode(a.GetMode())}
}

type restartProxy struct{ policyProxy }

// Restart implements sdk.RestartPolicy.
func (p restartProxy) Restart(r sdk.RestartRequest) sdk.RestartDecision {
	a := p.decide("Restart", &pb.PolicyCall{Call: &pb.PolicyCall_Restart{Restart: &pb.RestartRequest{
		Cpu: int64(r.CPU), Now: int64(r.Now), Old: int64(r.Old), New: int64(r.New)}}}).GetRestart()
	if a == nil {
		panic("the host answered Restart with another decision")
	}
	return sdk.RestartDecision{Deferred: a.GetDeferred()}
}

var (
	_ sdk.HangPolicy    = hangProxy{}
	_ sdk.CatchupPolicy = catchupProxy{}
	_ sdk.RestartPolicy = restartProxy{}
)

// policyHost is the client end: the policies the host handed the base, by
// kind, which answer the base's policy calls.
type policyHost struct {
	policies map[sdk.Kind]sdk.Plugin
}

// take records p as the policy of kind k.
func (h *policyHost) take(k sdk.Kind, p sdk.Plugin) {
	if h.policies == nil {
		h.policies = make(map[sdk.Kind]sdk.Plugin)
	}
	h.policies[k] = p
}

// answer makes the decision c asks with the policy of its kind; an error
// is the base asking a decision it was not handed a policy for.
func (h *policyHost) answer(c *pb.PolicyCall) (*pb.PolicyResult, error) {
	var k sdk.Kind
	switch c.GetCall().(type) {
	case *pb.PolicyCall_Hang:
		k = sdk.KindHangPolicy
	case *pb.PolicyCall_Catchup:
		k = sdk.KindCatchupPolicy
	case *pb.PolicyCall_Restart:
		k = sdk.KindRestartPolicy
	default:
		return nil, fmt.Errorf("protocol error: policy call %v is no decision", c)
	}
	p, ok := h.policies[k]
	if !ok {
		return nil, fmt.Errorf("protocol error: the plugin asked a %s decision, but no %s was handed to it (UsePolicy)", k, k)
	}
	return dispatchPolicy(p, c)
}

// usePolicy is the client side of sdk.PolicyUser for a base kind: it asks
// the server's plugin with the UsePolicy call (do makes it and returns the
// plugin's answer) and keeps p to answer its decisions.
func (h *policyHost) usePolicy(k sdk.Kind, p sdk.Plugin, do func(*pb.UsePolicyRequest) bool) bool {
	if !do(&pb.UsePolicyRequest{Kind: string(k)}) {
		return false
	}
	h.take(k, p)
	return true
}

// policyAnswerer is a base session's hook (session.onPolicy): call returns
// the policy call a response carries (nil: it is an answer), answer the
// request that carries the host's decision.
type policyAnswerer struct {
	call   func(resp proto.Message) *pb.PolicyCall
	answer func(*pb.PolicyCall) (proto.Message, error)
}

// newPolicyAnswerer returns the hook of a base kind whose responses carry
// policy calls in call and whose requests carry answers as wrap makes them.
func newPolicyAnswerer[Req, Resp proto.Message](h *policyHost, call func(Resp) *pb.PolicyCall,
	wrap func(*pb.PolicyResult) Req) *policyAnswerer {
	return &policyAnswerer{
		call: func(resp proto.Message) *pb.PolicyCall {
			r, ok := resp.(Resp)
			if !ok {
				return nil
			}
			return call(r)
		},
		answer: func(c *pb.PolicyCall) (proto.Message, error) {
			a, err := h.answer(c)
			if err != nil {
				return nil, err
			}
			return wrap(a), nil
		},
	}
}
