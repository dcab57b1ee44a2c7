package wheel

import (
	"github.com/tickemu/tickemu/framework/sdk"
)

// Version is the plugin's own semantic version.
const Version = "0.1.0"

// maxCPUs is TIMER_CPUMASK + 1 (include/linux/timer.h, 4.8+): the CPU number
// must fit the timer's flag word.
const maxCPUs = 1 << 18

// nextTimerMaxDelta is NEXT_TIMER_MAX_DELTA (TIMER_NEXT_MAX_DELTA in 6.16+):
// the distance an empty base reports as its next expiry.
const nextTimerMaxDelta = 1<<30 - 1

// Wheel models the per-CPU timer wheel bases of kernel/time/timer.c; it
// implements sdk.TimerBase. Create it with New; it is usable after Configure.
//
// One Wheel models every CPU. It is a pure state machine: not safe for
// concurrent use, and every answer depends only on the calls made so far.
type Wheel struct {
	c   *common
	eng engine
	// gen counts the calls that change any base (ModTimer, DelTimer,
	// RunTimers, ExpireRemote); next caches each CPU's last
	// NextTimerInterrupt answer as a repeat of it would give: with the
	// levels layout a second call at the same jiffies with no change in
	// between recalculates nothing (the first stored next_expiry and
	// moved the clocks) and answers the same at no cost. The idle entries
	// of a CPU woken more often than the tick ask it so.
	gen  uint64
	next []nextCache
}

// nextCache is a CPU's last NextTimerInterrupt: at jiffies with gen, and
// the answer a repeat gets (its cost is 0), in one 64-byte line: the
// answer's wheel state with Split folded into the low bit of the pending
// count (a count of timers, far below 2^63), and gen + 1 (0: empty; gen
// counts calls, so it never reaches 2^64 - 1).
type nextCache struct {
	jiffies               uint64
	genPlus1              uint64
	next                  uint64
	raiseAt, nextExpiry   uint64
	pendingSplit          uint64 // Pending << 1 | Split
	localNext, globalNext uint64
}

// put records answer r (whose cost a repeat does not pay) at jiffies and gen.
func (nc *nextCache) put(jiffies, gen uint64, r *sdk.NextTimerResult) {
	nc.jiffies, nc.genPlus1, nc.next = jiffies, gen+1, r.Next
	st := &r.State
	nc.raiseAt, nc.nextExpiry, nc.localNext, nc.globalNext = st.RaiseAt, st.NextExpiry, st.LocalNext, st.GlobalNext
	nc.pendingSplit = uint64(st.Pending) << 1
	if st.Split {
		nc.pendingSplit |= 1
	}
}

// get writes the recorded answer into r.
func (nc *nextCache) get(r *sdk.NextTimerResult) {
	r.Next, r.Cost = nc.next, 0
	st := &r.State
	st.RaiseAt, st.NextExpiry, st.LocalNext, st.GlobalNext = nc.raiseAt, nc.nextExpiry, nc.localNext, nc.globalNext
	st.Pending, st.Split = int(nc.pendingSplit>>1), nc.pendingSplit&1 != 0
}

// engine is one wheel layout. Every method works on the state in common and
// charges its cost to the meter it is given.
type engine interface {
	modTimer(cpu int, j uint64, t sdk.WheelTimer, m *meter) (wasPending bool)
	delTimer(cpu int, j uint64, id sdk.TimerID, m *meter) (wasPending bool)
	runTimers(r *run)
	nextTimerInterrupt(cpu int, j uint64, m *meter) uint64
	state(cpu int) sdk.WheelState
}

// cpuStats are the per-CPU counters reported by Counters.
type cpuStats struct {
	starts, stops, runs, expiries, iterations, cascades, moved int64
	migrated, remoteRuns, remoteExpiries                       int64
	maxGap                                                     uint64
}

// common is the state shared by both layouts. m and r are reused by every
// call: passed through the engine interface, locals would escape to the heap.
type common struct {
	opt options
	// catchup is the catch-up policy the host handed over (UsePolicy); nil
	// is the builtin the catchup attribute names, opt.catchup, asked
	// without a call.
	catchup sdk.CatchupPolicy
	timers  timerSet
	stats   []cpuStats
	m       meter
	r       run
}

// catchupMode is the catch-up policy's decision for base of cpu at a
// __run_timers() that finds jiffies j >= the base's clock clk.
func (c *common) catchupMode(cpu, base int, j, clk uint64, pending int) Catchup {
	if c.catchup == nil {
		return c.opt.catchup
	}
	d := c.catchup.Catchup(sdk.CatchupRequest{CPU: cpu, Base: base, Jiffies: j, Clk: clk, Pending: pending})
	return Catchup(d.Mode)
}

var _ sdk.PolicyUser = (*Wheel)(nil)

// UsePolicy implements sdk.PolicyUser: a catch-up policy decides each
// __run_timers() walk in place of the builtin the catchup attribute names.
// The 3.15 catchup_timer_jiffies() on enqueue and dequeue (skip_empty's)
// stays with the attribute: asking at every mod_timer() would cost a round
// trip per timer out of process.
func (w *Wheel) UsePolicy(k sdk.Kind, p sdk.Plugin) bool {
	cp, ok := p.(sdk.CatchupPolicy)
	if k != sdk.KindCatchupPolicy || !ok || w.c == nil {
		return false
	}
	w.c.catchup = cp
	return true
}

// New returns an unconfigured wheel plugin; it is the sdk.Factory constructor.
func New() sdk.Plugin { return &Wheel{} }

// Factory declares the plugin: its kind, the name `plugin = "wheel"` selects,
// and its constructor; Info and plugins/builtin take them from here.
var Factory = sdk.Factory{Kind: sdk.KindTimerBase, Name: "wheel", New: New}

// Info describes the plugin.
func (w *Wheel) Info() sdk.Info {
	return sdk.Info{
		Kind: Factory.Kind, Name: Factory.Name, Version: Version,
		Description: "Linux timer wheel (kernel/time/timer.c): the 4.8+ non-cascading levels wheel " +
			"(as of 5.9-6.8) or the 3.10 cascading wheel, with per-jiffy, empty-skip or next-expiry catch-up",
	}
}

// Schema declares the wheel block's attributes.
func (w *Wheel) Schema() sdk.Schema { return schema() }

// Configure validates the attributes and (re)initialises every CPU's bases.
// Bases are created lazily at the first call that touches them, with their
// clock at that call's jiffies, as timers_prepare_cpu() sets clk = jiffies
// when a CPU comes up.
func (w *Wheel) Configure(s sdk.Setup, cfg sdk.Config) sdk.Diagnostics {
	opt, diags := parseOptions(s, cfg)
	if diags.HasErrors() {
		return diags
	}
	c := &common{opt: opt, timers: newTimerSet(), stats: make([]cpuStats, s.CPUs)}
	w.c = c
	w.gen, w.next = 0, nil
	switch opt.layout {
	case LayoutCascade:
		// Its scan may run again on a repeat (a cached next_timer still
		// behind timer_jiffies): no cache.
		w.eng = newCascadeWheel(c, s.CPUs)
	default:
		w.eng = newLevelWheel(c, s.CPUs, s.HZ)
		w.next = make([]nextCache, s.CPUs)
	}
	return diags
}

// ModTimer is mod_timer() on cpu: add the timer or change its expiry. The
// timer ends up on cpu, on the migration target (push model), or stays on
// the CPU that held it (same bucket); Moved and CPU say where, and State is
// that CPU's. A CPU the timer left keeps a cached state that can only be
// early, never late (as the kernel's next_expiry after a dequeue).
func (w *Wheel) ModTimer(cpu int, jiffies uint64, t sdk.WheelTimer) sdk.WheelOpResult {
	w.checkCPU(cpu)
	w.gen++
	m := &w.c.m
	*m = meter{}
	was := w.eng.modTimer(cpu, jiffies, t, m)
	r := sdk.WheelOpResult{Cost: m.ns(), WasPending: was}
	var on int
	on, r.Index, r.BucketExpiry, _ = w.c.placement(t.ID)
	if on != cpu {
		r.Moved, r.CPU = true, on
		w.c.stats[on].migrated++
	}
	r.State = w.eng.state(on)
	return r
}

// targetCPU is the CPU whose base __mod_timer() queues a timer started on
// cpu: get_target_base() in the push model (the migration target when
// kernel.timer_migration is on and the timer is not pinned), cpu itself in
// the pull model (get_timer_this_cpu_base()).
func (c *common) targetCPU(cpu int, t sdk.WheelTimer) int {
	if !c.opt.timerMigration || t.Flags&sdk.TimerPinned != 0 || c.opt.migr == MigrationPull {
		return cpu
	}
	return sdk.NohzTimerTarget(cpu, c.opt.cpus, t.Placement, c.opt.housekeeping, c.opt.layout == LayoutCascade)
}

// ExpireRemote is timer_expire_remote(cpu) (6.9+): the migrator runs cpu's
// BASE_GLOBAL. Only the pull model has that base; with the push model the
// call expires nothing.
func (w *Wheel) ExpireRemote(cpu int, jiffies uint64) sdk.RunTimersResult {
	w.checkCPU(cpu)
	w.gen++
	c := w.c
	r := &c.r
	*r = run{cpu: cpu, jiffies: jiffies, expired: r.expired[:0]}
	if lw, ok := w.eng.(*levelWheel); ok && c.opt.migr == MigrationPull {
		lw.expireRemote(r)
	}
	st := &c.stats[cpu]
	st.remoteRuns++
	st.remoteExpiries += int64(len(r.expired))
	var out []sdk.WheelExpiry
	if len(r.expired) > 0 {
		out = make([]sdk.WheelExpiry, len(r.expired))
		copy(out, r.expired)
	}
	return sdk.RunTimersResult{Expired: out, Cost: r.m.ns(), Iterations: r.iterations, State: w.eng.state(cpu)}
}

// DelTimer is del_timer() (timer_delete() in 6.x). The timer is removed from
// whichever CPU holds it; the returned State is cpu's.
func (w *Wheel) DelTimer(cpu int, jiffies uint64, id sdk.TimerID) sdk.WheelOpResult {
	w.checkCPU(cpu)
	w.gen++
	m := &w.c.m
	*m = meter{}
	was := w.eng.delTimer(cpu, jiffies, id, m)
	return sdk.WheelOpResult{Cost: m.ns(), WasPending: was, State: w.eng.state(cpu)}
}

// RunTimers is run_timer_softirq() on cpu at jiffies.
//
// Expired is a fresh slice (nil when nothing expired); each entry's Offset
// counts every cost charged before that callback started, earlier callbacks
// included.
func (w *Wheel) RunTimers(cpu int, jiffies uint64) sdk.RunTimersResult {
	w.checkCPU(cpu)
	w.gen++
	c := w.c
	r := &c.r
	*r = run{cpu: cpu, jiffies: jiffies, expired: r.expired[:0]}
	w.eng.runTimers(r)
	st := &c.stats[cpu]
	st.runs++
	st.iterations += int64(r.iterations)
	st.cascades += int64(r.cascades)
	st.moved += int64(r.moved)
	if r.gap > st.maxGap {
		st.maxGap = r.gap
	}
	var out []sdk.WheelExpiry
	if len(r.expired) > 0 {
		out = make([]sdk.WheelExpiry, len(r.expired))
		copy(out, r.expired)
	}
	return sdk.RunTimersResult{
		Expired: out, Cost: r.m.ns(), Gap: r.gap, Iterations: r.iterations, Cascades: r.cascades,
		State: w.eng.state(cpu),
	}
}

// NextTimerInterrupt is get_next_timer_interrupt() at idle entry, in jiffies
// (the 3.10 form; the host converts to ns as 4.2+ does with basem).
func (w *Wheel) NextTimerInterrupt(cpu int, jiffies uint64) (r sdk.NextTimerResult) {
	w.NextTimerInterruptInto(cpu, jiffies, &r)
	return r
}

// NextTimerInterruptInto implements sdk.InPlaceNextTimer: NextTimerInterrupt
// with the answer written into *r.
func (w *Wheel) NextTimerInterruptInto(cpu int, jiffies uint64, r *sdk.NextTimerResult) {
	w.checkCPU(cpu)
	if w.next != nil {
		if nc := &w.next[cpu]; nc.jiffies == jiffies && nc.genPlus1 == w.gen+1 {
			nc.get(r)
			return
		}
	}
	m := &w.c.m
	*m = meter{}
	r.Next = w.eng.nextTimerInterrupt(cpu, jiffies, m)
	r.Cost = m.ns()
	r.State = w.eng.state(cpu)
	if w.next != nil {
		w.next[cpu].put(jiffies, w.gen, r) // levelWheel.nextOfBase charges only a recalculation
	}
}

// NextTimerRepeatFree implements sdk.RepeatFreeNextTimer: with the levels
// layout a repeat recalculates nothing and answers the same at cost 0 (the
// answers next caches); the cascade layout's scan runs again.
func (w *Wheel) NextTimerRepeatFree() bool { return w.next != nil }

// counterNames lists the per-CPU counters in report order.
var counterNames = []string{
	"starts", "stops", "runs", "expiries", "iterations", "cascades", "timers_cascaded", "max_gap",
	"migrated", "remote_runs", "remote_expiries",
}

// Counters reports, for each counter name in a fixed order, one value per
// CPU: starts (mod_timer calls that queued a timer, callback re-arms
// included), stops (del_timer calls that removed one, counted on the CPU that
// held it), runs (RunTimers calls), expiries, iterations (catch-up loop
// iterations), cascades (cascade() calls), timers_cascaded, max_gap (the
// largest catch-up gap seen, in jiffies), migrated (ModTimer calls that left
// the timer on another CPU than the caller, counted on that CPU),
// remote_runs and remote_expiries (ExpireRemote calls for the CPU and the
// timers they expired).
func (w *Wheel) Counters() []sdk.Counter {
	if w.c == nil {
		return nil
	}
	out := make([]sdk.Counter, 0, len(counterNames)*len(w.c.stats))
	for _, name := range counterNames {
		for cpu, st := range w.c.stats {
			var v int64
			switch name {
			case "starts":
				v = st.starts
			case "stops":
				v = st.stops
			case "runs":
				v = st.runs
			case "expiries":
				v = st.expiries
			case "iterations":
				v = st.iterations
			case "cascades":
				v = st.cascades
			case "timers_cascaded":
				v = st.moved
			case "max_gap":
				v = int64(st.maxGap)
			case "migrated":
				v = st.migrated
			case "remote_runs":
				v = st.remoteRuns
			case "remote_expiries":
				v = st.remoteExpiries
			}
			out = append(out, sdk.Counter{Name: name, CPU: cpu, Value: v})
		}
	}
	return out
}

// checkCPU panics on a host bug: a CPU number outside the configured machine
// or a call before Configure.
func (w *Wheel) checkCPU(cpu int) {
	if w.c == nil {
		panic("wheel: call before Configure")
	}
	if cpu < 0 || cpu >= len(w.c.stats) {
		panic("wheel: cpu out of range")
	}
}

// expire records one callback run by r: the detach overhead is charged
// before the callback starts, the declared callback cost after.
func (c *common) expire(r *run, n *timerNode, jiffy uint64) {
	r.m.add(c.opt.cost.expiry)
	r.expired = append(r.expired, sdk.WheelExpiry{ID: n.id, Offset: r.m.ns(), Jiffy: jiffy})
	r.m.addNS(n.cbCost)
	c.stats[r.cpu].expiries++
}

// rearmed marks the last recorded expiry as re-armed to expires.
func (r *run) rearmed(expires uint64) {
	e := &r.expired[len(r.expired)-1]
	e.Rearmed, e.NewExpires = true, expires
}

// Wrap-safe jiffies comparisons (include/linux/jiffies.h time_after() and
// friends on a 64-bit unsigned long).
func after(a, b uint64) bool    { return int64(b-a) < 0 }
func before(a, b uint64) bool   { return int64(a-b) < 0 }
func afterEq(a, b uint64) bool  { return int64(a-b) >= 0 }
func beforeEq(a, b uint64) bool { return int64(b-a) >= 0 }

var _ sdk.RemoteTimerBase = (*Wheel)(nil)

// placement reports where a queued timer sits, for either layout: its CPU,
// its bucket's index and the jiffy the bucket is processed at (what the
// timer_start tracepoint prints as cpu=, idx= and bucket_expiry=).
func (c *common) placement(id sdk.TimerID) (cpu, idx int, jiffy uint64, ok bool) {
	n, ok := c.timers.lookup(id)
	if !ok {
		return 0, 0, 0, false
	}
	nd := &c.timers.nodes[n]
	return int(nd.cpu), int(nd.bucket), nd.bucketExpiry, true
}

// BaseState is one timer base of a CPU as the levels layout holds it (the
// fields of struct timer_base the wheel's decisions depend on).
type BaseState struct {
	Clk, NextExpiry       uint64
	Recalc, TimersPending bool // next_expiry_recalc, timers_pending
	Count                 int  // timers queued
}

// Bases reports cpu's bases in the kernel's order, BASE_LOCAL (BASE_STD
// before 6.9), BASE_GLOBAL (pull model only) and BASE_DEF, for the levels
// layout; nil for the cascade layout or before the CPU's first call. It
// changes nothing: the differential tests against the kernel's own code
// (oracle/wheeldiff) compare it with the kernel's bases after every call.
func (w *Wheel) Bases(cpu int) []BaseState {
	w.checkCPU(cpu)
	lw, ok := w.eng.(*levelWheel)
	if !ok || !lw.bases[nrKinds*cpu].init {
		return nil
	}
	out := make([]BaseState, 0, nrKinds)
	for _, k := range []int{kindStd, kindGlobal, kindDef} {
		b := &lw.bases[nrKinds*cpu+k]
		out = append(out, BaseState{Clk: b.clk, NextExpiry: b.nextExpiry, Recalc: b.recalc,
			TimersPending: b.timersPending, Count: b.count})
	}
	return out
}
