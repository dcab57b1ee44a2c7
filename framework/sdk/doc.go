// Package sdk is the public contract between tickemu and its plugins.
//
// Start here: a plugin is one of four kinds, named after the kernel structure it
// models.
//
//	TimerBase         struct timer_base        kernel/time/timer.c     (plugins/wheel)
//	HRTimerBase       struct hrtimer_cpu_base  kernel/time/hrtimer.c   (plugins/hrtimer)
//	ClockEventDevice  struct clock_event_device + its driver           (plugins/lapic, hpet, archtimer)
//	Governor          struct cpuidle_governor  drivers/cpuidle/governors/ (plugins/governor)
//
// Every kind embeds Plugin (Info, Schema, Configure, Counters). One plugin value
// models every CPU of the machine; per-CPU calls carry the CPU number.
//
// Plugins are pure state machines. The host passes the simulated time (or jiffies)
// on every call; the plugin returns its effects (expired timers, device writes to
// perform) and what the call cost in simulated nanoseconds, computed from the
// plugin's own cost parameters. A plugin never calls another plugin and never reads
// the wall clock or an unseeded random source: the same calls in the same order
// must give the same answers, in process and over gRPC.
//
// Callbacks are declared, not called back. A timer carries the cost of its callback
// and whether the callback re-arms it (Period), so a plugin can run a whole
// hrtimer_interrupt() or __run_timers() in one call and report when each callback
// ran; the host then applies each callback's side effects (wake a task, queue a
// signal, run the tick) at that time. This keeps the plugin boundary at one round
// trip per interrupt or softirq instead of one per timer.
//
// Problems the user must see (a config value the plugin rejects) are Diagnostics;
// the error return of a transport means the transport failed.
package sdk
