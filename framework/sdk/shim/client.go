package shim

import (
	"context"
	"fmt"
	"sort"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/internal/fromproto"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/sdk/internal/toproto"
)

// kindShim is what the transport knows about one plugin kind. Adding a kind is
// adding its service to the protocol, one file here defining a kindShim, and
// its entry in kinds.
type kindShim struct {
	// implements reports whether p is a plugin of the kind.
	implements func(p sdk.Plugin) bool
	// register registers the kind's service, serving r's factories.
	register func(s *grpc.Server, r *registry)
	// stream opens the kind's session stream on cc.
	stream func(ctx context.Context, cc grpc.ClientConnInterface) (grpc.ClientStream, error)
	// client wraps a session in the kind's client, which implements the
	// kind's sdk interface, and returns its base for the common calls.
	client func(s *session) (sdk.Plugin, *base)
}

// kinds lists every kind the transport carries.
var kinds = map[sdk.Kind]kindShim{
	sdk.KindTimerBase:  timerBaseShim,
	sdk.KindHRTimer:    hrTimerBaseShim,
	sdk.KindClockEvent: clockEventDeviceShim,
	sdk.KindGovernor:   governorShim,

	sdk.KindHangPolicy:    hangPolicyShim,
	sdk.KindCatchupPolicy: catchupPolicyShim,
	sdk.KindRestartPolicy: restartPolicyShim,
}

// Kinds lists the kinds the transport carries, sorted.
func Kinds() []sdk.Kind {
	out := make([]sdk.Kind, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Implements reports whether p implements the sdk interface of kind k.
func Implements(k sdk.Kind, p sdk.Plugin) bool {
	ks, ok := kinds[k]
	return ok && ks.implements(p)
}

// Closer is implemented by every client this package returns: Close ends the
// session, and the far side drops its plugin value. Later calls panic with a
// TransportError.
type Closer interface {
	Close()
}

// Open opens a session with the plugin of kind k called name over cc and
// returns a client implementing the kind's sdk interface (and Closer). A
// failure to open is returned as a *sdk.TransportError.
func Open(cc grpc.ClientConnInterface, k sdk.Kind, name string, o Options) (sdk.Plugin, error) {
	ks, ok := kinds[k]
	if !ok {
		return nil, fmt.Errorf("shim: unknown plugin kind %q (known: %v)", k, Kinds())
	}
	s, err := newSession(k, name, o, func(ctx context.Context) (grpc.ClientStream, error) {
		return ks.stream(ctx, cc)
	})
	if err != nil {
		return nil, err
	}
	p, b := ks.client(s)
	if err := b.open(name); err != nil {
		s.close()
		return nil, err
	}
	return p, nil
}

// base implements the sdk.Plugin calls every kind shares; each kind's client
// supplies plugin, which wraps a PluginRequest in the kind's session request.
type base struct {
	s      *session
	plugin func(call string, req *pb.PluginRequest) *pb.PluginResponse
}

// open sends the OpenRequest that starts every session and checks the
// answer's kind and name.
func (b *base) open(name string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			te, ok := r.(*sdk.TransportError)
			if !ok {
				panic(r)
			}
			err = te
		}
	}()
	ask := socketSupported && !b.s.opts.GRPCOnly
	resp := b.plugin("Open", &pb.PluginRequest{Call: &pb.PluginRequest_Open{Open: &pb.OpenRequest{Name: name, Socket: ask}}})
	r := resp.GetOpen()
	if r == nil {
		b.s.protocolError("Open", resp)
	}
	info := fromproto.Info(r.GetInfo())
	if info.Kind != b.s.kind || info.Name != name {
		return &sdk.TransportError{Kind: b.s.kind, Name: name, Call: "Open",
			Err: fmt.Errorf("protocol error: asked for %s plugin %q, got %s plugin %q", b.s.kind, name, info.Kind, info.Name)}
	}
	if path := r.GetSocketPath(); path != "" {
		if !ask {
			return &sdk.TransportError{Kind: b.s.kind, Name: name, Call: "Open",
				Err: fmt.Errorf("protocol error: offered session socket %q without being asked", path)}
		}
		if err := b.s.useSocket(path); err != nil {
			return &sdk.TransportError{Kind: b.s.kind, Name: name, Call: "Open", Err: fmt.Errorf("session socket: %w", err)}
		}
	}
	return nil
}

// Info implements sdk.Plugin.
func (b *base) Info() sdk.Info {
	resp := b.plugin("Info", &pb.PluginRequest{Call: &pb.PluginRequest_Info{Info: &pb.InfoRequest{}}})
	return fromproto.Info(expect(b.s, "Info", resp.GetInfo(), resp).GetInfo())
}

// Schema implements sdk.Plugin.
func (b *base) Schema() sdk.Schema {
	resp := b.plugin("Schema", &pb.PluginRequest{Call: &pb.PluginRequest_Schema{Schema: &pb.SchemaRequest{}}})
	return fromproto.Schema(expect(b.s, "Schema", resp.GetSchema(), resp).GetSchema())
}

// Configure implements sdk.Plugin.
func (b *base) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	resp := b.plugin("Configure", &pb.PluginRequest{Call: &pb.PluginRequest_Configure{Configure: &pb.ConfigureRequest{
		Setup: toproto.Setup(s), Config: toproto.ConfigEntries(c)}}})
	return fromproto.Diagnostics(expect(b.s, "Configure", resp.GetConfigure(), resp).GetDiagnostics())
}

// Counters implements sdk.Plugin.
func (b *base) Counters() []sdk.Counter {
	resp := b.plugin("Counters", &pb.PluginRequest{Call: &pb.PluginRequest_Counters{Counters: &pb.CountersRequest{}}})
	return fromproto.Counters(expect(b.s, "Counters", resp.GetCounters(), resp).GetCounters())
}

// SessionRoundTrips returns the round trips the session has made so far,
// Open's included: every call the host waited for (held calls travel with
// one of those) and every flush of maxBatch held calls.
// framework/contract reads it around each call for --plugin-stats.
func (b *base) SessionRoundTrips() uint64 { return b.s.trips.Load() }

// Close implements Closer.
func (b *base) Close() { b.s.close() }

// expect returns v, the answer's payload for call, or panics with a protocol
// error when the answer carries another case (v is nil).
func expect[T any](s *session, call string, v *T, resp proto.Message) *T {
	if v == nil {
		s.protocolError(call, resp)
	}
	return v
}
