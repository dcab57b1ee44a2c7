package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Tree RCU as far as the tick sees it (kernel/rcu/tree.c; docs/reference/wheel-tick.md
// section 7). A CPU with callbacks queued keeps its tick when it goes idle
// (rcu_needs_cpu()), and the tick raises RCU_SOFTIRQ whenever the CPU has
// grace-period work to do (rcu_sched_clock_irq() -> rcu_pending()). The
// grace period itself runs machine-wide: it starts when a CPU's callbacks
// need one, waits for a quiescent state from every CPU (a tick that
// interrupted idle, user space or preemptible task code under PREEMPT_RCU;
// an idle CPU's is reported for it by the grace-period kthread's
// force-quiescent-state scan), and ends; the CPUs then notice the end from
// their own tick and invoke the callbacks in RCU_SOFTIRQ.
//
// Not modelled: read-side critical sections (every task tick is a
// quiescent state), expedited grace periods, the rcu_node tree (one leaf),
// callback batching limits (rcu_do_batch()'s blimit), RCU_FAST_NO_HZ (an
// option of 3.10-5.16, default off, removed in 5.17) and the GP kthread's
// own wakeups and context switches (its work runs in the softirq or timer
// callback that wakes it).

// RCUSoftirq is RCU_SOFTIRQ (include/linux/interrupt.h).
const RCUSoftirq = 9

// rcuState is rcu_state with its one rcu_node, and each CPU's rcu_data.
type rcuState struct {
	// gpSeq is rcu_state.gp_seq counted in phases: odd while a grace period
	// runs, even between them (the kernel keeps the phase in two low bits).
	gpSeq uint64
	// owing counts the CPUs the running grace period still waits for (the
	// set bits of the leaf's qsmask).
	owing int
	// fqs is the GP kthread's wait for its next force-quiescent-state scan
	// (rcu_gp_fqs_loop(): swait_event_idle_timeout_exclusive() ->
	// schedule_timeout() -> a process_timeout timer), made at the first
	// grace period: a timer allocated at boot would renumber every timer.
	fqs      *WheelTimer
	fqsFirst bool // the next scan is the grace period's first (rcu_gp_fqs(first_time))
	cpus     []rcuData
}

// rcuSeg is callbacks that are ready once the grace period ending at gp
// phase target has ended (the RCU_WAIT_TAIL and RCU_NEXT_READY_TAIL
// segments of rcu_segcblist, with their ->gp_seq).
type rcuSeg struct {
	target uint64
	n      int64
}

// rcuData is a CPU's struct rcu_data.
type rcuData struct {
	gpSeq uint64 // rdp->gp_seq: the grace-period phase this CPU last noticed
	// owesQS: this CPU's bit is set in the leaf's qsmask. coreNeedsQS and
	// noQS are rdp->core_needs_qs and rdp->cpu_no_qs.b.norm: the CPU has
	// noticed the grace period and has not yet passed a quiescent state.
	owesQS, coreNeedsQS, noQS bool
	next                      int64     // RCU_NEXT_TAIL: callbacks with no grace period yet
	wait                      [2]rcuSeg // waiting for a grace period, oldest first
	done                      int64     // RCU_DONE_TAIL: ready to invoke
	// eqs counts entries into an extended quiescent state (the idle loop
	// entering its idle state, ct_idle_enter()); snap is its value at the
	// grace period's first scan (rcu_watching_snap_save()), compared by the
	// later ones (rcu_watching_snap_recheck()).
	eqs, snap uint64
	snapped   bool
}

// rcu returns c's rcu_data.
func (c *CPU) rcu() *rcuData { return &c.k.rcu.cpus[c.id] }

// rcuOffloaded is rcu_rdp_is_offloaded(): the CPU's callbacks are handled by
// the rcuo kthreads. nohz_full CPUs are always in rcu_nocb_mask
// (rcu_init_nohz(), kernel/rcu/tree_nocb.h; 3.10 refused a nohz_full CPU that
// was not, tick_nohz_init()); rcu_nocbs= is not modelled.
func (c *CPU) rcuOffloaded() bool { return c.isNohzFull() }

// rcuCallbacks is the number of callbacks queued on the CPU.
func (d *rcuData) callbacks() int64 { return d.next + d.wait[0].n + d.wait[1].n + d.done }

// rcuNeedsCPU is rcu_needs_cpu() (kernel/rcu/tree.c, 6.x): the CPU has
// callbacks queued that it invokes itself, so its tick keeps running
// (tick_nohz_next_event()). 3.10 asked the same (rcu_cpu_has_callbacks(),
// kernel/rcutree_plugin.h without RCU_FAST_NO_HZ). Lazy callbacks
// (RCU_LAZY, 6.2+) exist only on offloaded CPUs (call_rcu_nocb()), which
// this answer ignores, so they change nothing here.
func (c *CPU) rcuNeedsCPU() bool {
	if c.rcuOffloaded() {
		return false
	}
	return c.rcu().callbacks() > 0
}

// CallRCU is call_rcu() on c at now (__call_rcu_common()): one callback
// queued on the CPU's list, with no grace period assigned yet; the tick
// asks for one (rcu_pending(): "needs another grace period"). An
// offloaded CPU's callback goes to its rcuo kthreads, which ask for the
// grace period themselves (rcu_nocb_gp_kthread()) and invoke it there.
func (c *CPU) CallRCU(now ktime.Time) {
	k := c.k
	k.Counters.Inc(cntRCUCallbacks, c.id, 1)
	if c.rcuOffloaded() {
		if k.rcu.gpSeq&1 == 0 {
			k.rcuGPStart(c, now)
		}
		return
	}
	c.rcu().next++
}

// RCUHasWork reports whether RCU has anything to do on c: callbacks
// queued, a quiescent state owed, or a grace-period change it has not
// noticed yet (what makes rcu_pending() true at its next tick).
func (c *CPU) RCUHasWork() bool {
	d := c.rcu()
	return d.callbacks() > 0 || d.owesQS || d.gpSeq != c.k.rcu.gpSeq
}

// RCUGracePeriod reports whether a grace period is running.
func (k *Kernel) RCUGracePeriod() bool { return k.rcu.gpSeq&1 != 0 }

// rcuSeqSnap is rcu_seq_snap(): the phase at whose end a callback queued
// now is safe to invoke: the end of the next grace period to start.
func rcuSeqSnap(seq uint64) uint64 {
	if seq&1 != 0 {
		return seq + 3 // the running one ends at seq+1; the next ends at seq+3
	}
	return seq + 2
}

// rcuSchedClockIRQ is rcu_sched_clock_irq() from the tick on c
// (update_process_times()): a quiescent state if the tick interrupted the
// idle loop or a task (rcu_flavor_sched_clock_irq() under PREEMPT_RCU:
// outside read-side critical sections, which the model has none of; 3.10's
// rcu_check_callbacks() -> rcu_preempt_check_callbacks() alike), then
// RCU_SOFTIRQ if rcu_pending() (invoke_rcu_core()).
func (c *CPU) rcuSchedClockIRQ(now ktime.Time) {
	d := c.rcu()
	if !c.inSoft && d.coreNeedsQS {
		d.noQS = false // rcu_qs()
	}
	if c.rcuPending(d) {
		c.RaiseSoftirq(now, RCUSoftirq)
	}
}

// rcuPending is rcu_pending() (kernel/rcu/tree.c).
func (c *CPU) rcuPending(d *rcuData) bool {
	k := c.k
	inGP := k.rcu.gpSeq&1 != 0
	switch {
	case c.isNohzFull() && c.flags&flagInidle != 0:
		// A nohz_full CPU's tick in idle: RCU is ignored
		// (rcu_nohz_full_cpu()).
		return false
	case d.coreNeedsQS && !d.noQS && inGP:
		return true // a quiescent state to report
	case c.rcuOffloaded():
	case d.done > 0:
		return true // callbacks ready to invoke
	case !inGP && (d.next > 0 || d.wait[0].n > 0 || d.wait[1].n > 0):
		return true // RCU idle and this CPU needs another grace period
	}
	return d.gpSeq != k.rcu.gpSeq // a grace period started or ended
}

// runRCUSoftirq is rcu_core() (RCU_SOFTIRQ): notice grace-period changes
// (note_gp_changes(): advance the callbacks whose grace period ended, and
// start looking for a quiescent state for a new one), give the new
// callbacks a grace period and start it if none runs
// (rcu_accelerate_cbs() -> rcu_start_this_gp()), report a quiescent state
// passed (rcu_check_quiescent_state()), then invoke the ready callbacks
// (rcu_do_batch()).
func runRCUSoftirq(c *CPU, now ktime.Time) ktime.Time {
	k := c.k
	rs := &k.rcu
	d := c.rcu()
	cost := k.costs.RCUCore
	if d.gpSeq != rs.gpSeq {
		c.rcuAdvance(d)
		if rs.gpSeq&1 != 0 && d.owesQS {
			d.coreNeedsQS, d.noQS = true, true
		}
		d.gpSeq = rs.gpSeq
	}
	if d.next > 0 && !c.rcuOffloaded() {
		target := rcuSeqSnap(rs.gpSeq)
		switch {
		case d.wait[1].n > 0 && d.wait[1].target == target:
			d.wait[1].n += d.next
		case d.wait[0].n > 0 && d.wait[0].target == target:
			d.wait[0].n += d.next
		case d.wait[0].n == 0:
			d.wait[0] = rcuSeg{target, d.next}
		default:
			d.wait[1] = rcuSeg{target, d.next}
		}
		d.next = 0
		if rs.gpSeq&1 == 0 {
			k.rcuGPStart(c, now+ktime.Time(cost))
		}
	}
	if d.coreNeedsQS && !d.noQS && rs.gpSeq&1 != 0 {
		d.coreNeedsQS = false
		k.rcuReportQS(c, now+ktime.Time(cost))
	}
	if d.done > 0 {
		k.Counters.Inc(cntRCUInvoked, c.id, d.done)
		cost += d.done * k.costs.RCUCallback
		d.done = 0
	}
	return now + ktime.Time(cost)
}

// rcuAdvance moves the callbacks whose grace period has ended to the done
// segment (rcu_advance_cbs() -> rcu_segcblist_advance()).
func (c *CPU) rcuAdvance(d *rcuData) {
	completed := c.k.rcu.gpSeq &^ 1
	for d.wait[0].n > 0 && d.wait[0].target <= completed {
		d.done += d.wait[0].n
		d.wait[0], d.wait[1] = d.wait[1], rcuSeg{}
	}
}

// rcuGPStart is the GP kthread's rcu_gp_init(), woken by c: a new grace
// period that waits for every online CPU, and the wait for its first
// force-quiescent-state scan (jiffies_till_first_fqs).
func (k *Kernel) rcuGPStart(c *CPU, now ktime.Time) {
	rs := &k.rcu
	rs.gpSeq++
	rs.owing = len(k.cpus)
	for i := range rs.cpus {
		d := &rs.cpus[i]
		d.owesQS, d.snapped = true, false
	}
	k.Counters.Inc(cntRCUGPs, c.id, 1)
	if rs.fqs == nil {
		rs.fqs = k.NewWheelTimer("process_timeout", 0, k.costs.RCUCore, 0, k.rcuFQS)
	}
	rs.fqsFirst = true
	k.modTimer(c, now, rs.fqs, k.tk.jiffies+k.rcuFQSJiffies())
}

// rcuFQSJiffies is jiffies_till_first_fqs and jiffies_till_next_fqs as
// rcu_init_geometry() sets them by default: RCU_JIFFIES_TILL_FORCE_QS
// (1 + (HZ > 250) + (HZ > 500), kernel/rcu/tree.h) plus one per 256 CPUs
// (RCU_JIFFIES_FQS_DIV) since 026ad2835ce6 (v3.11); a fixed 3 jiffies
// before (RCU_JIFFIES_TILL_FORCE_QS in kernel/rcutree.h).
func (k *Kernel) rcuFQSJiffies() uint64 {
	if k.settings.RCUFQSDelay == RCUFQSFixed {
		return 3
	}
	j := uint64(1)
	if k.m.HZ > 250 {
		j++
	}
	if k.m.HZ > 500 {
		j++
	}
	return j + uint64(len(k.cpus)/256)
}

// rcuFQS is rcu_gp_fqs() when the GP kthread's wait times out on c:
// report the quiescent state of every CPU still owed that is in an
// extended quiescent state now (idle, or a nohz_full CPU in user space) or
// has passed through one since the first scan (rcu_watching_snap_save()
// and rcu_watching_snap_recheck()), then wait again
// (jiffies_till_next_fqs) if some are still owed.
func (k *Kernel) rcuFQS(c *CPU, now ktime.Time) {
	rs := &k.rcu
	if rs.gpSeq&1 == 0 {
		return
	}
	first := rs.fqsFirst
	rs.fqsFirst = false
	for _, o := range k.cpus {
		d := o.rcu()
		if !d.owesQS {
			continue
		}
		switch {
		case o.inEQS():
		case first || !d.snapped:
			d.snap, d.snapped = d.eqs, true
			continue
		case d.eqs == d.snap:
			continue
		}
		d.coreNeedsQS = false
		k.rcuReportQS(o, now)
		if rs.gpSeq&1 == 0 {
			return // that was the last one
		}
	}
	k.modTimer(c, now, rs.fqs, k.tk.jiffies+k.rcuFQSJiffies())
}

// inEQS: the CPU is in an extended quiescent state, where RCU does not
// watch it: in its idle state (not handling an interrupt), or a nohz_full
// CPU running user code (rcu_user_enter()).
func (c *CPU) inEQS() bool {
	switch c.mode {
	case modeIdle:
		return true
	case modeTask:
		return c.isNohzFull() && c.rq.curr != nil && c.rq.curr.segUser
	}
	return false
}

// rcuReportQS is rcu_report_qs_rdp() (c passed a quiescent state for the
// running grace period) or the FQS scan's report for c: it clears c's bit in the leaf's qsmask (rcu_report_qs_rnp());
// the last one ends the grace period: rcu_report_qs_rsp() wakes the GP
// kthread, whose rcu_gp_cleanup() ends it and, if a CPU's callbacks wait
// for a later one, starts the next (rcu_gp_init() again).
func (k *Kernel) rcuReportQS(c *CPU, now ktime.Time) {
	rs := &k.rcu
	d := c.rcu()
	if !d.owesQS {
		return
	}
	d.owesQS = false
	if rs.owing--; rs.owing > 0 {
		return
	}
	rs.gpSeq++ // the grace period ended
	k.delTimer(c, now, rs.fqs)
	for _, o := range k.cpus {
		od := o.rcu()
		if od.wait[0].n > 0 && od.wait[0].target > rs.gpSeq || od.wait[1].n > 0 {
			k.rcuGPStart(c, now)
			return
		}
	}
}

// rcuIdleEnter counts c's entry into an extended quiescent state.
func (c *CPU) rcuIdleEnter() { c.rcu().eqs++ }
