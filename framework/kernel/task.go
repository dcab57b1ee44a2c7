package kernel

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Program is a task's user-space code, stepped by the kernel: Next is called
// each time the task is back in user space, with the result of its previous
// action (the zero Result at start), and says what the task does next.
type Program interface {
	Next(t *Task, r Result) Action
}

// ProgramFunc adapts a function to Program.
type ProgramFunc func(t *Task, r Result) Action

// Next calls f.
func (f ProgramFunc) Next(t *Task, r Result) Action { return f(t, r) }

// Errno values the model returns (include/uapi/asm-generic/errno-base.h).
type Errno int

// Errnos.
const (
	EOK    Errno = 0
	EINTR  Errno = 4
	EAGAIN Errno = 11
	EINVAL Errno = 22
	ESRCH  Errno = 3
	// errRestartNoHand is -ERESTARTNOHAND and errRestartBlock
	// -ERESTART_RESTARTBLOCK (include/linux/errno.h): a syscall interrupted by
	// a signal returns them and user space never sees them. With a handler
	// they become -EINTR; without one the syscall is restarted: re-executed
	// as it was (ERESTARTNOHAND) or through current->restart_block.
	errRestartNoHand Errno = 514
	errRestartBlock  Errno = 516
)

// Result is what a syscall returned, seen in user space at Now.
type Result struct {
	Ret int64
	Err Errno
	Now ktime.Time
}

// Action is something a task does: user computation or a syscall. Only the
// kernel's action types implement it: start begins the action for t at now.
type Action interface{ start(t *Task, now ktime.Time) }

// Compute is user-space work of NS nanoseconds.
type Compute struct{ NS int64 }

// ClockNanosleep is clock_nanosleep(clock, flags, t, rem): Abs =
// TIMER_ABSTIME (T absolute in the clock), else T is a relative duration.
// glibc's nanosleep() is ClockNanosleep on CLOCK_REALTIME, relative. Rem
// says whether a remaining-time buffer is passed (rmtp non-NULL). A negative
// T stands for an invalid timespec (EINVAL).
type ClockNanosleep struct {
	Clock sdk.ClockID
	T     int64
	Abs   bool
	Rem   bool
}

// ClockGettime is clock_gettime(clock); Result.Ret is the time.
type ClockGettime struct{ Clock sdk.ClockID }

// ClockSettime is clock_settime(CLOCK_REALTIME, T).
type ClockSettime struct {
	Clock sdk.ClockID
	T     int64
}

// SchedYield is sched_yield().
type SchedYield struct{}

// Syscall is any other syscall, with its cost in ns (getpid, sigpending, ...).
type Syscall struct {
	Name string
	Cost int64
}

// KernelWork runs Fn in kernel context on the task's CPU at the start of the
// action; Fn returns its cost. For in-kernel workloads (a driver's transmit path).
type KernelWork struct {
	Name string
	Fn   func(c *CPU, now ktime.Time) int64
}

// Wait is a syscall (Name, e.g. "futex") that blocks the task until the
// workload wakes it with Kernel.Wake: a wait whose waker the model does not
// have, as when the replay workload runs a task the way a capture shows.
type Wait struct{ Name string }

// Exit ends the task.
type Exit struct{}

// Return ends a signal handler (rt_sigreturn).
type Return struct{}

// frame is one level of a task's user-space execution: the main program, or a
// signal handler pushed on top of it.
type frame struct {
	prog Program
	// What resumes this frame when the handler above it returns: a pending
	// syscall result (hasResume; the zero Result starts a handler that has
	// not run yet), or the rest of an interrupted computation.
	resume        Result
	hasResume     bool
	resumeCompute int64
	// savedMask is, for a handler frame, the blocked mask rt_sigreturn()
	// restores (the uc_sigmask of the signal frame).
	savedMask uint64
}

// Task is a thread: its struct task_struct's share of the scheduler,
// signals, the sleep in progress, the signal frames and the syscall being
// completed, as groups of fields.
//
// Fields: many, as a task_struct's are more: the groups that one subsystem
// alone reads are parts of their own (sleepState, continuations, the
// frames); what stays flat is read by a segment end or a return to user
// space, which cross the subsystems.
type Task struct {
	// What every segment end and every return to user space reads.
	k            *Kernel
	cpu          *CPU
	segRemaining int64
	cpuTime      int64 // task CPU time in ns (CLOCK_THREAD_CPUTIME_ID), added to at every context change
	// What runs when the segment ends (segmentEnded): a prebuilt
	// continuation, or segFn.
	segNext    contKind
	segUser    bool // the current segment is user computation (signals can interrupt it)
	sigpending bool // TIF_SIGPENDING
	state      taskState
	nframes    int32 // the frames: frameBuf, then moreFrames
	// prog is the top frame's program, the one every return to user space
	// steps: a copy of the top frame's kept by pushFrame and popFrame, so
	// that the return reads no frame.
	prog Program

	// Signal state (what generation and delivery read) and the rarer
	// continuation.
	Proc    *Process
	blocked uint64   // blocked signal mask (bit signo-1)
	pending sigQueue // t->pending: thread-directed signals
	segFn   func(now ktime.Time)

	// The clock_nanosleep() in progress and what the wakeup that ends it
	// writes (hrtimer_wakeup() -> try_to_wake_up(): the idle exit it paid).
	sleep          sleepState
	lastHardExpiry ktime.Time // the last sleep's hard expiry in sim time (its target plus the timer slack)
	Pid            int
	// What the last wakeup paid for leaving idle (see WakeBreakdown).
	wakeIdleExit, wakeBroadcast int64

	// The scheduler's and the clock read's: when the task last got
	// the CPU, its class and priority (switchTo, the runqueue), what contUserRes
	// returns to user space (a clock read's value) and, for WakePath, when
	// the task last read a clock; then the absolute sleep's requested
	// time, what an -ERESTARTNOHAND re-executes (sleepState.request),
	// written by every sleep.
	runSince    ktime.Time
	Policy      Policy
	RTPrio      int // 1..99 for SchedFIFO
	userRes     Result
	clockReadAt ktime.Time
	sleepReqT   int64

	// frameBuf holds the first two frames (the program and one handler) in
	// the task itself; nested handlers go on in moreFrames.
	frameBuf [2]frame

	// The syscall being completed, and the name.
	cont continuations
	Comm string

	// What contDropped hands restartOrReturn once the dequeue of dropped or
	// ignored signals has taken its time.
	droppedRes Result
	moreFrames []frame
	// restartBlock is restart_block.nanosleep (sleep.hasRestartBlock: fn =
	// hrtimer_nanosleep_restart, else do_no_restart_syscall).
	restartBlock ClockNanosleep
	sigInfo      SigInfo // the siginfo doSignal is building
}

// sleepState is a task's clock_nanosleep() between its segments: its struct
// hrtimer_sleeper, whether it is the restart of an interrupted one (the
// trace's syscall name: restart_syscall), the request's flags, and the
// sleeper's clock and hard expiry in it: every segment of a sleep reads
// only these.
type sleepState struct {
	sleeper   *HRTimer
	sleepDone bool // hrtimer_wakeup() cleared t->task
	restart   bool
	abs, rem  bool // the request's TIMER_ABSTIME and rmtp
	// hasRestartBlock: Task.restartBlock is current->restart_block.
	hasRestartBlock bool
	clock           sdk.ClockID
	absExpires      int64
}

// sysName is the syscall the sleep returns from, as sys_exit names it.
func (s *sleepState) sysName() string {
	if s.restart {
		return "restart_syscall"
	}
	return "clock_nanosleep"
}

// request is the clock_nanosleep() an -ERESTARTNOHAND re-executes: the
// absolute sleep in progress (only an absolute sleep that is not a restart
// returns that error), its requested time reqT. Its clock is the
// request's: an absolute sleep keeps it (doNanosleep).
func (s *sleepState) request(reqT int64) ClockNanosleep {
	return ClockNanosleep{Clock: s.clock, Abs: true, T: reqT, Rem: s.rem}
}

// continuations is the syscall being completed: what contSysExit traces
// and returns.
type continuations struct {
	sysRet  int64
	sysName string
	sysRes  Result
}

// contKind names a segment's continuation (Task.segNext). The prebuilt ones
// are a switch in segmentEnded, with no closure object per continuation.
type contKind uint8

const (
	contFn          contKind = iota // segFn
	contUser                        // toUser with a zero result
	contSysExit                     // sys_exit of cont.sysName, then toUser(cont.sysRes)
	contSigreturn                   // sigreturnDone
	contUserRes                     // toUser(userRes)
	contDropped                     // restartOrReturn(droppedRes)
	contNsSleep                     // nanosleepEntered
	contNsFinish                    // nanosleepFinish
	contNsCancelled                 // nanosleepCancelled
)

// segmentEnded runs the continuation of the task's segment that just ended
// (runHandler.Fire, the CPU's segment end).
func (t *Task) segmentEnded(now ktime.Time) {
	k := t.segNext
	t.segNext = contFn
	switch k {
	case contUser:
		t.toUser(now, Result{Now: now})
	case contSysExit:
		t.traceSysExit(now, t.cont.sysName, t.cont.sysRet)
		t.toUser(now, t.cont.sysRes)
	case contSigreturn:
		t.sigreturnDone(now)
	case contUserRes:
		t.toUser(now, t.userRes)
	case contDropped:
		t.restartOrReturn(now, t.droppedRes)
	case contNsSleep:
		t.nanosleepEntered(now)
	case contNsFinish:
		t.nanosleepFinish(now)
	case contNsCancelled:
		t.nanosleepCancelled(now)
	default:
		f := t.segFn
		t.segFn = nil
		f(now)
	}
}

// CPU is the CPU the task is bound to.
func (t *Task) CPU() *CPU { return t.cpu }

// Kernel returns the task's kernel.
func (t *Task) Kernel() *Kernel { return t.k }

func (t *Task) kprio() int {
	if t.Policy == SchedFIFO {
		return 99 - t.RTPrio
	}
	return 120
}

func (t *Task) timerSlack() int64 {
	if t.Policy == SchedFIFO {
		return 0 // hrtimer_nanosleep(): rt tasks get no slack
	}
	return t.k.costs.TimerSlack
}

// NewProcess creates a process (thread group) with no threads yet.
func (k *Kernel) NewProcess(comm string) *Process {
	p := &Process{k: k, Tgid: k.nextPid, Comm: comm, timers: map[int]*PosixTimer{}}
	k.procs = append(k.procs, p)
	return p
}

// Spawn creates a thread of p bound to cpu running prog, runnable at now.
func (k *Kernel) Spawn(p *Process, comm string, cpu int, pol Policy, rtprio int, prog Program) (*Task, error) {
	if cpu < 0 || cpu >= len(k.cpus) {
		return nil, fmt.Errorf("kernel: task %q bound to CPU %d, machine has %d", comm, cpu, len(k.cpus))
	}
	if pol == SchedFIFO && (rtprio < 1 || rtprio > 99) {
		return nil, fmt.Errorf("kernel: task %q: SCHED_FIFO priority %d outside 1..99", comm, rtprio)
	}
	pid := k.nextPid
	k.nextPid++
	if len(p.tasks) == 0 {
		p.Tgid = pid
	}
	t := &Task{Pid: pid, Comm: comm, Policy: pol, RTPrio: rtprio, Proc: p, k: k, cpu: k.cpus[cpu], state: taskRunnable}
	t.frameBuf[0].prog = prog
	t.nframes = 1
	t.prog = prog
	p.tasks = append(p.tasks, t)
	k.tasks = append(k.tasks, t)
	t.segRemaining = 0
	t.segNext = contUser
	t.cpu.rq.queue.push(t, false)
	return t, nil
}

// Start makes the CPUs pick up tasks spawned before or after Boot.
func (k *Kernel) Start(now ktime.Time) {
	for _, c := range k.cpus {
		if c.mode == modeIdle {
			c.wakeForWork(now)
		} else {
			c.kick(now)
		}
	}
}

// top is the top frame.
func (t *Task) top() *frame {
	if n := int(t.nframes); n <= len(t.frameBuf) {
		return &t.frameBuf[n-1]
	}
	return &t.moreFrames[int(t.nframes)-len(t.frameBuf)-1]
}

// pushFrame pushes f, a signal handler's frame.
func (t *Task) pushFrame(f frame) {
	if n := int(t.nframes); n < len(t.frameBuf) {
		t.frameBuf[n] = f
	} else {
		t.moreFrames = append(t.moreFrames, f)
	}
	t.nframes++
	t.prog = f.prog
}

// popFrame pops the top frame, a handler's, and returns the mask it saved.
func (t *Task) popFrame() uint64 {
	t.nframes--
	n := int(t.nframes)
	if n >= len(t.frameBuf) {
		i := n - len(t.frameBuf)
		mask := t.moreFrames[i].savedMask
		t.moreFrames[i] = frame{}
		t.moreFrames = t.moreFrames[:i]
		t.prog = t.top().prog
		return mask
	}
	f := &t.frameBuf[n]
	mask := f.savedMask
	*f = frame{}
	t.prog = t.frameBuf[n-1].prog
	return mask
}

// segment makes the task's next piece of work take ns, then run the
// prebuilt continuation next.
func (t *Task) segment(ns int64, user bool, next contKind) {
	t.segRemaining += ns
	t.segUser = user
	t.segNext = next
}

// segmentFn is segment with a continuation of its own.
func (t *Task) segmentFn(ns int64, user bool, done func(now ktime.Time)) {
	t.segment(ns, user, contFn)
	t.segFn = done
}

// toUser is the return to user space with result r (exit_to_user_mode()):
// while TIF_SIGPENDING is set, arch_do_signal_or_restart() delivers a signal
// to its handler; if none gets one, an interrupted syscall is restarted:
// -ERESTARTNOHAND re-executes it, -ERESTART_RESTARTBLOCK runs restart_syscall()
// (hrtimer_nanosleep_restart()). Otherwise the top frame's program gets r.
func (t *Task) toUser(now ktime.Time, r Result) {
	if t.sigpending {
		t.signalsOnReturn(now, r)
		return
	}
	t.restartOrReturn(now, r)
}

// signalsOnReturn is toUser with TIF_SIGPENDING set, out of line so that
// the common return (no signal) stays short.
func (t *Task) signalsOnReturn(now ktime.Time, r Result) {
	pushed, cost := t.doSignal(now, r, true)
	if pushed {
		return
	}
	if cost > 0 {
		// Only dropped or ignored signals: their dequeue takes time first.
		t.droppedRes = r
		t.segment(cost, false, contDropped)
		return
	}
	t.restartOrReturn(now, r)
}

// restartOrReturn is the end of arch_do_signal_or_restart() when no handler
// ran, then the return to the program.
func (t *Task) restartOrReturn(now ktime.Time, r Result) {
	if r.Err == errRestartBlock || r.Err == errRestartNoHand {
		t.restartSyscall(now, r.Err)
		return
	}
	r.Now = now
	t.exec(now, t.prog.Next(t, r))
}

// restartSyscall restarts the interrupted syscall err asks for.
func (t *Task) restartSyscall(now ktime.Time, err Errno) {
	t.k.Counters.Inc(cntSyscallRestarts, t.cpu.id, 1)
	if err == errRestartNoHand {
		t.doNanosleep(now, t.sleep.request(t.sleepReqT), false)
		return
	}
	if !t.sleep.hasRestartBlock {
		panic("kernel: -ERESTART_RESTARTBLOCK without a restart block")
	}
	rs := t.restartBlock
	t.sleep.hasRestartBlock = false
	t.doNanosleep(now, rs, true)
}

// exec starts action a at now: one dynamic call (every return to user
// space makes one) instead of a type switch over the action kinds.
func (t *Task) exec(now ktime.Time, a Action) {
	if a == nil {
		t.noAction()
	}
	a.start(t, now)
}

func (t *Task) noAction() { panic("kernel: task " + t.Comm + ": the program returned no action") }

func (a Compute) start(t *Task, _ ktime.Time) { t.segment(a.NS, true, contUser) }

func (a ClockNanosleep) start(t *Task, now ktime.Time) { t.doNanosleep(now, a, false) }

func (a ClockGettime) start(t *Task, now ktime.Time) { t.clockGettime(now, a.Clock) }

func (a ClockSettime) start(t *Task, now ktime.Time) {
	k := t.k
	t.traceSysEnter(now, "clock_settime", "which_clock: "+hex(int64(a.Clock))+", tp: "+t.userAddr(9))
	cost := k.costs.Syscall + k.clockSettime(t.cpu, now, a.Clock, a.T)
	t.segmentFn(cost, false, func(now ktime.Time) { t.sysReturn(now, "clock_settime", Result{}) })
}

func (SchedYield) start(t *Task, now ktime.Time) {
	t.traceSysEnter(now, "sched_yield", "")
	t.segmentFn(t.k.costs.Syscall, false, func(now ktime.Time) {
		t.cpu.rq.needResched = true
		t.sysReturn(now, "sched_yield", Result{})
	})
}

func (a Syscall) start(t *Task, now ktime.Time) {
	t.traceSysEnter(now, a.Name, "")
	t.finishSyscall(t.k.costs.Syscall+a.Cost, a.Name, Result{})
}

func (a KernelWork) start(t *Task, now ktime.Time) {
	cost := a.Fn(t.cpu, now)
	t.segmentFn(cost, false, func(now ktime.Time) { t.toUser(now, Result{}) })
}

func (a Wait) start(t *Task, now ktime.Time) {
	t.traceSysEnter(now, a.Name, "")
	t.segmentFn(t.k.costs.Syscall, false, func(now ktime.Time) {
		t.blockFn(func(now ktime.Time) { t.sysReturn(now, a.Name, Result{}) })
	})
}

func (Exit) start(t *Task, now ktime.Time) {
	t.state = taskDead
	// do_exit(): the last thread of the group cancels the process's
	// ITIMER_REAL (if (group_dead) hrtimer_cancel(&sig->real_timer)), an
	// alarm() left armed, as stress-ng's stop handler's alarm(1) is.
	if it := t.Proc.itimers[ItimerReal]; it != nil && t.Proc.leader() == nil {
		t.k.hrCancel(t.cpu, now, it.hr)
	}
	// release_task() -> put_task_struct_rcu_user() (kernel/exit.c; 3.10
	// called call_rcu() there directly): the task_struct is freed after a
	// grace period, delayed_put_task_struct() queued by call_rcu() on the
	// CPU the task exits on.
	t.cpu.CallRCU(now)
	t.cpu.rq.curr = nil
}

func (Return) start(t *Task, now ktime.Time) { t.sigreturn(now) }

// clockGettime reads clock at now; the value reaches user space after the
// read's cost.
func (t *Task) clockGettime(now ktime.Time, clock sdk.ClockID) {
	t.userRes = Result{Ret: int64(now) + t.k.clockOffset(clock)}
	t.clockReadAt = now
	t.segment(t.k.costs.ClockRead, true, contUserRes)
}

// sysReturn traces sys_exit and returns to user space with r.
func (t *Task) sysReturn(now ktime.Time, name string, r Result) {
	t.traceSysExit(now, name, sysRet(r))
	t.toUser(now, r)
}

// finishSyscall makes the syscall name take cost ns and then return r; its
// sys_exit prints the kernel's return value (sysRet(r)).
func (t *Task) finishSyscall(cost int64, name string, r Result) {
	t.finishSyscallRet(cost, name, r, sysRet(r))
}

// finishSyscallRet is finishSyscall with the value sys_exit prints given:
// some syscalls hand their result to user memory and return 0.
func (t *Task) finishSyscallRet(cost int64, name string, r Result, ret int64) {
	t.cont.sysName, t.cont.sysRes, t.cont.sysRet = name, r, ret
	t.segment(cost, false, contSysExit)
}

// sysRet is the syscall's return value as the kernel returns it: -errno on error.
func sysRet(r Result) int64 {
	if r.Err != 0 {
		return -int64(r.Err)
	}
	return r.Ret
}

// traceSysEnter writes the sys_enter_NAME event the way the syscall tracer
// prints it (kernel/trace/trace_syscalls.c:print_syscall_enter()):
// "sys_NAME(arg: hex, ...)".
// The nil test is all an untraced run pays: it is inlined at every call site.
func (t *Task) traceSysEnter(now ktime.Time, name, args string) {
	if t.k.tr != nil {
		t.writeSysEnter(now, name, args)
	}
}

func (t *Task) writeSysEnter(now ktime.Time, name, args string) {
	if ev := "sys_enter_" + name; t.k.tr.Enabled(ev) {
		t.k.tr.Raw(now, t.cpu.traceCtx(), ev, "sys_"+name+"("+args+")")
	}
}

// traceSysExit writes sys_exit_NAME: "sys_NAME -> 0xRET" (print_syscall_exit()).
func (t *Task) traceSysExit(now ktime.Time, name string, ret int64) {
	if t.k.tr != nil {
		t.writeSysExit(now, name, ret)
	}
}

func (t *Task) writeSysExit(now ktime.Time, name string, ret int64) {
	if ev := "sys_exit_" + name; t.k.tr.Enabled(ev) {
		t.k.tr.Raw(now, t.cpu.traceCtx(), ev, "sys_"+name+" -> 0x"+hex(ret))
	}
}

// userAddr is a stable fake user-space address for a syscall's pointer
// argument slot, as the syscall tracer prints pointers.
func (t *Task) userAddr(slot int) string {
	return hex(0x7ffd00000000 + int64(t.Pid)<<16 + int64(slot)<<4)
}

// block puts the task to sleep after its current segment (schedule() with
// TASK_INTERRUPTIBLE); the continuation wake runs when it is scheduled again.
func (t *Task) block(wake contKind) {
	t.state = taskSleeping
	t.cpu.rq.curr = nil
	t.segNext = wake
}

// blockFn is block with a continuation of its own.
func (t *Task) blockFn(wake func(now ktime.Time)) {
	t.block(contFn)
	t.segFn = wake
}

// doNanosleep is clock_nanosleep() -> hrtimer_nanosleep() -> do_nanosleep()
// (kernel/time/hrtimer.c, as of v6.12; unchanged since), or with restart its
// restart_syscall() -> hrtimer_nanosleep_restart() continuation: an ABS sleep
// to the hard expiry of the interrupted one, with no slack.
//
// The sleeper hrtimer_wakeup() timer is started in the caller's mode (a REL
// CLOCK_REALTIME sleep runs on CLOCK_MONOTONIC) with the task's timer slack
// (none for RT tasks); the task then sleeps interruptibly unless the timer
// already expired or a signal is pending, and the sleeper is always
// cancelled afterwards, so a sleep ended by a signal shows as an
// hrtimer_start with no hrtimer_expire_entry. Expired -> 0. Interrupted: a
// relative sleep stores the absolute expiry in the restart block and
// returns -ERESTART_RESTARTBLOCK (with rmtp: 0 if nothing remains); an
// absolute one returns -ERESTARTNOHAND.
func (t *Task) doNanosleep(now ktime.Time, a ClockNanosleep, restart bool) {
	k := t.k
	c := t.cpu
	name := "clock_nanosleep"
	if restart {
		name = "restart_syscall"
		t.traceSysEnter(now, name, "")
	} else {
		if k.tr != nil {
			flags := int64(0)
			if a.Abs {
				flags = 1
			}
			rmtp := "0"
			if a.Rem && !a.Abs {
				rmtp = t.userAddr(8)
			}
			t.traceSysEnter(now, name, "which_clock: "+hex(int64(a.Clock))+", flags: "+hex(flags)+", rqtp: "+t.userAddr(7)+", rmtp: "+rmtp)
		}
		t.sleep.hasRestartBlock = false // restart_block.fn = do_no_restart_syscall
	}
	cost := k.costs.Syscall
	if a.T < 0 || !validSleepClock(a.Clock) {
		t.segmentFn(cost, false, func(now ktime.Time) { t.sysReturn(now, name, Result{Err: EINVAL}) })
		return
	}
	mode := sdk.HRModeAbs
	clock := a.Clock
	if !a.Abs && !restart {
		mode = sdk.HRModeRel
		if clock == sdk.ClockRealtime {
			clock = sdk.ClockMonotonic // __hrtimer_setup(): REL CLOCK_REALTIME is MONOTONIC
		}
	}
	if t.sleep.sleeper == nil {
		t.sleep.sleeper = k.newSleeper(t, clock, mode)
	}
	// hrtimer_setup_sleeper_on_stack() traces the caller's clock and mode.
	k.traceHRInit(now, c, t.sleep.sleeper, a.Clock, mode)
	t.sleep.sleeper.Clock = clock
	slack := t.timerSlack()
	if restart {
		slack = 0 // hrtimer_set_expires_tv64(): soft == hard
	}
	t.sleep.sleepDone = false
	cost += k.hrStart(c, now+ktime.Time(cost), t.sleep.sleeper, ktime.Time(a.T), slack, mode)
	// Field by field: a composite literal would be built on the stack and
	// copied in 16-byte moves that stall on the 8-byte stores just made.
	ns := &t.sleep
	ns.restart, ns.abs, ns.rem, ns.clock = restart, a.Abs, a.Rem, clock
	ns.absExpires = int64(ns.sleeper.expires) // the hard expiry, in the sleeper's clock
	t.lastHardExpiry = ktime.Time(ns.absExpires - k.clockOffset(clock))
	// The request's time, what -ERESTARTNOHAND re-executes
	// (sleepState.request): nanosleepCancelled returns it only for an
	// absolute sleep that is not a restart, and the restart follows before
	// the task runs any other syscall.
	t.sleepReqT = a.T
	t.segment(cost, false, contNsSleep)
}

// nanosleepEntered is do_nanosleep() once the sleeper is started: schedule()
// does not sleep when t->task is already gone or a signal is pending
// (signal_pending_state()).
func (t *Task) nanosleepEntered(now ktime.Time) {
	if t.sleep.sleepDone || t.sigpending {
		t.nanosleepFinish(now)
		return
	}
	t.block(contNsFinish)
}

// nanosleepFinish is the end of do_nanosleep(): the sleeper is cancelled.
func (t *Task) nanosleepFinish(now ktime.Time) {
	cost := t.k.hrCancel(t.cpu, now, t.sleep.sleeper)
	t.segment(cost, false, contNsCancelled)
}

// nanosleepCancelled returns from the sleep: 0 when it expired, else the
// restart the interrupted sleep asks for.
func (t *Task) nanosleepCancelled(now ktime.Time) {
	ns := &t.sleep
	name := ns.sysName()
	if ns.sleepDone {
		t.sysReturn(now, name, Result{})
		return
	}
	if ns.abs && !ns.restart {
		t.sysReturn(now, name, Result{Err: errRestartNoHand})
		return
	}
	if ns.rem && ns.absExpires-(int64(now)+t.k.clockOffset(ns.clock)) <= 0 {
		t.sysReturn(now, name, Result{}) // nanosleep_copyout() not needed: done
		return
	}
	t.restartBlock, ns.hasRestartBlock = ClockNanosleep{Clock: ns.clock, Abs: true, T: ns.absExpires, Rem: ns.rem}, true
	t.sysReturn(now, name, Result{Err: errRestartBlock})
}

// validSleepClock reports whether clock has an nsleep method (common_nsleep).
func validSleepClock(c sdk.ClockID) bool {
	switch c {
	case sdk.ClockRealtime, sdk.ClockMonotonic, sdk.ClockBoottime, sdk.ClockTAI:
		return true
	}
	return false
}

// WakeBreakdown reports the part of the task's last wakeup latency spent
// leaving an idle state on its CPU: the state's exit latency and the tick
// broadcast hand-off (both 0 when the CPU was not idle).
func (t *Task) WakeBreakdown() (idleExit, broadcast int64) {
	return t.wakeIdleExit, t.wakeBroadcast
}
