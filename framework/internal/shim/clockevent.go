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
		c.base = base{s: s, plugin: c.plugin}
		return c, &c.base
	},
}

// clockEventDeviceClient implements sdk.ClockEventDevice over a session.
type clockEventDeviceClient struct {
	base
}

var _ sdk.ClockEventDevice = (*clockEventDeviceClient)(nil)

func (c *clockEventDeviceClient) do(call string, req *pb.ClockEventDeviceSessionRequest) *pb.ClockEventDeviceSessionResponse {
	resp := new(pb.ClockEventDeviceSessionResponse)
	c.s.roundTrip(call, req, resp)
	return resp
}

func (c *clockEventDeviceClient) plugin(call string, req *pb.PluginRequest) *pb.PluginResponse {
	resp := c.do(call, &pb.ClockEventDeviceSessionRequest{Call: &pb.ClockEventDeviceSessionRequest_Plugin{Plugin: req}})
	return expect(c.s, call, resp.GetPlugin(), resp)
}

// Spec implements sdk.ClockEventDevice.
func (c *clockEventDeviceClient) Spec() sdk.DeviceSpec {
	resp := c.do("Spec", &pb.ClockEventDeviceSessionRequest{Call: &pb.ClockEventDeviceSessionRequest_Spec{
		Spec: &pb.SpecRequest{}}})
	return fromproto.DeviceSpec(expect(c.s, "Spec", resp.GetSpec(), resp).GetSpec())
}

// SetNextEvent implements sdk.ClockEventDevice.
func (c *clockEventDeviceClient) SetNextEvent(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
	resp := c.do("SetNextEvent", &pb.ClockEventDeviceSessionRequest{Call: &pb.ClockEventDeviceSessionRequest_SetNextEvent{
		SetNextEvent: &pb.SetNextEventRequest{Ch: int64(ch), Now: int64(now), Ticks: ticks}}})
	return fromproto.ProgramResult(expect(c.s, "SetNextEvent", resp.GetSetNextEvent(), resp).GetResult())
}

// SetState implements sdk.ClockEventDevice.
func (c *clockEventDeviceClient) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
	resp := c.do("SetState", &pb.ClockEventDeviceSessionRequest{Call: &pb.ClockEventDeviceSessionRequest_SetState{
		SetState: &pb.SetStateRequest{Ch: int64(ch), Now: int64(now), State: int64(st), Period: period}}})
	r := expect(c.s, "SetState", resp.GetSetState(), resp)
	return r.GetCost(), ktime.Time(r.GetFirstFire())
}

// Ack implements sdk.ClockEventDevice.
func (c *clockEventDeviceClient) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	resp := c.do("Ack", &pb.ClockEventDeviceSessionRequest{Call: &pb.ClockEventDeviceSessionRequest_Ack{
		Ack: &pb.AckRequest{Ch: int64(ch), Now: int64(now)}}})
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
		func(req *pb.ClockEventDeviceSessionRequest) *pb.OpenRequest { return req.GetPlugin().GetOpen() },
		func(o *pb.OpenResponse) *pb.ClockEventDeviceSessionResponse {
			return &pb.ClockEventDeviceSessionResponse{Result: &pb.ClockEventDeviceSessionResponse_Plugin{
				Plugin: &pb.PluginResponse{Result: &pb.PluginResponse_Open{Open: o}}}}
		},
		dispatchClockEventDevice)
}

// dispatchClockEventDevice makes one sdk.ClockEventDevice call.
func dispatchClockEventDevice(p sdk.Plugin, req *pb.ClockEventDeviceSessionRequest) (*pb.ClockEventDeviceSessionResponse, error) {
	d := p.(sdk.ClockEventDevice)
	switch c := req.GetCall().(type) {
	case *pb.ClockEventDeviceSessionRequest_Plugin:
		r, err := servePlugin(p, c.Plugin)
		if err != nil {
			return nil, err
		}
		return &pb.ClockEventDeviceSessionResponse{Result: &pb.ClockEventDeviceSessionResponse_Plugin{Plugin: r}}, nil
	case *pb.ClockEventDeviceSessionRequest_Spec:
		return &pb.ClockEventDeviceSessionResponse{Result: &pb.ClockEventDeviceSessionResponse_Spec{
			Spec: &pb.SpecResponse{Spec: toproto.DeviceSpec(d.Spec())}}}, nil
	case *pb.ClockEventDeviceSessionRequest_SetNextEvent:
		m := c.SetNextEvent
		r := d.SetNextEvent(int(m.GetCh()), ktime.Time(m.GetNow()), m.GetTicks())
		return &pb.ClockEventDeviceSessionResponse{Result: &pb.ClockEventDeviceSessionResponse_SetNextEvent{
			SetNextEvent: &pb.SetNextEventResponse{Result: toproto.ProgramResult(r)}}}, nil
	case *pb.ClockEventDeviceSessionRequest_SetState:
		m := c.SetState
		cost, first := d.SetState(int(m.GetCh()), ktime.Time(m.GetNow()), sdk.DeviceState(m.GetState()), m.GetPeriod())
		return &pb.ClockEventDeviceSessionResponse{Result: &pb.ClockEventDeviceSessionResponse_SetState{
			SetState: &pb.SetStateResponse{Cost: cost, FirstFire: int64(first)}}}, nil
	case *pb.ClockEventDeviceSessionRequest_Ack:
		m := c.Ack
		cost, next := d.Ack(int(m.GetCh()), ktime.Time(m.GetNow()))
		return &pb.ClockEventDeviceSessionResponse{Result: &pb.ClockEventDeviceSessionResponse_Ack{
			Ack: &pb.AckResponse{Cost: cost, NextFire: int64(next)}}}, nil
	default:
		return nil, errUnknownCall(c)
	}
}
