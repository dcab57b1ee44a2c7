package kernel

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/ktime"
	"github.com/tickemu/tickemu/framework/sdk"
)

// Signal numbers (x86-64).
const (
	SIGALRM   = 14
	SIGVTALRM = 26
	SIGPROF   = 27
	SIGRTMIN  = 34 // glibc's SIGRTMIN (the kernel's is 32; glibc reserves two)
)

// siTimer is SI_TIMER, the si_code of POSIX timer signals.
const siTimer = -2

// SigInfo is what a handler receives.
type SigInfo struct {
	Signo   int
	Code    int
	Overrun int64
	TimerID int // POSIX timer id, 0 otherwise
}

// Handler creates the program that runs one invocation of a signal handler; the
// program ends with Return.
type Handler func(t *Task, info SigInfo) Program

// Process is a thread group: shared signal handlers, shared pending signals,
// POSIX timers and interval timers.
type Process struct {
	Tgid int
	Comm string

	k        *Kernel
	tasks    []*Task
	handlers map[int]Handler
	pending  sigQueue
	timers   map[int]*PosixTimer
	nextTID  int
	itimers  [3]*itimer
	cpuTime  int64 // process CPU time in ns
}

// sigEntry is one queued signal (struct sigqueue).
type sigEntry struct {
	signo   int
	code    int
	timer   *PosixTimer
	sysPriv uint64 // si_sys_private: requeue counter (legacy) or signal seq (6.13+)
	overrun int64
	queued  bool
}

// sigQueue is a pending list (struct sigpending).
type sigQueue struct{ q []*sigEntry }

func (s *sigQueue) add(e *sigEntry) { e.queued = true; s.q = append(s.q, e) }

func (s *sigQueue) has(signo int) bool {
	for _, e := range s.q {
		if e.signo == signo {
			return true
		}
	}
	return false
}

// take removes the first deliverable entry: lowest signal number first, FIFO
// among equal numbers (next_signal() / collect_signal()).
func (s *sigQueue) take(blocked uint64) *sigEntry {
	best := -1
	for i, e := range s.q {
		if blocked&(1<<uint(e.signo-1)) != 0 {
			continue
		}
		if best < 0 || e.signo < s.q[best].signo {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	e := s.q[best]
	s.q = append(s.q[:best], s.q[best+1:]...)
	e.queued = false
	return e
}

func (s *sigQueue) removeEntry(e *sigEntry) {
	for i, x := range s.q {
		if x == e {
			s.q = append(s.q[:i], s.q[i+1:]...)
			e.queued = false
			return
		}
	}
}

func (s *sigQueue) pendingUnblocked(blocked uint64) bool {
	for _, e := range s.q {
		if blocked&(1<<uint(e.signo-1)) == 0 {
			return true
		}
	}
	return false
}

// signalPending is signal_pending(current): any unblocked signal queued, stale or not.
func (t *Task) signalPending() bool {
	return t.sigPending.pendingUnblocked(t.blocked) || t.Proc.pending.pendingUnblocked(t.blocked)
}

// sendSignal queues e for p (thread nil) or for thread, and wakes the target
// (send_signal_locked() -> complete_signal() -> signal_wake_up()). It returns
// the trace result (0 delivered, 2 already pending) and the waker's cost.
func (k *Kernel) sendSignal(now ktime.Time, from *CPU, p *Process, thread *Task, e *sigEntry) (int, int64) {
	if e.queued {
		return 2, 0 // TRACE_SIGNAL_ALREADY_PENDING
	}
	if e.signo < SIGRTMIN && e.timer == nil {
		// Standard signals are not queued twice.
		if thread != nil && thread.sigPending.has(e.signo) || thread == nil && p.pending.has(e.signo) {
			return 2, 0
		}
	}
	var target *Task
	if thread != nil {
		thread.sigPending.add(e)
		target = thread
	} else {
		p.pending.add(e)
		for _, t := range p.tasks { // complete_signal(): the first thread that wants it
			if t.state != taskDead && t.blocked&(1<<uint(e.signo-1)) == 0 {
				target = t
				break
			}
		}
	}
	if target == nil {
		return 0, 0
	}
	var cost int64
	switch {
	case target.state == taskSleeping:
		cost = k.Wake(now, target, from)
	case target.cpu != from && target.cpu.curr == target && target.cpu.mode == modeTask:
		k.sendIPI(now, target.cpu, ipiResched) // kick_process()
		cost = k.costs.IPISend
	}
	return 0, cost
}

// deliverSignals is get_signal() + handle_signal() on the way back to user
// space. r is the syscall result being returned (nil: an interrupted user
// computation). It reports whether a handler frame was pushed; otherwise r may
// still be changed by dropped signals (nothing to do) and the caller continues.
func (t *Task) deliverSignals(now ktime.Time, r *Result) bool {
	k := t.k
	if !t.signalPending() {
		return false
	}
	var cost int64
	for {
		e := t.sigPending.take(t.blocked)
		if e == nil {
			e = t.Proc.pending.take(t.blocked)
		}
		if e == nil {
			break
		}
		cost += k.costs.SignalGenerate / 2 // dequeue_signal()
		info := SigInfo{Signo: e.signo, Code: e.code}
		if e.timer != nil {
			ok := e.timer.dequeued(now, e, &info)
			if !ok {
				k.Counters.Add("signals_dropped", t.cpu.id, 1)
				continue // 6.13+: a stale timer signal is dropped (posixtimer_deliver_signal())
			}
		}
		if e.signo == SIGALRM {
			t.Proc.rearmRealTimer(t.cpu, now)
		}
		h := t.Proc.handlers[e.signo]
		if h == nil {
			k.Counters.Add("signals_ignored", t.cpu.id, 1)
			continue
		}
		// handle_signal(): a restartable syscall interrupted by a handler
		// returns -EINTR; the handler runs with its signal blocked.
		top := &t.frames[len(t.frames)-1]
		if r != nil {
			rr := *r
			if rr.Err == errRestartBlock {
				rr.Err = EINTR
				t.restart = nil
			}
			top.resume = &rr
		} else {
			top.resumeCompute = t.segRemaining
			t.segRemaining = 0
		}
		k.Counters.Add("signals_delivered", t.cpu.id, 1)
		if k.tr.Enabled("signal_deliver") {
			k.tr.Event(now, t.cpu.traceCtx(), "signal_deliver", fmt.Sprintf("sig=%d errno=0 code=%d sa_handler=401a30 sa_flags=14000004", e.signo, e.code))
		}
		mask := uint64(1) << uint(e.signo-1)
		prog := h(t, info)
		t.frames = append(t.frames, frame{prog: prog, mask: mask})
		t.blocked |= mask
		t.segment(cost+k.costs.SignalDeliver, true, func(now ktime.Time) {
			t.exec(now, prog.Next(t, Result{Now: now}))
		})
		return true
	}
	if cost > 0 {
		// Only dropped or ignored signals: the dequeue work still took time.
		t.segRemaining += cost
	}
	return false
}

// sigreturn is rt_sigreturn(): pop the handler frame and resume what it interrupted.
func (t *Task) sigreturn(now ktime.Time) {
	if len(t.frames) < 2 {
		panic(fmt.Sprintf("kernel: task %s returned from a handler it is not in", t.Comm))
	}
	h := t.frames[len(t.frames)-1]
	t.blocked &^= h.mask
	t.frames = t.frames[:len(t.frames)-1]
	top := &t.frames[len(t.frames)-1]
	t.segment(t.k.costs.Syscall, false, func(now ktime.Time) {
		if top.resume != nil {
			r := *top.resume
			top.resume = nil
			t.toUser(now, r)
			return
		}
		rest := top.resumeCompute
		top.resumeCompute = 0
		t.resumeCompute(now, rest)
	})
}

// resumeCompute continues an interrupted user computation of rest ns, taking
// pending signals first.
func (t *Task) resumeCompute(now ktime.Time, rest int64) {
	t.segRemaining = rest
	t.segUser = true
	if t.deliverSignals(now, nil) {
		return
	}
	t.segRemaining = 0
	t.segment(rest, true, func(now ktime.Time) { t.toUser(now, Result{Now: now}) })
}

// interruptedCompute delivers pending signals to a task about to resume user
// computation after an interrupt (exit_to_user_mode()). It reports whether a
// handler runs first.
func (t *Task) interruptedCompute(now ktime.Time) bool {
	if !t.segUser || t.segRemaining <= 0 || !t.signalPending() {
		return false
	}
	return t.deliverSignals(now, nil)
}

// clockOffset returns the offset of clock from CLOCK_MONOTONIC.
func (k *Kernel) clockOffset(c sdk.ClockID) int64 {
	switch c {
	case sdk.ClockRealtime:
		return k.offsets.Real
	case sdk.ClockBoottime:
		return k.offsets.Boot
	case sdk.ClockTAI:
		return k.offsets.TAI
	}
	return 0
}

// clockSettime is do_settimeofday64() on CLOCK_REALTIME followed by
// clock_was_set(): offsets move, every CPU's hrtimer bases are retriggered
// (the local one now, the others by IPI). It returns the local cost.
func (k *Kernel) clockSettime(c *CPU, now ktime.Time, clock sdk.ClockID, t int64) int64 {
	if clock != sdk.ClockRealtime {
		return 0
	}
	delta := t - (int64(now) + k.offsets.Real)
	return k.ShiftRealtime(c, now, delta)
}

// ShiftRealtime moves CLOCK_REALTIME (and TAI) by delta ns at now, as
// clock_settime()/adjtimex(ADJ_SETOFFSET) do, and runs clock_was_set(). c is
// the CPU doing it. It returns the cost on c.
func (k *Kernel) ShiftRealtime(c *CPU, now ktime.Time, delta int64) int64 {
	k.offsets.Real += delta
	k.offsets.TAI += delta
	k.clockSeq++
	k.Counters.Add("clock_was_set", -1, 1)
	cost := int64(0)
	for _, o := range k.cpus {
		if o == c {
			continue
		}
		k.sendIPI(now, o, ipiCallFunc)
		cost += k.costs.IPISend
	}
	r := k.hrt.ClockWasSet(c.id, now, k.offsets)
	cost += r.Cost
	cost += k.programLocal(c, now+ktime.Time(cost), r.Program)
	return cost
}

// clockWasSetIPI is retrigger_next_event() run by the call-function IPI.
func (c *CPU) clockWasSetIPI(now ktime.Time) ktime.Time {
	k := c.k
	r := k.hrt.ClockWasSet(c.id, now, k.offsets)
	now += ktime.Time(r.Cost)
	now += ktime.Time(k.programLocal(c, now, r.Program))
	return now
}
