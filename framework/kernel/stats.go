package kernel

import "github.com/tickemu/tickemu/framework/metrics"

// Interned names of the counters on the hot path (metrics.Intern): counting
// must not hash a string per timer expiry.
var (
	cntHRStart                  = metrics.Intern("hrtimer_start")
	cntHRCancel                 = metrics.Intern("hrtimer_cancel")
	cntHRExpire                 = metrics.Intern("hrtimer_expire")
	cntHRExpireSoft             = metrics.Intern("hrtimer_expire_soft")
	cntHRInterrupts             = metrics.Intern("hrtimer_interrupts")
	cntHRRetries                = metrics.Intern("hrtimer_retries")
	cntHRHangs                  = metrics.Intern("hrtimer_hangs")
	cntHRMaxHangNS              = metrics.Intern("hrtimer_max_hang_delay_ns")
	cntLocalTimerIRQ            = metrics.Intern("local_timer_interrupts")
	cntDevWrites                = metrics.Intern("device_writes")
	cntDevWriteCost             = metrics.Intern("device_write_cost_ns")
	cntDevRetries               = metrics.Intern("device_retries")
	cntDevETIME                 = metrics.Intern("device_etime")
	cntWakeups                  = metrics.Intern("wakeups")
	cntCtxSwitches              = metrics.Intern("context_switches")
	cntTicks                    = metrics.Intern("ticks")
	cntTimerStart               = metrics.Intern("timer_start")
	cntTimerCancel              = metrics.Intern("timer_cancel")
	cntTimerExpire              = metrics.Intern("timer_expire")
	cntWheelRuns                = metrics.Intern("wheel_runs")
	cntWheelIters               = metrics.Intern("wheel_iterations")
	cntWheelCascades            = metrics.Intern("wheel_cascades")
	cntWheelMaxGap              = metrics.Intern("wheel_max_gap_jiffies")
	cntWheelMaxRun              = metrics.Intern("wheel_max_run_ns")
	cntIPISent                  = metrics.Intern("ipi_sent")
	cntIPIResched               = metrics.Intern("ipi_resched")
	cntIdleExitLat              = metrics.Intern("idle_exit_latency_ns")
	cntIdleEnterPoll            = metrics.Intern("idle_enter:poll")
	cntIdleExits                = metrics.Intern("idle_exits")
	cntTickStops                = metrics.Intern("tick_stops")
	cntTickRestarts             = metrics.Intern("tick_restarts")
	cntTickRetains              = metrics.Intern("tick_retains")
	cntTickKeepTimer            = metrics.Intern("tick_keep:timer")
	cntTickKeepRCU              = metrics.Intern("tick_keep:rcu")
	cntTickKeepSoftirq          = metrics.Intern("tick_keep:softirq")
	cntTickKeepIRQWork          = metrics.Intern("tick_keep:irq_work")
	cntRCUCallbacks             = metrics.Intern("rcu_callbacks")
	cntRCUInvoked               = metrics.Intern("rcu_callbacks_invoked")
	cntRCUGPs                   = metrics.Intern("rcu_grace_periods")
	cntDeviceIRQs               = metrics.Intern("device_interrupts")
	cntSoftirq                  [nrSoftirqs]metrics.Name
	cntBroadcastEnter           = metrics.Intern("broadcast_enter")
	cntBroadcastDeviceWrites    = metrics.Intern("broadcast_device_writes")
	cntBroadcastExit            = metrics.Intern("broadcast_exit")
	cntBroadcastInterrupts      = metrics.Intern("broadcast_interrupts")
	cntBroadcastIpis            = metrics.Intern("broadcast_ipis")
	cntBroadcastWakeDelayNs     = metrics.Intern("broadcast_wake_delay_ns")
	cntPosixTimerFires          = metrics.Intern("posix_timer_fires")
	cntPosixTimerAlreadyPending = metrics.Intern("posix_timer_already_pending")
	cntSignalsStaleDelivered    = metrics.Intern("signals_stale_delivered")
	cntItimerRealFires          = metrics.Intern("itimer_real_fires")
	cntSignalsDropped           = metrics.Intern("signals_dropped")
	cntSignalsIgnored           = metrics.Intern("signals_ignored")
	cntSignalsDelivered         = metrics.Intern("signals_delivered")
	cntPosixTimerOverruns       = metrics.Intern("posix_timer_overruns")
	cntClockWasSet              = metrics.Intern("clock_was_set")
	cntClockWasSetIPIs          = metrics.Intern("clock_was_set_ipis")
	cntSyscallRestarts          = metrics.Intern("syscall_restarts")
	cntJiffiesMaxStale          = metrics.Intern("jiffies_max_stale_ns")
	cntSchedTickRemote          = metrics.Intern("sched_tick_remote")
	cntTimerMigrations          = metrics.Intern("timer_migrations")
	cntRemoteExpiries           = metrics.Intern("remote_expiries")
	cntTmigrRemoteCPUs          = metrics.Intern("tmigr_remote_cpus")
)

// Slots of a CPU's counter block (cpuCells.b), the counters of the
// per-wakeup path: an interrupt's, a task's sleep, the idle entry and exit,
// tick_restarts. idle_enter:poll is one of them, also for an idle state
// named "poll", which shares the counter (cpuCells.countIdleEnter);
// ipi_resched, rare, is a cell.
const (
	cDevWrites = iota
	cDevWriteCost
	cLocalTimerIRQ
	cHRInterrupts
	cHRRetries
	cHRExpire
	cWakeups
	cCtxSwitches
	cHRStart
	cTickRetains
	cIdleEnterPoll
	cIdleExits
	cIdleExitLat
	cTickStops
	cHRCancel
	cTickRestarts
	cTicks
	// A POSIX timer's expiry and its signal (posix-signals: every one).
	cPosixTimerFires
	cSignalsDelivered
	cPosixTimerOverruns
	cPosixTimerAlreadyPending
	cSignalsStaleDelivered
	cSignalsDropped
	numBlockCounters
)

// blockNames names the slots.
var blockNames = [numBlockCounters]metrics.Name{
	cDevWrites: cntDevWrites, cDevWriteCost: cntDevWriteCost, cLocalTimerIRQ: cntLocalTimerIRQ,
	cHRInterrupts: cntHRInterrupts, cHRRetries: cntHRRetries, cHRExpire: cntHRExpire, cWakeups: cntWakeups,
	cCtxSwitches: cntCtxSwitches, cHRStart: cntHRStart, cTickRetains: cntTickRetains,
	cIdleExits: cntIdleExits, cIdleExitLat: cntIdleExitLat, cTickStops: cntTickStops, cTickRestarts: cntTickRestarts,
	cHRCancel: cntHRCancel, cTicks: cntTicks, cIdleEnterPoll: cntIdleEnterPoll,
	cPosixTimerFires: cntPosixTimerFires, cSignalsDelivered: cntSignalsDelivered, cPosixTimerOverruns: cntPosixTimerOverruns,
	cPosixTimerAlreadyPending: cntPosixTimerAlreadyPending, cSignalsStaleDelivered: cntSignalsStaleDelivered,
	cSignalsDropped: cntSignalsDropped,
}

// cpuCells are a CPU's counters on the per-wakeup path, resolved once so
// that counting is an add, not a lookup by name and CPU. The fixed ones are
// a metrics.Block at the start of the CPU (so on a 64-byte boundary:
// newCPUs places every CPU on one): an
// event's counts touch one or two of its lines instead of a 16-byte cell
// and a pointer each.
type cpuCells struct {
	b          metrics.Block // by slot (c* constants)
	ipiResched *metrics.Cell
	// idleEnter and idleResidency are by idle state; idleEnter is nil for
	// a state named "poll", whose entries are idle_enter:poll's.
	idleEnter, idleResidency []*metrics.Cell
	softirq                  [nrSoftirqs]*metrics.Cell
}

// countIdleEnter counts an entry into idle state s (-1: polling).
func (x *cpuCells) countIdleEnter(s int) {
	if s >= 0 && x.idleEnter[s] != nil {
		x.idleEnter[s].Add(1)
		return
	}
	x.b.Add(cIdleEnterPoll, 1)
}

// init binds x's block and resolves its cells, on cpu of c.
func (x *cpuCells) init(c *metrics.Counters, cpu int, idle idleNames) {
	c.Bind(&x.b, cpu, blockNames[:]...)
	x.ipiResched = c.Cell(cntIPIResched, cpu)
	for i := range idle.enter {
		var enter *metrics.Cell
		if idle.enter[i] != cntIdleEnterPoll {
			enter = c.Cell(idle.enter[i], cpu)
		}
		x.idleEnter = append(x.idleEnter, enter)
		x.idleResidency = append(x.idleResidency, c.Cell(idle.residency[i], cpu))
	}
	for v := range x.softirq {
		x.softirq[v] = c.Cell(cntSoftirq[v], cpu)
	}
}

// idleNames are the interned per-state counter names of a machine.
type idleNames struct{ enter, residency []metrics.Name }

func newIdleNames(states []IdleState) idleNames {
	var n idleNames
	for _, s := range states {
		n.enter = append(n.enter, metrics.Intern("idle_enter:"+s.Name))
		n.residency = append(n.residency, metrics.Intern("idle_residency_ns:"+s.Name))
	}
	return n
}

func init() {
	for v, n := range softirqNames {
		cntSoftirq[v] = metrics.Intern("softirq_" + n)
	}
}
