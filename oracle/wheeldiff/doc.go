// SPDX-License-Identifier: GPL-2.0

// Package wheeldiff runs the same operation sequences through the kernel's
// own kernel/time/timer.c (the kernel oracle, package ktimer) and through
// tickemu's plugins/wheel configured as the oracle's release, and reports
// every answer or state in which they differ.
//
// A sequence is decoded from bytes (opSize per operation), so that a fuzz
// target and the seeded random sequences share one decoder. Operations, on
// a machine of several CPUs, with jiffies starting at INITIAL_JIFFIES and
// only moving forward: mod_timer() of one of a few dozen timers (flags
// fixed at their first start: pinned, deferrable, irqsafe; some re-arm
// themselves from their callback), timer_delete(), jiffies advances small
// and large, the timer softirq, the tick's softirq-raise decision
// (run_local_timers()), idle entry (get_next_timer_interrupt() then
// timer_base_try_to_set_idle()), idle exit (timer_clear_idle()), and the
// timer-migration hierarchy's remote expiry (timer_expire_remote()). After
// each one the CPUs' bases (clock, next expiry, recalculation and pending
// marks, queued timers) and the plugin's reported wheel state are compared
// with the kernel's.
//
// Its files build only with the build tag kernel_oracle: `make test-oracle`
// (docs/kernel-oracle.md).
package wheeldiff
