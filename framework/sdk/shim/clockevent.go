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
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/model"
)

var clockEventDeviceShim = kindShim{
	implements: func(p sdk.Plugin) bool { _, ok := p.(sdk.ClockEventDevice); return ok },
	register: func(s *grpc.Server, r *registry) {
		pb.RegisterClockEventDeviceServiceServer(s, &clockEventDeviceServer{r: r})
	},
	stream: func(ctx context.Context, cc grpc.ClientConnInterface) (grpc.ClientStream, error) {
		return pb.NewClockEventDeviceServiceClient(cc).ClockEventDeviceSession(ctx)
	},
	client: func(s *session) (sdk.Plugin, *base) {
		c := &clockEventDeviceClient{}
		c.b = batcher[pb.ClockEventDeviceCall, pb.ClockEventDeviceResult]{s: s, exchange: func(call string, calls []*pb.ClockEventDeviceCall) ([]*pb.ClockEventDeviceResult, proto.Message) {
			resp := new(pb.ClockEventDeviceSessionResponse)
			s.roundTrip(call, &pb.ClockEventDeviceSessionRequest{Calls: calls}, resp)
			return resp.GetResults(), resp
		}}
		c.base = base{s: s, plugin: c.plugin}
		return c, &c.base
	},
}

// clockEventDeviceClient implements sdk.ClockEventDevice over a session.
//
// When the device declares a DeadlineModel (it comes with the Spec answer),
// the client answers SetNextEvent, Ack and the oneshot state changes from the
// model at once and sends the calls later, batched in front of the next call
// it must wait for; the device's real answers are checked against the model
// then. The kernel thus never waits for such a device on its hot path: one
// interrupt or idle transition costs no device round trip, drawn latencies
// and EOI costs included (the model draws them from its copy of the device's
// stream, which sees the same calls in the same order).
type clockEventDeviceClient struct {
	base
	b batcher[pb.ClockEventDeviceCall, pb.ClockEventDeviceResult]
	// model is the device's declared model, valid from the Spec answer
	// until the next Configure; nil when it declared none.
	model *model.Deadline
}

var _ sdk.ClockEventDevice = (*clockEventDeviceClient)(nil)

func (c *clockEventDeviceClient) do(call string, req *pb.ClockEventDeviceCall) *pb.ClockEventDeviceResult {
	return c.b.call(call, req)
}

func (c *clockEventDeviceClient) plugin(call string, req *pb.PluginRequest) *pb.PluginResponse {
	resp := c.do(call, &pb.ClockEventDeviceCall{Call: &pb.ClockEventDeviceCall_Plugin{Plugin: req}})
	return expect(c.s, call, resp.GetPlugin(), resp)
}

// Configure implements sdk.Plugin; it forgets the model, which the new
// configuration may change.
func (c *clockEventDeviceClient) Configure(s sdk.Setup, cfg sdk.Config) sdk.Diagnostics {
	c.model = nil
	return c.base.Configure(s, cfg)
}

// Spec implements sdk.ClockEventDevice.
func (c *clockEventDeviceClient) Spec() sdk.DeviceSpec {
	resp := c.do("Spec", &pb.ClockEventDeviceCall{Call: &pb.ClockEventDeviceCall_Spec{
		Spec: &pb.SpecRequest{}}})
	r := expect(c.s, "Spec", resp.GetSpec(), resp)
	if c.model != nil {
		// The model holds the device's random stream where the calls so
		// far left it; a Spec answer again (the same model until the next
		// Configure) must not restart it.
		return fromproto.DeviceSpec(r.GetSpec())
	}
	if dm, ok := fromproto.DeadlineModel(r.GetDeadlineModel()); ok {
		m, ok := model.NewDeadline(dm)
		if !ok {
			c.s.violation("Spec", fmt.Errorf("malformed DeadlineModel %+v (a zero rate or scale, a negative cost or latency, or a spread that cannot be drawn from)", dm))
		}
		c.model = &m
	}
	return fromproto.DeviceSpec(r.GetSpec())
}

// SetNextEvent implements sdk.ClockEventDevice.
func (c *clockEventDeviceClient) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	req := &pb.ClockEventDeviceCall{Call: &pb.ClockEventDeviceCall_SetNextEvent{
		SetNextEvent: &pb.SetNextEventRequest{Ch: int64(ch), Now: int64(now), Ticks: ticks}}}
	if c.model != nil {
		want := c.model.SetNextEvent(now, ticks)
		c.b.later("SetNextEvent", req, func(r *pb.ClockEventDeviceResult) error {
			if r.GetSetNextEvent() == nil {
				return fmt.Errorf("answer to SetNextEvent is %v", r)
			}
			if got := fromproto.ProgramResult(r.GetSetNextEvent().GetResult()); got != want {
				return fmt.Errorf("SetNextEvent(%d, %d, %d) answered %+v, its DeadlineModel gives %+v", ch, now, ticks, got, want)
			}
			return nil
		})
		return want
	}
	resp := c.do("SetNextEvent", req)
	return fromproto.ProgramResult(expect(c.s, "SetNextEvent", resp.GetSetNextEvent(), resp).GetResult())
}

// SetState implements sdk.ClockEventDevice.
func (c *clockEventDeviceClient) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
	req := &pb.ClockEventDeviceCall{Call: &pb.ClockEventDeviceCall_SetState{
		SetState: &pb.SetStateRequest{Ch: int64(ch), Now: int64(now), State: int64(st), Period: period}}}
	if c.model != nil {
		if cost, fire, ok := c.model.SetState(st); ok {
			c.b.later("SetState", req, func(r *pb.ClockEventDeviceResult) error {
				a := r.GetSetState()
				if a == nil {
					return fmt.Errorf("answer to SetState is %v", r)
				}
				if a.GetCost() != cost || ktime.Time(a.GetFirstFire()) != fire {
					return fmt.Errorf("SetState(%d, %d, %v) answered %d, %d; its DeadlineModel gives %d, %d", ch, now, st, a.GetCost(), a.GetFirstFire(), cost, fire)
				}
				return nil
			})
			return cost, fire
		}
	}
	resp := c.do("SetState", req)
	r := expect(c.s, "SetState", resp.GetSetState(), resp)
	return r.GetCost(), ktime.Time(r.GetFirstFire())
}

// Ack implements sdk.ClockEventDevice.
func (c *clockEventDeviceClient) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	req := &pb.ClockEventDeviceCall{Call: &pb.ClockEventDeviceCall_Ack{
		Ack: &pb.AckRequest{Ch: int64(ch), Now: int64(now)}}}
	if c.model != nil {
		cost, next := c.model.Ack()
		c.b.later("Ack", req, func(r *pb.ClockEventDeviceResult) error {
			a := r.GetAck()
			if a == nil {
				return fmt.Errorf("answer to Ack is %v", r)
			}
			if a.GetCost() != cost || ktime.Time(a.GetNextFire()) != next {
				return fmt.Errorf("Ack(%d, %d) answered %d, %d; its DeadlineModel gives %d, %d", ch, now, a.GetCost(), a.GetNextFire(), cost, next)
			}
			return nil
		})
		return cost, next
	}
	resp := c.do("Ack", req)
	r := expect(c.s, "Ack", resp.GetAck(), resp)
	return r.GetCost(), ktime.Time(r.GetNextFire())
}

// clockEventDeviceServer serves sdk.ClockEventDevice sessions.
type clockEventDeviceServer struct {
	pb.UnimplementedClockEventDeviceServiceServer
	r *registry
}

// ClockEventDeviceSession implements pb.ClockEventDeviceServiceServer.
func (s *clockEventDeviceServer) ClockEventDeviceSession(stream pb.ClockEventDeviceService_ClockEventDeviceSessionServer) error {
	return serveSession(s.r, stream,
		func(req *pb.ClockEventDeviceSessionRequest) *pb.OpenRequest {
			return onlyCall(req.GetCalls()).GetPlugin().GetOpen()
		},
		func(o *pb.OpenResponse) *pb.ClockEventDeviceSessionResponse {
			return &pb.ClockEventDeviceSessionResponse{Results: []*pb.ClockEventDeviceResult{{Result: &pb.ClockEventDeviceResult_Plugin{
				Plugin: &pb.PluginResponse{Result: &pb.PluginResponse_Open{Open: o}}}}}}
		},
		batchOf(func(req *pb.ClockEventDeviceSessionRequest) []*pb.ClockEventDeviceCall { return req.GetCalls() },
			func(rs []*pb.ClockEventDeviceResult) *pb.ClockEventDeviceSessionResponse {
				return &pb.ClockEventDeviceSessionResponse{Results: rs}
			},
			dispatchClockEventDevice), nil)
}

// dispatchClockEventDevice makes one sdk.ClockEventDevice call.
func dispatchClockEventDevice(p sdk.Plugin, req *pb.ClockEventDeviceCall) (*pb.ClockEventDeviceResult, error) {
	d := p.(sdk.ClockEventDevice)
	switch c := req.GetCall().(type) {
	case *pb.ClockEventDeviceCall_Plugin:
		r, err := servePlugin(p, c.Plugin)
		if err != nil {
			return nil, err
		}
		return &pb.ClockEventDeviceResult{Result: &pb.ClockEventDeviceResult_Plugin{Plugin: r}}, nil
	case *pb.ClockEventDeviceCall_Spec:
		sr := &pb.SpecResponse{Spec: toproto.DeviceSpec(d.Spec())}
		if dd, ok := p.(sdk.DeadlineDevice); ok {
			if m, ok := dd.DeadlineModel(); ok {
				sr.DeadlineModel = toproto.DeadlineModel(m)
			}
		}
		return &pb.ClockEventDeviceResult{Result: &pb.ClockEventDeviceResult_Spec{Spec: sr}}, nil
	case *pb.ClockEventDeviceCall_SetNextEvent:
		m := c.SetNextEvent
		r := d.SetNextEvent(int(m.GetCh()), ktime.Time(m.GetNow()), m.GetTicks())
		return &pb.ClockEventDeviceResult{Result: &pb.ClockEventDeviceResult_SetNextEvent{
			SetNextEvent: &pb.SetNextEventResponse{Result: toproto.ProgramResult(r)}}}, nil
	case *pb.ClockEventDeviceCall_SetState:
		m := c.SetState
		cost, first := d.SetState(int(m.GetCh()), ktime.Time(m.GetNow()), sdk.DeviceState(m.GetState()), m.GetPeriod())
		return &pb.ClockEventDeviceResult{Result: &pb.ClockEventDeviceResult_SetState{
			SetState: &pb.SetStateResponse{Cost: cost, FirstFire: int64(first)}}}, nil
	case *pb.ClockEventDeviceCall_Ack:
		m := c.Ack
		cost, next := d.Ack(int(m.GetCh()), ktime.Time(m.GetNow()))
		return &pb.ClockEventDeviceResult{Result: &pb.ClockEventDeviceResult_Ack{
			Ack: &pb.AckResponse{Cost: cost, NextFire: int64(next)}}}, nil
	default:
		return nil, errUnknownCall(c)
	}
}
