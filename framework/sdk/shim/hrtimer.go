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

var hrTimerBaseShim = kindShim{
	implements: func(p sdk.Plugin) bool { _, ok := p.(sdk.HRTimerBase); return ok },
	register: func(s *grpc.Server, r *registry) {
		pb.RegisterHRTimerBaseServiceServer(s, &hrTimerBaseServer{r: r})
	},
	stream: func(ctx context.Context, cc grpc.ClientConnInterface) (grpc.ClientStream, error) {
		return pb.NewHRTimerBaseServiceClient(cc).HRTimerBaseSession(ctx)
	},
	client: func(s *session) (sdk.Plugin, *base) {
		c := &hrTimerBaseClient{queuedOn: make(map[sdk.TimerID]int), running: make(map[sdk.TimerID]ktime.Time)}
		c.b = batcher[pb.HRTimerBaseCall, pb.HRTimerBaseResult]{s: s, exchange: func(call string, calls []*pb.HRTimerBaseCall) ([]*pb.HRTimerBaseResult, proto.Message) {
			resp := new(pb.HRTimerBaseSessionResponse)
			s.roundTrip(call, &pb.HRTimerBaseSessionRequest{Calls: calls}, resp)
			c.takeModels(resp.GetModels())
			return resp.GetResults(), resp
		}, split: func(call string, calls []*pb.HRTimerBaseCall) func() ([]*pb.HRTimerBaseResult, proto.Message) {
			s.begin(call, &pb.HRTimerBaseSessionRequest{Calls: calls})
			return func() ([]*pb.HRTimerBaseResult, proto.Message) {
				resp := new(pb.HRTimerBaseSessionResponse)
				s.end(call, resp)
				c.takeModels(resp.GetModels())
				return resp.GetResults(), resp
			}
		}}
		c.base = base{s: s, plugin: c.plugin}
		s.onPolicy = newPolicyAnswerer(&c.pol, (*pb.HRTimerBaseSessionResponse).GetPolicyCall,
			func(a *pb.PolicyResult) *pb.HRTimerBaseSessionRequest {
				return &pb.HRTimerBaseSessionRequest{PolicyAnswer: a}
			})
		return c, &c.base
	},
}

// hrTimerBaseClient implements sdk.HRTimerBase over a session. With a
// plugin that declares sdk.HRTimerModel, Start and NextEvent on a CPU whose
// model covers them are answered from the model and held (batcher.later);
// the rest of the model's precondition comes from what the client saw:
// queuedOn mirrors where each timer is queued, from every call's arguments
// and answers; busyUntil is, per CPU, the end of its latest interrupt or
// softirq answer (before it the CPU may still be in its handler), and
// running, per timer, the end of the latest one that ran its callback
// (before it the callback may still run, and switch_hrtimer_base() keeps
// such a timer where it runs). Another CPU's handler does not matter to a
// local Start unless it runs that timer.
type hrTimerBaseClient struct {
	base
	b         batcher[pb.HRTimerBaseCall, pb.HRTimerBaseResult]
	models    []sdk.HRTimerModel
	queuedOn  map[sdk.TimerID]int // -1: somewhere, not known where
	busyUntil []ktime.Time
	running   map[sdk.TimerID]ktime.Time
	// pol answers the plugin's hang and restart decisions (UsePolicy).
	pol policyHost
}

var _ sdk.PolicyUser = (*hrTimerBaseClient)(nil)

// UsePolicy implements sdk.PolicyUser: the plugin in its process is handed a
// proxy that asks p through the host (policypeer.go); one round trip.
func (c *hrTimerBaseClient) UsePolicy(k sdk.Kind, p sdk.Plugin) bool {
	return c.pol.usePolicy(k, p, func(u *pb.UsePolicyRequest) bool {
		resp := c.do("UsePolicy", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_UsePolicy{UsePolicy: u}})
		return expect(c.s, "UsePolicy", resp.GetUsePolicy(), resp).GetTaken()
	})
}

// takeModels stores the models an answer carried.
func (c *hrTimerBaseClient) takeModels(ms []*pb.HRTimerModel) {
	for _, m := range ms {
		cpu := int(m.GetCpu())
		if cpu < 0 || cpu >= maxModelCPUs {
			continue
		}
		for len(c.models) <= cpu {
			c.models = append(c.models, sdk.HRTimerModel{})
		}
		c.models[cpu] = hrModelFromProto(m)
	}
}

// model returns cpu's model, nil when there is no valid one.
func (c *hrTimerBaseClient) model(cpu int) *sdk.HRTimerModel {
	if cpu < 0 || cpu >= len(c.models) || !c.models[cpu].Valid {
		return nil
	}
	return &c.models[cpu]
}

// maxRunning is how many timers running may hold before expired drops the
// entries whose callbacks have ended.
const maxRunning = 1024

// expired updates the mirror from an interrupt or softirq answer on cpu at
// now.
func (c *hrTimerBaseClient) expired(cpu int, now ktime.Time, r *sdk.InterruptResult) {
	if cpu >= 0 && cpu < maxModelCPUs {
		for len(c.busyUntil) <= cpu {
			c.busyUntil = append(c.busyUntil, 0)
		}
		c.busyUntil[cpu] = max(c.busyUntil[cpu], r.End)
	}
	if len(c.running) > maxRunning {
		// The host calls in time order: a callback that ended before now
		// runs no more.
		for id, end := range c.running {
			if end <= now {
				delete(c.running, id)
			}
		}
	}
	for i := range r.Expired {
		id := r.Expired[i].ID
		c.running[id] = max(c.running[id], r.End)
		if !r.Expired[i].Restarted {
			delete(c.queuedOn, id)
		}
	}
}

// busy reports whether cpu may still be in an interrupt or softirq handler
// at now.
func (c *hrTimerBaseClient) busy(cpu int, now ktime.Time) bool {
	return cpu >= 0 && cpu < len(c.busyUntil) && now < c.busyUntil[cpu]
}

// mayRun reports whether id's callback may still run at now.
func (c *hrTimerBaseClient) mayRun(id sdk.TimerID, now ktime.Time) bool {
	end, ok := c.running[id]
	return ok && now < end
}

// started updates the mirror after a Start of id on cpu at now: the timer is
// queued there, unless its callback may be running (it then stays where it
// runs: switch_hrtimer_base()).
func (c *hrTimerBaseClient) started(cpu int, now ktime.Time, id sdk.TimerID) {
	if c.mayRun(id, now) {
		c.queuedOn[id] = -1
		return
	}
	c.queuedOn[id] = cpu
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
	req := &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_Start{
		Start: &pb.StartRequest{Cpu: int64(cpu), Now: int64(now), Timer: toproto.HRTimer(t), Expires: int64(expires), Slack: slack}}}
	// A timer that may migrate (timer_migration on, not pinned) is placed by
	// the plugin: the model, which keeps it local, does not answer.
	local := t.Placement == nil || t.Mode&sdk.HRModePinned != 0
	if m := c.model(cpu); m != nil && local && !c.busy(cpu, now) && !c.mayRun(t.ID, now) {
		if on, queued := c.queuedOn[t.ID]; !queued || on == cpu {
			if want, ok := model.HRStart(m, now, t, expires, slack); ok {
				c.queuedOn[t.ID] = cpu
				c.b.later("Start", req, func(res *pb.HRTimerBaseResult) error {
					got := fromproto.HROpResult(res.GetStart().GetResult())
					if !model.HROpEqual(got, want) {
						return fmt.Errorf("answered %+v where its declared model (sdk.HRTimerModel) gives %+v", got, want)
					}
					return nil
				})
				return want
			}
		}
	}
	resp := c.do("Start", req)
	r := fromproto.HROpResult(expect(c.s, "Start", resp.GetStart(), resp).GetResult())
	if r.Moved {
		c.queuedOn[t.ID] = r.CPU // switch_hrtimer_base() chose another CPU
	} else {
		c.started(cpu, now, t.ID)
	}
	return r
}

// Cancel implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) Cancel(cpu int, now ktime.Time, id sdk.TimerID) sdk.HROpResult {
	resp := c.do("Cancel", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_Cancel{
		Cancel: &pb.CancelRequest{Cpu: int64(cpu), Now: int64(now), Id: uint64(id)}}})
	r := fromproto.HROpResult(expect(c.s, "Cancel", resp.GetCancel(), resp).GetResult())
	if r.Ret != -1 {
		delete(c.queuedOn, id)
	}
	return r
}

// Interrupt implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) Interrupt(cpu int, now ktime.Time) sdk.InterruptResult {
	req := &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_Interrupt{
		Interrupt: &pb.InterruptRequest{Cpu: int64(cpu), Now: int64(now)}}}
	if m := c.model(cpu); m != nil {
		if want, ok := model.HRInterrupt(m, now); ok {
			c.expired(cpu, now, &want)
			c.b.later("Interrupt", req, func(res *pb.HRTimerBaseResult) error {
				got := fromproto.InterruptResult(res.GetInterrupt().GetResult())
				if !model.InterruptEqual(got, want) {
					return fmt.Errorf("answered %+v where its declared model (sdk.HRTimerModel) gives %+v", got, want)
				}
				return nil
			})
			return want
		}
	}
	resp := c.do("Interrupt", req)
	r := fromproto.InterruptResult(expect(c.s, "Interrupt", resp.GetInterrupt(), resp).GetResult())
	c.expired(cpu, now, &r)
	return r
}

// RunSoftirq implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) RunSoftirq(cpu int, now ktime.Time) sdk.InterruptResult {
	resp := c.do("RunSoftirq", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_RunSoftirq{
		RunSoftirq: &pb.RunSoftirqRequest{Cpu: int64(cpu), Now: int64(now)}}})
	r := fromproto.InterruptResult(expect(c.s, "RunSoftirq", resp.GetRunSoftirq(), resp).GetResult())
	c.expired(cpu, now, &r)
	return r
}

// RunQueues implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) RunQueues(cpu int, now ktime.Time) sdk.InterruptResult {
	resp := c.do("RunQueues", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_RunQueues{
		RunQueues: &pb.RunQueuesRequest{Cpu: int64(cpu), Now: int64(now)}}})
	r := fromproto.InterruptResult(expect(c.s, "RunQueues", resp.GetRunQueues(), resp).GetResult())
	c.expired(cpu, now, &r)
	return r
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
	r := fromproto.InterruptResult(expect(c.s, "InterruptETIME", resp.GetInterruptEtime(), resp).GetResult())
	c.expired(cpu, now, &r)
	return r
}

// RetriggerNextEvent implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) RetriggerNextEvent(cpu int, now ktime.Time) sdk.HROpResult {
	resp := c.do("RetriggerNextEvent", &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_RetriggerNextEvent{
		RetriggerNextEvent: &pb.RetriggerNextEventRequest{Cpu: int64(cpu), Now: int64(now)}}})
	return fromproto.HROpResult(expect(c.s, "RetriggerNextEvent", resp.GetRetriggerNextEvent(), resp).GetResult())
}

// NextEvent implements sdk.HRTimerBase.
func (c *hrTimerBaseClient) NextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) ktime.Time {
	req := &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_NextEvent{
		NextEvent: &pb.NextEventRequest{Cpu: int64(cpu), Now: int64(now), Exclude: uint64(exclude)}}}
	if next, ok := c.modelNextEvent(cpu, exclude, req); ok {
		return next
	}
	resp := c.do("NextEvent", req)
	return ktime.Time(expect(c.s, "NextEvent", resp.GetNextEvent(), resp).GetNext())
}

// modelNextEvent answers NextEvent from cpu's model, holding the call.
func (c *hrTimerBaseClient) modelNextEvent(cpu int, exclude sdk.TimerID, req *pb.HRTimerBaseCall) (ktime.Time, bool) {
	m := c.model(cpu)
	if m == nil {
		return 0, false
	}
	want, ok := model.HRNextEvent(m, exclude)
	if !ok {
		return 0, false
	}
	c.b.later("NextEvent", req, func(res *pb.HRTimerBaseResult) error {
		if got := ktime.Time(res.GetNextEvent().GetNext()); got != want {
			return fmt.Errorf("answered %d where its declared model (sdk.HRTimerModel) gives %d", got, want)
		}
		return nil
	})
	return want, true
}

// StartNextEvent sends NextEvent and returns the function that waits for
// its answer: the kernel asks the wheel's next event in between, so the two
// round trips overlap (sdk.NextEventStarter). A model's answer needs no wait.
func (c *hrTimerBaseClient) StartNextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) (wait func() ktime.Time) {
	req := &pb.HRTimerBaseCall{Call: &pb.HRTimerBaseCall_NextEvent{
		NextEvent: &pb.NextEventRequest{Cpu: int64(cpu), Now: int64(now), Exclude: uint64(exclude)}}}
	if next, ok := c.modelNextEvent(cpu, exclude, req); ok {
		return func() ktime.Time { return next }
	}
	w := c.b.start("NextEvent", req)
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
	peer := new(policyPeer)
	dispatch := func(p sdk.Plugin, c *pb.HRTimerBaseCall) (*pb.HRTimerBaseResult, error) {
		if u := c.GetUsePolicy(); u != nil {
			taken, err := peer.use(p, u.GetKind())
			if err != nil {
				return nil, err
			}
			return &pb.HRTimerBaseResult{Result: &pb.HRTimerBaseResult_UsePolicy{UsePolicy: &pb.UsePolicyResponse{Taken: taken}}}, nil
		}
		return dispatchHRTimerBase(p, c)
	}
	return serveSession(s.r, stream,
		func(req *pb.HRTimerBaseSessionRequest) *pb.OpenRequest {
			return onlyCall(req.GetCalls()).GetPlugin().GetOpen()
		},
		func(o *pb.OpenResponse) *pb.HRTimerBaseSessionResponse {
			return &pb.HRTimerBaseSessionResponse{Results: []*pb.HRTimerBaseResult{{Result: &pb.HRTimerBaseResult_Plugin{
				Plugin: &pb.PluginResponse{Result: &pb.PluginResponse_Open{Open: o}}}}}}
		},
		withHRModels(batchOf(func(req *pb.HRTimerBaseSessionRequest) []*pb.HRTimerBaseCall { return req.GetCalls() },
			func(rs []*pb.HRTimerBaseResult) *pb.HRTimerBaseSessionResponse {
				return &pb.HRTimerBaseSessionResponse{Results: rs}
			},
			dispatch)),
		bindPeer(peer, func(c *pb.PolicyCall) *pb.HRTimerBaseSessionResponse {
			return &pb.HRTimerBaseSessionResponse{PolicyCall: c}
		}, func(req *pb.HRTimerBaseSessionRequest) *pb.PolicyResult {
			if len(req.GetCalls()) > 0 {
				return nil
			}
			return req.GetPolicyAnswer()
		}))
}

// withHRModels adds the plugin's sdk.HRTimerModel updates to each answer of
// dispatch, for a plugin that declares them.
func withHRModels(dispatch func(sdk.Plugin, *pb.HRTimerBaseSessionRequest) (*pb.HRTimerBaseSessionResponse, error)) func(sdk.Plugin, *pb.HRTimerBaseSessionRequest) (*pb.HRTimerBaseSessionResponse, error) {
	var t modelTracker[sdk.HRTimerModel]
	return func(p sdk.Plugin, req *pb.HRTimerBaseSessionRequest) (*pb.HRTimerBaseSessionResponse, error) {
		resp, err := dispatch(p, req)
		md, ok := p.(sdk.HRTimerModeler)
		if err != nil || !ok {
			return resp, err
		}
		calls := messages(req.GetCalls())
		t.configured(calls)
		t.changed(calls, md.HRTimerModel, hrModelEqual, func(cpu int, m sdk.HRTimerModel) {
			resp.Models = append(resp.Models, hrModelToProto(cpu, m))
		})
		return resp, nil
	}
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
