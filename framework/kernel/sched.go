package kernel

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sim"
	"github.com/tickemu/tickemu/framework/trace"
)

// Policy is a scheduling class.
type Policy int

// Policies.
const (
	SchedOther Policy = iota // CFS/EEVDF, modelled as round robin
	SchedFIFO                // SCHED_FIFO with RTPrio 1..99
)

type taskState uint8

const (
	taskRunnable taskState = iota // on a runqueue or running
	taskSleeping                  // TASK_INTERRUPTIBLE
	taskDead
)

// fairSlice is the round-robin slice among SCHED_OTHER tasks on one CPU
// (sysctl_sched_base_slice is 0.75 ms on 6.6+; CFS's latency target was larger).
const fairSlice = 3 * ktime.Millisecond

// rq is a CPU's runqueue (struct rq, kernel/sched/sched.h): the task it
// runs and the runnable ones.
type rq struct {
	curr  *Task    // rq->curr; nil while the idle task runs
	queue runqueue // the runnable tasks that are not running
	// lastRan is the task that ran last, whose switch to the idle task is
	// charged and traced when the CPU goes idle.
	lastRan     *Task
	needResched bool       // TIF_NEED_RESCHED: schedule() at the next chance
	segStart    ktime.Time // when the current task segment started
}

// runqueue holds runnable tasks that are not running: RT tasks by priority
// (FIFO within a priority), then SCHED_OTHER tasks in FIFO order.
type runqueue struct {
	rt   []*Task
	fair []*Task
}

func (q *runqueue) push(t *Task, head bool) {
	if t.Policy == SchedFIFO {
		i := len(q.rt)
		for j, o := range q.rt { // keep descending RTPrio; FIFO within equal
			if t.RTPrio > o.RTPrio || head && t.RTPrio == o.RTPrio {
				i = j
				break
			}
		}
		if i == len(q.rt) {
			// The tail (an empty queue, the common case: list_add_tail()
			// in __enqueue_rt_entity()): no element moves.
			q.rt = append(q.rt, t)
			return
		}
		q.rt = append(q.rt, nil)
		copy(q.rt[i+1:], q.rt[i:])
		q.rt[i] = t
		return
	}
	if head {
		q.fair = append([]*Task{t}, q.fair...)
		return
	}
	q.fair = append(q.fair, t)
}

func (q *runqueue) peek() *Task {
	if len(q.rt) > 0 {
		return q.rt[0]
	}
	if len(q.fair) > 0 {
		return q.fair[0]
	}
	return nil
}

func (q *runqueue) remove(t *Task) {
	for i, o := range q.rt {
		if o == t {
			if i == len(q.rt)-1 {
				q.rt = q.rt[:i] // the last one (the only one, commonly): no element moves
				return
			}
			q.rt = append(q.rt[:i], q.rt[i+1:]...)
			return
		}
	}
	for i, o := range q.fair {
		if o == t {
			q.fair = append(q.fair[:i], q.fair[i+1:]...)
			return
		}
	}
}

// higher reports whether a should preempt b (check_preempt_curr()): an RT task
// beats any SCHED_OTHER task and a lower RT priority; fair tasks do not preempt
// each other on wakeup in this model.
func higher(a, b *Task) bool {
	if a.Policy == SchedFIFO {
		return b.Policy != SchedFIFO || a.RTPrio > b.RTPrio
	}
	return false
}

// pickNext returns the task that should own the CPU now, without side effects.
func (c *CPU) pickNext() *Task {
	head := c.rq.queue.peek()
	if c.rq.curr != nil {
		if head != nil && (higher(head, c.rq.curr) || c.rq.needResched && head.Policy == c.rq.curr.Policy) {
			return head
		}
		return c.rq.curr
	}
	return head
}

// switchTo makes next the current task (__schedule()), charging the context
// switch to next's first segment.
func (c *CPU) switchTo(now ktime.Time, next *Task) {
	c.rq.needResched = false
	if next == c.rq.curr {
		return
	}
	prev := c.rq.curr
	if prev != nil && prev.state == taskRunnable {
		// Preempted: an RT task keeps its place at the head of its priority.
		c.rq.queue.push(prev, prev.Policy == SchedFIFO)
	}
	c.rq.queue.remove(next)
	c.rq.curr = next
	next.runSince = now
	if c.rq.lastRan != next {
		next.segRemaining += c.k.costs.ContextSwitch
		c.cnt.b.Add(cCtxSwitches, 1)
		c.k.traceSwitch(now, c, c.rq.lastRan, next)
		c.rq.lastRan = next
	}
}

// schedulerTick is the part of scheduler_tick() the model has: round robin
// among SCHED_OTHER tasks once the slice is used.
func (c *CPU) schedulerTick(now ktime.Time) {
	t := c.rq.curr
	if t == nil || t.Policy != SchedOther || len(c.rq.queue.fair) == 0 {
		return
	}
	if int64(now-t.runSince) >= fairSlice {
		c.rq.needResched = true
	}
}

// Wake is try_to_wake_up() of a sleeping task at now by a CPU (nil: from
// outside). It returns the cost charged to the waker.
func (k *Kernel) Wake(now ktime.Time, t *Task, from *CPU) int64 {
	if t.state != taskSleeping {
		return 0
	}
	t.state = taskRunnable
	target := t.cpu
	t.wakeIdleExit, t.wakeBroadcast = 0, 0
	if from == target && target.flags&flagInidle != 0 {
		// Woken from this CPU's idle: the idle exit is part of its latency.
		t.wakeIdleExit, t.wakeBroadcast = target.idle.wakeExit, target.idle.wakeBroadcast
	}
	target.rq.queue.push(t, false)
	target.cnt.b.Add(cWakeups, 1)
	if k.tr.Enabled("sched_wakeup") {
		ctx := target.traceCtx()
		if from != nil {
			ctx = from.traceCtx()
		}
		k.tr.Event(now, ctx, "sched_wakeup", fmt.Sprintf("comm=%s pid=%d prio=%d target_cpu=%03d", t.Comm, t.Pid, t.kprio(), target.id))
	}
	return k.wakePreempt(now, t, from)
}

// WakeUpNew is wake_up_new_task() (kernel/sched/core.c) for a task Spawned
// while the machine runs, a fork(): Spawn queued it on its CPU, which is
// told as for a wakeup (wakeup_preempt(), an idle CPU's reschedule IPI).
// It returns the cost charged to the forking CPU.
func (k *Kernel) WakeUpNew(now ktime.Time, t *Task, from *CPU) int64 {
	if k.tr.Enabled("sched_wakeup_new") {
		ctx := t.cpu.traceCtx()
		if from != nil {
			ctx = from.traceCtx()
		}
		k.tr.Event(now, ctx, "sched_wakeup_new", fmt.Sprintf("comm=%s pid=%d prio=%d target_cpu=%03d", t.Comm, t.Pid, t.kprio(), t.cpu.id))
	}
	return k.wakePreempt(now, t, from)
}

// wakePreempt is the end of a wakeup of t, queued on its CPU: the CPU
// notices it (ttwu_queue() -> wakeup_preempt() or an IPI).
func (k *Kernel) wakePreempt(now ktime.Time, t *Task, from *CPU) int64 {
	target := t.cpu
	if from == target {
		// The dispatcher runs at the end of the current activity or segment.
		if target.mode == modeIdle {
			target.wakeForWork(now)
		}
		return k.costs.Wakeup
	}
	switch target.mode {
	case modeIdle:
		k.sendIPI(now, target, ipiResched)
	case modeTask:
		if higher(t, target.rq.curr) {
			k.sendIPI(now, target, ipiResched)
		}
	case modeFree:
		target.kick(now)
	}
	return k.costs.Wakeup + k.costs.IPISend
}

// traceSwitch writes sched_switch; the nil test is all an untraced run
// pays (it inlines into switchTo).
func (k *Kernel) traceSwitch(now ktime.Time, c *CPU, prev, next *Task) {
	if k.tr != nil {
		k.writeSwitch(now, c, prev, next)
	}
}

func (k *Kernel) writeSwitch(now ktime.Time, c *CPU, prev, next *Task) {
	if !k.tr.Enabled("sched_switch") {
		return
	}
	pc, pp, ppr, st := "swapper/"+itoa(int64(c.id)), 0, 120, "R"
	if prev != nil {
		pc, pp, ppr = prev.Comm, prev.Pid, prev.kprio()
		switch prev.state {
		case taskSleeping:
			st = "S"
		case taskDead:
			st = "X"
		}
	}
	nc, np, npr := "swapper/"+itoa(int64(c.id)), 0, 120
	if next != nil {
		nc, np, npr = next.Comm, next.Pid, next.kprio()
	}
	// The event fires in prev's context, under the rq lock with irqs off.
	ctx := trace.Ctx{Comm: "<idle>", CPU: c.id, Flags: trace.Flags(true, false, false, 2)}
	if prev != nil {
		ctx.Comm, ctx.Pid = prev.Comm, prev.Pid
	}
	k.tr.Event(now, ctx, "sched_switch", fmt.Sprintf("prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%d",
		pc, pp, ppr, st, nc, np, npr))
}

// newOneShot returns a fresh event for a one-off action.
func newOneShot(name string, fn func(now ktime.Time)) *sim.Event { return sim.NewEvent(name, fn) }
