package sdk

import "github.com/tickemu/tickemu/framework/sdk/ktime"

// NoLatencyLimit is the LatencyReq of a CPU without a PM QoS request: any
// exit latency is acceptable.
const NoLatencyLimit = int64(ktime.Max)

// CPUIdleState is one struct cpuidle_state as a governor sees it. The host
// lists a CPU's states shallowest first; on x86 (the machines tickemu models)
// state 0 is the polling loop (poll_idle(), CPUIDLE_FLAG_POLLING) with no
// exit latency or target residency, and the machine's idle_state blocks follow.
type CPUIdleState struct {
	Name            string
	ExitLatency     int64 // exit_latency_ns
	TargetResidency int64 // target_residency_ns
	Polling         bool  // CPUIDLE_FLAG_POLLING
	// StopsLocalTimer is CPUIDLE_FLAG_TIMER_STOP: entering the state needs the
	// tick broadcast (the host handles it, falling back to a shallower state).
	StopsLocalTimer bool
}

// IdleSelect is what cpuidle_idle_call() hands the governor's ->select() on
// one idle entry, with the data the kernel's governors read through helpers.
type IdleSelect struct {
	CPU int
	Now ktime.Time // idle entry (ts->idle_entrytime)
	// SleepLength is tick_nohz_get_sleep_length(): ns until the next timer
	// event if the tick were stopped (ktime.Max-sized when there is none); it
	// equals DeltaTick when the tick cannot be stopped (a timer in the next
	// tick period, or the CPU must keep ticking).
	SleepLength int64
	// DeltaTick is its delta_next output: ns until the event the local device
	// is programmed for, the tick included while it runs.
	DeltaTick int64
	// TickStopped is tick_nohz_tick_stopped(): the tick was already stopped
	// by an earlier idle entry.
	TickStopped bool
	// LatencyReq is cpuidle_governor_latency_req(): the PM QoS CPU latency
	// limit in ns (/dev/cpu_dma_latency), NoLatencyLimit when none.
	LatencyReq int64
	// TickNsec is TICK_NSEC.
	TickNsec int64
	// Util is sched_cpu_util() in SCHED_CAPACITY_SCALE units (0..1024): the
	// host's PELT-like average of the CPU's task time (32 ms half-life).
	Util int64
}

// CapacityScale is SCHED_CAPACITY_SCALE, the capacity of a CPU in Util units.
const CapacityScale = 1024

// IdleChoice is ->select()'s answer.
type IdleChoice struct {
	// State indexes the CPU's states as given to Enable.
	State int
	// StopTick is the *stop_tick output: false asks cpuidle_idle_call() for
	// tick_nohz_idle_retain_tick() (the tick keeps running) unless it is
	// already stopped; true for tick_nohz_idle_stop_tick().
	StopTick bool
	// Cost is the simulated ns the selection took on the CPU.
	Cost int64
}

// IdleReflect is what the governor learns after the CPU woke up: the
// ->reflect(dev, index) call and the cpuidle_device fields governors read at
// their next ->select() (last_state_idx, last_residency_ns).
type IdleReflect struct {
	CPU int
	// State is the state entered (it differs from the choice when the tick
	// broadcast refused a state that stops the local timer).
	State int
	// Residency is last_residency_ns: from entering the state until the CPU
	// ran again, the exit latency included (cpuidle_enter_state()).
	Residency int64
	// Span is the time from ->select() to ->reflect(), what teo measures with
	// local_clock() (entry bookkeeping included).
	Span int64
	// TickWakeup is tick_nohz_idle_got_tick(): the tick woke the CPU.
	TickWakeup bool
}

// Governor models a cpuidle governor (struct cpuidle_governor,
// drivers/cpuidle/governors/): it picks the idle state of every idle entry and
// whether the tick is stopped for it. One plugin value serves every CPU.
type Governor interface {
	Plugin
	// Enable is ->enable(drv, dev) for cpu with its driver's states, before
	// the CPU first goes idle. The host calls it for every CPU that has idle
	// states; a machine without idle_state blocks has no cpuidle driver and
	// never asks the governor (cpuidle_not_available(): the tick is stopped
	// and the CPU polls).
	Enable(cpu int, states []CPUIdleState)
	// Select is ->select(drv, dev, &stop_tick).
	Select(req IdleSelect) IdleChoice
	// Reflect is ->reflect(dev, index) after the CPU left the state.
	Reflect(r IdleReflect)
}
