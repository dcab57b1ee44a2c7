package hrtimer

import (
	"math"
	"strconv"

	"github.com/tickemu/tickemu/framework/sdk"
)

// HangDelay selects how hrtimer_interrupt() backs off after a hang.
type HangDelay int

// Hang delay strategies (see the package doc for the commits).
const (
	// HangProportional: next event = now + min(time spent in the interrupt,
	// 100 ms); hang_detected kept until the next successful programming.
	HangProportional HangDelay = iota
	// HangFixed100ms: next event = now + 100 ms; hang_detected cleared at once
	// (2889243848560).
	HangFixed100ms
	// HangMaxHangTime: next event = ktime_get() + min(100 ms, max_hang_time);
	// hang_detected kept until the next interrupt (the 2026 fix).
	HangMaxHangTime
)

var hangDelayNames = []string{"proportional", "fixed_100ms", "max_hang_time"}

// String returns the HCL value.
func (h HangDelay) String() string { return hangDelayNames[h] }

// SoftirqNext selects how softirq_expires_next is maintained.
type SoftirqNext int

// softirq_expires_next strategies.
const (
	// SoftirqStale: v4.16..v5.12-rc2. hrtimer_force_reprogram() refreshes the
	// cache only when the overall first timer is soft; hrtimer_interrupt()
	// never refreshes it.
	SoftirqStale SoftirqNext = iota
	// SoftirqUpdated: 46eb1701c046 and later, hrtimer_update_next_event().
	SoftirqUpdated
)

var softirqNextNames = []string{"stale", "updated"}

// String returns the HCL value.
func (s SoftirqNext) String() string { return softirqNextNames[s] }

// Restart selects how restarting a queued timer reprograms the device.
type Restart int

// Restart reprogramming strategies.
const (
	// RestartDouble: before 627ef5ae2df8, remove_hrtimer() reprograms when the
	// first timer is removed and hrtimer_reprogram() may program again after
	// the enqueue: up to 2 device writes.
	RestartDouble Restart = iota
	// RestartDeferred: 627ef5ae2df8, force_local keeps the first timer local
	// and one hrtimer_force_reprogram(skip_equal) follows the enqueue.
	RestartDeferred
)

var restartNames = []string{"double", "deferred"}

// String returns the HCL value.
func (r Restart) String() string { return restartNames[r] }

// ClockWasSetIPI selects which CPUs clock_was_set() interrupts.
type ClockWasSetIPI int

// clock_was_set() strategies.
const (
	// IPIAll: before 1e7f7fbcd40c, on_each_cpu(retrigger_next_event).
	IPIAll ClockWasSetIPI = iota
	// IPINeeded: 1e7f7fbcd40c and later, update_needs_ipi() per CPU (with the
	// soft base check as fixed by 05dc4a9fc8b3).
	IPINeeded
)

var ipiNames = []string{"all", "needed"}

// String returns the HCL value.
func (c ClockWasSetIPI) String() string { return ipiNames[c] }

// Costs are the plugin's own simulated costs in ns. Device writes are not
// here: the host charges them per Program entry.
//
// Defaults are estimates ([EST]) from
// docs/reference/calibration.md §1-2: an APIC timer interrupt with
// one cheap callback costs 0.5-2 us in total on bare metal, of which irq
// entry/exit and the device write are the host's; hrtimer_start/cancel are
// 0.1-0.3 us each.
type Costs struct {
	Start       int64 // hrtimer_start_range_ns(): lock, rbtree erase+insert, ktime_get for REL
	Cancel      int64 // hrtimer_try_to_cancel(): lock, rbtree erase
	Entry       int64 // hrtimer_interrupt() entry: nr_events, lock, hrtimer_update_base()
	Pass        int64 // one pass of the retry loop: raise check, next-event evaluation of 8 bases
	Expiry      int64 // __run_hrtimer() bookkeeping around one callback
	Softirq     int64 // hrtimer_run_softirq() fixed part
	ClockWasSet int64 // retrigger_next_event() body on the interrupted CPU
}

// costAttr describes one cost attribute of the schema.
type costAttr struct {
	name string
	def  float64
	doc  string
	set  func(*Costs, int64)
}

// maxCostNS bounds every cost attribute (the schema's Max, refused at decode
// with the file, line and attribute): 100 us, far above any hrtimer
// operation, and low enough that an interrupt expiring the most timers one
// answer may list (framework/contract's MaxList, 65536) costs less than the
// contract's 10 s (MaxCost). The builtin runs in process without the
// contract checker, so its config must not be able to break the contract.
const maxCostNS = 100_000

var costAttrs = []costAttr{
	{"start_ns", 200, "hrtimer_start_range_ns() cost; [EST] 0.1-0.3 us (docs/reference/calibration.md §2)",
		func(c *Costs, v int64) { c.Start = v }},
	{"cancel_ns", 150, "hrtimer_try_to_cancel() cost; [EST] 0.1-0.3 us, no ktime_get (calibration.md §2)",
		func(c *Costs, v int64) { c.Cancel = v }},
	{"interrupt_entry_ns", 100, "hrtimer_interrupt() entry (lock, hrtimer_update_base); [EST] share of the 0.5-2 us interrupt (calibration.md §1)",
		func(c *Costs, v int64) { c.Entry = v }},
	{"pass_ns", 100, "one pass of the hrtimer_interrupt() retry loop and of hrtimer_run_queues(); [EST] (calibration.md §1)",
		func(c *Costs, v int64) { c.Pass = v }},
	{"expiry_ns", 50, "__run_hrtimer() overhead per expired timer, callback excluded; [EST] (calibration.md §1)",
		func(c *Costs, v int64) { c.Expiry = v }},
	{"softirq_ns", 150, "hrtimer_run_softirq() fixed cost; [EST] (calibration.md §2)",
		func(c *Costs, v int64) { c.Softirq = v }},
	{"clock_was_set_ns", 300, "retrigger_next_event() on an interrupted CPU, IPI delivery excluded; [EST] (calibration.md §2)",
		func(c *Costs, v int64) { c.ClockWasSet = v }},
}

// Config is the decoded plugin configuration.
type Config struct {
	HangDelay   HangDelay
	SoftirqNext SoftirqNext
	Restart     Restart
	IPI         ClockWasSetIPI
	Costs       Costs
}

// DefaultConfig is the mainline behaviour with the documented default costs.
func DefaultConfig() Config {
	c := Config{HangDelay: HangMaxHangTime, SoftirqNext: SoftirqUpdated, Restart: RestartDeferred, IPI: IPINeeded}
	for _, a := range costAttrs {
		a.set(&c.Costs, int64(a.def))
	}
	return c
}

func schema() sdk.Schema {
	d := DefaultConfig()
	attrs := []sdk.Attribute{
		{Name: "hang_delay", Type: sdk.TypeString, Default: d.HangDelay.String(), OneOf: hangDelayNames,
			Doc: "hrtimer_interrupt() hang back-off: proportional (pre-2026), fixed_100ms (2889243848560), max_hang_time (its fix)",
			Eras: []sdk.Era{
				{Since: "3.10", Value: "proportional",
					Note: "41d2e4949377 (hrtimer: Tune hrtimer_interrupt hang logic, 2.6.32)"},
				{Since: "7.1", Value: "fixed_100ms", Commit: "288924384856", Title: "hrtimer: Re-arrange hrtimer_interrupt()",
					Note: "tip sched/hrtick, 27 Feb 2026, queued for the 7.1 merge window: the release tag is the queue's, not checked in a release; the regression LKP reported on that branch"},
				{Since: "7.1", Value: "max_hang_time", Title: "hrtimer: Less agressive interrupt hang handling",
					Note: "the fix (P. Zijlstra, patch of 11 Mar 2026, on the same branch): its mainline commit id was not found, so the change is named by its title"},
			}},
		{Name: "softirq_next", Type: sdk.TypeString, Default: d.SoftirqNext.String(), OneOf: softirqNextNames,
			Doc: "softirq_expires_next upkeep: stale (before 46eb1701c046) or updated",
			Eras: []sdk.Era{
				{Since: "3.10", Value: "stale",
					Note: "the soft clock bases exist from 4.16 (5da70160462e); before that no timer is soft and the setting changes nothing"},
				{Since: "5.12", Value: "updated", Commit: "46eb1701c046", Title: "hrtimer: Update softirq_expires_next correctly after __hrtimer_get_next_event()",
					Note: "v5.12-rc3; backported to 5.10.24"},
			}},
		{Name: "restart", Type: sdk.TypeString, Default: d.Restart.String(), OneOf: restartNames,
			Doc: "restart of the first timer: double (before 627ef5ae2df8, up to 2 writes) or deferred (one write or none)",
			Eras: []sdk.Era{
				{Since: "3.10", Value: "double"},
				{Since: "5.15", Value: "deferred", Commit: "627ef5ae2df8", Title: "hrtimer: Avoid double reprogramming in __hrtimer_start_range_ns()",
					Note: "with b14bca97c9f5 (hrtimer: Consolidate reprogramming code); v5.15-rc1, in 5.10 and 5.14 stable"},
			}},
		{Name: "clock_was_set_ipi", Type: sdk.TypeString, Default: d.IPI.String(), OneOf: ipiNames,
			Doc: "clock_was_set(): all (retrigger every CPU, before 1e7f7fbcd40c) or needed (update_needs_ipi)",
			Eras: []sdk.Era{
				{Since: "3.10", Value: "all"},
				{Since: "5.15", Value: "needed", Commit: "1e7f7fbcd40c", Title: "hrtimer: Avoid more SMP function calls in clock_was_set()",
					Note: "with 05dc4a9fc8b3's check of the soft bases"},
			}},
	}
	for _, a := range costAttrs {
		attrs = append(attrs, sdk.Attribute{Name: a.name, Type: sdk.TypeNumber,
			Default: strconv.FormatFloat(a.def, 'g', -1, 64), Min: "0", Max: strconv.Itoa(maxCostNS), Doc: a.doc})
	}
	return sdk.Schema{Attributes: attrs}
}

// decodeConfig turns decoded attributes into a Config, reporting missing
// attributes, unknown strategy names and negative or non-finite costs.
func decodeConfig(c sdk.Config) (Config, sdk.Diagnostics) {
	cfg := DefaultConfig()
	r := c.Reader()
	cfg.HangDelay = HangDelay(r.Enum("hang_delay", hangDelayNames))
	cfg.SoftirqNext = SoftirqNext(r.Enum("softirq_next", softirqNextNames))
	cfg.Restart = Restart(r.Enum("restart", restartNames))
	cfg.IPI = ClockWasSetIPI(r.Enum("clock_was_set_ipi", ipiNames))
	var diags sdk.Diagnostics
	for _, a := range costAttrs {
		// A value r cannot read is 0 here and an error in r.Diagnostics().
		v := r.Float(a.name)
		if math.IsInf(v, 0) || v < 0 || v > maxCostNS {
			diags = diags.Errorf(a.name, "%s must be a finite number of ns in [0, %d], got %q", a.name, maxCostNS, strconv.FormatFloat(v, 'g', -1, 64))
			continue
		}
		// Sub-nanosecond fractions are rounded: simulated time is integer ns.
		a.set(&cfg.Costs, int64(math.Round(v)))
	}
	return cfg, append(r.Diagnostics(), diags...)
}
