package calibrate

import (
	"fmt"
	"math"
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
}

// paramDef is one parameter's formula.
type paramDef struct {
	block, plugin, attr string
	terms               []term
	note                string
	lapic               bool // a device attribute of the lapic plugin
	reported            bool // printed, not written to the profile
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
	{block: `clockevent "local"`, plugin: "lapic", attr: "irq_latency", terms: []term{plus(ELatenessBusy), minus(EIRQEntry)}, lapic: true},
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
	{"lapic.eoi_cost", "the EOI write (MSR 0x80b in x2APIC mode) is not separable from the interrupt's tail"},
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
		params = append(params, p)
	}
	return per, pooled, params
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
