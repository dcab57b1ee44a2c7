package kernel

import "github.com/tickemu/tickemu/framework/sdk/ktime"

// CPU time accounting as the kernel does it (kernel/sched/cputime.c), next
// to the exact time by context the engine keeps (CPU.ctxNS): what
// /proc/stat reports is not the exact time but what the kernel's accounting
// charged, and the two differ. docs/reference/cputime.md has the rules.
//
// Three build-time choices decide it, the kernel block's cputime_accounting
// and irq_time_accounting:
//   - CONFIG_TICK_CPU_ACCOUNTING ("tick"): every tick charges a whole
//     TICK_NSEC to the context it interrupted (account_process_tick());
//   - CONFIG_IRQ_TIME_ACCOUNTING (irq_time_accounting): hard and soft
//     interrupt time is measured exactly at irq entry and exit
//     (irqtime_account_irq()), and each tick charges TICK_NSEC less the
//     interrupt time since the last tick (irqtime_account_process_tick());
//   - CONFIG_VIRT_CPU_ACCOUNTING_GEN ("vtime"): on nohz_full CPUs, user,
//     system and idle time are measured at every context transition
//     (vtime_user_enter()/vtime_user_exit(), vtime_task_switch()); the other
//     CPUs sample ticks (vtime_accounting_enabled_this_cpu()). NO_HZ_FULL
//     selects it (kernel/time/Kconfig), so a nohz_full CPU always measures,
//     whatever cputime_accounting says, and without nohz_full CPUs both
//     values sample ticks everywhere: the attribute records the build.
//
// With NO_HZ active (tick_nohz_active) /proc/stat's idle and iowait are
// not the ticks' but ts->idle_sleeptime (get_idle_time() in fs/proc/stat.c
// -> get_cpu_idle_time_us()): the exact time in the idle loop outside
// interrupts (tick_nohz_stop_idle() at irq entry, tick_nohz_start_idle()
// at irq exit).

// Accounting modes (KernelSettings.CputimeAccounting).
const (
	CputimeTick  = "tick"
	CputimeVtime = "vtime"
)

// Indexes of kcpustat's cpustat array (enum cpu_usage_stat,
// include/linux/kernel_stat.h), in /proc/stat's column order.
const (
	statUser = iota
	statNice
	statSystem
	statIdle
	statIowait
	statIRQ
	statSoftirq
	statSteal
	numStat
)

// acctCtx is what a tick interrupted, as account_process_tick() tells it
// apart: user_mode(regs), the current task (the idle task, ksoftirqd or
// another) and the preempt count's softirq bits. A tick never interrupts a
// hard interrupt handler (they run with interrupts disabled), so
// hardirq_count() - HARDIRQ_OFFSET is always 0 and the model has no such
// context.
type acctCtx uint8

const (
	acctUser        acctCtx = iota // a task in user mode
	acctSystem                     // a task in the kernel (syscall, fault, kernel work)
	acctSoftirqTask                // softirqs on irq exit, over a task
	acctSoftirqIdle                // softirqs on irq exit, over the idle task
	acctKsoftirqd                  // softirqs run by ksoftirqd
	acctIdle                       // the idle task outside interrupts
)

// tickStat is the cpustat field a tick that interrupted x charges:
// account_process_tick() (irqtime false) or irqtime_account_process_tick()
// (irqtime true), kernel/sched/cputime.c. The amount differs too (tickCharge).
func tickStat(x acctCtx, irqtime bool) int {
	if irqtime {
		switch x {
		case acctKsoftirqd:
			return statSoftirq // ksoftirqd's time is not in the irq time
		case acctUser:
			return statUser
		case acctIdle, acctSoftirqIdle:
			return statIdle // p == this_rq()->idle: the softirq itself was measured
		}
		return statSystem
	}
	switch x {
	case acctUser:
		return statUser
	case acctIdle:
		return statIdle // idle task, irq_count() == HARDIRQ_OFFSET
	case acctSoftirqTask, acctSoftirqIdle, acctKsoftirqd:
		return statSoftirq // account_system_time(): in_serving_softirq()
	}
	return statSystem
}

// tickCharge is the time one tick charges: TICK_NSEC, less (irqtime) the
// interrupt time measured since the last tick, other. When other reaches a
// tick, the tick charges nothing and the excess is dropped
// (irqtime_account_process_tick(): account_other_time() took all of it).
func tickCharge(tick, other int64, irqtime bool) int64 {
	if !irqtime {
		return tick
	}
	if other >= tick {
		return 0
	}
	return tick - other
}

// cpuAcct is a CPU's accounting state, beside the engine's exact times.
type cpuAcct struct {
	stat [numStat]int64 // kcpustat_cpu(cpu).cpustat as ticks charged it, ns
	// userNS is exact: the part of ctxNS[ctxTask] in user mode, the run
	// pieces of user segments (userPiece), counted from userMark on (a
	// piece the end of a Run counted up to there).
	userNS   int64
	userMark ktime.Time
	// irqSeen is the exact interrupt time (hard and soft) already handed
	// to ticks: irqtime->tick_delta is the total less irqSeen.
	irqSeen int64
	// irqIdleNS is the exact interrupt time taken over the idle task
	// (vtime without irq time accounting charges the rest to system).
	irqIdleNS int64
	// softEnd is when the softirqs of the activity running end (0: none):
	// an interrupt arriving before then interrupts them (softirqs run with
	// interrupts enabled), softLatched records that it did.
	softEnd ktime.Time
	// idleJiffies is ts->idle_jiffies: jiffies when the tick last stopped.
	idleJiffies uint64
	// irqWork is the time timer callbacks of the running interrupt or
	// softirq took beyond their fixed cost (the plugin's CallbackCost):
	// the try_to_wake_up() of a task a timer's signal woke
	// (Kernel.signalWakeUp). The handler returns that much later; the
	// interrupt's exit (irqtime_account_irq()) measures it as irq time.
	irqWork int32
	// from is what the interrupt being handled interrupted, set at its entry.
	from        acctCtx
	softLatched bool
}

// userPiece counts a piece of a user segment run from start to end: the
// segment ended or was interrupted at end, or a Run stopped there.
func (a *cpuAcct) userPiece(start, end ktime.Time) {
	start = max(start, a.userMark)
	if end > start {
		a.userNS += int64(end - start)
		a.userMark = end
	}
}

// interruptedCtx classifies what the CPU was doing when an interrupt
// activity starts at its entry: c.ctx before irq entry, with the task's
// mode, or softirqs when the interrupt arrived during the softirqs of the
// activity that just ended.
func (c *CPU) interruptedCtx() acctCtx {
	if c.acct.softLatched {
		c.acct.softLatched = false
		if c.rq.curr == nil {
			return acctSoftirqIdle
		}
		return acctSoftirqTask
	}
	switch c.ctx {
	case ctxTask:
		if t := c.rq.curr; t != nil && t.segUser {
			return acctUser
		}
		return acctSystem
	case ctxKsoftirqd:
		return acctKsoftirqd
	case ctxSoftirq:
		if c.rq.curr == nil {
			return acctSoftirqIdle
		}
		return acctSoftirqTask
	}
	if c.rq.curr != nil {
		return acctSystem
	}
	return acctIdle
}

// vtimeCPU reports whether c's time is measured at transitions
// (vtime_accounting_enabled_this_cpu(): VIRT_CPU_ACCOUNTING_GEN on a
// nohz_full CPU) instead of sampled by ticks.
func (c *CPU) vtimeCPU() bool { return c.isNohzFull() }

// CPUTimeAccounting is the accounting the kernel runs with: the kernel
// block's cputime_accounting, vtime when a CPU is in nohz_full= (NO_HZ_FULL
// selects VIRT_CPU_ACCOUNTING_GEN), and irq_time_accounting.
func (k *Kernel) CPUTimeAccounting() (mode string, irqtime bool) {
	mode = k.settings.CputimeAccounting
	if k.m.NoHZ == "full" && len(k.m.NoHZFull) > 0 {
		mode = CputimeVtime
	}
	return mode, k.settings.IRQTimeAccounting
}

// accountProcessTick is account_process_tick() from update_process_times():
// charge one tick to what the tick's interrupt interrupted.
func (c *CPU) accountProcessTick() {
	if c.vtimeCPU() {
		return
	}
	c.chargeTicks(c.acct.from, 1)
}

// chargeTicks charges n ticks to x, with the interrupt time since the last
// tick subtracted under irq time accounting (irqtime_account_process_tick()
// takes it out of the first call after it, one tick or many).
func (c *CPU) chargeTicks(x acctCtx, n int64) {
	k := c.k
	irqtime := k.settings.IRQTimeAccounting
	other := int64(0)
	if irqtime {
		// The interrupt time measured up to this interrupt's entry: the
		// running one is measured at its exit (irqtime_account_irq()).
		total := c.ctxNS[ctxIRQ] + c.ctxNS[ctxSoftirq]
		other, c.acct.irqSeen = total-c.acct.irqSeen, total
	}
	c.acct.stat[tickStat(x, irqtime)] += tickCharge(n*k.tickNsec, other, irqtime)
}

// accountIdleTicks is tick_nohz_account_idle_time() on leaving idle with
// the tick stopped: the ticks the stopped tick skipped go to idle
// (account_idle_ticks()), with the interrupt time since the last tick taken
// out of them under irq time accounting.
func (c *CPU) accountIdleTicks() {
	if c.vtimeCPU() {
		return
	}
	if n := int64(c.k.tk.jiffies - c.acct.idleJiffies); n > 0 {
		c.chargeTicks(acctIdle, n)
	}
}

// ProcStat is a CPU's line of /proc/stat as the kernel's accounting makes
// it, in ns (the file prints USER_HZ ticks: ProcStatUserHZ). Guest time is
// included in user (the model has no guests) and nice is 0 (every task
// runs at nice 0).
type ProcStat struct {
	User    int64 `json:"user"`
	Nice    int64 `json:"nice"`
	System  int64 `json:"system"`
	Idle    int64 `json:"idle"`
	Iowait  int64 `json:"iowait"`
	IRQ     int64 `json:"irq"`
	Softirq int64 `json:"softirq"`
	Steal   int64 `json:"steal"`
}

// Total is the sum of the fields, the denominator of mpstat's shares.
func (p ProcStat) Total() int64 {
	return p.User + p.Nice + p.System + p.Idle + p.Iowait + p.IRQ + p.Softirq + p.Steal
}

// UserHZ is USER_HZ, the unit of /proc/stat's fields.
const UserHZ = 100

// ToUserHZ is nsec_to_clock_t(): ns in USER_HZ ticks, rounded down.
func ToUserHZ(ns int64) int64 { return ns / (ktime.Second / UserHZ) }

// ExactTimes are a CPU's exact times by context, ns: user and system split
// the time in tasks (ContextTimes' task column).
type ExactTimes struct {
	Idle, User, System, IRQ, Softirq int64
}

// ExactTimes returns each CPU's exact times by context.
func (k *Kernel) ExactTimes() []ExactTimes {
	out := make([]ExactTimes, len(k.cpus))
	for i, c := range k.cpus {
		task := c.ctxNS[ctxTask]
		out[i] = ExactTimes{Idle: c.ctxNS[ctxIdle], User: c.acct.userNS, System: task - c.acct.userNS,
			IRQ: c.ctxNS[ctxIRQ], Softirq: c.ctxNS[ctxSoftirq] + c.ctxNS[ctxKsoftirqd]}
	}
	return out
}

// ProcStats returns each CPU's /proc/stat line as the configured
// accounting makes it, at the end of the run (call after Run).
func (k *Kernel) ProcStats() []ProcStat {
	out := make([]ProcStat, len(k.cpus))
	irqtime := k.settings.IRQTimeAccounting
	for i, c := range k.cpus {
		s := c.acct.stat
		p := ProcStat{User: s[statUser], Nice: s[statNice], System: s[statSystem], Idle: s[statIdle],
			Iowait: s[statIowait], IRQ: s[statIRQ], Softirq: s[statSoftirq], Steal: s[statSteal]}
		if c.vtimeCPU() {
			// vtime_user_exit()/vtime_user_enter(), vtime_task_switch():
			// user and system measured, interrupts over a task in system
			// unless measured on their own (vtime_account_kernel()).
			p.User = c.acct.userNS
			p.System = c.ctxNS[ctxTask] - c.acct.userNS + c.ctxNS[ctxKsoftirqd]
			if !irqtime {
				p.System += c.ctxNS[ctxIRQ] + c.ctxNS[ctxSoftirq] - c.acct.irqIdleNS
			}
		}
		if irqtime {
			// irqtime_account_delta(): measured, beside what ticks charged
			// to softirq (ksoftirqd's).
			p.IRQ += c.ctxNS[ctxIRQ]
			p.Softirq += c.ctxNS[ctxSoftirq]
		}
		if k.nohz {
			// get_idle_time(): ts->idle_sleeptime while NO_HZ is active;
			// the model has no iowait (nr_iowait is 0: no task sleeps in
			// io_schedule()).
			p.Idle, p.Iowait = c.ctxNS[ctxIdle], 0
		}
		out[i] = p
	}
	return out
}
