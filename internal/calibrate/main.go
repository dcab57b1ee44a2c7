// Command calibrate writes docs/calibration.md: for every headline figure of
// README's results table, the cost constants that set its size and the figure
// with each of them halved and doubled, so a reader sees how much of a result
// is mechanism and how much calibration. It runs the shipped scenarios with
// the real engine and builtin plugins (what `tickemu run` runs), each constant
// overridden in the scenario's own HCL (hclwrite), and prints Markdown.
//
//	go run ./internal/calibrate > docs/calibration.md   (make calibration)
package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// block names one block of a scenario file: its type and labels.
type block struct {
	typ    string
	labels []string
}

// knob is one cost constant: where it is set and what it costs.
type knob struct {
	path []block // outermost first; the block is created if absent
	attr string
	doc  string
	// kind says how its value is written: "duration" ("250ns") or "number".
	kind string
	// def is the default when the file does not set it; empty: read it from
	// the owner's schema (kernel block or plugin).
	def string
}

// figure is one headline figure: the runs it needs and how it is read.
type figure struct {
	scenario string
	what     string // the figure, as README states it
	variants []string
	seeds    []uint64
	vars     map[string]string
	// value reads the figure from the runs of each variant (seeds in order).
	value  func(rs map[string][]*experiment.Result) float64
	format func(v float64) string
	knobs  []knob
}

var (
	kernelBlk  = []block{{typ: "kernel"}}
	wheelBlk   = []block{{typ: "wheel"}}
	hrtimerBlk = []block{{typ: "hrtimer"}}
	localBlk   = []block{{typ: "clockevent", labels: []string{"local"}}}
)

func kcost(name, doc string) knob {
	return knob{path: kernelBlk, attr: name + "_cost", doc: doc, kind: "duration"}
}

func figures() []figure {
	pct := func(v float64) string { return fmt.Sprintf("%+.0f%%", v) }
	us := func(v float64) string { return fmt.Sprintf("%.0f us", v/1000) }
	return []figure{
		{scenario: "nohz-catchup.hcl", what: "per_jiffy: worst cyclictest Max", variants: []string{"per_jiffy"}, seeds: []uint64{1},
			value: func(rs map[string][]*experiment.Result) float64 { return worstMax(rs["per_jiffy"][0]) }, format: us,
			knobs: []knob{
				{path: wheelBlk, attr: "iteration_cost_ns", doc: "one empty jiffy of the __run_timers() catch-up", kind: "number"},
				kcost("softirq_entry", "one __do_softirq() pass"),
				kcost("irq_entry", "irq entry"),
			}},
		{scenario: "hang-timermix.hcl", what: "fixed_100ms vs proportional bogo ops/s (mean of seeds 1-5)",
			variants: []string{"proportional", "fixed_100ms"}, seeds: []uint64{1, 2, 3, 4, 5},
			value: func(rs map[string][]*experiment.Result) float64 {
				return change(meanOf(rs["proportional"], "Timermix", "bogo-ops/s"), meanOf(rs["fixed_100ms"], "Timermix", "bogo-ops/s"))
			}, format: pct,
			knobs: []knob{
				kcost("syscall", "syscall entry and exit (the config sets 500 ns)"),
				kcost("signal_deliver", "get_signal(), frame setup and rt_sigreturn"),
				{path: hrtimerBlk, attr: "expiry_ns", doc: "one hrtimer expiry in hrtimer_interrupt()", kind: "number"},
			}},
		{scenario: "softirq-storm.hcl", what: "stale / updated hrtimer interrupts after the jump", variants: []string{"stale", "updated"}, seeds: []uint64{1},
			value: func(rs map[string][]*experiment.Result) float64 {
				return metric(rs["stale"][0], "ClockJump", "hrtimer-interrupts") / metric(rs["updated"][0], "ClockJump", "hrtimer-interrupts")
			}, format: func(v float64) string { return fmt.Sprintf("%.0fx", v) },
			knobs: []knob{
				{path: hrtimerBlk, attr: "interrupt_entry_ns", doc: "hrtimer_interrupt() entry", kind: "number"},
				{path: hrtimerBlk, attr: "pass_ns", doc: "one pass of the retry loop", kind: "number"},
				kcost("irq_entry", "irq entry"),
			}},
		{scenario: "ncm-restart.hcl", what: "double vs before_46eb throughput", variants: []string{"before_46eb", "double"}, seeds: []uint64{1},
			value: func(rs map[string][]*experiment.Result) float64 {
				return change(metric(rs["before_46eb"][0], "Ncm", "Gbps"), metric(rs["double"][0], "Ncm", "Gbps"))
			}, format: pct,
			knobs: []knob{
				{path: localBlk, attr: "sysreg_cost", doc: "one arch timer system register access (the config sets 400 ns)", kind: "duration"},
				{path: []block{{typ: "workload", labels: []string{"ncm", "usb0"}}}, attr: "packet_work", doc: "the driver's work per packet (the config sets 2 us)", kind: "duration"},
			}},
		{scenario: "posix-signals.hcl", what: "consistent vs legacy bogo ops/s (menu)", variants: []string{"legacy", "consistent"}, seeds: []uint64{1},
			vars: map[string]string{"duration": "200ms"},
			value: func(rs map[string][]*experiment.Result) float64 {
				return change(metric(rs["legacy"][0], "StressNgTimer", "bogo-ops/s"), metric(rs["consistent"][0], "StressNgTimer", "bogo-ops/s"))
			}, format: pct,
			knobs: []knob{
				kcost("syscall", "syscall entry and exit (the config sets 100 ns)"),
				kcost("context_switch", "__schedule() and switch_to()"),
				kcost("signal_deliver", "signal delivery (the config sets 700 ns)"),
				kcost("irq_entry", "irq entry (the config sets 100 ns)"),
			}},
		{scenario: "devices.hcl", what: "lapic_c6_broadcast cyclictest Avg (thread 0)",
			variants: []string{"lapic_c6_broadcast"}, seeds: []uint64{1},
			value: func(rs map[string][]*experiment.Result) float64 {
				return metric(rs["lapic_c6_broadcast"][0], "Cyclictest", "avg-latency-ns")
			}, format: us,
			knobs: []knob{
				{path: []block{{typ: "machine"}, {typ: "idle_state", labels: []string{"C6"}}}, attr: "exit_latency", doc: "C6 exit latency", kind: "duration"},
				kcost("ipi_latency", "IPI delivery (the broadcast hand-off)"),
				{path: []block{{typ: "clockevent", labels: []string{"broadcast"}}}, attr: "read_cost", doc: "one HPET register read", kind: "duration", def: "1us"},
			}},
		{scenario: "devices.hcl", what: "hpet_only cyclictest Avg (thread 0)",
			variants: []string{"hpet_only"}, seeds: []uint64{1},
			value: func(rs map[string][]*experiment.Result) float64 {
				return metric(rs["hpet_only"][0], "Cyclictest", "avg-latency-ns")
			}, format: us,
			knobs: []knob{
				{path: []block{{typ: "machine"}, {typ: "idle_state", labels: []string{"C6"}}}, attr: "exit_latency", doc: "C6 exit latency", kind: "duration"},
				{path: []block{{typ: "clockevent", labels: []string{"local"}}, {typ: "hpet"}}, attr: "read_cost", doc: "one HPET register read", kind: "duration", def: "1us"},
			}},
		{scenario: "nohz-full.hcl", what: "v4_17: how stale jiffies get", variants: []string{"v4_17"}, seeds: []uint64{1},
			value: func(rs map[string][]*experiment.Result) float64 {
				return float64(rs["v4_17"][0].Total("jiffies_max_stale_ns"))
			}, format: func(v float64) string { return fmt.Sprintf("%.0f ns", v) },
			knobs: []knob{
				kcost("irq_entry", "irq entry"),
				kcost("tick", "tick_sched_timer()"),
				{path: hrtimerBlk, attr: "interrupt_entry_ns", doc: "hrtimer_interrupt() entry", kind: "number"},
			}},
	}
}

func main() {
	var b strings.Builder
	b.WriteString(header)
	for _, f := range figures() {
		if err := writeFigure(&b, f); err != nil {
			fmt.Fprintf(os.Stderr, "calibrate: %s: %v\n", f.scenario, err)
			os.Exit(1)
		}
	}
	os.Stdout.WriteString(b.String())
}

const header = `# Calibration: mechanism or constants?

Generated by ` + "`make calibration`" + ` (internal/calibrate) from the shipped
scenarios: each headline figure of README's results table is recomputed with
one cost constant at half and at double its value, everything else as shipped.
A figure that barely moves is set by the mechanism the scenario models; one
that scales with a constant is as good as that constant's calibration. Each
constant is overridden in the scenario file itself, so a row is what
` + "`tickemu run`" + ` gives with that one line changed.

`

func writeFigure(b *strings.Builder, f figure) error {
	src, err := os.ReadFile(filepath.Join("configs", f.scenario))
	if err != nil {
		return err
	}
	base, err := evaluate(f, src)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "## %s: %s\n\n", strings.TrimSuffix(f.scenario, ".hcl"), f.what)
	fmt.Fprintf(b, "As shipped: **%s**", f.format(base))
	if len(f.vars) > 0 {
		var vs []string
		for k, v := range f.vars {
			vs = append(vs, "--var "+k+"="+v)
		}
		fmt.Fprintf(b, " (computed with %s)", strings.Join(vs, " "))
	}
	b.WriteString("\n\n| constant | value | at half | at double |\n|---|---|---|---|\n")
	for _, k := range f.knobs {
		v, err := baseValue(src, k)
		if err != nil {
			return fmt.Errorf("%s: %w", k.attr, err)
		}
		var at [2]string
		for i, m := range []float64{0.5, 2} {
			s, err := override(src, k, v*m)
			if err != nil {
				return fmt.Errorf("%s: %w", k.attr, err)
			}
			x, err := evaluate(f, s)
			if err != nil {
				return fmt.Errorf("%s x%g: %w", k.attr, m, err)
			}
			at[i] = f.format(x)
		}
		fmt.Fprintf(b, "| `%s` (%s) | %s | %s | %s |\n", k.name(), k.doc, k.show(v), at[0], at[1])
	}
	b.WriteString("\n")
	return nil
}

func (k knob) name() string {
	var parts []string
	for _, p := range k.path {
		parts = append(parts, strings.TrimSpace(p.typ+" "+strings.Join(p.labels, " ")))
	}
	return strings.Join(parts, " / ") + "." + k.attr
}

func (k knob) show(v float64) string {
	if k.kind == "duration" {
		return ktime.FormatDuration(int64(v))
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// evaluate runs every variant and seed of f on src and reads the figure.
func evaluate(f figure, src []byte) (float64, error) {
	rs := map[string][]*experiment.Result{}
	for _, v := range f.variants {
		for _, seed := range f.seeds {
			s := seed
			spec, diags := config.LoadBytes(f.scenario, src, config.Options{Variant: v, Vars: f.vars, Seed: &s})
			if diags.HasErrors() {
				return 0, diags
			}
			r, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
			if err != nil {
				return 0, err
			}
			rs[v] = append(rs[v], r)
		}
	}
	return f.value(rs), nil
}

// find returns the body of the block at path, creating missing blocks.
func find(f *hclwrite.File, path []block) *hclwrite.Body {
	body := f.Body()
	for _, p := range path {
		var found *hclwrite.Block
		for _, blk := range body.Blocks() {
			if blk.Type() == p.typ && strings.Join(blk.Labels(), "\x00") == strings.Join(p.labels, "\x00") {
				found = blk
				break
			}
		}
		if found != nil && len(found.Body().Attributes()) == 0 && len(found.Body().Blocks()) == 0 {
			// An empty block may be written on one line ("hpet {}"), where
			// hclwrite cannot add an attribute: write it anew.
			body.RemoveBlock(found)
			found = nil
		}
		if found == nil {
			found = body.AppendNewBlock(p.typ, p.labels)
		}
		body = found.Body()
	}
	return body
}

// baseValue is the knob's value as shipped: the file's literal, else its
// default.
func baseValue(src []byte, k knob) (float64, error) {
	f, diags := hclwrite.ParseConfig(src, "x.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return 0, diags
	}
	text := k.def
	if a := find(f, k.path).GetAttribute(k.attr); a != nil {
		text = strings.Trim(strings.TrimSpace(string(a.Expr().BuildTokens(nil).Bytes())), `"`)
	} else if text == "" {
		d, err := schemaDefault(k)
		if err != nil {
			return 0, err
		}
		text = d
	}
	if k.kind == "duration" {
		ns, err := ktime.ParseDuration(text)
		return float64(ns), err
	}
	return strconv.ParseFloat(text, 64)
}

// schemaDefault is the default of a kernel-block or plugin attribute.
func schemaDefault(k knob) (string, error) {
	var s sdk.Schema
	switch k.path[0].typ {
	case "kernel":
		s = kernel.KernelSchema()
	default:
		for _, f := range builtin.Factories() {
			if string(f.Kind) == k.path[0].typ {
				if a, ok := f.New().Schema().Lookup(k.attr); ok {
					return a.Default, nil
				}
			}
		}
		return "", fmt.Errorf("no default for %s", k.name())
	}
	a, ok := s.Lookup(k.attr)
	if !ok {
		return "", fmt.Errorf("no attribute %s", k.name())
	}
	return a.Default, nil
}

// override returns src with the knob set to v.
func override(src []byte, k knob, v float64) ([]byte, error) {
	f, diags := hclwrite.ParseConfig(src, "x.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	body := find(f, k.path)
	if k.kind == "duration" {
		body.SetAttributeValue(k.attr, cty.StringVal(strconv.FormatInt(int64(math.Round(v)), 10)+"ns"))
	} else {
		body.SetAttributeValue(k.attr, cty.NumberFloatVal(v))
	}
	return bytes.Clone(f.Bytes()), nil
}

// metric is the first bench line named name's unit.
func metric(r *experiment.Result, name, unit string) float64 {
	for _, w := range r.Workloads {
		for _, b := range w.Bench {
			if b.Name == name {
				for _, m := range b.Metrics {
					if m.Name == unit {
						return m.Value
					}
				}
			}
		}
	}
	return math.NaN()
}

func meanOf(rs []*experiment.Result, name, unit string) float64 {
	s := 0.0
	for _, r := range rs {
		s += metric(r, name, unit)
	}
	return s / float64(len(rs))
}

// worstMax is the largest cyclictest Max over threads.
func worstMax(r *experiment.Result) float64 {
	w := 0.0
	for _, wl := range r.Workloads {
		for _, b := range wl.Bench {
			if b.Name != "Cyclictest" {
				continue
			}
			for _, m := range b.Metrics {
				if m.Name == "max-latency-ns" {
					w = math.Max(w, m.Value)
				}
			}
		}
	}
	return w
}

func change(from, to float64) float64 { return (to/from - 1) * 100 }
