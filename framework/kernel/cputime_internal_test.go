package kernel

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestTickStat: a tick charges the cpustat field the kernel's
// account_process_tick() (tick sampling) or irqtime_account_process_tick()
// (irq time accounting) picks for the context it interrupted
// (kernel/sched/cputime.c; docs/reference/cputime.md).
func TestTickStat(t *testing.T) {
	for _, tc := range []struct {
		name          string
		x             acctCtx
		tick, irqtime int
	}{
		// user_mode(regs): account_user_time() either way (nice 0: USER).
		{"user", acctUser, statUser, statUser},
		// A task in a syscall: account_system_time() -> CPUTIME_SYSTEM.
		{"system", acctSystem, statSystem, statSystem},
		// Softirqs on irq exit over a task: in_serving_softirq() ->
		// CPUTIME_SOFTIRQ; with irq time accounting the softirq was
		// measured, and the tick charges the task's system time.
		{"softirq over a task", acctSoftirqTask, statSoftirq, statSystem},
		// Over the idle task: irq_count() != HARDIRQ_OFFSET makes it
		// system time, softirq by the preempt count; with irq time
		// accounting p == this_rq()->idle charges idle.
		{"softirq over idle", acctSoftirqIdle, statSoftirq, statIdle},
		// ksoftirqd: in_serving_softirq() without irq time accounting;
		// with it this_cpu_ksoftirqd() == p: CPUTIME_SOFTIRQ both ways.
		{"ksoftirqd", acctKsoftirqd, statSoftirq, statSoftirq},
		// The idle task outside interrupts: account_idle_time() (iowait
		// needs a task in io_schedule(), which the model has not).
		{"idle", acctIdle, statIdle, statIdle},
	} {
		if got := tickStat(tc.x, false); got != tc.tick {
			t.Errorf("%s, tick sampling: charges field %d, want %d", tc.name, got, tc.tick)
		}
		if got := tickStat(tc.x, true); got != tc.irqtime {
			t.Errorf("%s, irq time accounting: charges field %d, want %d", tc.name, got, tc.irqtime)
		}
	}
}

// TestTickCharge: a tick charges TICK_NSEC; under irq time accounting less
// the interrupt time since the last tick, nothing once that reaches a tick
// (the excess is not carried to the next one).
func TestTickCharge(t *testing.T) {
	const tick = 4_000_000 // HZ=250
	for _, tc := range []struct {
		other   int64
		irqtime bool
		want    int64
	}{
		{0, false, tick},
		{1_000_000, false, tick}, // interrupt time does not matter without irq time accounting
		{0, true, tick},
		{1_000_000, true, tick - 1_000_000},
		{tick, true, 0},
		{tick + 1, true, 0},
	} {
		if got := tickCharge(tick, tc.other, tc.irqtime); got != tc.want {
			t.Errorf("tickCharge(%d, %d, irqtime=%v) = %d, want %d", tick, tc.other, tc.irqtime, got, tc.want)
		}
	}
}

// TestTicksChargeWithIRQTime: the interrupt time since the last tick is
// taken out of the next tick once, whatever context that tick charges.
func TestTicksChargeWithIRQTime(t *testing.T) {
	k := &Kernel{kernelConfig: kernelConfig{tickNsec: 4_000_000, settings: KernelSettings{IRQTimeAccounting: true}}}
	c := &CPU{k: k}
	c.ctxNS[ctxIRQ], c.ctxNS[ctxSoftirq] = 300_000, 100_000
	c.chargeTicks(acctUser, 1)
	c.chargeTicks(acctSystem, 1)
	c.ctxNS[ctxIRQ] += 50_000
	c.chargeTicks(acctIdle, 3) // account_idle_ticks() on idle exit
	if got, want := c.acct.stat[statUser], int64(4_000_000-400_000); got != want {
		t.Errorf("user %d, want %d", got, want)
	}
	if got, want := c.acct.stat[statSystem], int64(4_000_000); got != want {
		t.Errorf("system %d, want %d (the interrupt time was taken by the tick before)", got, want)
	}
	if got, want := c.acct.stat[statIdle], int64(12_000_000-50_000); got != want {
		t.Errorf("idle %d, want %d", got, want)
	}
}

// TestInterruptedCtx: what a tick's interrupt interrupted, from the CPU's
// state at irq entry. An interrupt that arrived while an activity's
// softirqs ran (latched: the model runs the activity with interrupts off)
// interrupted those softirqs in the kernel, where __do_softirq() enables
// interrupts; one that arrived during the hard interrupt part or after the
// softirqs did not.
func TestInterruptedCtx(t *testing.T) {
	task := &Task{}
	for _, tc := range []struct {
		name    string
		ctx     ctxKind
		curr    *Task
		user    bool
		arrived ktime.Time // a latched arrival during a busy activity whose softirqs end at 100; 0: none
		want    acctCtx
	}{
		{"user segment", ctxTask, task, true, 0, acctUser},
		{"syscall segment", ctxTask, task, false, 0, acctSystem},
		{"idle", ctxIdle, nil, false, 0, acctIdle},
		{"ksoftirqd", ctxKsoftirqd, task, false, 0, acctKsoftirqd},
		{"latched during softirqs over idle", ctxIdle, nil, false, 50, acctSoftirqIdle},
		{"latched during softirqs over a task", ctxTask, task, true, 50, acctSoftirqTask},
		{"latched after the softirqs", ctxTask, task, true, 150, acctUser},
	} {
		c := &CPU{k: &Kernel{}}
		c.ctx, c.rq.curr = tc.ctx, tc.curr
		task.segUser = tc.user
		if tc.arrived > 0 {
			c.mode = modeBusy
			c.acct.softEnd = 100
			c.interruptArrived(tc.arrived)
		}
		if got := c.interruptedCtx(); got != tc.want {
			t.Errorf("%s: interrupted context %d, want %d", tc.name, got, tc.want)
		}
		if c.acct.softLatched {
			t.Errorf("%s: the latch outlives the interrupt that took it", tc.name)
		}
	}
}
