// Package hrtimer is tickemu's builtin sdk.HRTimerBase: a model of the per-CPU
// struct hrtimer_cpu_base of kernel/time/hrtimer.c with its 8 clock bases
// (MONOTONIC, REALTIME, BOOTTIME, TAI, each hard and soft).
//
// Start with New and Plugin. The model keeps exactly the state the kernel keeps
// (expires_next/next_timer, softirq_expires_next/softirq_next_timer,
// softirq_activated, in_hrtirq, hang_detected, the base offsets and the
// nr_events/nr_retries/nr_hangs/max_hang_time statistics), because the regressions
// it exists to reproduce are staleness bugs of exactly those caches; a model that
// recomputes everything on every call would not reproduce them.
//
// # Strategies (HCL attributes)
//
//	hang_delay    "proportional"  v2.6.32 (41d2e4949377) .. v7.0: delay = time spent in the
//	                              interrupt, capped at 100 ms; hang_detected kept until the
//	                              next interrupt programs successfully.
//	              "fixed_100ms"   tip sched/hrtick 2889243848560 "hrtimer: Re-arrange
//	                              hrtimer_interrupt()": always 100 ms, flag cleared at once.
//	              "max_hang_time" the fix ("hrtimer: Less agressive interrupt hang handling",
//	                              P. Zijlstra, 2026-03-11): min(100 ms, max_hang_time), flag
//	                              kept until the next interrupt. Default: it is what the
//	                              newest hrtimer.c has; 2889243848560 only ever lived in tip
//	                              before the fix replaced it.
//	softirq_next  "stale"         before 46eb1701c046 (v5.12-rc3): softirq_expires_next is
//	                              refreshed only when the overall first timer is soft.
//	              "updated"       46eb1701c046 and later: hrtimer_update_next_event(). Default.
//	restart       "double"        before 627ef5ae2df8 (v5.15-rc1): restarting the first timer
//	                              reprograms on removal and again on enqueue.
//	              "deferred"      627ef5ae2df8 and later: force_local + one
//	                              hrtimer_force_reprogram(skip_equal). Default.
//	clock_was_set_ipi "all"       before 1e7f7fbcd40c (v5.15-rc1): on_each_cpu(retrigger_next_event).
//	              "needed"        1e7f7fbcd40c and later: update_needs_ipi() decides. Default.
//
// The defaults are the mainline behaviour (checked against kernel/time/hrtimer.c
// as of v6.15, 009eb5da29a9, plus the 2026 hang handling).
//
// hang_delay and restart name builtin policies (plugins/policy): the decision
// after the third failed pass (the delay, and whether hang_detected stays
// set) is asked of the hang_policy, the reprogramming of a restarted first
// timer of the restart_policy. A hang_policy or restart_policy block puts
// another policy in their place (UsePolicy, sdk.PolicyUser); hang_delay still
// selects the era's retry loop: the device-driven loop of "proportional" or
// the software check of the 2026 strategies.
//
// # Placement
//
// With kernel.timer_migration on (sdk.Setup.TimerMigration), Start follows
// switch_hrtimer_base() in every era (docs/reference/migration.md P4): a
// timer that is not HRTIMER_MODE_PINNED goes to sdk.NohzTimerTarget()'s CPU
// unless it would expire before that CPU's expires_next
// (hrtimer_check_target()); the result says where (Moved, CPU).
//
// # The modelled -ETIME rule
//
// The retry loop of hrtimer_interrupt() depends on whether programming the next
// event succeeds. The plugin decides that itself: before 2889243848560 the
// interrupt calls tick_program_event(expires_next, force=0), and
// clockevents_program_event() returns -ETIME without touching the hardware when
// expires_next is not after the current time. The model therefore treats a
// programming attempt at time t as failed exactly when expires_next <= t (t being
// the simulated time after the pass's own costs and the callbacks' declared
// costs); a failed attempt is not a device write and does not appear in Program.
// Since 2889243848560 the check is the pure software test expires_next < now and
// the write is always forced.
//
// Divergence: -ETIME returned by the driver itself (the HPET comparator race) is
// not visible to this loop; the host programs every Program entry with force=1,
// so such a failure becomes a clockevents min-delta retry in the host instead of
// a failed hrtimer pass.
//
// # Time inside a call
//
// A call entered at now advances its own clock by the plugin's costs
// (interrupt_entry_ns, pass_ns, expiry_ns, softirq_ns) and by each callback's
// declared HRTimer.CallbackCost. Each callback's start time is reported in
// HRExpiry.Now; the time the handler returns in InterruptResult.End. Device write
// costs are not included: the host charges them per Program entry.
//
// # Results
//
// HROpResult.Ret is remove_hrtimer()'s answer for Start (1: the timer was
// queued) and hrtimer_try_to_cancel()'s for Cancel (-1 while the callback runs,
// i.e. from HRExpiry.Now to Now + CallbackCost; 0 inactive; 1 dequeued). For
// ClockWasSet it says whether the CPU gets retrigger_next_event() (0,
// sdk.ClockWasSetIPI, sdk.ClockWasSetEachCPU); the host then calls
// RetriggerNextEvent on it, from its IPI.
// HRExpiry.NewExpires is the restarted timer's hard expiry (node.expires).
// CPUState returns a /proc/timer_list-like snapshot of one CPU's base.
//
// # Result buffers
//
// To keep the per-operation path allocation-free, the slices in results alias
// buffers owned by the plugin, one set per CPU and family: Start, Cancel and
// RetriggerNextEvent share one Program buffer; Interrupt, RunSoftirq and RunQueues share
// one Program and one Expired buffer. A result's slices stay valid until the next
// call of the same family on the same CPU. A caller that keeps them longer (for
// instance to schedule each callback as a future event) must copy them.
package hrtimer
