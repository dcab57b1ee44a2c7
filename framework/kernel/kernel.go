// Package kernel is tickemu's model of the Linux timekeeping path around the
// plugins: CPUs and their contexts (irq, softirq, task, idle), the local timer
// interrupt, softirqs, tick-sched with NO_HZ, idle states and tick broadcast,
// a scheduler, tasks running workload programs, nanosleep, POSIX timers and
// signals. It is one package because these parts call each other constantly, as
// the kernel's do; each file holds one of them and names the kernel code it follows.
//
// Execution model. Each CPU is a state machine driven by events of a sim.Queue.
// Interrupt and softirq work runs to completion as one "activity": the engine
// computes its whole timeline at once (asking plugins for their parts), the CPU
// is then busy until the activity ends, and interrupts that arrive meanwhile are
// latched and taken when it ends, as with interrupts disabled. Divergence:
// softirqs run with interrupts enabled in Linux, except under locks such as the
// timer base lock that __run_timers() holds for its catch-up walk; the model keeps
// the whole softirq pass non-interruptible. Task work is preemptible: an interrupt
// pushes the rest of the current task segment back by the activity's length.
package kernel

import (
	"fmt"

	"github.com/rs/zerolog"
	"github.com/tickemu/tickemu/framework/clockevents"

	"github.com/tickemu/tickemu/framework/metrics"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/eras"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/simrand"
	"github.com/tickemu/tickemu/framework/sim"
	"github.com/tickemu/tickemu/framework/tmigr"
	"github.com/tickemu/tickemu/framework/trace"
)

// Machine is the simulated hardware and boot configuration.
type Machine struct {
	CPUs       int
	HZ         int
	NoHZ       string // "off", "idle" or "full"
	NoHZFull   []int
	IsolCPUs   []int
	HighRes    bool
	IdleStates []IdleState
}

// IdleState is one cpuidle state (drivers/idle/intel_idle.c tables).
type IdleState struct {
	Name            string
	ExitLatency     int64 // ns
	TargetResidency int64 // ns
	StopsLocalTimer bool  // entering it needs the tick broadcast when the local device has C3STOP
}

// Plugins are the plugin instances a kernel runs with.
type Plugins struct {
	Wheel     sdk.TimerBase
	HRTimer   sdk.HRTimerBase
	Local     *clockevents.Device // per-CPU local timer, one channel per CPU
	Broadcast *clockevents.Device // tick broadcast device (channel 0), or nil
	// Governor is the cpuidle governor; nil picks states with the
	// always_stop rule in the engine (every idle entry stops the tick).
	Governor sdk.Governor
}

// Options configure a Kernel.
type Options struct {
	Machine  Machine
	Settings KernelSettings
	Plugins  Plugins
	Seed     uint64
	Trace    *trace.Writer // nil: no trace
	Log      zerolog.Logger
	// Release is the kernel release the run models (kernel.version), zero
	// when none is named: the trace names and prints what that release's
	// tracepoints do (trace.ABIAt).
	Release eras.Release
}

// Kernel is one simulated machine, composed of named parts: the event queue;
// the configuration it was built with (kernelConfig); the host's side of each
// plugin kind (wheelHost, hrtHost, clockDevices, idleGovernor); timer
// placement (timerPlacement); the CPUs; the machine-wide state of the
// kernel's subsystems (timekeeping, RCU, device interrupts, the tables of
// timers, tasks and processes); and what the run reports. The parts are
// embedded, so code reads k.wheel or k.tasks wherever it lives.
type Kernel struct {
	q sim.Queue
	kernelConfig
	timerPlacement
	wheelHost
	hrtHost
	clockDevices
	idleGovernor

	cpus []*CPU
	tk   timekeeping
	rcu  rcuState // Tree RCU's grace periods and callbacks (rcu.go)
	// extIRQ holds each CPU's pending device interrupts (devirq.go),
	// allocated by the first one.
	extIRQ [][]extIRQ
	objectTables

	// Stats.
	Counters    metrics.Counters
	CatchupGaps metrics.Dist
	rs          runState
}

// kernelConfig is what New was given, and what follows from it alone.
type kernelConfig struct {
	m        Machine
	costs    Costs
	settings KernelSettings
	signals  signalEra // the POSIX timer signal rules of settings.PosixTimerSignals
	seed     uint64
	log      zerolog.Logger
	tr       *trace.Writer
	abi      trace.ABI // the tracepoints of Options.Release
	// nohz: NO_HZ is on (Machine.NoHZ "idle" or "full"), so an idle CPU may
	// stop its tick; read on every idle entry.
	nohz     bool
	tickNsec int64
}

// timerPlacement is where timers are queued and who expires them (timers.go,
// migration.go). migrate: TimerMigrationActive; place is placement()'s
// answer. tm is the 6.9+ timer-migration hierarchy (used once the wheel
// reports split bases: split), nil on one CPU or without NO_HZ.
type timerPlacement struct {
	migrate bool
	place   sdk.Placement
	tm      *tmigr.Hierarchy
	split   bool
}

// wheelHost is the timer wheel plugin and what the host keeps of its answers.
type wheelHost struct {
	wheel sdk.TimerBase
	// wheelInPlace is wheel's in-place NextTimerInterrupt, if it has one;
	// nextTimer is the answer it writes.
	wheelInPlace sdk.InPlaceNextTimer
	nextTimer    sdk.NextTimerResult
	// wheelRepeatFree: the wheel keeps sdk.RepeatFreeNextTimer's promise, so
	// a CPU's NextTimerInterrupt repeated at the same jiffies with no wheel
	// call in between is answered from the CPU's last answer (CPU.ntiGen).
	// wheelGen counts the calls that end such a repeat: ModTimer, DelTimer,
	// RunTimers, ExpireRemote, and jiffies advancing.
	wheelRepeatFree bool
	wheelGen        uint64
	// repeatSkips counts down the repeats skipped before the next one is
	// asked anyway (repeatAuditEvery): the contract checker then checks
	// the promise on it, so a plugin that breaks it is caught, not trusted.
	repeatSkips uint32
}

// hrtHost is the hrtimer plugin.
type hrtHost struct {
	hrt sdk.HRTimerBase
	// hrtStarter is hrt's sdk.NextEventStarter, if it has one: where one
	// kernel event asks the hrtimer's and the wheel's next event (idle
	// entry, the low-res tick stop), the hrtimer's question goes out first
	// and its answer is read after the wheel's call.
	hrtStarter sdk.NextEventStarter
}

// clockDevices is the clockevent devices: the per-CPU local timer, and the
// tick broadcast device with the broadcast core and its event (nil without).
type clockDevices struct {
	local *clockevents.Device
	bcDev *clockevents.Device
	bcast *clockevents.Broadcast
	bcEv  *sim.Event
}

// idleGovernor is the cpuidle side: the governor plugin, the driver's
// states (POLL first), the PM QoS latency limit and what the idle path
// precomputes (idle.go, cpuidle.go).
type idleGovernor struct {
	gov        sdk.Governor
	govStates  []sdk.CPUIdleState
	govName    string
	qosLatency *int64
	idleNames  idleNames
	utilDecay  utilDecay // updateUtil's decay factors by interval
}

// objectTables is the kernel's objects by id: timers by TimerID, tasks and
// processes with the next pid.
type objectTables struct {
	nextTimerID sdk.TimerID
	hrtimers    []*HRTimer    // by TimerID; nil for ids of wheel timers
	wtimers     []*WheelTimer // by TimerID; nil for ids of hrtimers
	tasks       []*Task
	procs       []*Process
	nextPid     int
}

// timekeeping is the machine-wide tick and clock state: the globals of
// kernel/time/tick-common.c and tick-sched.c (jiffies and who updates them)
// and the timekeeper's clock offsets (kernel/time/timekeeping.c).
type timekeeping struct {
	jiffies           uint64
	jiffiesBase       uint64     // jiffies at boot (INITIAL_JIFFIES)
	lastJiffiesUpdate ktime.Time // last_jiffies_update
	tickNextPeriod    ktime.Time // tick_next_period
	tickDoTimerCPU    int        // tick_do_timer_cpu; -1 = TICK_DO_TIMER_NONE
	nohzFullRunning   bool       // tick_nohz_full_running: nohz_full= names a CPU
	offsets           sdk.ClockOffsets
	clockSeq          uint64 // clock_was_set sequence
}

// runState is what a run leaves besides the counters and the time per
// context (CPU.ctxNS): where and why it ended, the --breaktrace threshold and
// the progress callback.
type runState struct {
	end      ktime.Time
	fault    error
	stopErr  error
	breakNS  int64
	broke    string
	progress func(now ktime.Time, events uint64)
}

// New builds a kernel; call Boot, add workloads, then Run.
func New(o Options) (*Kernel, error) {
	if err := checkOptions(o); err != nil {
		return nil, err
	}
	m := o.Machine
	if m.NoHZ == "" {
		m.NoHZ = "idle"
	}
	k := &Kernel{
		kernelConfig: kernelConfig{m: m, costs: o.Settings.Costs, settings: o.Settings, seed: o.Seed, log: o.Log, tr: o.Trace,
			tickNsec: ktime.TickNsec(m.HZ)},
		wheelHost:    wheelHost{wheel: o.Plugins.Wheel},
		hrtHost:      hrtHost{hrt: o.Plugins.HRTimer},
		clockDevices: clockDevices{local: o.Plugins.Local, bcDev: o.Plugins.Broadcast},
		idleGovernor: idleGovernor{gov: o.Plugins.Governor},
		objectTables: objectTables{nextPid: 1000},
		tk:           bootTimekeeping(m.HZ),
	}
	k.nohz = m.NoHZ != "off"
	k.wheelInPlace, _ = k.wheel.(sdk.InPlaceNextTimer)
	if rf, ok := k.wheel.(sdk.RepeatFreeNextTimer); ok {
		k.wheelRepeatFree = rf.NextTimerRepeatFree()
	}
	k.hrtStarter, _ = k.hrt.(sdk.NextEventStarter)
	k.signals = newSignalEra(o.Settings.PosixTimerSignals)
	k.abi = trace.ABIAt(o.Release)
	k.migrate = TimerMigrationActive(o.Settings, m)
	if m.NoHZ != "off" && m.CPUs > 1 {
		// tmigr_init() builds the hierarchy on SMP; it runs while NO_HZ is
		// active (is_timers_nohz_active()), whatever timer_migration says:
		// since 6.9 the sysctl only gates hrtimer placement.
		k.tm = tmigr.New(m.CPUs)
	}
	if k.costs == (Costs{}) {
		k.costs = DefaultCosts()
	}
	// Lines are emitted with the (possibly future) time their activity
	// computes; the writer sorts them and writes those before sim time.
	k.tr.SetClock(k.q.Now)
	k.idleNames = newIdleNames(m.IdleStates)
	nohzFull := nohzFullCPUs(m)
	k.tk.nohzFullRunning = len(nohzFull) > 0
	k.cpus = newCPUs(k, m.CPUs, nohzFull)
	k.rcu.cpus = make([]rcuData, m.CPUs)
	if k.bcDev != nil {
		b, err := clockevents.NewBroadcast(k.bcDev, 0, k.local)
		if err != nil {
			return nil, fmt.Errorf("kernel: broadcast device: %w", err)
		}
		k.bcast = b
		k.bcEv = sim.NewEvent("broadcast", k.broadcastFired)
	}
	return k, nil
}

// bootTimekeeping is the tick and clock state at boot for a kernel of HZ hz:
// jiffies at INITIAL_JIFFIES, the first tick period due one tick in, and the
// boot CPU 0 holding the do_timer duty (tick_setup_device(): the first CPU to
// set up its tick device takes it).
func bootTimekeeping(hz int) timekeeping {
	j := ktime.InitialJiffies(hz)
	return timekeeping{jiffies: j, jiffiesBase: j, tickNextPeriod: ktime.Time(ktime.TickNsec(hz)), tickDoTimerCPU: 0}
}

// nohzFullCPUs is the nohz_full= mask of machine m: empty unless its NO_HZ
// mode is full.
func nohzFullCPUs(m Machine) map[int]bool {
	nohzFull := map[int]bool{}
	if m.NoHZ == "full" {
		for _, c := range m.NoHZFull {
			nohzFull[c] = true
		}
	}
	return nohzFull
}

// checkOptions refuses a machine or a plugin set the kernel cannot boot:
// no CPUs, an HZ no kernel offers, a required plugin missing, or a local
// clockevent device without a per-CPU channel for every CPU.
func checkOptions(o Options) error {
	m := o.Machine
	if m.CPUs <= 0 {
		return fmt.Errorf("kernel: machine has %d CPUs", m.CPUs)
	}
	if !ktime.ValidHZ(m.HZ) {
		return fmt.Errorf("kernel: HZ %d is not one of 100, 250, 300, 1000", m.HZ)
	}
	local := o.Plugins.Local
	if o.Plugins.Wheel == nil || o.Plugins.HRTimer == nil || local == nil {
		return fmt.Errorf("kernel: wheel, hrtimer and local clockevent plugins are required")
	}
	if ch := local.Channels(); ch < m.CPUs || !local.Has(sdk.FeatPerCPU) {
		return fmt.Errorf("kernel: local clockevent device %q has %d channels and is not per-CPU-capable for %d CPUs", local.Name(), ch, m.CPUs)
	}
	return nil
}

// Now is the current simulated time.
func (k *Kernel) Now() ktime.Time { return k.q.Now() }

// CPUs is the number of CPUs.
func (k *Kernel) CPUs() int { return len(k.cpus) }

// HZ is the tick rate.
func (k *Kernel) HZ() int { return k.m.HZ }

// TickNsec is TICK_NSEC.
func (k *Kernel) TickNsec() int64 { return k.tickNsec }

// Jiffies is the global jiffies value.
func (k *Kernel) Jiffies() uint64 { return k.tk.jiffies }

// Costs returns the framework costs in force.
func (k *Kernel) Costs() Costs { return k.costs }

// Rand returns a random stream derived from the run seed and name.
func (k *Kernel) Rand(name string) *simrand.Rand { return simrand.New(k.seed, name) }

// Trace returns the trace writer (nil when tracing is off).
func (k *Kernel) Trace() *trace.Writer { return k.tr }

// At schedules fn at time at (for workloads: external events such as a clock
// jump or a packet arrival). fn runs outside any CPU context.
func (k *Kernel) At(at ktime.Time, name string, fn func(now ktime.Time)) {
	k.q.Schedule(sim.NewEvent(name, fn), at)
}

// Boot brings every CPU up at time 0: clockevent devices in oneshot (high-res)
// or periodic/oneshot low-res mode, and the tick started on its TICK_NSEC grid
// (tick_setup_sched_timer(), tick_init_jiffy_update()).
func (k *Kernel) Boot() {
	for _, c := range k.cpus {
		c.boot(0)
	}
	k.startSchedTickRemote()
	k.enableGovernor()
	for _, c := range k.cpus {
		c.kick(0)
	}
}

// Run simulates until the given time. A plugin transport failure or contract
// violation, or a livelock (sim's progress watchdog: too many events at one
// instant), ends the run with an error; completed state stays readable.
func (k *Kernel) Run(until ktime.Time) (err error) {
	defer func() {
		if r := recover(); r != nil {
			switch f := r.(type) {
			case *sdk.TransportError:
				err, k.rs.fault = f, f
				return
			case *sdk.ContractError:
				err, k.rs.fault = f, f
				return
			case *sim.LivelockError:
				// The progress watchdog: the run stopped advancing time.
				err, k.rs.fault = f, f
				return
			}
			panic(r)
		}
	}()
	if k.rs.progress == nil {
		k.q.RunUntil(until)
	} else {
		// In slices of simulated time, reporting after each: the slices
		// change nothing (no event is added; the clock only moves to a
		// slice's end between events).
		step := max((until-k.q.Now())/progressSlices, 1)
		for t := k.q.Now(); t < until && !k.q.Stopped(); {
			t = min(t+step, until)
			k.q.RunUntil(t)
			k.rs.progress(k.q.Now(), k.q.Pops())
		}
	}
	if k.q.Stopped() {
		until = k.q.Now()
	}
	k.rs.end = until
	if until > k.tk.tickNextPeriod {
		// How stale jiffies are at the end counts too (nobody updated them).
		k.Counters.MaxN(cntJiffiesMaxStale, -1, int64(until-k.tk.tickNextPeriod))
	}
	for _, c := range k.cpus {
		c.accountUntil(until)
	}
	return k.rs.stopErr
}

// progressSlices is how many times a run with a progress function reports.
const progressSlices = 1000

// SetProgress makes Run call fn about a thousand times, spread over the
// simulated time, with the time reached and the events processed.
func (k *Kernel) SetProgress(fn func(now ktime.Time, events uint64)) { k.rs.progress = fn }

// SetBreak sets the --breaktrace threshold: a latency workload that
// measures a wakeup slower than ns calls Break (0: off).
func (k *Kernel) SetBreak(ns int64) { k.rs.breakNS = ns }

// BreakThreshold is the --breaktrace threshold in ns, 0 when off.
func (k *Kernel) BreakThreshold() int64 { return k.rs.breakNS }

// Break ends Run after the current event without an error, as cyclictest -b
// stops at the first latency over its threshold; why says what broke.
func (k *Kernel) Break(why string) {
	if k.rs.broke == "" {
		k.rs.broke = why
	}
	k.q.Stop()
}

// TraceMark writes msg to the trace as task t's write to trace_marker
// (tracing_mark_write(): the ftrace print event, "tracing_mark_write: MSG"),
// whatever the event filter: cyclictest -b marks the trace so before it
// stops tracing.
func (k *Kernel) TraceMark(now ktime.Time, t *Task, msg string) {
	if k.tr == nil {
		return
	}
	k.tr.Mark(now, trace.Ctx{Comm: t.Comm, Pid: t.Pid, CPU: t.cpu.id, Flags: trace.Flags(false, false, false, 0)}, msg)
}

// Broke says why the run was broken off (Break), "" when it ran to the end.
func (k *Kernel) Broke() string { return k.rs.broke }

// Stop ends Run after the current event with err (a trace that cannot be
// written); Run returns err.
func (k *Kernel) Stop(err error) {
	if k.rs.stopErr == nil {
		k.rs.stopErr = err
	}
	k.q.Stop()
}

// SetPoll makes Run call fn every sim.PollEvents events, with the simulated
// time reached; an error from fn ends the run after the current event, as
// Stop does (a wall-clock bound, an interrupt). fn must not change the
// simulation: a run that is not stopped is the same with or without it.
func (k *Kernel) SetPoll(fn func(now ktime.Time) error) {
	if fn == nil {
		k.q.SetPoll(nil)
		return
	}
	k.q.SetPoll(func() {
		if err := fn(k.q.Now()); err != nil {
			k.Stop(err)
		}
	})
}

// End is the simulated time the last Run reached: its limit, or where it
// was stopped.
func (k *Kernel) End() ktime.Time { return k.rs.end }

// Events is the number of simulation events processed.
func (k *Kernel) Events() uint64 { return k.q.Pops() }

// allocTimerID returns a fresh timer id.
func (k *Kernel) allocTimerID() sdk.TimerID {
	k.nextTimerID++
	return k.nextTimerID
}

// ContextTimes returns, per CPU, the ns spent idle, in tasks, in hard irq and
// in softirq (in that order).
func (k *Kernel) ContextTimes() [][4]int64 {
	out := make([][4]int64, len(k.cpus))
	for i := range k.cpus {
		for j := 0; j < 4; j++ {
			out[i][j] = k.cpus[i].ctxNS[j]
		}
		out[i][ctxSoftirq] += k.cpus[i].ctxNS[ctxKsoftirqd]
	}
	return out
}
