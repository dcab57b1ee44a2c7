package kernel

import (
	"fmt"
	"unsafe"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sim"
	"github.com/tickemu/tickemu/framework/trace"
)

// Contexts a CPU spends time in.
type ctxKind int

const (
	ctxIdle ctxKind = iota
	ctxTask
	ctxIRQ
	ctxSoftirq
	// ctxKsoftirqd is softirqs run outside interrupt exit, by ksoftirqd:
	// the kernel measures them as the thread's time, not as softirq time
	// (irqtime_account_irq(), cputime.go).
	ctxKsoftirqd
	numCtx
)

type cpuMode int

const (
	modeFree cpuMode = iota // between activities; kick decides
	modeBusy                // irq/softirq/idle-transition activity until busyUntil
	modeTask                // running c.curr's segment
	modeIdle                // in an idle state
)

// CPU.flags bits above the softirq vectors (which are bits 0 to
// nrSoftirqs-1, 1<<vec as in __softirq_pending).
const (
	// The pending hard interrupts: the local device's, the broadcast
	// device's (routed to this CPU) and the IPI kinds.
	pendDevice  uint32 = 1 << (16 + iota)
	pendBcast          // the broadcast device's interrupt is routed here
	ipiResched         // scheduler_ipi
	ipiTimer           // tick broadcast: run the local timer handler
	ipiCallFunc        // smp_call_function: clock_was_set retrigger
	// flagInidle is ts->inidle: the idle task owns the CPU, from
	// tick_nohz_idle_enter() in do_idle() to tick_nohz_idle_exit().
	flagInidle
	// flagNohzFull is tick_nohz_full_cpu(): the CPU is in the nohz_full=
	// mask (set at boot, never changed; CPU.isNohzFull).
	flagNohzFull
	// pendExtIRQ: device interrupts other than the timers' are pending
	// (Kernel.DeviceInterrupt; their handlers are in Kernel.extIRQ).
	pendExtIRQ

	softirqMask = 1<<nrSoftirqs - 1
	pendIPIs    = ipiResched | ipiTimer | ipiCallFunc
	pendIRQs    = pendDevice | pendBcast | pendIPIs | pendExtIRQ
)

// The softirq vectors stay below the other flags (a compile-time check).
var _ [0]struct{} = [softirqMask >> 16]struct{}{}

// Softirq vectors (include/linux/interrupt.h).
const (
	TimerSoftirq   = 1
	NetRxSoftirq   = 3
	HRTimerSoftirq = 8
	nrSoftirqs     = 10
)

var softirqNames = [nrSoftirqs]string{"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"}

// CPU is one simulated CPU: its dispatch state, its two events, the time
// accounting, and the per-CPU halves of the scheduler (rq), the tick (ts),
// idle (idle, cpuidle), the wheel's answers and the CPU-time accounting
// (acct), each a struct of its own file.
//
// Fields: the per-CPU variables of the kernel's subsystems, so there are
// many; what one subsystem alone reads is a part of its own (rq, ts, idle,
// cpuidle, acct), and what stays flat is what every event's dispatch reads
// or several subsystems share.
//
// It is one of the records whose memory layout is tuned
// (docs/architecture.md): the counters first, then the dispatch state every
// event reads, then the accounting, runqueue, tick and idle state, the
// rarer fields last; newCPUs starts each CPU on a 64-byte line.
type CPU struct {
	// cnt is the hot path's counters (stats.go).
	cnt cpuCells

	// The dispatch state every event reads: mode and the pending
	// interrupts and softirqs (kick), runEv (held here: firing it calls
	// the CPU's own method, no closure of its own).
	k         *Kernel
	mode      cpuMode
	busyUntil ktime.Time
	runTask   bool // runEv ends a task segment, not an activity
	periodic  bool // the local device runs in periodic mode (low-res, nohz=off)
	irqNest   bool // inside an activity: trace flags
	inSoft    bool
	// wheelIsDirty: a wheel call may have made the stopped tick's expiry
	// (from the cached wheel state) late (nohzFullUpdate re-evaluates).
	wheelIsDirty bool
	// flags holds, in one word, everything that makes kick do more than
	// let the current task run on: the raised softirqs (softirqMask), the
	// pending hard interrupts (pendIRQs), flagInidle and flagNohzFull (the
	// one copy of it: isNohzFull).
	// continuesTask, run after every task segment, tests them at once.
	flags uint32
	_     [8]byte // keeps the fields below where the layout was measured
	// spans is the log WakePath reads, &spanBuf; nil unless a workload asked
	// (RecordSpans).
	spans *spanLog

	// runEv ends the current activity or the current task segment: a CPU
	// has at most one of them pending (an interrupt preempts the segment
	// before its activity starts), so one event serves both and the step
	// from one to the next re-arms the event that is firing (one heap
	// operation instead of two). runTask says which is armed; actName and
	// taskName are its names for each (the watchdog's message).
	runEv sim.Event

	// Accounting: the context the CPU is in and since when, and the time
	// spent by context (ContextTimes).
	ctx      ctxKind
	ctxSince ktime.Time
	ctxNS    [numCtx]int64

	rq    rq        // the scheduler's runqueue (sched.go)
	ts    tickSched // tick-sched state (tick.go)
	idle  cpuIdle   // idle state and the last wakeup's cost (idle.go)
	devEv sim.Event // local clockevent interrupt

	id                int
	actName, taskName string
	// heldLocks counts the locks the code running on the CPU holds beyond
	// the one a traced function takes itself (e.g. a POSIX timer's it_lock
	// around hrtimer_start()): the preempt-depth column of trace lines.
	heldLocks int
	spanBuf   spanLog
	cpuidle   cpuidleDevice // the governor's view (cpuidle.go)
	wheel     sdk.WheelState
	// ntiNext is the time of the wheel's last NextTimerInterrupt answer for
	// this CPU, valid while ntiGen is Kernel.wheelGen + 1 (0: none); its
	// State is wheel, which nothing else writes meanwhile (tick.go
	// wheelNextEvent).
	ntiGen  uint64
	ntiNext ktime.Time

	// softirqFns are the handlers (open_softirq()).
	softirqFns [nrSoftirqs]func(c *CPU, now ktime.Time) ktime.Time

	// acct is the kernel's CPU time accounting (cputime.go), read at ticks.
	acct cpuAcct
}

// newCPUs makes a machine's n CPUs in one allocation of over 32 KB (a large
// object starts on a page, with no type header in front), each CPU on a
// 64-byte line and 17 lines from the next, so that the same field of
// consecutive CPUs falls into different L1 sets (TestCPUsLineAligned).
func newCPUs(k *Kernel, n int, nohzFull map[int]bool) []*CPU {
	slab := make([]cpuSlot, n, max(n, maxSmallObject/int(unsafe.Sizeof(cpuSlot{}))+1))
	cpus := make([]*CPU, n)
	for i := range slab {
		cpus[i] = initCPU(&slab[i].c, k, i, nohzFull[i])
	}
	return cpus
}

// maxSmallObject is the runtime's largest small object (maxSmallSize).
const maxSmallObject = 32 << 10

// cpuSlot is a CPU in newCPUs' slab, padded to an odd number of lines.
type cpuSlot struct {
	c CPU
	_ [64]byte
}

func initCPU(c *CPU, k *Kernel, id int, nohzFull bool) *CPU {
	*c = CPU{k: k, id: id, idle: cpuIdle{state: -1}}
	if nohzFull {
		c.flags = flagNohzFull
	}
	// Event names carry the CPU: the watchdog's message says where time stopped.
	c.actName, c.taskName = fmt.Sprintf("activity-end cpu%d", id), fmt.Sprintf("task-segment cpu%d", id)
	c.runEv.Init(c.actName, (*runHandler)(c))
	c.devEv.Init(fmt.Sprintf("local-timer cpu%d", id), (*devHandler)(c))
	c.softirqFns[TimerSoftirq] = runTimerSoftirq
	c.softirqFns[HRTimerSoftirq] = runHRTimerSoftirq
	c.softirqFns[RCUSoftirq] = runRCUSoftirq
	c.wheel = sdk.WheelState{RaiseAt: sdk.NoExpiry, NextExpiry: sdk.NoExpiry}
	c.cnt.init(&k.Counters, id, k.idleNames)
	return c
}

// runHandler is the CPU as runEv's handler: the end of an activity or of a
// task segment.
type runHandler CPU

// Fire is activityEnd, or the end of a task segment, which it holds itself
// (a call less on most events): the current task finished its segment; run
// its continuation.
// While the task simply goes on with its next segment and that segment ends
// before anything queued (sim.Queue.FireNext), the segment's end runs here
// too, as the next event would: one event instead of a re-arm and a trip
// through the queue per segment.
func (h *runHandler) Fire(now ktime.Time) {
	c := (*CPU)(h)
	if !c.runTask {
		c.activityEnd(now)
		return
	}
	for {
		t := c.rq.curr
		if c.spans != nil {
			c.spans.add(spanRec{kind: SpanTask, start: c.rq.segStart, end: now, code: int32(t.Pid)})
		}
		c.mode = modeFree
		t.segRemaining = 0
		if t.segUser {
			c.acct.userPiece(c.rq.segStart, now)
		}
		t.segmentEnded(now)
		t = c.rq.curr
		if !c.continuesTask(t) {
			c.kick(now)
			return
		}
		// kick with nothing pending and t still the best: switchTo(t) and
		// runCurr, whose re-arm is replaced by running the end now.
		c.rq.needResched = false
		end := c.startSegment(now)
		if !c.k.q.FireNext(&c.runEv, end) {
			// armRun(true, end) without its checks: runEv fired and ends
			// a task segment again (a continuation that armed it or an
			// activity would have left the CPU busy or running, not free).
			c.k.q.Schedule(&c.runEv, end)
			return
		}
		now = end
	}
}

// devHandler is the CPU as devEv's handler.
type devHandler CPU

// Fire is deviceFired.
func (h *devHandler) Fire(now ktime.Time) { (*CPU)(h).deviceFired(now) }

// ID is the CPU number.
func (c *CPU) ID() int { return c.id }

// Kernel returns the machine the CPU belongs to.
func (c *CPU) Kernel() *Kernel { return c.k }

// Curr is the task owning the CPU, nil for idle.
func (c *CPU) Curr() *Task { return c.rq.curr }

// isNohzFull is tick_nohz_full_cpu(c): c is in the nohz_full= mask.
func (c *CPU) isNohzFull() bool { return c.flags&flagNohzFull != 0 }

// RaiseSoftirq marks softirq vec pending on c (raise_softirq_irqoff()).
func (c *CPU) RaiseSoftirq(now ktime.Time, vec int) {
	if c.flags&(1<<vec) == 0 {
		c.flags |= 1 << vec
		if c.k.tr.Enabled("softirq_raise") {
			if c.k.tr != nil {
				c.k.tr.Event(now, c.traceCtx(), "softirq_raise", "vec="+itoa(int64(vec))+" [action="+softirqNames[vec]+"]")
			}
		}
	}
	if c.mode == modeIdle || c.mode == modeFree && c.rq.curr == nil {
		// Raised outside irq context on an idle CPU: ksoftirqd would run it now.
		c.wakeForWork(now)
	}
}

// SetSoftirqHandler installs the handler of softirq vec (open_softirq()); it
// returns the time the handler finishes.
func (c *CPU) SetSoftirqHandler(vec int, fn func(c *CPU, now ktime.Time) ktime.Time) {
	c.softirqFns[vec] = fn
}

func (c *CPU) traceCtx() trace.Ctx { return c.traceCtxLocks(0) }

// traceCtxLocks is the context of an event emitted with locks spinlocks held
// (irqs off): trace.Flags builds the irqs-off, hardirq/softirq and
// preempt-depth columns; the idle task runs with a preempt count of 1.
func (c *CPU) traceCtxLocks(locks int) trace.Ctx {
	if c.k.tr == nil {
		return trace.Ctx{} // tracing off: every Event is a no-op, skip the work
	}
	comm, pid, depth := "<idle>", 0, 1
	if c.rq.curr != nil {
		comm, pid, depth = c.rq.curr.Comm, c.rq.curr.Pid, 0
	}
	return trace.Ctx{Comm: comm, Pid: pid, CPU: c.id,
		Flags: trace.Flags(locks > 0 || c.irqNest || c.rq.curr == nil && !c.inSoft, c.irqNest, c.inSoft, depth+locks)}
}

func (c *CPU) setCtx(now ktime.Time, ctx ctxKind) {
	if now > c.ctxSince {
		d := int64(now - c.ctxSince)
		c.ctxNS[c.ctx] += d
		if c.ctx == ctxTask && c.rq.curr != nil {
			c.rq.curr.cpuTime += d // and so its process's (Process.cpuTime)
		}
		c.ctxSince = now
	}
	c.ctx = ctx
}

func (c *CPU) accountUntil(t ktime.Time) {
	if t > c.ctxSince {
		c.ctxNS[c.ctx] += int64(t - c.ctxSince)
		c.ctxSince = t
	}
	if c.mode == modeTask && c.rq.curr.segUser {
		c.acct.userPiece(c.rq.segStart, t)
	}
	if c.mode == modeIdle && c.idle.state >= 0 && t > c.idle.since {
		c.cnt.idleResidency[c.idle.state].Add(int64(t - c.idle.since))
		c.idle.since = t
	}
}

// boot starts the CPU's clockevent device and tick at t.
func (c *CPU) boot(t ktime.Time) {
	k := c.k
	k.local.SetState(c.id, t, sdk.StateOneshot, 0)
	first := ktime.Time(k.tickNsec) // the tick grid: multiples of TICK_NSEC (tick_init_jiffy_update)
	if k.m.HighRes {
		// tick_setup_sched_timer(): the callback's name is the release's
		// (tick_sched_timer, tick_nohz_highres_handler, tick_nohz_handler).
		c.ts.schedTimer = k.NewHRTimer(k.abi.TickFunction, sdk.ClockMonotonic, sdk.HRModeAbs|sdk.HRModePinned|sdk.HRModeHard,
			k.costs.Tick+k.costs.JiffiesUpdate, c.tickCallback)
		c.ts.schedTimer.Period = k.tickNsec
		k.hrStart(c, t, c.ts.schedTimer, first, 0, sdk.HRModeAbs|sdk.HRModePinned|sdk.HRModeHard)
	} else if k.m.NoHZ == "off" && k.local.Has(sdk.FeatPeriodic) {
		// tick_setup_periodic(): a periodic device ticks by itself.
		c.periodic = true
		k.local.SetState(c.id, t, sdk.StatePeriodic, k.tickNsec)
		c.syncDev(t)
	} else {
		c.ts.lowresNext = first
		c.programDevice(t, first)
	}
	c.ctxSince = t
}

// programDevice is tick_program_event(at, force=1) on the local device.
func (c *CPU) programDevice(now, at ktime.Time) int64 {
	cost, _ := c.programDeviceForce(now, at, true)
	return cost
}

// programDeviceForce is tick_program_event(at, force); it returns the cost
// and whether the call returned -ETIME (only without force).
func (c *CPU) programDeviceForce(now, at ktime.Time, force bool) (int64, bool) {
	cost, fireAt, full := c.k.local.Reprogram(c.id, now, at, force)
	if full != nil {
		return c.programmed(now, full)
	}
	// One write, accepted: Reprogram's common case.
	c.cnt.b.Add(cDevWrites, 1)
	c.cnt.b.Add(cDevWriteCost, cost)
	if c.k.tr != nil {
		c.countDevWrites(now)
	}
	c.syncDevTo(now, fireAt)
	return cost, false
}

// countDevWrites samples the CPU's device-writes counter track (Perfetto
// traces) after a programming at now: the writes so far, the run's
// dev-writes.
func (c *CPU) countDevWrites(now ktime.Time) {
	if c.k.tr.Counting() {
		c.k.tr.Count(now, c.id, trace.CounterDeviceWrites, c.cnt.b.Value(cDevWrites))
	}
}

// programmed accounts a programming other than one accepted write.
func (c *CPU) programmed(now ktime.Time, o *clockevents.ProgramResult) (int64, bool) {
	k := c.k
	c.cnt.b.Add(cDevWrites, int64(o.Writes))
	c.cnt.b.Add(cDevWriteCost, o.Cost)
	if k.tr != nil && o.Writes > 0 {
		c.countDevWrites(now)
	}
	if o.Retries > 0 {
		k.Counters.Inc(cntDevRetries, c.id, int64(o.Retries))
	}
	if o.ETIMEs > 0 {
		k.Counters.Inc(cntDevETIME, c.id, int64(o.ETIMEs))
	}
	if o.Raises > 0 {
		for _, l := range o.Log(k.local.Name(), k.m.HZ) {
			k.log.Warn().Int("cpu", c.id).Int64("sim_ns", int64(now)).Msg(l)
		}
	}
	if o.Raises > 0 || o.GaveUp {
		// clockevents_increase_min_delta()'s printk_deferred() queues
		// printk's lazy irq_work on this CPU.
		c.queueLazyIRQWork()
	}
	c.syncDevTo(now, o.FireAt)
	return o.Cost, o.ETIME
}

// syncDev keeps the local-timer event at the channel's fire time.
func (c *CPU) syncDev(now ktime.Time) { c.syncDevTo(now, c.k.local.FireAt(c.id)) }

// syncDevTo is syncDev with the channel's fire time fa in hand (the result
// of the call that just set it).
func (c *CPU) syncDevTo(now, fa ktime.Time) {
	if fa == ktime.Max {
		c.k.q.Cancel(&c.devEv)
		return
	}
	if fa < now {
		fa = now
	}
	if !c.devEv.Queued() || c.devEv.When() != fa {
		c.k.q.Schedule(&c.devEv, fa)
	}
}

// deviceFired: the local clockevent raised its interrupt.
func (c *CPU) deviceFired(now ktime.Time) {
	c.flags |= pendDevice
	c.interruptArrived(now)
}

// ipiArrived: an IPI reached this CPU.
func (c *CPU) ipiArrived(now ktime.Time, kind uint32) {
	c.flags |= kind
	c.interruptArrived(now)
}

// interruptArrived takes a pending interrupt now, or latches it until the
// current activity ends. It is the last act of the handler of the event
// that raised the interrupt (devEv, an IPI's, the broadcast device's), so
// an idle CPU's wakeup may run in place (beginActivityLast).
func (c *CPU) interruptArrived(now ktime.Time) {
	switch c.mode {
	case modeBusy:
		// Latched: taken when the activity ends (irqs disabled). One
		// arriving during the activity's softirqs interrupts them in the
		// kernel (__do_softirq() runs with interrupts enabled): its tick
		// is softirq time.
		if now < c.acct.softEnd {
			c.acct.softLatched = true
		}
		return
	case modeTask:
		c.preemptSegment(now)
		c.startInterrupts(now)
	case modeIdle:
		// Leave the idle state: its exit latency passes before the handler runs.
		lat := c.leaveIdleState(now)
		c.beginActivityLast(now, now+ktime.Time(lat))
	case modeFree:
		c.startInterrupts(now)
	}
}

// wakeForWork makes an idle CPU re-run its dispatcher (a wakeup from this CPU's own context).
func (c *CPU) wakeForWork(now ktime.Time) {
	if c.mode == modeIdle {
		lat := c.leaveIdleState(now)
		c.beginActivity(now, now+ktime.Time(lat))
	}
}

// beginActivity marks the CPU busy until end; activityEnd runs then.
func (c *CPU) beginActivity(now, end ktime.Time) {
	c.mode = modeBusy
	c.busyUntil = end
	c.armRun(false, end)
}

// beginActivityLast is beginActivity as the last act of the firing event's
// handler. An activity of no length then ends at once when nothing queued
// comes first (sim.Queue.FireAfter): its end runs here, as the next event
// would, instead of a trip through the queue. That is the wakeup from the
// polling idle state: poll_idle() (drivers/cpuidle/poll_state.c) spins with
// interrupts enabled and the state's exit latency is 0, so the interrupt's
// handler starts the instant the interrupt arrives (cpuidle_enter_state()
// returns to do_idle() only after it).
func (c *CPU) beginActivityLast(now, end ktime.Time) {
	if end == now && !c.runTask && c.k.q.FireAfter(&c.runEv, now) {
		c.mode, c.busyUntil = modeBusy, now
		c.activityEnd(now)
		return
	}
	c.beginActivity(now, end)
}

// armRun schedules runEv at at for the end of an activity (task false) or
// of a task segment.
// runEv's name follows runTask (setRunTask), so an arm of the same kind
// writes neither.
func (c *CPU) armRun(task bool, at ktime.Time) {
	if c.runTask != task {
		if c.runEv.Queued() {
			panic(fmt.Sprintf("kernel: cpu%d: an activity and a task segment pending at once", c.id))
		}
		c.setRunTask(task)
	}
	c.k.q.Schedule(&c.runEv, at)
}

// setRunTask says what runEv ends, with its name for the watchdog.
func (c *CPU) setRunTask(task bool) {
	c.runTask = task
	if task {
		c.runEv.Name = c.taskName
	} else {
		c.runEv.Name = c.actName
	}
}

func (c *CPU) activityEnd(now ktime.Time) {
	c.mode = modeFree
	if c.idle.pendingEntry {
		c.idle.pendingEntry = false
		if c.flags&(pendIRQs|softirqMask) == 0 && c.pickNext() == nil {
			c.enterIdleState(now)
			return
		}
	}
	c.kick(now)
}

// startInterrupts runs every pending interrupt as one activity starting at now.
func (c *CPU) startInterrupts(now ktime.Time) {
	end := c.handleInterrupts(now)
	c.traceIdleExit(end) // an interrupt taken inside poll_idle() or HLT
	c.beginActivity(now, end)
}

// kick is the CPU's dispatcher: run pending interrupts, then the best task, or
// go idle.
func (c *CPU) kick(now ktime.Time) {
	if c.mode != modeFree {
		return
	}
	if c.flags&pendIRQs != 0 {
		c.startInterrupts(now)
		return
	}
	c.traceIdleExit(now) // a polling CPU woken without an interrupt
	if c.flags&softirqMask != 0 {
		// Left over from a capped __do_softirq(): ksoftirqd runs them.
		c.setCtx(now, ctxKsoftirqd)
		end := c.doSoftirqs(now)
		c.beginActivity(now, end)
		return
	}
	next := c.pickNext()
	if next == nil {
		c.enterIdle(now)
		return
	}
	if c.flags&flagInidle != 0 {
		// do_idle() saw need_resched(): tick_nohz_idle_exit() before schedule_idle().
		c.flags &^= flagInidle
		stopped := c.ts.tickStopped
		if stopped && c.isNohzFull() && c.k.settings.NohzFullIdleExit == NohzFullIdleExitConditional {
			// tick_nohz_idle_exit() -> tick_nohz_idle_update_tick()
			// (a5183862e76f, 5.14): a nohz_full CPU's stopped tick is
			// not restarted; __tick_nohz_full_update_tick() decides as
			// for a running task (nohzFullUpdate, after the switch): it
			// stays stopped while the task runs alone.
			c.k.doUpdateJiffies(now)
			c.accountIdleTicks() // tick_nohz_account_idle_time()
		} else if cost := c.idleExit(now); cost > 0 {
			if stopped {
				c.accountIdleTicks() // tick_nohz_account_idle_time()
			}
			c.span(SpanTickSched, now, now+ktime.Time(cost), 0)
			c.setCtx(now, ctxIdle)
			c.beginActivity(now, now+ktime.Time(cost))
			return
		}
	}
	c.switchTo(now, next)
	if c.isNohzFull() {
		if cost := c.nohzFullUpdate(now); cost > 0 {
			// The tick-sched work runs before the task continues (irq exit).
			next.segRemaining += cost
		}
	}
	next.interruptedCompute(now)
	c.runCurr(now)
}

// runCurr (re)starts the current task's segment.
func (c *CPU) runCurr(now ktime.Time) {
	c.armRun(true, c.startSegment(now))
}

// startSegment starts the current task's next segment at now and returns
// when it ends.
func (c *CPU) startSegment(now ktime.Time) ktime.Time {
	c.setCtx(now, ctxTask)
	c.mode = modeTask
	c.rq.segStart = now
	return now + ktime.Time(c.rq.curr.segRemaining)
}

// preemptSegment stops the current task segment at now, keeping what is left.
func (c *CPU) preemptSegment(now ktime.Time) {
	t := c.rq.curr
	if c.spans != nil {
		c.spans.add(spanRec{kind: SpanTask, start: c.rq.segStart, end: now, code: int32(t.Pid)})
	}
	if t.segUser {
		c.acct.userPiece(c.rq.segStart, now)
	}
	t.segRemaining -= int64(now - c.rq.segStart)
	if t.segRemaining < 0 {
		t.segRemaining = 0
	}
	// runEv stays queued at the segment's old end: the interrupt activity
	// that always follows (startInterrupts) re-keys it in place, one heap
	// operation instead of a removal and an insertion. Nothing fires in
	// between, and Cancel takes no sequence number, so every event keeps
	// its order.
	c.setRunTask(false)
	c.mode = modeFree
}

// continuesTask reports whether kick would do no more than let t, the
// current task, run its next segment: the CPU is free, no interrupt or
// softirq is pending, t is runnable and still the best task, the idle loop
// is not being left, the tick needs no nohz_full update and no signal
// interrupts the segment (Task.interruptedCompute).
func (c *CPU) continuesTask(t *Task) bool {
	if t == nil || c.mode != modeFree || c.flags != 0 || t.sigpending && t.segUser && t.segRemaining > 0 {
		return false
	}
	// pickNext() == t for t current: no queued task (t is not one) takes
	// the CPU from it.
	head := c.rq.queue.peek()
	return head == nil || !higher(head, t) && !(c.rq.needResched && head.Policy == t.Policy)
}

// handleInterrupts is one hard interrupt activity starting at now (after any
// idle exit latency): irq entry, the pending handlers, irq exit with softirqs.
// It returns when the CPU is free again.
func (c *CPU) handleInterrupts(now ktime.Time) ktime.Time {
	overIdle := c.rq.curr == nil
	start := now
	now = c.irqEnter(now)
	now = c.runPendingIRQs(now)
	now = c.irqExit(now)
	if overIdle {
		c.acct.irqIdleNS += int64(now - start)
	}
	if c.rq.curr != nil {
		c.setCtx(now, ctxTask)
	} else {
		c.setCtx(now, ctxIdle)
	}
	return now
}

// irqEnter is the entry of a hard interrupt at now (idtentry, irq_enter_rcu()
// with tick_irq_enter()); it returns when the handlers can start.
func (c *CPU) irqEnter(now ktime.Time) ktime.Time {
	k := c.k
	wasIdle := c.flags&flagInidle != 0
	c.acct.from = c.interruptedCtx()
	c.setCtx(now, ctxIRQ)
	c.irqNest = true
	start := now
	now += ktime.Time(k.costs.IRQEntry)
	if wasIdle && c.ts.tickStopped {
		// tick_nohz_irq_enter() -> tick_nohz_update_jiffies(): jiffies are stale
		// while every CPU sleeps.
		k.doUpdateJiffies(now)
		now += ktime.Time(k.costs.JiffiesUpdate)
	}
	c.span(SpanIRQEntry, start, now, 0)
	return now
}

// runPendingIRQs runs the pending hard interrupt handlers from now, each
// vector's in turn, until none is pending; it returns when the last ends.
func (c *CPU) runPendingIRQs(now ktime.Time) ktime.Time {
	for c.flags&pendIRQs != 0 {
		if c.flags&pendBcast != 0 {
			c.flags &^= pendBcast
			s := now
			now = c.broadcastInterrupt(now)
			c.span(SpanBroadcastIRQ, s, now, 0)
		}
		if c.flags&pendDevice != 0 {
			c.flags &^= pendDevice
			now = c.localTimerInterrupt(now, true)
		}
		if c.flags&ipiTimer != 0 {
			// tick_receive_broadcast(): the local event handler, no device ack.
			c.flags &^= ipiTimer
			now = c.localTimerInterrupt(now, false)
		}
		if c.flags&ipiCallFunc != 0 {
			c.flags &^= ipiCallFunc
			s := now
			now = c.clockWasSetIPI(now)
			c.span(SpanIPI, s, now, 0)
		}
		if c.flags&ipiResched != 0 {
			c.flags &^= ipiResched
			c.cnt.ipiResched.Add(1)
		}
		if c.flags&pendExtIRQ != 0 {
			c.flags &^= pendExtIRQ
			now = c.deviceInterrupts(now)
		}
	}
	return now
}

// irqExit is irq_exit_rcu() from now: the exit cost, then the raised
// softirqs (invoke_softirq() -> __do_softirq()); it returns when they end.
func (c *CPU) irqExit(now ktime.Time) ktime.Time {
	c.span(SpanIRQExit, now, now+ktime.Time(c.k.costs.IRQExit), 0)
	now += ktime.Time(c.k.costs.IRQExit)
	c.irqNest = false
	c.acct.softEnd = 0
	if c.flags&softirqMask != 0 {
		c.setCtx(now, ctxSoftirq)
		now = c.doSoftirqs(now)
		c.acct.softEnd = now
	}
	return now
}

// localTimerInterrupt is the local APIC timer vector: the device's event
// handler, hrtimer_interrupt() in high-res mode or the tick in low-res mode.
func (c *CPU) localTimerInterrupt(now ktime.Time, ack bool) ktime.Time {
	k := c.k
	start := now
	c.cnt.b.Add(cLocalTimerIRQ, 1)
	if ack {
		// sysvec_apic_timer_interrupt() (arch/x86/kernel/apic/apic.c):
		// apic_eoi() comes before trace_local_timer_entry(). In a guest
		// the EOI (x2APIC MSR 0x80b) is a write that may exit to the
		// hypervisor, so where its cost falls shows in the trace.
		a := k.local.Ack(c.id, now)
		now += ktime.Time(a.Cost)
		c.syncDevTo(now, a.FireAt)
	}
	if k.tr != nil {
		k.tr.Event(now, c.traceCtx(), "local_timer_entry", "vector=236")
	}
	if k.m.HighRes {
		now = c.hrtimerInterrupt(start, now)
	} else {
		now = c.lowresTick(now)
		c.span(SpanTick, start, now, 0)
	}
	if c.acct.irqWork != 0 {
		now += ktime.Time(c.acct.irqWork)
		c.acct.irqWork = 0
	}
	if k.tr != nil {
		k.tr.Event(now, c.traceCtx(), "local_timer_exit", "vector=236")
	}
	return now
}

// hrtimerInterrupt is hrtimer_interrupt() (kernel/time/hrtimer.c) from now:
// the plugin's pass, the device writes it asks for, the expired timers'
// callbacks, and another pass for as long as the forced reprogram finds the
// next expiry already past (-ETIME). It returns when the handler ends; its
// span runs from start, the vector's entry (the ack included).
func (c *CPU) hrtimerInterrupt(start, now ktime.Time) ktime.Time {
	k := c.k
	r := k.hrt.Interrupt(c.id, now)
	c.cnt.b.Add(cHRInterrupts, 1)
	hang := int64(0)
	for {
		if r.Hang {
			k.Counters.Inc(cntHRHangs, c.id, 1)
			k.Counters.MaxN(cntHRMaxHangNS, c.id, r.HangDelay)
			hang = r.HangDelay
		}
		c.cnt.b.Add(cHRRetries, int64(r.Retries))
		// The pass's device write first: a callback's side effect that
		// starts a timer on this CPU must see (and may pull in) it.
		writes, try := r.Program, ktime.Time(-1)
		if r.TryProgram && len(writes) > 0 {
			writes, try = writes[:len(writes)-1], writes[len(writes)-1]
		}
		end := r.End + ktime.Time(k.programLocal(c, r.End, writes))
		etime := false
		if try >= 0 {
			// tick_program_event(expires_next, 0) in hrtimer_interrupt():
			// the device's -ETIME sends the plugin round its retry loop.
			var cost int64
			cost, etime = c.programDeviceForce(end, try, false)
			end += ktime.Time(cost)
		}
		k.runHRExpiries(c, &r)
		if r.RaiseSoftirq {
			c.RaiseSoftirq(end, HRTimerSoftirq)
		}
		now = end
		if !etime {
			break
		}
		r = k.hrt.InterruptETIME(c.id, now)
	}
	if c.spans != nil {
		c.spans.add(spanRec{kind: SpanHRTimer, start: start, end: now, arg: uint64(hang)})
	}
	return now
}

// doSoftirqs is __do_softirq(): run pending vectors lowest first, restarting
// while they are re-raised, at most MAX_SOFTIRQ_RESTART (10) passes.
func (c *CPU) doSoftirqs(now ktime.Time) ktime.Time {
	k := c.k
	c.inSoft = true
	for pass := 0; c.flags&softirqMask != 0 && pass < 10; pass++ {
		passStart := now // the first vector's span carries the entry cost
		now += ktime.Time(k.costs.SoftirqEntry)
		pending := c.flags & softirqMask
		c.flags &^= softirqMask
		for vec := 0; vec < nrSoftirqs; vec++ {
			if pending&(1<<vec) == 0 {
				continue
			}
			c.cnt.softirq[vec].Add(1)
			if k.tr != nil {
				k.tr.Event(now, c.traceCtx(), "softirq_entry", "vec="+itoa(int64(vec))+" [action="+softirqNames[vec]+"]")
			}
			s := min(now, passStart)
			passStart = ktime.Max
			if fn := c.softirqFns[vec]; fn != nil {
				now = fn(c, now)
				if c.acct.irqWork != 0 {
					now += ktime.Time(c.acct.irqWork)
					c.acct.irqWork = 0
				}
			}
			if c.spans != nil {
				sp := spanRec{kind: SpanSoftirq, start: s, end: now, code: int32(vec)}
				if vec == TimerSoftirq {
					sp.arg = c.spans.gap
				}
				c.spans.add(sp)
			}
			if k.tr != nil {
				k.tr.Event(now, c.traceCtx(), "softirq_exit", "vec="+itoa(int64(vec))+" [action="+softirqNames[vec]+"]")
			}
		}
	}
	c.inSoft = false
	return now
}

// runWheelExpiries runs the timers a wheel answer expired, on c, each at
// start plus its offset (expire_timers() / call_timer_fn()); remote marks
// the ones tmigr_handle_remote() expires for another CPU, also counted as
// remote_expiries.
func (c *CPU) runWheelExpiries(start ktime.Time, expired []sdk.WheelExpiry, remote bool) {
	k := c.k
	for _, e := range expired {
		t := k.wtimerByID(e.ID)
		if t == nil {
			panic("kernel: wheel plugin expired an unknown timer")
		}
		at := start + ktime.Time(e.Offset)
		t.pending = e.Rearmed
		k.Counters.Inc(cntTimerExpire, c.id, 1)
		if remote {
			k.Counters.Inc(cntRemoteExpiries, c.id, 1)
		}
		if k.tr.Enabled("timer_expire_entry") {
			k.tr.Event(at, c.traceCtx(), "timer_expire_entry", "timer="+trace.Ptr(uint64(t.ID))+" function="+t.Function+
				" now="+utoa(k.tk.jiffies)+" baseclk="+utoa(e.Jiffy))
		}
		if t.Callback != nil {
			t.Callback(c, at)
		}
		if k.tr != nil {
			k.tr.Event(at+ktime.Time(t.Cost), c.traceCtx(), "timer_expire_exit", "timer="+trace.Ptr(uint64(t.ID)))
		}
	}
}

// runTimerSoftirq is run_timer_softirq(): the wheel catches up and runs its timers.
func runTimerSoftirq(c *CPU, now ktime.Time) ktime.Time {
	k := c.k
	start := now
	k.wheelGen++
	r := k.wheel.RunTimers(c.id, k.tk.jiffies)
	c.wheel = r.State
	k.Counters.Inc(cntWheelRuns, c.id, 1)
	k.Counters.Inc(cntWheelIters, c.id, int64(r.Iterations))
	k.Counters.Inc(cntWheelCascades, c.id, int64(r.Cascades))
	k.Counters.MaxN(cntWheelMaxGap, c.id, int64(r.Gap))
	k.Counters.MaxN(cntWheelMaxRun, c.id, r.Cost)
	if r.Gap > 1 {
		k.CatchupGaps.Add(int64(r.Gap))
	}
	if c.spans != nil {
		c.spans.gap = uint64(r.Gap)
	}
	c.runWheelExpiries(start, r.Expired, false)
	// 6.9+: tmigr_handle_remote() after the CPU's own bases.
	return c.tmigrHandleRemote(start + ktime.Time(r.Cost))
}

// runHRTimerSoftirq is hrtimer_run_softirq(): the soft bases' timers.
func runHRTimerSoftirq(c *CPU, now ktime.Time) ktime.Time {
	k := c.k
	r := k.hrt.RunSoftirq(c.id, now)
	now = r.End + ktime.Time(k.programLocal(c, r.End, r.Program))
	k.runHRExpiries(c, &r)
	if r.RaiseSoftirq {
		c.flags |= 1 << HRTimerSoftirq
	}
	return now
}

// wheelChanged is called after a wheel operation on c: a newly earlier timer on
// an idle CPU with a stopped tick must be seen (trigger_dyntick_cpu() sends
// an IPI when the target is remote).
func (c *CPU) wheelChanged(now ktime.Time) {
	if c.ts.tickStopped && c.wheel.NextExpiry != sdk.NoExpiry {
		at := c.k.jiffyTime(c.wheel.NextExpiry)
		if at < c.ts.nextTick {
			c.wheelIsDirty = true
			if c.mode == modeIdle {
				c.k.sendIPI(now, c, ipiResched)
			}
		}
	}
}

func (c *CPU) wheelDirty() { c.wheelIsDirty = true }

func utoa(v uint64) string {
	if v < 1<<63 {
		return itoa(int64(v))
	}
	return itoa(int64(v/10)) + itoa(int64(v%10))
}
