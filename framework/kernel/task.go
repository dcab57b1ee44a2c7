package kernel

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/ktime"
	"github.com/tickemu/tickemu/framework/sdk"
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
	// errRestartBlock is -ERESTART_RESTARTBLOCK: never seen by user space.
	errRestartBlock Errno = 516
)

// Result is what a syscall returned, seen in user space at Now.
type Result struct {
	Ret int64
	Err Errno
	Now ktime.Time
}

// Action is something a task does: user computation or a syscall.
type Action interface{ isAction() }

// Compute is user-space work of NS nanoseconds.
type Compute struct{ NS int64 }

// ClockNanosleep is clock_nanosleep(clock, flags, t): Abs = TIMER_ABSTIME
// (T absolute in the clock), else T is a relative duration. Plain nanosleep()
// is ClockNanosleep on CLOCK_MONOTONIC, relative.
type ClockNanosleep struct {
	Clock sdk.ClockID
	Abs   bool
	T     int64
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

// Exit ends the task.
type Exit struct{}

// Return ends a signal handler (rt_sigreturn).
type Return struct{}

func (Compute) isAction()        {}
func (ClockNanosleep) isAction() {}
func (ClockGettime) isAction()   {}
func (ClockSettime) isAction()   {}
func (SchedYield) isAction()     {}
func (Syscall) isAction()        {}
func (KernelWork) isAction()     {}
func (Exit) isAction()           {}
func (Return) isAction()         {}

// frame is one level of a task's user-space execution: the main program, or a
// signal handler pushed on top of it.
type frame struct {
	prog Program
	// What resumes this frame when the handler above it returns: a pending
	// syscall result, or the rest of an interrupted computation.
	resume        *Result
	resumeCompute int64
	mask          uint64 // for a handler frame: the signals it blocks while it runs
}

// Task is a thread.
type Task struct {
	Pid    int
	Comm   string
	Policy Policy
	RTPrio int // 1..99 for SchedFIFO
	Proc   *Process

	k     *Kernel
	cpu   *CPU
	state taskState

	frames []frame

	segRemaining int64
	segDone      func(now ktime.Time)
	segUser      bool // the current segment is user computation (signals can interrupt it)
	runSince     ktime.Time

	// Sleep state (struct hrtimer_sleeper and the restart block).
	sleeper   *HRTimer
	sleepDone bool // hrtimer_wakeup() cleared t->task
	restart   *ClockNanosleep

	sigPending sigQueue // thread-directed signals
	blocked    uint64   // blocked signal mask (bit signo-1)

	cpuTime int64 // task CPU time in ns (CLOCK_THREAD_CPUTIME_ID)
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
	p := &Process{k: k, Tgid: k.nextPid, Comm: comm, handlers: map[int]Handler{}, timers: map[int]*PosixTimer{}}
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
	t.frames = []frame{{prog: prog}}
	p.tasks = append(p.tasks, t)
	k.tasks = append(k.tasks, t)
	t.segRemaining = 0
	t.segDone = func(now ktime.Time) { t.toUser(now, Result{Now: now}) }
	t.cpu.rq.push(t, false)
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

// segment makes the task's next piece of work take ns, then calls done.
func (t *Task) segment(ns int64, user bool, done func(now ktime.Time)) {
	t.segRemaining += ns
	t.segUser = user
	t.segDone = done
}

// toUser is the return to user space with result r: pending signals are
// handled first (exit_to_user_mode() -> arch_do_signal_or_restart()), then the
// top frame's program gets the result.
func (t *Task) toUser(now ktime.Time, r Result) {
	if t.deliverSignals(now, &r) {
		return
	}
	if r.Err == errRestartBlock {
		// No handler ran: the syscall restarts through its restart block
		// (restart_syscall() -> hrtimer_nanosleep_restart()).
		rs := t.restart
		t.restart = nil
		t.k.Counters.Add("syscall_restarts", t.cpu.id, 1)
		t.doNanosleep(now, *rs, true)
		return
	}
	r.Now = now
	f := &t.frames[len(t.frames)-1]
	t.exec(now, f.prog.Next(t, r))
}

// exec starts action a at now.
func (t *Task) exec(now ktime.Time, a Action) {
	k := t.k
	c := t.cpu
	switch a := a.(type) {
	case Compute:
		t.segment(a.NS, true, func(now ktime.Time) { t.toUser(now, Result{Now: now}) })
	case ClockNanosleep:
		t.doNanosleep(now, a, false)
	case ClockGettime:
		v := int64(now) + k.clockOffset(a.Clock)
		t.segment(k.costs.ClockRead, true, func(now ktime.Time) { t.toUser(now, Result{Ret: v}) })
	case ClockSettime:
		t.traceSysEnter(now, "clock_settime", fmt.Sprintf("which_clock: %d, tp: 0", a.Clock))
		cost := k.costs.Syscall + k.clockSettime(c, now, a.Clock, a.T)
		t.segment(cost, false, func(now ktime.Time) { t.sysReturn(now, "clock_settime", Result{}) })
	case SchedYield:
		t.segment(k.costs.Syscall, false, func(now ktime.Time) {
			c.needResched = true
			t.sysReturn(now, "sched_yield", Result{})
		})
	case Syscall:
		t.segment(k.costs.Syscall+a.Cost, false, func(now ktime.Time) { t.toUser(now, Result{}) })
	case KernelWork:
		cost := a.Fn(c, now)
		t.segment(cost, false, func(now ktime.Time) { t.toUser(now, Result{}) })
	case Exit:
		t.state = taskDead
		c.curr = nil
	case Return:
		t.sigreturn(now)
	case TimerCreate, TimerSettime, TimerGettime, TimerGetoverrun, TimerDelete, Setitimer, Sigaction, Sigpending:
		t.posixSyscall(now, a)
	default:
		panic(fmt.Sprintf("kernel: task %s: unknown action %T", t.Comm, a))
	}
}

// sysReturn traces sys_exit and returns to user space with r.
func (t *Task) sysReturn(now ktime.Time, name string, r Result) {
	if t.k.tr.Enabled("sys_exit") {
		ret := r.Ret
		if r.Err != 0 {
			ret = -int64(r.Err)
		}
		t.k.tr.Raw(now, t.cpu.traceCtx(), "sys_exit", fmt.Sprintf("sys_%s -> 0x%x", name, uint64(ret)))
	}
	t.toUser(now, r)
}

func (t *Task) traceSysEnter(now ktime.Time, name, args string) {
	t.k.tr.Raw(now, t.cpu.traceCtx(), "sys_enter", "sys_"+name+"("+args+")")
}

// block puts the task to sleep after its current segment (schedule() with
// TASK_INTERRUPTIBLE); wake runs when it is scheduled again.
func (t *Task) block(wake func(now ktime.Time)) {
	t.state = taskSleeping
	c := t.cpu
	c.curr = nil
	t.segDone = wake
}

// doNanosleep is do_nanosleep() (kernel/time/hrtimer.c) for clock_nanosleep()
// and its restart (hrtimer_nanosleep_restart(), restart=true: absolute, no slack).
func (t *Task) doNanosleep(now ktime.Time, a ClockNanosleep, restart bool) {
	k := t.k
	c := t.cpu
	name := "clock_nanosleep"
	if !restart {
		flags := 0
		if a.Abs {
			flags = 1
		}
		t.traceSysEnter(now, name, fmt.Sprintf("which_clock: %d, flags: %d, rqtp: 0x7ffd0000, rmtp: 0x7ffd0010", a.Clock, flags))
	} else {
		name = "restart_syscall"
	}
	if t.sleeper == nil {
		t.sleeper = k.NewHRTimer("hrtimer_wakeup", a.Clock, sdk.HRModeAbs, k.costs.Wakeup, func(cpu *CPU, at ktime.Time, e *sdk.HRExpiry) {
			// hrtimer_wakeup(): clear t->task and wake the sleeper.
			t.sleepDone = true
			k.Wake(at, t, cpu)
		})
	}
	mode := sdk.HRModeAbs
	target := a.T
	clock := a.Clock
	if !a.Abs && !restart {
		mode = sdk.HRModeRel
		if clock == sdk.ClockRealtime {
			clock = sdk.ClockMonotonic
		}
	}
	t.sleeper.Clock = clock
	slack := t.timerSlack()
	if restart {
		slack = 0
	}
	cost := k.costs.Syscall
	t.sleepDone = false
	cost += k.hrStart(c, now+ktime.Time(cost), t.sleeper, ktime.Time(target), slack, mode)
	absExpires := t.sleeper.expires // resolved expiry in the sleeper's clock
	sigPending := t.signalPending()
	t.segment(cost, false, func(now ktime.Time) {
		finish := func(now ktime.Time) {
			cost := k.hrCancel(c, now, t.sleeper)
			t.segment(cost, false, func(now ktime.Time) {
				if t.sleepDone {
					t.sysReturn(now, name, Result{})
					return
				}
				// Interrupted by a signal: -ERESTART_RESTARTBLOCK with an
				// absolute restart block (do_nanosleep()).
				t.restart = &ClockNanosleep{Clock: clock, Abs: true, T: int64(absExpires)}
				if a.Abs && !restart {
					// TIMER_ABSTIME sleeps return -ERESTARTNOHAND; with a handler
					// user space sees EINTR either way.
				}
				t.sysReturn(now, name, Result{Err: errRestartBlock})
			})
		}
		if t.sleepDone || sigPending || t.signalPending() {
			finish(now) // schedule() does not sleep: t->task is gone or a signal is pending
			return
		}
		t.block(finish)
	})
}
