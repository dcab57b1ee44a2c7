package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Kernel-context operations for workloads that model kernel code (drivers,
// kthreads, background timers). Each returns its cost in ns; callers running
// inside KernelWork return it as part of their own cost.

// CPU returns CPU i.
func (k *Kernel) CPU(i int) *CPU { return k.cpus[i] }

// StartHRTimer is hrtimer_start_range_ns() of t on cpu.
func (k *Kernel) StartHRTimer(cpu int, now ktime.Time, t *HRTimer, expires ktime.Time, slack int64, mode sdk.HRMode) int64 {
	return k.hrStart(k.cpus[cpu], now, t, expires, slack, mode)
}

// CancelHRTimer is hrtimer_try_to_cancel() of t from cpu.
func (k *Kernel) CancelHRTimer(cpu int, now ktime.Time, t *HRTimer) int64 {
	return k.hrCancel(k.cpus[cpu], now, t)
}

// ModTimer is mod_timer() of t on cpu to absolute jiffies expires.
func (k *Kernel) ModTimer(cpu int, now ktime.Time, t *WheelTimer, expires uint64) int64 {
	return k.modTimer(k.cpus[cpu], now, t, expires)
}

// UpdateJiffies brings jiffies up to now as a CPU leaving idle does
// (tick_nohz_irq_enter() -> tick_nohz_update_jiffies(), tick_nohz_idle_exit()
// -> tick_do_update_jiffies64()): jiffies are stale while every CPU sleeps
// with its tick stopped. For a workload acting at now on a CPU the model
// has idle (a replay's mod_timer() by a task the capture shows running
// there), so that its timeout counts from the current jiffy.
func (k *Kernel) UpdateJiffies(now ktime.Time) { k.doUpdateJiffies(now) }

// DelTimer is del_timer() of t.
func (k *Kernel) DelTimer(cpu int, now ktime.Time, t *WheelTimer) int64 {
	return k.delTimer(k.cpus[cpu], now, t)
}

// RealtimeOffset is the current CLOCK_REALTIME - CLOCK_MONOTONIC offset.
func (k *Kernel) RealtimeOffset() int64 { return k.tk.offsets.Real }

// Pending reports whether t is enqueued on a wheel.
func (t *WheelTimer) Pending() bool { return t.pending }

// Expires is the timer's expiry in its own clock as of its last start.
func (t *HRTimer) Expires() ktime.Time { return t.expires }

// Sleeping reports whether the task is blocked (TASK_INTERRUPTIBLE): a
// workload waking a task it parked with Wait checks it first, since the task
// blocks only once the Wait syscall's entry has run.
func (t *Task) Sleeping() bool { return t.state == taskSleeping }
