package shim

import (
	"google.golang.org/protobuf/proto"

	"github.com/tickemu/tickemu/framework/sdk"
)

// maxBatch bounds how many calls a client holds back before it sends them
// on their own: a run that never waits for a device (every answer computed
// from its DeadlineModel) still has its calls made, and checked, every
// maxBatch calls. The messages stay a few kilobytes.
const maxBatch = 128

// batcher holds the calls of one session whose answers the host did not wait
// for (C and R are the kind's call and result messages). They go out, in
// order, in front of the next call the host waits for (or alone once
// maxBatch of them are held, or at a flush); each one's answer is then
// checked against what the host computed for it.
//
// Invariant: calls, names and checks have the same length.
type batcher[C, R any] struct {
	s *session
	// exchange sends calls as one message and returns the answer's results
	// (one round trip).
	exchange func(call string, calls []*C) (results []*R, resp proto.Message)
	// split is exchange in two halves: it sends calls and returns the
	// function that reads the answer (session.begin and end); nil for kinds
	// that never ask alongside another plugin.
	split  func(call string, calls []*C) (read func() (results []*R, resp proto.Message))
	calls  []*C
	names  []string
	checks []func(*R) error
}

// call sends the held calls and c, waits, checks the held calls' answers and
// returns c's.
func (b *batcher[C, R]) call(name string, c *C) *R {
	res := b.send(name, append(b.calls, c))
	return res[len(res)-1]
}

// start sends the held calls and c, and returns the function that waits for
// the answer, checks the held calls' answers and returns c's. Until it is
// called no other call may be made on the session.
func (b *batcher[C, R]) start(name string, c *C) (wait func() *R) {
	calls := append(b.calls, c)
	read := b.split(name, calls)
	return func() *R {
		res := b.checked(name, calls, read)
		return res[len(res)-1]
	}
}

// later holds c, whose answer the host computed itself; check verifies the
// plugin's answer when it comes (nil: the answer is not used).
func (b *batcher[C, R]) later(name string, c *C, check func(*R) error) {
	b.s.mu.Lock()
	failed := b.s.failed
	b.s.mu.Unlock()
	if failed != nil {
		panic(failed)
	}
	b.calls = append(b.calls, c)
	b.names = append(b.names, name)
	b.checks = append(b.checks, check)
	if len(b.calls) >= maxBatch {
		b.flush()
	}
}

// flush sends the held calls, if any, and checks their answers.
func (b *batcher[C, R]) flush() {
	if len(b.calls) > 0 {
		b.send(b.names[len(b.names)-1], b.calls)
	}
}

// send makes one round trip with calls, the held ones first; it checks the
// held calls' answers and forgets them.
func (b *batcher[C, R]) send(name string, calls []*C) []*R {
	return b.checked(name, calls, func() ([]*R, proto.Message) { return b.exchange(name, calls) })
}

// checked gets the answer to calls, the held ones first, with get; it checks
// the held calls' answers and forgets them.
func (b *batcher[C, R]) checked(name string, calls []*C, get func() ([]*R, proto.Message)) []*R {
	res, resp := get()
	if len(res) != len(calls) {
		b.s.protocolError(name, resp)
	}
	for i, check := range b.checks {
		if check == nil {
			continue
		}
		if err := check(res[i]); err != nil {
			b.s.violation(b.names[i], err)
		}
	}
	clear(b.calls)
	clear(b.checks)
	b.calls, b.names, b.checks = b.calls[:0], b.names[:0], b.checks[:0]
	return res
}

// violation panics with a *sdk.ContractError for an answer to a held call
// that differs from what the plugin's declaration made the host compute: the
// plugin broke its contract, and the run cannot go on (it already used the
// computed answer). The session is dead afterwards: later calls panic with a
// TransportError that wraps the violation.
func (s *session) violation(call string, err error) {
	ce := &sdk.ContractError{Kind: s.kind, Name: s.name, Call: call, Problem: err.Error()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = &sdk.TransportError{Kind: s.kind, Name: s.name, Call: call, Pid: s.pid(), Err: ce}
		s.cancel(ce)
	}
	panic(ce)
}

// pid is the plugin's process id, 0 without a process.
func (s *session) pid() int {
	if s.opts.Process == nil {
		return 0
	}
	return s.opts.Process.Pid()
}
