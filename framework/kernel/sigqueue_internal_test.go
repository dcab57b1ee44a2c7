package kernel

import "testing"

// TestSigQueuePendingSet checks the pending set a sigQueue keeps against the
// list it describes: next_signal() order (lowest unblocked signal, its first
// entry), the bit of a real-time signal with several entries staying until
// the last one is taken, and removal from the middle (flush_sigqueue_mask()).
func TestSigQueuePendingSet(t *testing.T) {
	var s sigQueue
	e := func(signo, code int) *sigEntry { return &sigEntry{signo: signo, code: code} }
	a, b, c, d := e(SIGRTMIN, 1), e(SIGALRM, 2), e(SIGRTMIN, 3), e(SIGINT, 4)
	for _, x := range []*sigEntry{a, b, c, d} {
		s.add(x)
	}
	check := func(step string, want uint64) {
		t.Helper()
		var m uint64
		for _, x := range s.q {
			m |= sigmask(x.signo)
		}
		if m != want || s.mask() != want {
			t.Fatalf("%s: set %#x, list %#x, want %#x", step, s.mask(), m, want)
		}
	}
	check("queued", SigMask(SIGINT, SIGALRM, SIGRTMIN))
	if got := s.take(SigMask(SIGINT, SIGALRM)); got != a {
		t.Fatalf("take with SIGINT|SIGALRM blocked: %+v, want the first SIGRTMIN", got)
	}
	check("first SIGRTMIN taken", SigMask(SIGINT, SIGALRM, SIGRTMIN))
	if s.pendingUnblocked(SigMask(SIGINT, SIGALRM, SIGRTMIN)) {
		t.Fatal("pendingUnblocked with everything queued blocked")
	}
	if got := s.take(0); got != d {
		t.Fatalf("take: %+v, want SIGINT (lowest number)", got)
	}
	s.removeAt(1) // c, from the middle of [b c]
	check("second SIGRTMIN removed", SigMask(SIGALRM))
	if !s.has(SIGALRM) || s.has(SIGRTMIN) || c.queued() {
		t.Fatal("has/queued after removing the last SIGRTMIN")
	}
	if got := s.take(SigMask(SIGALRM)); got != nil {
		t.Fatalf("take with the only pending signal blocked: %+v", got)
	}
	if got := s.take(0); got != b || s.mask() != 0 || len(s.q) != 0 {
		t.Fatalf("last take: %+v, set %#x, %d left", got, s.mask(), len(s.q))
	}
}

// progN is a distinct program per frame.
type progN int

func (progN) Next(*Task, Result) Action { return Return{} }

// TestFrameStack: handler frames nest beyond the two kept in the task
// (frameBuf, then moreFrames); the top program and each frame's saved mask
// come back in order as they are popped.
func TestFrameStack(t *testing.T) {
	tk := &Task{}
	tk.frameBuf[0].prog = progN(0)
	tk.nframes = 1
	tk.prog = progN(0)
	for i := 1; i <= 4; i++ {
		tk.pushFrame(frame{prog: progN(i), savedMask: uint64(i) << 8})
		if tk.prog != progN(i) || tk.top().prog != progN(i) || tk.nframes != int32(i+1) {
			t.Fatalf("after push %d: prog %v, top %v, %d frames", i, tk.prog, tk.top().prog, tk.nframes)
		}
	}
	for i := 4; i >= 1; i-- {
		if m := tk.popFrame(); m != uint64(i)<<8 {
			t.Fatalf("pop %d: saved mask %#x, want %#x", i, m, uint64(i)<<8)
		}
		if tk.prog != progN(i-1) || tk.top().prog != progN(i-1) {
			t.Fatalf("after pop %d: prog %v, top %v, want %d", i, tk.prog, tk.top().prog, i-1)
		}
	}
	if len(tk.moreFrames) != 0 || tk.frameBuf[1] != (frame{}) {
		t.Fatalf("popped frames left: %d more, frameBuf[1] %+v", len(tk.moreFrames), tk.frameBuf[1])
	}
}
