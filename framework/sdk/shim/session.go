package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/tickemu/tickemu/framework/sdk"
)

// exitWait bounds how long a failed call waits for the plugin's process to be
// reaped, so the TransportError can say how it ended. A killed process closes
// its socket before the kernel reports its exit; go-plugin reaps it right after
// draining its pipes, which takes milliseconds.
const exitWait = 2 * time.Second

// Process reports on the process behind a connection, for TransportError.
// The loader implements it for go-plugin clients; it is nil for an in-process
// gRPC pair.
type Process interface {
	// Pid is the process id.
	Pid() int
	// Exit waits up to wait for the process to end and says how it ended, as
	// os.ProcessState prints it ("signal: killed"); "" if it still runs.
	Exit(wait time.Duration) string
	// StderrTail returns the last lines the process wrote to stderr.
	StderrTail() []string
	// Kill kills the process and every process it started, at once, without
	// waiting; the call's deadline uses it.
	Kill()
}

// Options configure a client session.
type Options struct {
	// CallTimeout bounds each call; 0 means DefaultCallTimeout, NoTimeout
	// none.
	CallTimeout time.Duration
	// Process is the plugin's process, or nil.
	Process Process
	// GRPCOnly keeps the session on the gRPC stream instead of moving it to
	// a session socket where the server offers one (OpenResponse.socket_path).
	GRPCOnly bool
}

// session is the client end of one kind session stream: one plugin value on
// the far side, called by one goroutine at a time.
//
// Invariant: once failed is set the stream is cancelled and every later call
// panics with failed; a run never continues past a transport failure.
type session struct {
	kind sdk.Kind
	name string
	opts Options

	ctx    context.Context
	cancel context.CancelCauseFunc
	stream grpc.ClientStream
	// deadline cancels ctx with ErrPluginTimeout when a call takes longer
	// than the call timeout.
	deadline *callDeadline
	// sock, when set, carries the session's messages instead of stream
	// (which stays open, idle, and reports how the server ended).
	sock *sockConn
	// stopSock stops the ctx hook that shuts sock down when ctx ends.
	stopSock func() bool

	mu     sync.Mutex // serialises calls: requests and answers pair up in order
	failed *sdk.TransportError
	// trips counts the round trips this session made (roundTrip and
	// begin), for --plugin-stats (SessionRoundTrips): unlike roundTrips it
	// counts a round trip that overlaps another session's.
	trips atomic.Uint64
	// awaiting names the call begin sent and end has not read yet.
	awaiting string
	// onPolicy, set for a base kind, answers a response that is a policy
	// call of the plugin with the request carrying the host's decision.
	// answerPolicies uses it.
	onPolicy *policyAnswerer
}

// newSession opens a session stream with start, which calls the kind's
// generated streaming method.
func newSession(kind sdk.Kind, name string, o Options, start func(ctx context.Context) (grpc.ClientStream, error)) (*session, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	s := &session{kind: kind, name: name, opts: o, ctx: ctx, cancel: cancel}
	s.deadline = newCallDeadline(o.CallTimeout, cancel, o.Process)
	s.deadline.arm()
	st, err := start(ctx)
	s.deadline.disarm()
	if err != nil {
		cancel(err)
		return nil, s.transportError("Open", err)
	}
	s.stream = st
	return s, nil
}

// roundTrips counts the round trips this process waited for, for benchmarks
// (loader.RoundTrips): one started while another is in flight (the kernel
// asks two plugins together) overlaps it and is not counted again. inFlight
// is the number of round trips under way.
var roundTrips, inFlight atomic.Int64

// RoundTrips returns the number of round trips waited for so far.
func RoundTrips() uint64 { return uint64(roundTrips.Load()) }

// roundTrip sends req and reads the answer into resp. On any transport
// failure it panics with a *sdk.TransportError (the kind interfaces have no
// error returns).
func (s *session) roundTrip(call string, req, resp proto.Message) {
	if inFlight.Add(1) == 1 {
		roundTrips.Add(1)
	}
	defer inFlight.Add(-1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		panic(s.failed)
	}
	if s.awaiting != "" {
		panic(s.fail(call, fmt.Errorf("host bug: %s called while the answer to %s is awaited", call, s.awaiting)))
	}
	s.trips.Add(1)
	s.deadline.arm()
	err := s.exchange(req, resp)
	if err == nil {
		err = s.answerPolicies(call, resp)
	}
	s.deadline.disarm()
	if err != nil {
		panic(s.fail(call, err))
	}
}

// exchange sends req and reads the answer into resp, on the socket or the
// stream.
//
// Preconditions: s.mu is held.
func (s *session) exchange(req, resp proto.Message) error {
	if s.sock != nil {
		return s.sockTrip(req, resp)
	}
	err := s.stream.SendMsg(req)
	if err == nil {
		err = s.stream.RecvMsg(resp)
	} else if errors.Is(err, io.EOF) {
		// SendMsg reports a broken stream as io.EOF; RecvMsg has the status.
		if err = s.stream.RecvMsg(resp); err == nil {
			err = io.ErrUnexpectedEOF
		}
	}
	return err
}

// answerPolicies answers, while resp is a policy call of the plugin (a base
// in its own process asking the policy the host handed it: policypeer.go),
// with the host's policy, and reads the next response into resp: one more
// round trip each, counted on call. A panic of the host's policy (its own
// transport failure, a contract violation) ends this session too.
//
// Preconditions: s.mu is held, the call's deadline is armed.
func (s *session) answerPolicies(call string, resp proto.Message) (err error) {
	if s.onPolicy == nil {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			s.deadline.disarm()
			if s.failed == nil {
				s.failed = &sdk.TransportError{Kind: s.kind, Name: s.name, Call: call, Pid: s.pid(),
					Err: fmt.Errorf("the policy it asked failed: %v", v)}
				s.cancel(s.failed)
			}
			panic(v)
		}
	}()
	for {
		c := s.onPolicy.call(resp)
		if c == nil {
			return nil
		}
		// The host's time answering is not the plugin's: the call's deadline
		// starts again for the rest of the call.
		s.deadline.disarm()
		ans, err := s.onPolicy.answer(c)
		if err != nil {
			return err
		}
		s.deadline.arm()
		s.trips.Add(1)
		roundTrips.Add(1)
		proto.Reset(resp)
		if err := s.exchange(ans, resp); err != nil {
			return err
		}
	}
}

// sockTrip is one round trip on the session socket. When the socket breaks
// and the call was not cancelled, the gRPC stream says why the server ended
// the session (a plugin panic is a codes.Internal status there) or that its
// process went away.
func (s *session) sockTrip(req, resp proto.Message) error {
	err := s.sock.send(req)
	if err == nil {
		err = s.sock.recv(resp)
	}
	return s.sockBroken(err, resp)
}

// sockBroken maps a failed socket send or receive to the error the gRPC
// stream gives, if any.
func (s *session) sockBroken(err error, resp proto.Message) error {
	if err != nil && s.ctx.Err() == nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
		if e := s.stream.RecvMsg(resp); e != nil && !errors.Is(e, io.EOF) {
			err = e
		} else if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
	}
	return err
}

// begin sends req, whose answer end reads: in between the host asks another
// plugin (the kernel's idle entry asks the hrtimer and the wheel together),
// so the two round trips overlap. No other call may be made on the session
// before end. The call's deadline runs from begin to end.
func (s *session) begin(call string, req proto.Message) {
	if inFlight.Add(1) == 1 {
		roundTrips.Add(1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		inFlight.Add(-1)
		panic(s.failed)
	}
	if s.awaiting != "" {
		inFlight.Add(-1)
		panic(s.fail(call, fmt.Errorf("host bug: %s called while the answer to %s is awaited", call, s.awaiting)))
	}
	s.trips.Add(1)
	s.deadline.arm()
	var err error
	if s.sock != nil {
		// The answer's type is end's: only the status matters here.
		err = s.sockBroken(s.sock.send(req), &emptypb.Empty{})
	} else if err = s.stream.SendMsg(req); errors.Is(err, io.EOF) {
		// SendMsg reports a broken stream as io.EOF; RecvMsg has the status.
		if e := s.stream.RecvMsg(&emptypb.Empty{}); e != nil {
			err = e
		}
	}
	if err != nil {
		s.deadline.disarm()
		inFlight.Add(-1)
		panic(s.fail(call, err))
	}
	s.awaiting = call
}

// abandon forgets an awaited answer that will not be read (the session
// failed or closed), so it no longer counts as in flight.
//
// Preconditions: s.mu is held.
func (s *session) abandon() {
	if s.awaiting != "" {
		s.awaiting = ""
		s.deadline.disarm()
		inFlight.Add(-1)
	}
}

// end reads the answer to the call begin sent.
func (s *session) end(call string, resp proto.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.awaiting == "" {
		// Abandoned: the session failed or closed since begin.
		if s.failed != nil {
			panic(s.failed)
		}
		panic(s.fail(call, fmt.Errorf("host bug: no %s answer is awaited", call)))
	}
	s.awaiting = ""
	defer inFlight.Add(-1)
	var err error
	if s.sock != nil {
		err = s.sockBroken(s.sock.recv(resp), resp)
	} else {
		err = s.stream.RecvMsg(resp)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
	}
	if err == nil {
		err = s.answerPolicies(call, resp)
	}
	s.deadline.disarm()
	if err != nil {
		panic(s.fail(call, err))
	}
}

// useSocket moves the session to the socket at path; a deadline expiry or
// the session's end shuts it down, which ends a read or write in progress.
func (s *session) useSocket(path string) error {
	c, err := dialSocket(path)
	if err != nil {
		return err
	}
	s.sock = c
	s.stopSock = context.AfterFunc(s.ctx, c.shutdown)
	return nil
}

// protocolError panics with a TransportError for an answer that does not
// match its call: a plugin built against another protocol, or a bug.
func (s *session) protocolError(call string, got proto.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	panic(s.fail(call, fmt.Errorf("protocol error: answer to %s is %v", call, got)))
}

// fail records the session's failure and tears the stream down.
//
// Preconditions: s.mu is held.
func (s *session) fail(call string, err error) *sdk.TransportError {
	s.abandon()
	te := s.transportError(call, err)
	s.failed = te
	s.cancel(te)
	return te
}

// close ends the session; the server drops its plugin value.
func (s *session) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sock != nil {
		s.stopSock()
		s.sock.close()
	}
	if s.stream != nil {
		_ = s.stream.CloseSend()
	}
	s.abandon()
	s.deadline.disarm()
	s.cancel(errSessionClosed)
	if s.failed == nil {
		s.failed = &sdk.TransportError{Kind: s.kind, Name: s.name, Err: errSessionClosed}
	}
}

var errSessionClosed = errors.New("shim: session closed")

// transportError maps a failed call's error to a TransportError, in the
// manner of Nomad's HandleGrpcErr: Unavailable, Canceled or a closed stream
// after the plugin's process has exited mean the plugin exited; a
// cancellation by the call timer means it stopped answering. The process is
// given exitWait to be reaped so the error can say how it ended and carry its
// complete stderr tail.
func (s *session) transportError(call string, err error) *sdk.TransportError {
	te := &sdk.TransportError{Kind: s.kind, Name: s.name, Call: call, Err: err}
	p := s.opts.Process
	if p != nil {
		te.Pid = p.Pid()
	}
	if cause := context.Cause(s.ctx); cause != nil && errors.Is(cause, sdk.ErrPluginTimeout) {
		te.Err = cause
		if p != nil {
			te.Stderr = p.StderrTail()
		}
		return te
	}
	code := status.Code(err)
	if st, ok := status.FromError(err); ok && code == codes.Internal {
		if head, stack, ok := splitPanic(st.Message()); ok {
			te.Err, te.Stack = errors.New(head), stack
		}
	}
	gone := code == codes.Unavailable || code == codes.Canceled ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	if p != nil {
		if gone {
			te.Exit = p.Exit(exitWait)
		} else {
			te.Exit = p.Exit(0)
		}
		te.Stderr = p.StderrTail()
	}
	if gone && (p == nil || te.Exit != "") {
		te.Err = causeError{sdk.ErrPluginExited, err}
		// A Go crash (a panic on one of the plugin's goroutines, a fatal
		// error): say what it was instead of the transport's EOF, and carry
		// the stacks once, as lines.
		if cs, ok := p.(interface{ CrashStack() []string }); ok && p != nil {
			if stack := cs.CrashStack(); len(stack) > 0 {
				te.Stack = stack
				if line := crashLine(te.Stderr); line != "" {
					te.Err = causeError{sdk.ErrPluginExited, errors.New(line)}
				}
			}
		}
	}
	return te
}

// crashLine returns the last "panic: " or "fatal error: " line of a stderr
// tail.
func crashLine(tail []string) string {
	for i := len(tail) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(tail[i]); strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			return l
		}
	}
	return ""
}

// causeError is an error as received, classified by a cause sentinel that
// errors.Is finds but the message does not repeat (TransportError.Error
// already says "exited" or "stopped answering").
type causeError struct {
	cause, err error
}

func (e causeError) Error() string   { return e.err.Error() }
func (e causeError) Unwrap() []error { return []error{e.cause, e.err} }
