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
