package wheel

import (
	"math"
	"strconv"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Layout selects the wheel data structure.
type Layout int

// Layouts.
const (
	// LayoutLevels is the non-cascading wheel of 4.8+ as of 5.9-6.8
	// (kernel/time/timer.c: calc_wheel_index(), collect_expired_timers()).
	LayoutLevels Layout = iota
	// LayoutCascade is the tv1..tv5 wheel of 2.6-4.7 as of 3.10
	// (kernel/timer.c: __internal_add_timer(), cascade(), __run_timers()).
	LayoutCascade
)

// Migration selects the timer placement model of __mod_timer().
type Migration int

// Placement models.
const (
	// MigrationPush is the push model of 2.6.x-6.8: a timer that is not
	// pinned goes to get_nohz_timer_target()'s CPU (get_target_base()), one
	// base per CPU (BASE_STD) plus BASE_DEF.
	MigrationPush Migration = iota
	// MigrationPull is the pull model of 6.9+ (7ee988770326 "timers:
	// Implement the hierarchical pull model", b2cf7507e186 "timers: Always
	// queue timers on the local CPU"): every timer is queued on the calling
	// CPU (get_timer_this_cpu_base()), pinned ones in BASE_LOCAL, the others
	// in BASE_GLOBAL, deferrable ones in BASE_DEF; the host's timer-migration
	// hierarchy expires an idle CPU's BASE_GLOBAL (ExpireRemote).
	MigrationPull
)

// Catchup selects how __run_timers() brings the base clock up to jiffies.
type Catchup int

// Catch-up strategies.
const (
	// CatchupPerJiffy walks one jiffy per loop iteration (3.10 __run_timers()).
	CatchupPerJiffy Catchup = iota
	// CatchupSkipEmpty walks one jiffy per iteration but jumps to jiffies when
	// the wheel is empty (3.15 catchup_timer_jiffies()).
	CatchupSkipEmpty
	// CatchupNextExpiry jumps straight to the next jiffy where work is due
	// (5.9+ __run_timers() with next_expiry).
	CatchupNextExpiry
)

// Raise selects when run_local_timers() raises TIMER_SOFTIRQ.
type Raise int

// Softirq raise rules.
const (
	// RaiseEveryTick raises on every tick (3.10-4.7 run_local_timers()).
	RaiseEveryTick Raise = iota
	// RaiseNextExpiry raises only once jiffies reach next_expiry (5.9+,
	// d4f7dae87096 "timers: Spare timer softirq until next expiry").
	RaiseNextExpiry
)

// Attribute names of the wheel block.
const (
	attrLayout       = "layout"
	attrCatchup      = "catchup"
	attrRaise        = "softirq_raise"
	attrMigration    = "migration"
	attrIteration    = "iteration_cost_ns"
	attrCascade      = "cascade_cost_ns"
	attrCascadeTimer = "cascade_timer_cost_ns"
	attrExpiry       = "expiry_cost_ns"
	attrEnqueue      = "enqueue_cost_ns"
	attrDequeue      = "dequeue_cost_ns"
	attrScan         = "scan_cost_ns"
)

// maxCostNS bounds every cost parameter (the schema's Max, refused at decode
// with the file, line and attribute): 10 us per elementary operation is
// already absurd, and it keeps an answer within the plugin contract's 10 s
// (framework/contract's MaxCost) over the most expiries one answer may list
// (MaxList, 65536) or a per-jiffy catch-up of a million jiffies (17 idle
// minutes at HZ=1000). The builtin runs in process without the contract
// checker, so its config must not be able to break the contract.
const maxCostNS = 10_000

var layoutNames = []string{"levels", "cascade"}
var catchupNames = []string{"per_jiffy", "skip_empty", "next_expiry"}
var raiseNames = []string{"every_tick", "next_expiry", "auto"}
var migrationNames = []string{"push", "pull"}

// costAttr describes one cost parameter; defaults are in ns and documented
// with their source (see docs/reference/calibration.md §11).
type costAttr struct {
	name string
	def  string
	doc  string
}

var costAttrs = []costAttr{
	{attrIteration, "1.7", "Cost of one catch-up loop iteration in ns: one jiffy of the 3.10 per-jiffy walk " +
		"(__run_timers), or one collect pass of the 5.9+ loop. Default 1.7: the 3.10 cyclictest report shows " +
		"about 300000 jiffies caught up in 461-566 us, i.e. 1.5-1.9 ns per empty jiffy (derived)."},
	{attrCascade, "20", "Cost of one cascade() call of the legacy wheel in ns (list_replace_init of a bucket). " +
		"Default 20 (estimate, ~60 cycles at 3 GHz); with the iteration default a 300000-jiffy catch-up " +
		"(300001 iterations, 1193 cascades) costs 534 us, inside the reported 461-566 us."},
	{attrCascadeTimer, "10", "Cost in ns of re-inserting one timer during cascade() (__internal_add_timer). " +
		"Default 10 (estimate: index arithmetic plus list_add_tail with a likely cache miss)."},
	{attrExpiry, "40", "Per expired timer overhead in ns before its callback (detach, running_timer, base " +
		"lock dropped and retaken around the callback); the callback itself costs the timer's declared " +
		"CallbackCost. Default 40 (estimate)."},
	{attrEnqueue, "80", "Cost of a mod_timer() that takes the base lock and (re)queues or re-indexes a timer, " +
		"in ns; also charged for a re-arm from a callback. Default 80 (estimate: irqsave lock, index " +
		"computation, bucket insert)."},
	{attrDequeue, "50", "Cost of removing a pending timer (del_timer(), or the detach inside mod_timer()) in ns. " +
		"Default 50 (estimate)."},
	{attrScan, "1.7", "Cost of examining one bucket list (3.10 __next_timer_interrupt) or one level bitmap " +
		"(4.8+ __next_timer_interrupt / timer_recalc_next_expiry) in ns. Default 1.7, the same as one " +
		"empty jiffy of the 3.10 walk, which does the same list-empty check (derived)."},
}

// schema is the wheel's HCL schema. Kept as a function so callers cannot
// mutate a shared value.
func schema() sdk.Schema {
	attrs := []sdk.Attribute{
		{
			Name: attrLayout, Type: sdk.TypeString, Default: "levels", OneOf: layoutNames,
			Doc: "Wheel data structure. \"levels\": the non-cascading wheel of 4.8+ (followed as of 5.9-6.8: " +
				"64 buckets per level, 8x coarser per level, 9 levels or 8 at HZ<=100, expiry rounded up to the " +
				"bucket, far timers clamped). \"cascade\": the tv1..tv5 wheel of <=4.7 (followed as of 3.10: " +
				"exact expiry, cascade every 256 jiffies, mod_timer() slack).",
			Eras: []sdk.Era{
				{Since: "3.10", Value: "cascade"},
				{Since: "4.8", Value: "levels", Commit: "500462a9de65", Title: "timers: Switch to a non-cascading wheel"},
			},
		},
		{
			Name: attrCatchup, Type: sdk.TypeString, Default: "next_expiry", OneOf: catchupNames,
			Doc: "How the timer softirq catches the base clock up to jiffies. \"per_jiffy\": one jiffy per " +
				"iteration (3.10 __run_timers). \"skip_empty\": the same, but the clock jumps to jiffies when the " +
				"wheel is empty (3.15 catchup_timer_jiffies). \"next_expiry\": jump straight to the next jiffy " +
				"with work (5.9+; on the cascade layout: the next expiry or cascade that moves timers). Every " +
				"strategy expires the same timers in the same softirq; only costs and counters differ.",
			Eras: []sdk.Era{
				{Since: "3.10", Value: "per_jiffy"},
				{Since: "3.15", Value: "skip_empty", Commit: "d550e81dc0dd", Title: "timers: Reduce __run_timers() latency for empty list",
					Note: "with 18d8cb64c9c0 (the same for the first add to an empty list) and fff421580f51 (the count of timers it needs)"},
				{Since: "4.8", Value: "next_expiry", Commit: "236968383cf5", Title: "timers: Optimize collect_expired_timers() for NOHZ",
					Note: "an idle base's clock jumps to the next expiry; 5.9's next_expiry rework (d4f7dae87096 and its series) keeps the jump"},
			},
		},
		{
			Name: attrRaise, Type: sdk.TypeString, Default: "auto", OneOf: raiseNames,
			Doc: "When run_local_timers() raises TIMER_SOFTIRQ. \"every_tick\": on every tick at or after the " +
				"base clock (3.10-4.7). \"next_expiry\": only once jiffies reach the earliest bucket expiry, " +
				"deferrable timers included while the CPU ticks (5.9+). \"auto\": every_tick for the cascade " +
				"layout, next_expiry for levels.",
			Eras: []sdk.Era{
				{Since: "3.10", Value: "every_tick",
					Note: "4.8-5.8 skip the raise only while jiffies lag base->clk (4e85876a9d2a), which a ticking CPU's base never does: every_tick"},
				{Since: "5.9", Value: "next_expiry", Commit: "d4f7dae87096", Title: "timers: Spare timer softirq until next expiry"},
			},
		},
		{
			Name: attrMigration, Type: sdk.TypeString, Default: "push", OneOf: migrationNames,
			Doc: "Where a timer that is not pinned is queued. \"push\" (while kernel.timer_migration is on): " +
				"2.6.x-6.8, __mod_timer() -> get_target_base() -> get_nohz_timer_target(): an idle CPU (and " +
				"from 4.x any nohz_full CPU) queues it on a busy housekeeping CPU. \"pull\": 6.9+ " +
				"(7ee988770326, b2cf7507e186): always on the calling CPU, in BASE_GLOBAL (BASE_LOCAL when " +
				"pinned); an idle CPU hands its global timers to the timer-migration hierarchy, whose migrator " +
				"expires them remotely. Levels layout only for \"pull\".",
			Eras: []sdk.Era{
				{Since: "3.10", Value: "push"},
				{Since: "6.9", Value: "pull", Commit: "7ee988770326", Title: "timers: Implement the hierarchical pull model",
					Note: "with b2cf7507e186 (timers: Always queue timers on the local CPU) in the same v6.9 series"},
			},
		},
	}
	for _, c := range costAttrs {
		attrs = append(attrs, sdk.Attribute{Name: c.name, Type: sdk.TypeNumber, Default: c.def, Min: "0", Max: strconv.Itoa(maxCostNS), Doc: c.doc})
	}
	return sdk.Schema{Attributes: attrs}
}

// costs holds the cost parameters in picoseconds, so that fractional
// nanosecond defaults accumulate exactly; results are rounded to ns per call.
type costs struct {
	iteration, cascade, cascadeTimer, expiry, enqueue, dequeue, scan int64
}

// options is a validated configuration.
type options struct {
	layout  Layout
	catchup Catchup
	raise   Raise
	migr    Migration
	cost    costs
	// From Setup: the sysctl and housekeeping_cpumask(HK_TYPE_TIMER).
	timerMigration bool
	housekeeping   sdk.CPUSet
	cpus           int
}

// parseOptions validates c against the schema and the machine. c holds every
// attribute of the schema, as the host passes it (sdktest.Defaults in tests).
func parseOptions(s sdk.Setup, c sdk.Config) (options, sdk.Diagnostics) {
	var o options
	var diags sdk.Diagnostics
	if s.CPUs < 1 || s.CPUs > maxCPUs {
		diags = diags.Errorf("", "wheel: machine has %d CPUs; the wheel supports 1 to %d", s.CPUs, maxCPUs)
	}
	if !ktime.ValidHZ(s.HZ) {
		diags = diags.Errorf("", "wheel: HZ %d is not a CONFIG_HZ choice (100, 250, 300, 1000)", s.HZ)
	}

	r := c.Reader()
	// The enums' indexes are the constants' values: layoutNames[LayoutCascade]
	// is "cascade", and so on.
	o.layout = Layout(r.Enum(attrLayout, layoutNames))
	o.catchup = Catchup(r.Enum(attrCatchup, catchupNames))
	raise := raiseNames[r.Enum(attrRaise, raiseNames)]
	switch raise {
	case "every_tick":
		o.raise = RaiseEveryTick
	case "next_expiry":
		o.raise = RaiseNextExpiry
	case "auto":
		o.raise = RaiseNextExpiry
		if o.layout == LayoutCascade {
			o.raise = RaiseEveryTick
		}
	}
	o.migr = Migration(r.Enum(attrMigration, migrationNames))
	if o.migr == MigrationPull && o.layout == LayoutCascade {
		diags = diags.Errorf(attrMigration, "migration \"pull\" needs layout \"levels\": the 6.9+ bases "+
			"BASE_LOCAL/BASE_GLOBAL exist only in the non-cascading wheel")
	}
	o.timerMigration, o.housekeeping, o.cpus = s.TimerMigration, s.HousekeepingSet(), s.CPUs

	dst := map[string]*int64{
		attrIteration: &o.cost.iteration, attrCascade: &o.cost.cascade, attrCascadeTimer: &o.cost.cascadeTimer,
		attrExpiry: &o.cost.expiry, attrEnqueue: &o.cost.enqueue, attrDequeue: &o.cost.dequeue, attrScan: &o.cost.scan,
	}
	for _, ca := range costAttrs {
		// A value r cannot read is 0 here and an error in r.Diagnostics().
		if v := r.Float(ca.name); math.IsInf(v, 0) || v < 0 || v > maxCostNS {
			diags = diags.Errorf(ca.name, "%s = %g is out of range (0 to %d ns)", ca.name, v, maxCostNS)
		} else {
			*dst[ca.name] = int64(math.Round(v * 1000))
		}
	}
	diags = append(diags, r.Diagnostics()...)
	if diags.HasErrors() {
		return o, diags
	}

	// Combinations no kernel shipped: valid, but say what they mean.
	if o.layout == LayoutLevels && o.catchup != CatchupNextExpiry {
		diags = append(diags, sdk.Diagnostic{
			Severity: sdk.SeverityWarning, Attribute: attrCatchup,
			Summary: "catch-up \"" + catchupNames[o.catchup] + "\" on the levels layout only changes the cost model",
			Detail: "the levels wheel keeps its 5.9+ state; the catch-up loop is charged as if it walked one jiffy " +
				"per iteration (the 4.8 development loop) so that expiries stay identical across strategies",
		})
	}
	if o.layout == LayoutCascade && raise == "next_expiry" {
		diags = append(diags, sdk.Diagnostic{
			Severity: sdk.SeverityWarning, Attribute: attrRaise,
			Summary: "softirq_raise \"next_expiry\" with the cascade layout is a hybrid no kernel shipped",
			Detail: "the softirq is raised at the earliest pending expiry; cascades of idle jiffies are then " +
				"done late, by the catch-up loop; expiries are unchanged",
		})
	}
	return o, diags
}
