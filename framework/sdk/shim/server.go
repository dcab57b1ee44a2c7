package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/internal/fromproto"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/sdk/internal/toproto"
)

// registry is the server side's set of factories of one kind, by name.
type registry struct {
	kind      sdk.Kind
	factories map[string]sdk.Factory
	log       zerolog.Logger
}

func newRegistry(kind sdk.Kind, fs []sdk.Factory, log zerolog.Logger) *registry {
	r := &registry{kind: kind, factories: make(map[string]sdk.Factory), log: log}
	for _, f := range fs {
		if f.Kind == kind {
			r.factories[f.Name] = f
		}
	}
	return r
}

// names lists the registry's plugin names, sorted.
func (r *registry) names() []string {
	out := make([]string, 0, len(r.factories))
	for n := range r.factories {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// open makes the fresh plugin value a session asked for.
func (r *registry) open(req *pb.OpenRequest) (sdk.Plugin, error) {
	if req == nil {
		return nil, status.Error(codes.InvalidArgument, "session must start with an OpenRequest")
	}
	f, ok := r.factories[req.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no %s plugin %q here (serving %v)", r.kind, req.GetName(), r.names())
	}
	p := f.New()
	if !Implements(r.kind, p) {
		return nil, status.Errorf(codes.Internal, "factory %s/%s made a %T, which is not a %s plugin", f.Kind, f.Name, p, r.kind)
	}
	if ls, ok := p.(sdk.LoggerSetter); ok {
		ls.SetLogger(r.log.With().Str("plugin", string(r.kind)+"/"+f.Name).Logger())
	}
	return p, nil
}

// serveSession runs one session: it reads the OpenRequest, makes the plugin,
// then answers each request with dispatch until the client closes the stream.
// bind, when not nil, is given the session's exchanger once its transport is
// known, for a base kind's policy calls (policypeer.go).
// A panic in the plugin ends the session with codes.Internal carrying the
// panic value and stack, so the host reports it as a TransportError instead of
// the whole process (or test binary, for an in-process pair) dying.
func serveSession[Req, Resp any](
	r *registry,
	stream grpc.BidiStreamingServer[Req, Resp],
	openOf func(*Req) *pb.OpenRequest,
	opened func(*pb.OpenResponse) *Resp,
	dispatch func(p sdk.Plugin, req *Req) (*Resp, error),
	bind func(exchanger[Req, Resp]),
) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	p, err := r.open(openOf(first))
	if err != nil {
		return err
	}
	var info sdk.Info
	if err := r.guard(p, func() error { info = p.Info(); return nil }); err != nil {
		return err
	}
	o := &pb.OpenResponse{Info: toproto.Info(info)}
	var ln *socketListener
	if openOf(first).GetSocket() && socketSupported {
		l, path, err := listenSocket()
		if err != nil {
			r.log.Warn().Err(err).Msg("no session socket; the session stays on gRPC")
		} else {
			ln, o.SocketPath = l, path
		}
	}
	if err := stream.Send(opened(o)); err != nil {
		return err
	}
	if ln != nil {
		c, err := ln.accept(DefaultCallTimeout)
		if err != nil {
			return status.Errorf(codes.Unavailable, "session socket: %v", err)
		}
		defer c.close()
		// The session ends with its stream (the host cancelled it, or this
		// server stopped), even in the middle of a read.
		defer context.AfterFunc(stream.Context(), c.shutdown)()
		if bind != nil {
			bind(socketExchanger[Req, Resp](c))
		}
		return serveSocket(r, p, c, dispatch)
	}
	if bind != nil {
		bind(streamExchanger(stream))
	}
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var resp *Resp
		if err := r.guard(p, func() (err error) { resp, err = dispatch(p, req); return err }); err != nil {
			return err
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// serveSocket answers the session's messages on its socket until the host
// closes it. A failed call (a plugin panic) ends the session: the socket is
// closed and the returned status reaches the host on the gRPC stream.
func serveSocket[Req, Resp any](r *registry, p sdk.Plugin, c *sockConn,
	dispatch func(p sdk.Plugin, req *Req) (*Resp, error)) error {
	for {
		req := new(Req)
		if err := c.recv(any(req).(proto.Message)); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return status.Errorf(codes.Unavailable, "session socket: %v", err)
		}
		var resp *Resp
		if err := r.guard(p, func() (err error) { resp, err = dispatch(p, req); return err }); err != nil {
			return err
		}
		if err := c.send(any(resp).(proto.Message)); err != nil {
			return status.Errorf(codes.Unavailable, "session socket: %v", err)
		}
	}
}

// guard runs f, turning a panic into a codes.Internal status that carries
// the panic value and, after a line of its own, the plugin's part of the
// stack (panicStatus); the host shows the stack once, in its error report
// (session.transportError fills TransportError.Stack), so the plugin's log
// line carries only the value.
func (r *registry) guard(p sdk.Plugin, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if ae, ok := v.(askError); ok {
				// The host stopped answering a policy call (its run ended
				// with another failure): no plugin bug to log.
				err = status.Error(codes.Aborted, ae.Error())
				return
			}
			msg := fmt.Sprintf("plugin %T panicked: %v", p, v)
			r.log.Error().Msg(msg)
			err = status.Error(codes.Internal, msg+"\n"+panicStackMarker+"\n"+strings.Join(pluginFrames(string(debug.Stack())), "\n"))
		}
	}()
	return f()
}

// panicStackMarker separates a panic's message from its stack in a
// codes.Internal status.
const panicStackMarker = "--- plugin stack ---"

// pluginFrames trims a debug.Stack() taken in guard's deferred function to
// what a plugin author reads: the goroutine header, then the frames from the
// one that panicked down to the first frame of this package (the serving
// machinery above the plugin). If the layout is not the expected one, every
// line is kept.
func pluginFrames(stack string) []string {
	lines := strings.Split(strings.TrimRight(stack, "\n"), "\n")
	if len(lines) < 3 {
		return lines
	}
	start := -1
	for i := 1; i+1 < len(lines); i += 2 {
		if strings.HasPrefix(lines[i], "panic(") {
			start = i + 2
			break
		}
	}
	if start < 0 || start >= len(lines) {
		return lines
	}
	out := []string{lines[0]}
	for i := start; i < len(lines) && len(out) < maxStackLines; i += 2 {
		if strings.HasPrefix(lines[i], shimPackage+".") && i > start {
			break
		}
		out = append(out, lines[i])
		if i+1 < len(lines) {
			out = append(out, lines[i+1])
		}
	}
	return out
}

// maxStackLines bounds the stack a panic carries (a runaway recursion
// would otherwise fill the status message).
const maxStackLines = 121

// shimPackage is this package's import path, as stack frames print it.
const shimPackage = "github.com/tickemu/tickemu/framework/sdk/shim"

// splitPanic splits a codes.Internal message made by guard into the panic
// message and the stack lines; ok is false for any other message.
func splitPanic(msg string) (head string, stack []string, ok bool) {
	head, rest, ok := strings.Cut(msg, "\n"+panicStackMarker+"\n")
	if !ok {
		return msg, nil, false
	}
	return head, strings.Split(rest, "\n"), true
}

// errUnknownCall answers a request whose oneof case this server does not know
// (a newer host).
func errUnknownCall(req any) error {
	return status.Errorf(codes.Unimplemented, "unknown call %T", req)
}

// servePlugin answers the calls every kind has.
func servePlugin(p sdk.Plugin, req *pb.PluginRequest) (*pb.PluginResponse, error) {
	switch c := req.GetCall().(type) {
	case *pb.PluginRequest_Info:
		return &pb.PluginResponse{Result: &pb.PluginResponse_Info{
			Info: &pb.InfoResponse{Info: toproto.Info(p.Info())}}}, nil
	case *pb.PluginRequest_Schema:
		return &pb.PluginResponse{Result: &pb.PluginResponse_Schema{
			Schema: &pb.SchemaResponse{Schema: toproto.Schema(p.Schema())}}}, nil
	case *pb.PluginRequest_Configure:
		d := p.Configure(fromproto.Setup(c.Configure.GetSetup()), fromproto.ConfigEntries(c.Configure.GetConfig()))
		return &pb.PluginResponse{Result: &pb.PluginResponse_Configure{
			Configure: &pb.ConfigureResponse{Diagnostics: toproto.Diagnostics(d)}}}, nil
	case *pb.PluginRequest_Counters:
		return &pb.PluginResponse{Result: &pb.PluginResponse_Counters{
			Counters: &pb.CountersResponse{Counters: toproto.Counters(p.Counters())}}}, nil
	case *pb.PluginRequest_Open:
		return nil, status.Error(codes.FailedPrecondition, "session already open")
	default:
		return nil, errUnknownCall(c)
	}
}

// describe answers the catalog: Info and Schema of a fresh value of every
// factory, ordered by kind then name.
func describe(fs []sdk.Factory, log zerolog.Logger) (*pb.DescribeResponse, error) {
	r := &registry{log: log}
	sorted := append([]sdk.Factory(nil), fs...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Kind != sorted[j].Kind {
			return sorted[i].Kind < sorted[j].Kind
		}
		return sorted[i].Name < sorted[j].Name
	})
	out := &pb.DescribeResponse{}
	for _, f := range sorted {
		p := f.New()
		var d *pb.PluginDescription
		if err := r.guard(p, func() error {
			d = &pb.PluginDescription{Info: toproto.Info(p.Info()), Schema: toproto.Schema(p.Schema())}
			return nil
		}); err != nil {
			return nil, err
		}
		out.Plugins = append(out.Plugins, d)
	}
	return out, nil
}

// checkFactories rejects a set of factories a server cannot serve: no
// factories, unknown kinds, a missing constructor, or duplicates.
func checkFactories(fs []sdk.Factory) error {
	if len(fs) == 0 {
		return errors.New("shim: no plugin factories to serve")
	}
	seen := make(map[string]bool)
	for _, f := range fs {
		if _, ok := kinds[f.Kind]; !ok {
			return fmt.Errorf("shim: factory %q has unknown kind %q (known: %v)", f.Name, f.Kind, Kinds())
		}
		if f.Name == "" || f.New == nil {
			return fmt.Errorf("shim: %s factory %q needs a name and a New function", f.Kind, f.Name)
		}
		key := string(f.Kind) + "/" + f.Name
		if seen[key] {
			return fmt.Errorf("shim: %s plugin %q is served twice", f.Kind, f.Name)
		}
		seen[key] = true
	}
	return nil
}

// onlyCall returns the one call of a session's first message (the
// OpenRequest), or nil when the message carries another number of calls.
func onlyCall[C any](calls []*C) *C {
	if len(calls) != 1 {
		return nil
	}
	return calls[0]
}

// batchOf turns a kind's one-call dispatch into the dispatch of a message:
// the calls in order, their results in one answer. A call that fails ends the
// session (the host stops at the first failure anyway).
func batchOf[Req, Resp, C, R any](calls func(*Req) []*C, answer func([]*R) *Resp,
	dispatch func(p sdk.Plugin, c *C) (*R, error)) func(p sdk.Plugin, req *Req) (*Resp, error) {
	return func(p sdk.Plugin, req *Req) (*Resp, error) {
		cs := calls(req)
		if len(cs) == 0 {
			return nil, status.Error(codes.InvalidArgument, "a session message must carry at least one call")
		}
		rs := make([]*R, len(cs))
		for i, c := range cs {
			r, err := dispatch(p, c)
			if err != nil {
				return nil, err
			}
			rs[i] = r
		}
		return answer(rs), nil
	}
}
