package kernel

import (
	"math/bits"
	"strconv"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Signal numbers (x86-64, include/uapi/asm-generic/signal.h).
const (
	SIGINT    = 2
	SIGKILL   = 9
	SIGALRM   = 14
	SIGSTOP   = 19
	SIGVTALRM = 26
	SIGPROF   = 27
	// SIGRTMIN is glibc's SIGRTMIN, what programs use: the kernel's first
	// real-time signal is 32 and glibc reserves 32 and 33 for itself.
	SIGRTMIN = 34
	// maxSignal is _NSIG: signals are 1..64.
	maxSignal = 64
)

// kernelSIGRTMIN is the kernel's SIGRTMIN: signals below it are "legacy"
// signals that are queued at most once (kernel/signal.c:legacy_queue()).
const kernelSIGRTMIN = 32

// si_code values (include/uapi/asm-generic/siginfo.h).
const (
	siUser   = 0    // SI_USER: kill()
	siKernel = 0x80 // SI_KERNEL: SEND_SIG_PRIV, e.g. itimer signals
	siTimer  = -2   // SI_TIMER: POSIX timer signals
)

// Results of signal generation as the signal_generate event prints them
// (include/trace/events/signal.h, enum TRACE_SIGNAL_*).
const (
	traceSignalDelivered      = 0
	traceSignalIgnored        = 1
	traceSignalAlreadyPending = 2
)

// rt_sigprocmask() how values.
const (
	SigBlock   = 0
	SigUnblock = 1
	SigSetmask = 2
)

// SigMask returns the signal set holding signos (sigmask()).
func SigMask(signos ...int) uint64 {
	var m uint64
	for _, s := range signos {
		m |= sigmask(s)
	}
	return m
}

func sigmask(signo int) uint64 { return 1 << uint(signo-1) }

// unblockable is SIGKILL and SIGSTOP: sigprocmask() takes them out of every
// new mask (sigdelsetmask()).
const unblockable = 1<<(SIGKILL-1) | 1<<(SIGSTOP-1)

// SigInfo is what a handler receives (the fields of siginfo_t the model fills).
type SigInfo struct {
	Signo   int
	Code    int   // si_code: SI_TIMER (-2) for POSIX timers, SI_KERNEL (128) for itimers
	Overrun int64 // si_overrun of POSIX timer signals
	TimerID int   // si_tid: the POSIX timer id (Code == -2 only)
}

// Handler creates the program that runs one invocation of a signal handler; the
// program ends with Return.
type Handler func(t *Task, info SigInfo) Program

// sigaction flags (include/uapi/asm-generic/signal-defs.h, x86 signal.h).
const (
	SaNocldstop = 0x00000001
	SaSiginfo   = 0x00000004
	SaOnstack   = 0x08000000
	SaRestart   = 0x10000000
	// saRestorer is added by glibc's sigaction() to every action.
	saRestorer = 0x04000000
)

// sigAction is a struct k_sigaction: a nil handler is SIG_IGN.
type sigAction struct {
	handler Handler
	mask    uint64 // sa_mask
	flags   uint64 // sa_flags, as signal_deliver prints them
}

// Process is a thread group: shared signal handlers, shared pending signals,
// POSIX timers and interval timers (struct signal_struct + sighand_struct).
type Process struct {
	// What the signal and timer syscalls read.
	k      *Kernel
	shared sigQueue // signal->shared_pending
	// lastTimer is the timer timerOf found last (a cache of timers).
	lastTimer *PosixTimer
	// cpuTimers counts the CPU-time clock timers in timers: the tick's
	// check (runCPUTimers) has nothing to look at without one.
	cpuTimers int
	// nextTimerID is signal->next_posix_timer_id: ids count up from 0.
	nextTimerID int

	tasks  []*Task
	timers map[int]*PosixTimer
	// ignoredTimers is signal->ignored_posix_timers (6.13+): periodic timers
	// whose signal was ignored, parked until a handler is installed.
	ignoredTimers []*PosixTimer
	Tgid          int
	Comm          string
	itimers       [3]*itimer
	actions       [maxSignal + 1]sigAction
}

// cpuTime is the process's CPU time in ns (thread_group_cputime()): the sum
// of its threads' (a task stays in its process for good, so nothing is
// lost). Summed when read, rarely (CPU-time timers and itimers), instead
// of added to on every context change of every thread.
func (p *Process) cpuTime() int64 {
	var s int64
	for _, t := range p.tasks {
		s += t.cpuTime
	}
	return s
}

// sigEntry is one queued signal (struct sigqueue).
type sigEntry struct {
	signo   int
	code    int
	timer   *PosixTimer // the timer whose preallocated sigqueue this is
	sysPriv uint64      // si_sys_private (legacy requeue sequence)
	overrun int64       // si_overrun
	onList  bool        // on a pending list (a flag: a pointer store pays a write barrier check)
}

func (e *sigEntry) queued() bool { return e.onList }

// sigQueue is a pending list (struct sigpending), in queueing order, with
// its pending set (sigpending.signal: a bit for each signal with at least one
// entry) kept as entries come and go, so that the checks made on every
// return to user space (recalc_sigpending(), next_signal()) are mask tests
// instead of walks of the list.
type sigQueue struct {
	q   []*sigEntry
	set uint64
}

func (s *sigQueue) add(e *sigEntry) {
	e.onList = true
	s.q = append(s.q, e)
	s.set |= sigmask(e.signo)
}

func (s *sigQueue) has(signo int) bool { return s.set&sigmask(signo) != 0 }

// mask is the pending set (sigpending.signal).
func (s *sigQueue) mask() uint64 { return s.set }

// take is __dequeue_signal(): next_signal() picks the lowest-numbered
// unblocked signal, collect_signal() its first queued entry.
func (s *sigQueue) take(blocked uint64) *sigEntry {
	if m := s.set &^ blocked; m != 0 {
		return s.collect(bits.TrailingZeros64(m) + 1)
	}
	return nil
}

// collect is collect_signal(): the first entry of signo, taken off the list.
// Kept out of line so that take, run twice on every dequeue, inlines.
//
//go:noinline
func (s *sigQueue) collect(signo int) *sigEntry {
	for i, e := range s.q {
		if e.signo == signo {
			s.removeAt(i)
			return e
		}
	}
	panic("kernel: pending set names a signal that is not queued")
}

func (s *sigQueue) removeAt(i int) {
	e := s.q[i]
	n := len(s.q) - 1
	if i < n {
		copy(s.q[i:], s.q[i+1:])
	}
	s.q[n] = nil
	s.q = s.q[:n]
	e.onList = false
	// collect_signal(): the bit stays while another entry of the signal
	// is queued (real-time signals queue several).
	s.set &^= sigmask(e.signo)
	for _, o := range s.q {
		if o.signo == e.signo {
			s.set |= sigmask(e.signo)
			break
		}
	}
}

func (s *sigQueue) pendingUnblocked(blocked uint64) bool { return s.set&^blocked != 0 }

// recalcSigpending is recalc_sigpending(): TIF_SIGPENDING is set while an
// unblocked signal waits in the thread's or the process's pending list.
func (t *Task) recalcSigpending() {
	t.sigpending = t.pending.pendingUnblocked(t.blocked) || t.Proc.shared.pendingUnblocked(t.blocked)
}

// setBlocked is set_current_blocked(): change the mask and recalculate.
func (t *Task) setBlocked(m uint64) {
	t.blocked = m &^ unblockable
	t.recalcSigpending()
}

// ignored is sig_ignored(): an unblocked signal whose action is SIG_IGN is
// discarded when it is generated. Blocked signals are never ignored: the
// handler may change before they are unblocked.
func (p *Process) ignored(t *Task, signo int) bool {
	if t != nil && t.blocked&sigmask(signo) != 0 {
		return false
	}
	return p.actions[signo].handler == nil
}

// leader is the thread group leader (pid_task(tgid, PIDTYPE_TGID)).
func (p *Process) leader() *Task {
	for _, t := range p.tasks {
		if t.state != taskDead {
			return t
		}
	}
	return nil
}

// wantsSignal is wants_signal(): t takes signo if it does not block it and
// is running or does not have a signal to handle already.
func wantsSignal(signo int, t *Task) bool {
	if t.state == taskDead || t.blocked&sigmask(signo) != 0 {
		return false
	}
	return t.running() || !t.sigpending
}

// running is task_curr(): t owns its CPU.
func (t *Task) running() bool { return t.cpu.rq.curr == t }

// completeSignal is complete_signal(): find a thread to take the signal just
// queued for p (t is the suggested one; thread-directed when threadOnly) and
// wake it with signal_wake_up(). It returns the cost charged to the sender.
func (k *Kernel) completeSignal(now ktime.Time, from *CPU, signo int, p *Process, t *Task, threadOnly bool) int64 {
	target := t
	if !wantsSignal(signo, t) {
		if threadOnly || len(p.tasks) == 1 {
			return 0 // it dequeues the signal before it runs user code again
		}
		target = nil
		for _, o := range p.tasks {
			if wantsSignal(signo, o) {
				target = o
				break
			}
		}
		if target == nil {
			return 0
		}
	}
	return k.signalWakeUp(now, from, target)
}

// signalWakeUp is signal_wake_up(): set TIF_SIGPENDING and wake the task if it
// sleeps interruptibly; if it runs on another CPU, kick_process() sends the
// reschedule IPI that makes it pass through exit_to_user_mode().
//
// From a timer callback (posix_timer_fn(), it_real_fn(), a CPU timer run by
// the tick: hard or soft interrupt context on from) the wakeup is the
// interrupt's work: it is added to from.acct.irqWork, which delays the handler's
// return, and 0 is returned (the callback's own cost is fixed).
func (k *Kernel) signalWakeUp(now ktime.Time, from *CPU, t *Task) int64 {
	t.sigpending = true
	var cost int64
	switch {
	case t.state == taskSleeping:
		cost = k.Wake(now, t, from)
	case t.running() && t.cpu != from && t.cpu.mode == modeTask:
		k.sendIPI(now, t.cpu, ipiResched)
		cost = k.costs.IPISend
	}
	if from != nil && (from.irqNest || from.inSoft) {
		from.acct.irqWork += int32(cost)
		return 0
	}
	return cost
}

// sendSignal is send_signal_locked() for a signal without a preallocated
// sigqueue (SEND_SIG_PRIV, si_code SI_KERNEL): it queues signo for the process
// p (thread nil) or for thread, and returns the TRACE_SIGNAL result and the
// sender's cost. Standard signals are queued at most once (legacy_queue()).
func (k *Kernel) sendSignal(now ktime.Time, from *CPU, p *Process, thread *Task, signo int) (int, int64) {
	return k.sendSignalCode(now, from, p, thread, signo, siKernel)
}

// sendSignalCode is sendSignal with the entry's si_code: SI_KERNEL, or
// SI_USER for kill() (SEND_SIG_NOINFO).
func (k *Kernel) sendSignalCode(now ktime.Time, from *CPU, p *Process, thread *Task, signo, code int) (int, int64) {
	t := thread
	if t == nil {
		t = p.leader()
	}
	if t == nil {
		return traceSignalIgnored, 0
	}
	list := &p.shared
	if thread != nil {
		list = &thread.pending
	}
	res, cost := traceSignalDelivered, int64(0)
	switch {
	case p.ignored(t, signo):
		res = traceSignalIgnored
	case signo < kernelSIGRTMIN && list.has(signo):
		res = traceSignalAlreadyPending
	default:
		list.add(&sigEntry{signo: signo, code: code})
		cost = k.completeSignal(now, from, signo, p, t, thread != nil)
	}
	k.traceSignalGenerate(now, from, signo, code, t, thread == nil, res)
	return res, cost + k.costs.SignalGenerate
}

func (k *Kernel) traceSignalGenerate(now ktime.Time, from *CPU, signo, code int, t *Task, group bool, res int) {
	if k.tr != nil {
		k.writeSignalGenerate(now, from, signo, code, t, group, res)
	}
}

func (k *Kernel) writeSignalGenerate(now ktime.Time, from *CPU, signo, code int, t *Task, group bool, res int) {
	if !k.tr.Enabled("signal_generate") {
		return
	}
	c := from
	if c == nil {
		c = t.cpu
	}
	grp := "0"
	if group {
		grp = "1"
	}
	k.tr.Event(now, c.traceCtxLocks(1), "signal_generate", "sig="+strconv.Itoa(signo)+" errno=0 code="+strconv.Itoa(code)+
		" comm="+t.Comm+" pid="+strconv.Itoa(t.Pid)+" grp="+grp+" res="+strconv.Itoa(res))
}

// doSignal is arch_do_signal_or_restart() (arch/x86/kernel/signal.c) on the
// way back to user space with TIF_SIGPENDING set: get_signal() dequeues
// signals until one has a handler, dropping stale POSIX timer signals (6.13+,
// posixtimer_deliver_signal()) and ignored ones; handle_signal() then pushes
// the handler's frame. r is the syscall result being returned (hasR), or the
// task returns to an interrupted user computation (!hasR). It reports whether
// a handler frame was pushed (its setup then runs as the task's next
// segment); if not, the caller applies the syscall restart rules to r and
// charges cost, the time the dequeues took.
func (t *Task) doSignal(now ktime.Time, r Result, hasR bool) (pushed bool, cost int64) {
	k := t.k
	for {
		// dequeue_signal(): the thread's own pending list first, then the
		// process's; a SIGALRM taken from the process list re-arms
		// ITIMER_REAL.
		e := t.pending.take(t.blocked)
		if e == nil {
			if e = t.Proc.shared.take(t.blocked); e != nil && e.signo == SIGALRM {
				cost += t.Proc.rearmRealTimer(t.cpu, now+ktime.Time(cost))
			}
		}
		t.recalcSigpending()
		if e == nil {
			break
		}
		cost += k.costs.SignalDequeue
		// The era fills in the timer's fields through an interface: the
		// siginfo lives in the task, so building one allocates nothing.
		info := &t.sigInfo
		*info = SigInfo{Signo: e.signo, Code: e.code, Overrun: e.overrun}
		if pt := e.timer; pt != nil {
			// The timer half of dequeue_signal(): si_timerid, then the era's
			// rules.
			info.TimerID = pt.ID
			ok, c := k.signals.deliver(pt, t, now+ktime.Time(cost), e, info)
			cost += c
			if !ok {
				t.cpu.cnt.b.Add(cSignalsDropped, 1)
				continue // dequeue_signal(): goto again
			}
		}
		act := &t.Proc.actions[e.signo]
		if act.handler == nil {
			k.Counters.Inc(cntSignalsIgnored, t.cpu.id, 1)
			continue // SIG_IGN at delivery time
		}
		t.handleSignal(now+ktime.Time(cost), r, hasR, e.signo, info, act)
		// exit_to_user_mode_loop(): more pending signals nest their own
		// frames before the handler's first instruction (toUser).
		t.segment(cost+k.costs.SignalDeliver, false, contUser)
		return true, 0
	}
	return false, cost
}

// handleSignal is handle_signal() + setup_rt_frame(): the syscall being
// returned from sees -EINTR if it asked to be restarted (SA_RESTART is not
// modelled: no modelled syscall returns -ERESTARTSYS), the interrupted frame
// keeps what it resumes with, and the handler's frame is pushed with its
// signal (and sa_mask) blocked.
func (t *Task) handleSignal(now ktime.Time, r Result, hasR bool, signo int, info *SigInfo, act *sigAction) {
	k := t.k
	top := t.top()
	if hasR {
		if r.Err == errRestartBlock || r.Err == errRestartNoHand {
			r.Err = EINTR
		}
		t.sleep.hasRestartBlock = false
		top.resume, top.hasResume = r, true
	} else {
		top.resumeCompute = t.segRemaining
		t.segRemaining = 0
	}
	t.cpu.cnt.b.Add(cSignalsDelivered, 1)
	if info.Code == siTimer {
		t.cpu.cnt.b.Add(cPosixTimerOverruns, info.Overrun)
	}
	if k.tr.Enabled("signal_deliver") {
		k.tr.Event(now, t.cpu.traceCtxLocks(1), "signal_deliver", "sig="+strconv.Itoa(signo)+" errno=0 code="+strconv.Itoa(info.Code)+
			" sa_handler="+handlerAddr+" sa_flags="+strconv.FormatUint(act.flags|saRestorer, 16))
	}
	mask := act.mask // read before the handler's program is built
	t.pushFrame(frame{prog: act.handler(t, *info), savedMask: t.blocked})
	t.setBlocked(t.blocked | mask | sigmask(signo))
}

// handlerAddr is the sa_handler signal_deliver prints: a fixed text address.
const handlerAddr = "401a30"

// sigreturn is rt_sigreturn(): restore the mask saved in the frame, pop it and
// resume what the handler interrupted. The syscall-restart check is off for
// the restored context (restore_sigcontext() sets orig_ax to -1).
func (t *Task) sigreturn(now ktime.Time) {
	if t.nframes < 2 {
		panic("kernel: task " + t.Comm + " returned from a handler it is not in")
	}
	mask := t.popFrame()
	t.setBlocked(mask)
	t.traceSysEnter(now, "rt_sigreturn", "")
	t.segment(t.k.costs.Syscall, false, contSigreturn)
}

// sigreturnDone resumes the frame below the handler after rt_sigreturn().
func (t *Task) sigreturnDone(now ktime.Time) {
	top := t.top()
	if top.hasResume {
		r := top.resume
		top.resume, top.hasResume = Result{}, false
		t.traceSysExit(now, "rt_sigreturn", sysRet(r))
		t.toUser(now, r)
		return
	}
	t.traceSysExit(now, "rt_sigreturn", 0)
	rest := top.resumeCompute
	top.resumeCompute = 0
	t.resumeCompute(now, rest)
}

// resumeCompute continues an interrupted user computation of rest ns, taking
// pending signals first.
func (t *Task) resumeCompute(now ktime.Time, rest int64) {
	t.segRemaining = rest
	t.segUser = true
	var cost int64
	if t.sigpending {
		var pushed bool
		if pushed, cost = t.doSignal(now, Result{}, false); pushed {
			return
		}
	}
	t.segRemaining = 0
	t.segment(cost+rest, true, contUser)
}

// interruptedCompute is exit_to_user_mode() for a task resuming a user
// computation after an interrupt or a preemption: a pending signal gets its
// handler first. It reports whether a handler frame was pushed.
func (t *Task) interruptedCompute(now ktime.Time) bool {
	if !t.segUser || t.segRemaining <= 0 || !t.sigpending {
		return false
	}
	pushed, cost := t.doSignal(now, Result{}, false)
	t.segRemaining += cost // dropped signals: the dequeues delay the computation
	return pushed
}

// sigpendingSet is do_sigpending(): the pending signals that are blocked.
func (t *Task) sigpendingSet() uint64 {
	return (t.pending.mask() | t.Proc.shared.mask()) & t.blocked
}

// sigaction is do_sigaction(): install act for signo. Setting SIG_IGN
// discards the pending instances (POSIX 3.3.1.3); lifting SIG_IGN re-queues
// the parked periodic POSIX timer signals (6.13+ posixtimer_sig_unignore()).
func (p *Process) sigaction(now ktime.Time, from *CPU, signo int, act sigAction) {
	wasIgnored := p.actions[signo].handler == nil
	p.actions[signo] = act
	if act.handler == nil {
		p.flushSignal(signo)
		return
	}
	if wasIgnored {
		p.unignoreTimers(now, from, signo)
	}
}

// flushSignal is flush_sigqueue_mask() for one signal on every pending list
// of p: a POSIX timer's sigqueue goes to sigqueue_free_ignored().
func (p *Process) flushSignal(signo int) {
	flush := func(s *sigQueue) {
		for i := 0; i < len(s.q); {
			e := s.q[i]
			if e.signo != signo {
				i++
				continue
			}
			s.removeAt(i)
			if e.timer != nil {
				p.k.signals.sigIgnored(e.timer)
			}
		}
	}
	flush(&p.shared)
	for _, t := range p.tasks {
		flush(&t.pending)
		t.recalcSigpending()
	}
}

// clockOffset returns the offset of clock from CLOCK_MONOTONIC.
func (k *Kernel) clockOffset(c sdk.ClockID) int64 {
	switch c {
	case sdk.ClockRealtime:
		return k.tk.offsets.Real
	case sdk.ClockBoottime:
		return k.tk.offsets.Boot
	case sdk.ClockTAI:
		return k.tk.offsets.TAI
	}
	return 0
}

// clockSettime is do_settimeofday64() on CLOCK_REALTIME followed by
// clock_was_set(). It returns the local cost.
func (k *Kernel) clockSettime(c *CPU, now ktime.Time, clock sdk.ClockID, t int64) int64 {
	if clock != sdk.ClockRealtime {
		return 0
	}
	delta := t - (int64(now) + k.tk.offsets.Real)
	return k.ShiftRealtime(c, now, delta)
}

// ShiftRealtime moves CLOCK_REALTIME (and TAI) by delta ns at now, as
// clock_settime()/adjtimex(ADJ_SETOFFSET) do, and runs clock_was_set() on c,
// the CPU doing it (kernel/time/hrtimer.c): the hrtimer plugin decides for
// every CPU, here on c, whether it gets retrigger_next_event()
// (update_needs_ipi() since 1e7f7fbcd40c, every CPU before); c sends the IPIs
// and, under on_each_cpu(), runs it itself after sending them. It returns the
// cost on c.
func (k *Kernel) ShiftRealtime(c *CPU, now ktime.Time, delta int64) int64 {
	k.tk.offsets.Real += delta
	k.tk.offsets.TAI += delta
	k.tk.clockSeq++
	k.Counters.Inc(cntClockWasSet, -1, 1)
	cost := int64(0)
	local := false
	for _, o := range k.cpus {
		r := k.hrt.ClockWasSet(o.id, now+ktime.Time(cost), k.tk.offsets)
		cost += r.Cost
		switch {
		case r.Ret == 0:
		case o == c:
			// smp_call_function_many() skips the calling CPU; on_each_cpu()
			// runs the function there too.
			local = r.Ret == sdk.ClockWasSetEachCPU
		default:
			k.sendIPI(now+ktime.Time(cost), o, ipiCallFunc)
			k.Counters.Inc(cntClockWasSetIPIs, o.id, 1)
			cost += k.costs.IPISend
		}
	}
	if local {
		r := k.hrt.RetriggerNextEvent(c.id, now+ktime.Time(cost))
		cost += r.Cost
		cost += k.programLocal(c, now+ktime.Time(cost), r.Program)
	}
	return cost
}

// clockWasSetIPI is retrigger_next_event() run by the call-function IPI.
func (c *CPU) clockWasSetIPI(now ktime.Time) ktime.Time {
	k := c.k
	r := k.hrt.RetriggerNextEvent(c.id, now)
	now += ktime.Time(r.Cost)
	now += ktime.Time(k.programLocal(c, now, r.Program))
	return now
}
