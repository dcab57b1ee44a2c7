package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// The POSIX timer, interval timer and signal syscalls as a table of
// descriptors: each action type names its descriptor, which gives the
// syscall's name and its sys_enter arguments for the trace, and a handler
// that does the work. runPosixCall holds what they share: the entry cost,
// the trace and the return path.

// TimerCreate is timer_create(clock, sigevent); Result.Ret is the timer id.
type TimerCreate struct {
	Clock  sdk.ClockID
	Notify int // SigevSignal, SigevThreadID or SigevNone
	Signo  int // 1..64 for SigevSignal and SigevThreadID
	// TID is sigev_notify_thread_id for SigevThreadID: a thread of the
	// caller's process; 0 means the calling thread.
	TID int
}

// TimerSettime is timer_settime(id, flags, value, interval): Abs =
// TIMER_ABSTIME. Value 0 disarms; negative values are an invalid timespec.
type TimerSettime struct {
	ID              int
	Abs             bool
	Value, Interval int64
}

// TimerGettime is timer_gettime(); Result.Ret is it_value, the time left in ns.
type TimerGettime struct{ ID int }

// TimerGetoverrun is timer_getoverrun(); Result.Ret is the overrun count.
type TimerGetoverrun struct{ ID int }

// TimerDelete is timer_delete().
type TimerDelete struct{ ID int }

// Sigaction is rt_sigaction(): install Handler for Signo, with Mask (sa_mask)
// blocked while it runs and Flags (SaOnstack, ...) as signal_deliver prints
// them. A nil Handler is SIG_IGN.
//
// Divergence: SIG_DFL is not modelled; a signal without a handler is
// ignored, where Linux would terminate the process for most signals.
type Sigaction struct {
	Signo   int
	Handler Handler
	Mask    uint64
	Flags   uint64
}

// Sigpending is rt_sigpending(); Result.Ret is the set of pending signals
// that are blocked.
type Sigpending struct{}

// Sigprocmask is rt_sigprocmask(how, set): How is SigBlock, SigUnblock or
// SigSetmask; Result.Ret is the previous mask.
type Sigprocmask struct {
	How int
	Set uint64
}

// Kill is kill(pid, sig) of a positive pid: the signal goes to the whole
// process whose thread group id is Pid (sys_kill() -> kill_proc_info() ->
// group_send_sig_info() -> send_signal_locked(), kernel/signal.c) with
// si_code SI_USER. Result.Err is ESRCH when no process has that tgid; an
// exited one (the model reaps none) drops the signal.
// Signo 0 checks only that the process exists.
//
// Divergence: the default actions are not modelled (see Sigaction), so a
// SIGKILL is queued like any other signal instead of killing the process.
type Kill struct {
	Pid   int
	Signo int
}

// Setitimer is setitimer(which, value, interval); Value 0 disarms.
type Setitimer struct {
	Which           int
	Value, Interval int64
}

// Alarm is alarm(seconds), the system call of its own that glibc's alarm()
// is on x86_64 (__NR_alarm): alarm_setitimer() in kernel/time/itimer.c sets
// ITIMER_REAL to Seconds with no interval through do_setitimer(), as
// setitimer() does, and returns the old timer's remaining time in whole
// seconds, rounded up. Seconds 0 disarms.
type Alarm struct{ Seconds uint32 }

// posixCall describes one syscall of the table.
type posixCall[A Action] struct {
	// name is the syscall as sys_enter_NAME and sys_exit_NAME print it.
	name string
	// args are its arguments as sys_enter prints them (built only for a trace).
	args func(t *Task, a A) string
	// run does the work at at, after the entry cost: the result user space
	// sees, and the cost beyond the entry.
	run func(t *Task, at ktime.Time, a A) (Result, int64)
	// retIsValue: sys_exit prints Result.Ret; the others copy their result
	// to user memory and return 0.
	retIsValue bool
}

// The table.
var (
	timerCreateCall = posixCall[TimerCreate]{name: "timer_create", run: sysTimerCreate,
		args: func(t *Task, a TimerCreate) string {
			return "which_clock: " + hex(int64(a.Clock)) + ", timer_event_spec: " + t.userAddr(1) + ", created_timer_id: " + t.userAddr(2)
		}}
	timerSettimeCall = posixCall[TimerSettime]{name: "timer_settime", run: sysTimerSettime,
		args: func(t *Task, a TimerSettime) string {
			flags := int64(0)
			if a.Abs {
				flags = 1 // TIMER_ABSTIME
			}
			return "timer_id: " + hex(int64(a.ID)) + ", flags: " + hex(flags) + ", new_setting: " + t.userAddr(3) + ", old_setting: 0"
		}}
	timerGettimeCall = posixCall[TimerGettime]{name: "timer_gettime", run: sysTimerGettime,
		args: func(t *Task, a TimerGettime) string {
			return "timer_id: " + hex(int64(a.ID)) + ", setting: " + t.userAddr(3)
		}}
	timerGetoverrunCall = posixCall[TimerGetoverrun]{name: "timer_getoverrun", run: sysTimerGetoverrun, retIsValue: true,
		args: func(t *Task, a TimerGetoverrun) string { return "timer_id: " + hex(int64(a.ID)) }}
	timerDeleteCall = posixCall[TimerDelete]{name: "timer_delete", run: sysTimerDelete,
		args: func(t *Task, a TimerDelete) string { return "timer_id: " + hex(int64(a.ID)) }}
	killCall = posixCall[Kill]{name: "kill", run: sysKill,
		args: func(t *Task, a Kill) string { return "pid: " + hex(int64(a.Pid)) + ", sig: " + hex(int64(a.Signo)) }}
	setitimerCall = posixCall[Setitimer]{name: "setitimer", run: sysSetitimer,
		args: func(t *Task, a Setitimer) string {
			return "which: " + hex(int64(a.Which)) + ", value: " + t.userAddr(3) + ", ovalue: 0"
		}}
	alarmCall = posixCall[Alarm]{name: "alarm", run: sysAlarm, retIsValue: true,
		args: func(t *Task, a Alarm) string { return "seconds: " + hex(int64(a.Seconds)) }}
	sigactionCall = posixCall[Sigaction]{name: "rt_sigaction", run: sysSigaction,
		args: func(t *Task, a Sigaction) string {
			return "sig: " + hex(int64(a.Signo)) + ", act: " + t.userAddr(4) + ", oact: 0, sigsetsize: 8"
		}}
	sigpendingCall = posixCall[Sigpending]{name: "rt_sigpending", run: sysSigpending,
		args: func(t *Task, a Sigpending) string { return "uset: " + t.userAddr(5) + ", sigsetsize: 8" }}
	sigprocmaskCall = posixCall[Sigprocmask]{name: "rt_sigprocmask", run: sysSigprocmask,
		args: func(t *Task, a Sigprocmask) string {
			return "how: " + hex(int64(a.How)) + ", nset: " + t.userAddr(6) + ", oset: 0, sigsetsize: 8"
		}}
)

func (a TimerCreate) start(t *Task, now ktime.Time) { runPosixCall(t, now, a, &timerCreateCall) }
func (a Kill) start(t *Task, now ktime.Time)        { runPosixCall(t, now, a, &killCall) }
func (a TimerSettime) start(t *Task, now ktime.Time) {
	runPosixCall(t, now, a, &timerSettimeCall)
}
func (a TimerGettime) start(t *Task, now ktime.Time) {
	runPosixCall(t, now, a, &timerGettimeCall)
}
func (a TimerGetoverrun) start(t *Task, now ktime.Time) {
	runPosixCall(t, now, a, &timerGetoverrunCall)
}
func (a TimerDelete) start(t *Task, now ktime.Time) { runPosixCall(t, now, a, &timerDeleteCall) }
func (a Setitimer) start(t *Task, now ktime.Time)   { runPosixCall(t, now, a, &setitimerCall) }
func (a Alarm) start(t *Task, now ktime.Time)       { runPosixCall(t, now, a, &alarmCall) }
func (a Sigaction) start(t *Task, now ktime.Time)   { runPosixCall(t, now, a, &sigactionCall) }
func (a Sigpending) start(t *Task, now ktime.Time)  { runPosixCall(t, now, a, &sigpendingCall) }
func (a Sigprocmask) start(t *Task, now ktime.Time) { runPosixCall(t, now, a, &sigprocmaskCall) }

// runPosixCall executes a of descriptor d: the handler runs after the entry
// cost, then sys_enter is traced (at now) and the syscall returns after the
// whole cost with sys_exit.
func runPosixCall[A Action](t *Task, now ktime.Time, a A, d *posixCall[A]) {
	k := t.k
	cost := k.costs.Syscall
	var args string
	if k.tr != nil {
		args = d.args(t, a)
	}
	res, extra := d.run(t, now+ktime.Time(cost), a)
	cost += extra
	kret := int64(0) // the syscall's return value as sys_exit prints it
	if d.retIsValue {
		kret = res.Ret
	}
	if res.Err != 0 {
		kret = -int64(res.Err)
	}
	t.traceSysEnter(now, d.name, args)
	t.finishSyscallRet(cost, d.name, res, kret)
}

// timerOf is the caller's timer id, nil for an id it does not have (EINVAL).
func (t *Task) timerOf(id int) (*PosixTimer, Errno) {
	p := t.Proc
	// The last timer looked up first (a handler calls timer_getoverrun()
	// and timer_settime() on its one timer): ids are never reused and a
	// deleted timer is no longer valid, so a hit is what the map holds.
	if pt := p.lastTimer; pt != nil && pt.ID == id && pt.valid {
		return pt, 0
	}
	if pt := p.timers[id]; pt != nil {
		p.lastTimer = pt
		return pt, 0
	}
	return nil, EINVAL
}

func sysTimerCreate(t *Task, at ktime.Time, a TimerCreate) (Result, int64) {
	var res Result
	var pt *PosixTimer
	pt, res.Err = t.timerCreate(at, a)
	if pt != nil {
		res.Ret = int64(pt.ID)
	}
	return res, 0
}

func sysTimerSettime(t *Task, at ktime.Time, a TimerSettime) (Result, int64) {
	if a.Value < 0 || a.Interval < 0 {
		return Result{Err: EINVAL}, 0 // timespec64_valid()
	}
	pt, err := t.timerOf(a.ID)
	if pt == nil {
		return Result{Err: err}, 0
	}
	c := t.cpu
	c.heldLocks++ // it_lock
	cost := pt.set(c, at, a.Abs, a.Value, a.Interval)
	c.heldLocks--
	return Result{}, cost
}

func sysTimerGettime(t *Task, at ktime.Time, a TimerGettime) (Result, int64) {
	pt, err := t.timerOf(a.ID)
	if pt == nil {
		return Result{Err: err}, 0
	}
	return Result{Ret: pt.remaining(at)}, 0
}

func sysTimerGetoverrun(t *Task, _ ktime.Time, a TimerGetoverrun) (Result, int64) {
	pt, err := t.timerOf(a.ID)
	if pt == nil {
		return Result{Err: err}, 0
	}
	return Result{Ret: clampInt(pt.overrunLast)}, 0
}

func sysTimerDelete(t *Task, at ktime.Time, a TimerDelete) (Result, int64) {
	pt, err := t.timerOf(a.ID)
	if pt == nil {
		return Result{Err: err}, 0
	}
	c := t.cpu
	c.heldLocks++ // it_lock
	cost := pt.delete(c, at)
	c.heldLocks--
	delete(t.Proc.timers, a.ID)
	if pt.cpuClock {
		t.Proc.cpuTimers--
	}
	return Result{}, cost
}

func sysSetitimer(t *Task, at ktime.Time, a Setitimer) (Result, int64) {
	if a.Which < ItimerReal || a.Which > ItimerProf || a.Value < 0 || a.Interval < 0 {
		return Result{Err: EINVAL}, 0
	}
	return Result{}, t.Proc.setitimer(t.cpu, at, a.Which, a.Value, a.Interval)
}

// sysAlarm is alarm_setitimer(): do_setitimer(ITIMER_REAL) with it_value
// Seconds and no interval; the return value is the old it_value
// (itimer_get_remtime()) in seconds, plus one when it had only nanoseconds
// or at least half a second of them ("We can't return 0 if we have an
// alarm pending").
func sysAlarm(t *Task, at ktime.Time, a Alarm) (Result, int64) {
	old := t.Proc.realRemaining(at)
	cost := t.Proc.setitimer(t.cpu, at, ItimerReal, int64(a.Seconds)*ktime.Second, 0)
	sec, nsec := old/ktime.Second, old%ktime.Second
	if (sec == 0 && nsec != 0) || nsec >= ktime.Second/2 {
		sec++
	}
	return Result{Ret: sec}, cost
}

func sysSigaction(t *Task, at ktime.Time, a Sigaction) (Result, int64) {
	// do_sigaction(): !valid_signal(sig) || sig_kernel_only(sig).
	if a.Signo < 1 || a.Signo > maxSignal || a.Signo == SIGKILL || a.Signo == SIGSTOP {
		return Result{Err: EINVAL}, 0
	}
	t.Proc.sigaction(at, t.cpu, a.Signo, sigAction{handler: a.Handler, mask: a.Mask, flags: a.Flags})
	return Result{}, 0
}

func sysSigpending(t *Task, _ ktime.Time, _ Sigpending) (Result, int64) {
	return Result{Ret: int64(t.sigpendingSet())}, 0
}

func sysSigprocmask(t *Task, _ ktime.Time, a Sigprocmask) (Result, int64) {
	res := Result{Ret: int64(t.blocked)}
	switch a.How {
	case SigBlock:
		t.setBlocked(t.blocked | a.Set)
	case SigUnblock:
		t.setBlocked(t.blocked &^ a.Set)
	case SigSetmask:
		t.setBlocked(a.Set)
	default:
		res.Err = EINVAL
	}
	return res, 0
}

// sysKill is kill_proc_info() for one process: find_vpid() of the tgid,
// then group_send_sig_info() (ESRCH if the process is gone), queued on the
// shared list as send_signal_locked() queues a SEND_SIG_NOINFO signal.
func sysKill(t *Task, at ktime.Time, a Kill) (Result, int64) {
	if a.Signo < 0 || a.Signo > maxSignal {
		return Result{Err: EINVAL}, 0
	}
	k := t.k
	p := k.processOf(a.Pid)
	if p == nil {
		return Result{Err: ESRCH}, 0
	}
	if a.Signo == 0 {
		return Result{}, 0
	}
	if p.leader() == nil {
		// An exited, unreaped process (a zombie: the model reaps none):
		// prepare_signal() drops every signal of a group that is exiting
		// (SIGNAL_GROUP_EXIT), traced as ignored; kill() returns 0.
		k.traceSignalGenerate(at, t.cpu, a.Signo, siUser, p.tasks[0], true, traceSignalIgnored)
		return Result{}, k.costs.SignalGenerate
	}
	_, cost := t.k.sendSignalCode(at, t.cpu, p, nil, a.Signo, siUser)
	return Result{}, cost
}

// processOf is the live process whose thread group id is tgid, nil if none.
func (k *Kernel) processOf(tgid int) *Process {
	for _, p := range k.procs {
		if p.Tgid == tgid && len(p.tasks) > 0 {
			return p
		}
	}
	return nil
}
