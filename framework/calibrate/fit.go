package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk/spread"
	"gonum.org/v1/gonum/stat"
)

// Bundle is one trace's measurement with its name and whether its machine's
// clockevent is the local APIC (only then do the device estimates say
// anything about the lapic plugin's attributes).
type Bundle struct {
	Name        string
	M           *Measurement
	LAPIC       bool
	Clockevents string
}

// Estimates reduces each bundle's samples: first the tracepoint cost, then
// every estimator less it.
func Estimates(m *Measurement) map[string]Estimate {
	out := map[string]Estimate{}
	tp := Reduce(m.Samples[ETracepoint], m.Resolution, 0, 0)
	out[ETracepoint] = tp
	tpc, tpse := 0.0, 0.0
	if tp.Constrained() {
		tpc, tpse = tp.Centre, tp.SE
	}
	for _, est := range Estimators {
		if est.Name == ETracepoint {
			continue
		}
		out[est.Name] = Reduce(m.Samples[est.Name], m.Resolution, tpc, tpse)
	}
	return out
}

// Param is one model constant the fit sets.
type Param struct {
	// Block and Plugin are where it is written: "kernel", or
	// `clockevent "local"` with Plugin "lapic". Attr is the attribute.
	Block, Plugin, Attr string
	// From says how it is computed from the estimators.
	From string
	// Default is the model's value without a profile, in ns.
	Default float64
	// Value and SE are the fit in ns; Constrained is false when an
	// estimator it needs had no samples (Why says which).
	Value, SE   float64
	Constrained bool
	Why         string
	// Note flags a value that is a bound, or was clamped at zero.
	Note string
	// Written: the profile sets it (a reported-only figure is not).
	Written bool
	// Spread is the fitted spread around Value (the profile's
	// Attr_spread), from SpreadN samples of SpreadFrom; zero when the
	// parameter has none (SpreadWhy says why, when it could have one).
	Spread     spread.Quantiles
	SpreadN    int
	SpreadFrom string
	SpreadWhy  string
}

// Key is the parameter's dotted name: kernel.irq_entry_cost,
// clockevent.local.lapic.deadline_write_cost.
func (p Param) Key() string {
	if p.Block == "kernel" {
		return "kernel." + p.Attr
	}
	if p.Block == "" {
		return p.Attr
	}
	return fmt.Sprintf("%s.%s", p.Plugin, p.Attr)
}

// term is a signed estimator in a parameter's formula, or a fixed model
// constant.
type term struct {
	est   string
	sign  float64
	fixed string // the name of a constant kept at its default (Defaults key)
	// param is an earlier parameter's key: its fitted value, or its
	// default when no bundle constrains it.
	param string
}

// paramDef is one parameter's formula.
type paramDef struct {
	block, plugin, attr string
	terms               []term
	note                string
	lapic               bool // a device attribute of the lapic plugin
	reported            bool // printed, not written to the profile
	// spread lists the estimators whose samples' deviations from their
	// own centre (per bundle) give the parameter's spread, written as
	// attr_spread: the model draws the cost around its value.
	spread []string
	// zero, for a parameter without terms, says why the fit writes 0,
	// and zeroNeeds names the estimator whose samples that needs.
	zero, zeroNeeds string
}

var plus = func(e string) term { return term{est: e, sign: 1} }
var minus = func(e string) term { return term{est: e, sign: -1} }

// The fit: each parameter from the estimators (docs/calibration-fit.md).
var paramDefs = []paramDef{
	{block: "kernel", attr: "irq_entry_cost", terms: []term{plus(EIRQEntry), {fixed: "hrtimer.interrupt_entry_ns", sign: -1}}},
	{block: "kernel", attr: "irq_exit_cost", terms: []term{plus(EIRQExit)}},
	{block: "kernel", attr: "softirq_entry_cost", terms: []term{plus(ESoftirqEntry)}},
	{block: "kernel", attr: "tick_cost", terms: []term{plus(ETick)}},
	{block: "kernel", attr: "wakeup_cost", terms: []term{plus(EWakeup)}},
	{block: "kernel", attr: "timer_callback_cost", terms: []term{plus(ETimerCallback)}},
	{block: "kernel", attr: "context_switch_cost", terms: []term{plus(ESwitchBusy), minus(EIRQExit)}},
	{block: "kernel", attr: "signal_generate_cost", terms: []term{plus(ESignalGenerate)}},
	{block: "kernel", attr: "signal_deliver_cost", terms: []term{plus(ESignalDeliver), minus(EHRTail), minus(EIRQExit)}, reported: true,
		note: "not written: the interval holds an interval timer's re-arm (a device write) and no event brackets handle_signal() and rt_sigreturn()"},
	{block: "kernel", attr: "rcu_core_cost", terms: []term{plus(ERCUSoftirq)}, reported: true,
		note: "not written: the softirq includes the callbacks rcu_do_batch() invoked (rcu:rcu_batch_start/end would count them), so an upper bound"},
	{block: "kernel", attr: "ipi_send_cost", terms: []term{plus(EIPISend)}},
	{block: "kernel", attr: "ipi_latency_cost", terms: []term{plus(EIPILatency)}},
	{block: `clockevent "local"`, plugin: "lapic", attr: "deadline_write_cost", terms: []term{plus(EStartProgram), minus(EStartPlain)}, lapic: true},
	// The spread of the interrupt's delivery: expiry lateness on busy and
	// on idle CPUs moves with the same thing (in a guest, the host
	// scheduling the vCPU), and the idle samples are the many (a sleeping
	// timer task's CPU is idle when its timer fires).
	// A deadline already past when written: KVM's start_sw_tscdeadline()
	// finds it due and calls apic_timer_expired() at once, so the
	// interrupt is injected when the write returns and taken as soon as
	// the guest enables interrupts (a 1 us timer_settime() takes its
	// interrupt inside the syscall: docs/calibration-fit.md). What lies
	// between the write's tracepoint and local_timer_entry is then the
	// interrupt's entry: irq_entry_cost and apic_eoi(), which
	// sysvec_apic_timer_interrupt() calls before trace_local_timer_entry()
	// and which exits to the hypervisor as the deadline write does.
	{block: `clockevent "local"`, plugin: "lapic", attr: "eoi_cost", terms: []term{plus(EPastDeadline), minus(EIRQEntry), {fixed: "hrtimer.interrupt_entry_ns", sign: 1}}, lapic: true,
		spread: []string{EPastDeadline}},
	// The model's lateness is irq_latency, then irq_entry_cost and the
	// EOI (before local_timer_entry), then hrtimer_interrupt()'s clock
	// read (irq_entry's interval, which includes it).
	{block: `clockevent "local"`, plugin: "lapic", attr: "irq_latency", terms: []term{plus(ELatenessBusy), minus(EIRQEntry), {param: "lapic.eoi_cost", sign: -1}}, lapic: true,
		spread: []string{ELatenessBusy, ELatenessIdle}},
	{block: `clockevent "local"`, plugin: "lapic", attr: "past_deadline_latency", lapic: true,
		zeroNeeds: EPastDeadline, zero: "injected at the write (start_sw_tscdeadline() -> apic_timer_expired()); the past_deadline interval is the entry's, eoi_cost"},
	{attr: "idle exit (machine idle_state exit_latency)", terms: []term{plus(ELatenessIdle), minus(ELatenessBusy)}, reported: true},
}

// Unconstrained are the model's cost constants no estimator measures, with
// the reason.
var Unconstrained = []struct{ Key, Why string }{
	{"kernel.syscall_cost", "the entry and exit lie outside every traced pair (raw_syscalls:sys_enter/sys_exit bracket the body)"},
	{"kernel.jiffies_update_cost", "tick_do_update_jiffies64() has no tracepoint of its own"},
	{"kernel.nohz_stop_cost", "tick_stop marks the decision, not the end of the bookkeeping"},
	{"kernel.nohz_restart_cost", "no tracepoint at the tick's restart"},
	{"kernel.signal_dequeue_cost", "dequeue_signal() is inside the signal_deliver interval, not apart"},
	{"kernel.clock_read_cost", "the vDSO clock read traps into nothing traced"},
	{"kernel.timer_slack_cost", "a task's setting, not a cost"},
	{"kernel.tmigr_walk_cost", "timer_migration events are not among the captured ones"},
	{"kernel.tmigr_remote_cost", "timer_migration events are not among the captured ones"},
	{"lapic.oneshot_write_cost", "the capture's device runs in TSC-deadline mode"},
}

// Fit pools the bundles' estimates and computes every parameter. defaults
// gives a constant's model default in ns by key (Param.Key, and
// "hrtimer.interrupt_entry_ns").
func Fit(bundles []Bundle, defaults func(key string) float64) (per []map[string]Estimate, pooled map[string]Estimate, params []Param) {
	lapicAll := len(bundles) > 0
	for _, b := range bundles {
		per = append(per, Estimates(b.M))
		lapicAll = lapicAll && b.LAPIC
	}
	pooled = map[string]Estimate{}
	for _, est := range Estimators {
		var es []Estimate
		for _, p := range per {
			es = append(es, p[est.Name])
		}
		pooled[est.Name] = Pool(es)
	}
	for _, d := range paramDefs {
		p := Param{Block: d.block, Plugin: d.plugin, Attr: d.attr, Note: d.note, Written: !d.reported, Constrained: true}
		if d.block != "" {
			p.Default = defaults(p.Key())
		}
		var from string
		var v, se2 float64
		for i, t := range d.terms {
			op := " + "
			if t.sign < 0 {
				op = " - "
			}
			if i == 0 {
				op = ""
			}
			if t.fixed != "" {
				c := defaults(t.fixed)
				from += fmt.Sprintf("%s%s (kept at %s)", op, t.fixed, fmtNS(c))
				v += t.sign * c
				continue
			}
			if t.param != "" {
				c, how := defaults(t.param), "its default"
				for _, q := range params {
					if q.Key() == t.param && q.Constrained {
						c, how = q.Value, "fitted"
						se2 += q.SE * q.SE
					}
				}
				from += fmt.Sprintf("%s%s (%s, %s)", op, strings.TrimPrefix(t.param, "lapic."), how, fmtNS(c))
				v += t.sign * c
				continue
			}
			from += op + t.est
			e := pooled[t.est]
			if !e.Constrained() {
				p.Constrained = false
				p.Why = "no " + t.est + " interval in these bundles"
				continue
			}
			v += t.sign * e.Centre
			se2 += e.SE * e.SE
		}
		p.From = from
		if len(d.terms) == 0 {
			p.From = d.zero
			if !pooled[d.zeroNeeds].Constrained() {
				p.Constrained = false
				p.Why = "no " + d.zeroNeeds + " interval in these bundles"
			}
		}
		if d.lapic && !lapicAll {
			p.Constrained = false
			p.Why = "a bundle's clockevent is not the local APIC"
		}
		if p.Constrained {
			p.Value, p.SE = v, math.Sqrt(se2)
			if p.Value < 0 {
				p.Note = fmt.Sprintf("the estimate %s is below zero: set to 0", fmtNS(p.Value))
				p.Value = 0
			}
		}
		if p.Constrained && len(d.spread) > 0 {
			p.Spread, p.SpreadN = fitSpread(bundles, per, d.spread)
			for i, e := range d.spread {
				if i > 0 {
					p.SpreadFrom += ", "
				}
				p.SpreadFrom += e
			}
			if p.SpreadN < minSpreadSamples {
				p.Spread = spread.Quantiles{}
				p.SpreadWhy = fmt.Sprintf("%d samples of %s: fewer than %d", p.SpreadN, p.SpreadFrom, minSpreadSamples)
			}
		}
		params = append(params, p)
	}
	return per, pooled, params
}

// spreadPercents are the quantiles a fitted spread is written at: the body
// and, for the tail a percentile latency reads, up to the 99.9th.
var spreadPercents = []float64{1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9}

// minSpreadSamples is the fewest samples, over all bundles, a spread is
// fitted from, and minBundleSpread the fewest a bundle's own quantiles are
// taken from: the 99.9th percentile of fewer than 1000 is the maximum, not
// a quantile.
const (
	minSpreadSamples = 1000
	minBundleSpread  = 1000
)

// fitSpread takes, in each bundle with at least minBundleSpread samples of
// the estimators, each sample's deviation from that bundle's own centre of
// its estimator (the sample corrected for tracepoints as Reduce corrects
// it), the quantiles of those deviations, and returns the median over the
// bundles of each quantile, and the samples' count. Centring each bundle on
// itself keeps what moves between runs (the pooled centre's Birge-scaled
// error says how much) out of what moves between interrupts; the median
// over bundles is the spread of a typical run, where pooling the samples
// would let the few runs whose host was busiest set the tail.
func fitSpread(bundles []Bundle, per []map[string]Estimate, ests []string) (spread.Quantiles, int) {
	var perBundle [][]float64 // per bundle, the quantiles at spreadPercents
	n := 0
	for bi, b := range bundles {
		tp := per[bi][ETracepoint]
		tpc := 0.0
		if tp.Constrained() {
			tpc = tp.Centre
		}
		var dev []float64
		for _, e := range ests {
			c := per[bi][e]
			if !c.Constrained() {
				continue
			}
			for _, v := range b.M.Samples[e] {
				dev = append(dev, float64(v.NS)-tpc*float64(1+v.Interior)-c.Centre)
			}
		}
		if len(dev) < minBundleSpread {
			continue
		}
		n += len(dev)
		slices.Sort(dev)
		qs := make([]float64, len(spreadPercents))
		for i, pct := range spreadPercents {
			qs[i] = stat.Quantile(pct/100, stat.LinInterp, dev, nil)
		}
		perBundle = append(perBundle, qs)
	}
	if len(perBundle) == 0 {
		return spread.Quantiles{}, n
	}
	var q spread.Quantiles
	col := make([]float64, len(perBundle))
	for i, pct := range spreadPercents {
		for b := range perBundle {
			col[b] = perBundle[b][i]
		}
		v := math.Round(median(col))
		if i > 0 {
			v = max(v, q.Dev[i-1]) // medians of ordered columns stay ordered; rounding aside
		}
		q.P = append(q.P, pct/100)
		q.Dev = append(q.Dev, v)
	}
	// Written at three significant figures and read back: the profile's
	// text is the spread the model draws from.
	rq, err := spread.Parse(q.String())
	if err != nil {
		panic("calibrate: a fitted spread does not parse: " + err.Error())
	}
	return rq, n
}

// median is the middle of x (the mean of the two middles of an even count);
// it sorts x.
func median(x []float64) float64 {
	slices.Sort(x)
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

// fmtNS prints ns as the model's durations print: "1.23us", "850ns".
func fmtNS(ns float64) string {
	a := math.Abs(ns)
	switch {
	case a >= 1e6:
		return fmt.Sprintf("%.3gms", ns/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3gus", ns/1e3)
	}
	return fmt.Sprintf("%.0fns", ns)
}
