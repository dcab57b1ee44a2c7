package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk"
)

// Costs are the framework's own simulated costs, in ns. Plugins charge theirs.
// Defaults are order-of-magnitude bare-metal x86 figures; sources are in
// docs/reference/calibration.md.
//
// Fields: one per cost, flat, as the profile and the kernel block's cost
// attributes name them: grouping them would only add a level to every name.
type Costs struct {
	IRQEntry       int64 // idtentry + irq_enter_rcu
	IRQExit        int64 // irq_exit_rcu, without softirqs
	SoftirqEntry   int64 // one __do_softirq() pass
	Tick           int64 // tick_sched_timer(): update_process_times, scheduler_tick, accounting
	JiffiesUpdate  int64 // tick_do_update_jiffies64() under jiffies_lock
	NohzStop       int64 // tick_nohz_idle_stop_tick() bookkeeping (the wheel scan is the wheel's cost)
	NohzRestart    int64 // tick_nohz_restart_sched_tick() bookkeeping
	Syscall        int64 // syscall entry + exit
	ContextSwitch  int64 // __schedule() + switch_to, direct cost (docs/reference/calibration.md §8: ~1.1-2.4 us)
	Wakeup         int64 // try_to_wake_up()
	IPISend        int64 // sending a reschedule / call-function IPI
	IPILatency     int64 // from send to the target's irq entry
	SignalGenerate int64 // posix_timer_fn() -> send_sigqueue() (excluding the wakeup)
	SignalDeliver  int64 // get_signal() + frame setup + rt_sigreturn (calibration.md §9: 0.5-1.5 us)
	SignalDequeue  int64 // dequeue_signal() of one signal, delivered or dropped
	ClockRead      int64 // vDSO clock_gettime()
	TimerSlack     int64 // default current->timer_slack_ns for SCHED_OTHER tasks
	TimerCallback  int64 // a background wheel timer's callback
	TmigrWalk      int64 // one group level of a timer-migration hierarchy walk (calibration.md §14)
	TmigrRemote    int64 // tmigr_handle_remote_cpu() around one remote CPU's expiry (calibration.md §14)
	RCUCore        int64 // one rcu_core() pass (RCU_SOFTIRQ) or GP-kthread step, without callbacks (calibration.md §15)
	RCUCallback    int64 // invoking one RCU callback (rcu_do_batch())
}

// DefaultCosts returns the defaults documented on Costs.
func DefaultCosts() Costs {
	return Costs{
		IRQEntry: 250, IRQExit: 150, SoftirqEntry: 100, Tick: 700, JiffiesUpdate: 60,
		NohzStop: 350, NohzRestart: 300, Syscall: 150, ContextSwitch: 1200, Wakeup: 400,
		IPISend: 200, IPILatency: 1500, SignalGenerate: 350, SignalDeliver: 800, SignalDequeue: 150, ClockRead: 25,
		TimerSlack: 50000, TimerCallback: 500, TmigrWalk: 60, TmigrRemote: 250,
		RCUCore: 1500, RCUCallback: 100,
	}
}

// costAttrs binds each Costs field to its kernel-block attribute.
func (c *Costs) costAttrs() []struct {
	name string
	p    *int64
	doc  string
} {
	return []struct {
		name string
		p    *int64
		doc  string
	}{
		{"irq_entry", &c.IRQEntry, "irq entry (idtentry, irq_enter_rcu)"},
		{"irq_exit", &c.IRQExit, "irq exit without softirqs (irq_exit_rcu)"},
		{"softirq_entry", &c.SoftirqEntry, "one __do_softirq() pass"},
		{"tick", &c.Tick, "tick_sched_timer(): update_process_times, scheduler_tick"},
		{"jiffies_update", &c.JiffiesUpdate, "tick_do_update_jiffies64()"},
		{"nohz_stop", &c.NohzStop, "tick_nohz_idle_stop_tick() bookkeeping"},
		{"nohz_restart", &c.NohzRestart, "tick_nohz_restart_sched_tick() bookkeeping"},
		{"syscall", &c.Syscall, "syscall entry and exit"},
		{"context_switch", &c.ContextSwitch, "__schedule() and switch_to()"},
		{"wakeup", &c.Wakeup, "try_to_wake_up()"},
		{"ipi_send", &c.IPISend, "sending an IPI"},
		{"ipi_latency", &c.IPILatency, "IPI delivery latency to the target's irq entry"},
		{"signal_generate", &c.SignalGenerate, "posix_timer_fn() queueing a signal"},
		{"signal_deliver", &c.SignalDeliver, "get_signal(), frame setup and rt_sigreturn"},
		{"signal_dequeue", &c.SignalDequeue, "dequeue_signal() of one signal, delivered or dropped"},
		{"clock_read", &c.ClockRead, "vDSO clock_gettime()"},
		{"timer_slack", &c.TimerSlack, "default timer_slack_ns of SCHED_OTHER tasks"},
		{"timer_callback", &c.TimerCallback, "a background wheel timer callback"},
		{"tmigr_walk", &c.TmigrWalk, "one group level of a timer-migration hierarchy walk (activate, deactivate, requeue)"},
		{"tmigr_remote", &c.TmigrRemote, "tmigr_handle_remote_cpu() around one remote CPU's expiry (locks, fetch of its next event)"},
		{"rcu_core", &c.RCUCore, "one rcu_core() pass (RCU_SOFTIRQ) or grace-period kthread step, without invoking callbacks"},
		{"rcu_callback", &c.RCUCallback, "invoking one RCU callback (rcu_do_batch())"},
	}
}

// KernelSettings are the framework strategies and costs set in the HCL kernel block.
type KernelSettings struct {
	// PosixTimerSignals is "legacy" (before 513793bc6ab3: a queued timer signal is
	// delivered even when the timer was re-armed or deleted since) or "consistent"
	// (6.13+: a signal whose sequence no longer matches its timer is dropped).
	PosixTimerSignals string
	// NohzFullTick is what is left of a busy nohz_full CPU's tick:
	// "max_deferment" (before d84b31313ef8, v4.17: scheduler_tick_max_deferment()
	// caps the stopped tick at 1 s, the residual 1 Hz tick) or "offload" (4.17+:
	// no cap; sched_tick_remote() runs its scheduler tick once a second from a
	// housekeeping CPU).
	NohzFullTick string
	// TimerMigration is /proc/sys/kernel/timer_migration. Linux defaults to
	// 1; tickemu to false, the placement of every scenario written before
	// timer placement was modelled (every timer on the CPU that starts it).
	TimerMigration bool
	Costs          Costs
	// MinDelta is the clockevents_program_min_delta() variant
	// (MinDeltaAdjust, MinDeltaRetry10, MinDeltaOnce) and StarvationGuard
	// the 7.0 next_event_forced guard of clockevents_program_event()
	// (clockevents.Options, framework/clockevents).
	MinDelta        string
	StarvationGuard bool
	// CputimeAccounting is the kernel's CPU time accounting
	// (CputimeTick, CputimeVtime) and IRQTimeAccounting
	// CONFIG_IRQ_TIME_ACCOUNTING (cputime.go): what /proc/stat reports.
	CputimeAccounting string
	IRQTimeAccounting bool
	// NohzFullIdleExit is what a nohz_full CPU's idle exit does with its
	// stopped tick (NohzFullIdleExitRestart, NohzFullIdleExitConditional).
	NohzFullIdleExit string
	// RCUFQSDelay is how jiffies_till_first_fqs / jiffies_till_next_fqs
	// default (RCUFQSFixed, RCUFQSByHZ).
	RCUFQSDelay string
	// TickRestart is how tick_nohz_restart() re-arms a stopped tick's
	// hrtimer (TickRestartCancel, TickRestartStart).
	TickRestart string
}

// TickRestart values.
const (
	// TickRestartCancel: hrtimer_cancel(), hrtimer_forward(), then
	// hrtimer_start_expires() (before adcec6a7f566, 7.1).
	TickRestartCancel = "cancel_start"
	// TickRestartStart: one hrtimer_start() at the forwarded expiry, the
	// timer left queued (7.1+).
	TickRestartStart = "start"
)

// NohzFullIdleExit values.
const (
	NohzFullIdleExitRestart     = "restart"
	NohzFullIdleExitConditional = "conditional"
)

// RCUFQSDelay values.
const (
	RCUFQSFixed = "fixed"
	RCUFQSByHZ  = "hz"
)

// clockevents_min_delta values: clockevents.MinDeltaPolicy's names.
const (
	MinDeltaAdjust  = "min_adjust"
	MinDeltaRetry10 = "retry10"
	MinDeltaOnce    = "once"
)

// NohzFullTick values.
const (
	NohzFullMaxDeferment = "max_deferment"
	NohzFullOffload      = "offload"
)

// KernelSchema is the schema of the kernel block.
func KernelSchema() sdk.Schema {
	s := sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "version", Type: sdk.TypeString,
			Doc: "the kernel release (\"6.13\") whose strategy settings every versioned attribute left unset takes, in the plugin blocks and here (docs/kernel-changes.md; --kernel-version overrides it)"},
		{Name: "posix_timer_signals", Type: sdk.TypeString, Default: "consistent", OneOf: []string{"legacy", "consistent"},
			Doc: "legacy: deliver stale POSIX timer signals (<= 6.12); consistent: drop them at dequeue (513793bc6ab3, 6.13+)",
			Eras: []sdk.Era{
				{Since: "3.10", Value: "legacy"},
				{Since: "6.13", Value: "consistent", Commit: "513793bc6ab3", Title: "posix-timers: Make signal delivery consistent",
					Note: "with the rest of the series (b06b0345fff3 and others) in v6.13"},
			}},
		{Name: "nohz_full_tick", Type: sdk.TypeString, Default: NohzFullOffload, OneOf: []string{NohzFullMaxDeferment, NohzFullOffload},
			Doc: "busy nohz_full CPUs: max_deferment (before 4.17: residual 1 Hz tick) or offload (4.17+: no cap, sched_tick_remote() on a housekeeping CPU)",
			Eras: []sdk.Era{
				{Since: "3.10", Value: NohzFullMaxDeferment},
				{Since: "4.17", Value: NohzFullOffload, Commit: "d84b31313ef8", Title: "sched/isolation: Offload residual 1Hz scheduler tick"},
			}},
		{Name: "timer_migration", Type: sdk.TypeBool, Default: "false",
			Doc: "/proc/sys/kernel/timer_migration (Linux default 1; needs NO_HZ): timers that are not pinned may be queued on a busy housekeeping CPU " +
				"(get_nohz_timer_target(): hrtimers in every era, the wheel with migration = \"push\"). With the wheel's 6.9+ migration = \"pull\" the " +
				"timer-migration hierarchy runs either way: the sysctl then only switches hrtimer placement",
			Unversioned: "a sysctl, /proc/sys/kernel/timer_migration, in every release since 2.6.31 (default 1); what it switches follows the wheel's migration attribute"},
		{Name: "nohz_full_idle_exit", Type: sdk.TypeString, Default: NohzFullIdleExitConditional, OneOf: []string{NohzFullIdleExitRestart, NohzFullIdleExitConditional},
			Doc: "a nohz_full CPU leaving idle with its tick stopped: restart (before 5.14: tick_nohz_restart_sched_tick() always, the tick fires once before the task stops it again) " +
				"or conditional (5.14+: tick_nohz_idle_update_tick() re-evaluates as for a running task, the tick stays stopped while the task runs alone)",
			Eras: []sdk.Era{
				{Since: "3.10", Value: NohzFullIdleExitRestart},
				{Since: "5.14", Value: NohzFullIdleExitConditional, Commit: "a5183862e76f", Title: "tick/nohz: Conditionally restart tick on idle exit"},
			}},
		{Name: "rcu_fqs_delay", Type: sdk.TypeString, Default: RCUFQSByHZ, OneOf: []string{RCUFQSFixed, RCUFQSByHZ},
			Doc: "the RCU grace-period kthread's wait before each force-quiescent-state scan, which reports idle CPUs' quiescent states: " +
				"fixed (3 jiffies, RCU_JIFFIES_TILL_FORCE_QS of 3.10) or hz (1 + (HZ > 250) + (HZ > 500) jiffies, plus one per 256 CPUs)",
			Eras: []sdk.Era{
				{Since: "3.10", Value: RCUFQSFixed},
				{Since: "3.11", Value: RCUFQSByHZ, Commit: "026ad2835ce6", Title: "rcu: Drive quiescent-state-forcing delay from HZ"},
			}},
		{Name: "tick_restart", Type: sdk.TypeString, Default: TickRestartStart, OneOf: []string{TickRestartCancel, TickRestartStart},
			Doc: "how tick_nohz_restart() re-arms a stopped tick in high-resolution mode: cancel_start (hrtimer_cancel() of the tick timer, traced " +
				"when it was queued, with the reprogramming a removal of the first timer costs, then hrtimer_start_expires()) or start (one hrtimer_start() " +
				"at the forwarded expiry, which leaves a queued timer queued: was_armed=1)",
			Eras: []sdk.Era{
				{Since: "3.10", Value: TickRestartCancel},
				{Since: "7.1", Value: TickRestartStart, Commit: "adcec6a7f566", Title: "tick/sched: Avoid hrtimer_cancel/start() sequence",
					Backports: "6.18.44",
					Note:      "tip sched/hrtick (27 Feb 2026), the series of f2e388a019e4 (hrtimer_start's was_armed), queued for the 7.1 merge window; 6.18.44 is the first stable release seen to have both (a capture on it traces no cancel at idle exit and was_armed=1: framework/trace/testdata/formats/linux-6.18.44), not necessarily the first that does"},
			}},
		{Name: "clockevents_min_delta", Type: sdk.TypeString, Default: MinDeltaAdjust, OneOf: []string{MinDeltaAdjust, MinDeltaRetry10, MinDeltaOnce},
			Doc: "clockevents_program_min_delta() variant: min_adjust (CONFIG_GENERIC_CLOCKEVENTS_MIN_ADJUST, x86: raise min_delta_ns after 3 failures), " +
				"retry10 (the generic variant since 4.15: up to 10 tries at k*min_delta_ns) or once (the generic variant before 4.15)",
			Unversioned: "a build option each architecture selects: x86 selects CONFIG_GENERIC_CLOCKEVENTS_MIN_ADJUST (min_adjust) on every modelled release; " +
				"only the generic variant changed, with 4.15's \"clockevents: Retry programming min delta up to 10 times\" (once -> retry10), so no release decides it for every machine"},
		{Name: "clockevents_starvation_guard", Type: sdk.TypeBool, Default: "false",
			Doc: "clockevents_program_event() leaves an already forced min-delta event alone until it fires (next_event_forced), so re-arming a timer in the past cannot starve the timer interrupt",
			Eras: []sdk.Era{
				{Since: "3.10", Value: "false"},
				{Since: "7.0", Value: "true", Commit: "d6e152d905bd", Title: "clockevents: Prevent timer interrupt starvation",
					Note: "merged in the 7.0-rc8 week (timers/urgent, April 2026); the resets of 4096fd0e8eae (clockevents: Add missing resets of the next_event_forced flag, 16 Apr 2026), which the model includes, followed through timers/urgent"},
			}},
		{Name: "cputime_accounting", Type: sdk.TypeString, Default: CputimeTick, OneOf: []string{CputimeTick, CputimeVtime},
			Doc: "how the kernel accounts CPU time, as /proc/stat reports it: tick (CONFIG_TICK_CPU_ACCOUNTING: each tick charges TICK_NSEC to the context it interrupted) " +
				"or vtime (CONFIG_VIRT_CPU_ACCOUNTING_GEN: nohz_full CPUs measure user, system and idle at every transition; the others sample ticks). " +
				"NO_HZ_FULL selects VIRT_CPU_ACCOUNTING_GEN, so nohz_full CPUs measure whatever this says; without them both values sample ticks. " +
				"The exact times are reported beside it",
			Unversioned: "a build option (the Kconfig choice \"CPU/Task time and stats accounting\", default TICK_CPU_ACCOUNTING) that every modelled release offers: " +
				"kernels built for nohz_full select VIRT_CPU_ACCOUNTING_GEN, others keep TICK_CPU_ACCOUNTING"},
		{Name: "irq_time_accounting", Type: sdk.TypeBool, Default: "false",
			Doc: "CONFIG_IRQ_TIME_ACCOUNTING: hard and soft interrupt time is measured at irq entry and exit and taken out of the next tick's charge; " +
				"without it /proc/stat's irq column stays 0 and softirq counts only the ticks that interrupted a softirq",
			Unversioned: "a build option (default n; on x86 it also needs a stable TSC, sched_clock_irqtime) in every modelled release: many distribution " +
				"kernels enable it, others do not (a /proc/stat whose irq column moves comes from a kernel that has it)"},
	}}
	d := DefaultCosts()
	for _, a := range d.costAttrs() {
		s.Attributes = append(s.Attributes, sdk.Attribute{Name: a.name + "_cost", Type: sdk.TypeDuration,
			Default: fmtNS(*a.p), Doc: "cost of " + a.doc})
	}
	return s
}

// ParseKernelSettings reads a decoded kernel block, which holds every
// attribute of KernelSchema (the host fills in defaults and the kernel
// version's values, and checks each OneOf): a missing or malformed
// attribute is an error, as for a plugin's Config.
func ParseKernelSettings(c sdk.Config) (KernelSettings, error) {
	r := c.Reader()
	ks := KernelSettings{
		PosixTimerSignals: r.String("posix_timer_signals"),
		NohzFullTick:      r.String("nohz_full_tick"),
		TimerMigration:    r.Bool("timer_migration"),
		MinDelta:          r.String("clockevents_min_delta"),
		StarvationGuard:   r.Bool("clockevents_starvation_guard"),
		CputimeAccounting: r.String("cputime_accounting"),
		IRQTimeAccounting: r.Bool("irq_time_accounting"),
		NohzFullIdleExit:  r.String("nohz_full_idle_exit"),
		RCUFQSDelay:       r.String("rcu_fqs_delay"),
		TickRestart:       r.String("tick_restart"),
		Costs:             DefaultCosts(),
	}
	for _, a := range ks.Costs.costAttrs() {
		*a.p = r.Duration(a.name + "_cost")
	}
	if d := r.Diagnostics(); d.HasErrors() {
		return ks, d
	}
	return ks, nil
}

func fmtNS(ns int64) string {
	return itoa(ns) + "ns"
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
