package experiment

// The benchmark format of one run: `tickemu run --format bench` and the
// source of every metric a comparison analyses (BenchMetrics reads it back),
// which is why it lives here and the other encoders in framework/resultfmt.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/workload"
)

// StrategyText is a plugin's configuration as the summaries print it after
// its name and version: " key=value ..." in key order, values in their
// attribute's unit, costs left out; empty when nothing is left.
func StrategyText(p PluginInfo) string {
	cfg := p.Config
	var parts []string
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		if strings.HasSuffix(k, "_ns") || strings.HasSuffix(k, "_cost") {
			continue // costs are in the JSON output
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+valueText(p.Schema, k, cfg[k]))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " ")
}

// valueText prints a canonical config value in its attribute's unit:
// durations as "50ns" or "250us", frequencies as "100MHz" (the canonical
// forms are ns and Hz numbers, "50" and "1e+08").
func valueText(s sdk.Schema, name, v string) string {
	a, ok := s.Lookup(name)
	if !ok {
		return v
	}
	switch a.Type {
	case sdk.TypeDuration:
		if ns, err := strconv.ParseInt(v, 10, 64); err == nil {
			return ktime.FormatDuration(ns)
		}
	case sdk.TypeFrequency:
		if hz, err := strconv.ParseFloat(v, 64); err == nil {
			return frequencyText(hz)
		}
	}
	return v
}

// frequencyText prints Hz with the largest unit the value reaches: 3GHz,
// 100MHz, 14.31818MHz.
func frequencyText(hz float64) string {
	for _, u := range []struct {
		div  float64
		name string
	}{{1e9, "GHz"}, {1e6, "MHz"}, {1e3, "kHz"}} {
		if hz >= u.div {
			return strconv.FormatFloat(hz/u.div, 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatFloat(hz, 'f', -1, 64) + "Hz"
}

// BenchOptions shape the benchmark-format output.
type BenchOptions struct {
	// VariantKey adds /variant=NAME to every benchmark name.
	VariantKey bool
	// Header writes the configuration lines (skip for the 2nd..nth result of a file).
	Header bool
	// Units writes the Unit metadata lines.
	Units bool
}

// WriteBench writes Go benchmark format lines (golang.org/design/14313) that
// benchstat reads: configuration lines, one result line per workload bench
// line plus a Kernel line, and Unit metadata.
func WriteBench(w io.Writer, r *Result, o BenchOptions) error {
	b := &strings.Builder{}
	if o.Header {
		writeBenchHeader(b, r)
	}
	lw := benchLineWriter{b: b, prefix: benchPrefix(r.Config, o.VariantKey), units: map[string]string{}}
	types := map[string]int{}
	for _, wr := range r.Workloads {
		types[wr.Type]++
	}
	for _, wr := range r.Workloads {
		inst := ""
		if types[wr.Type] > 1 {
			inst = wr.Name // several instances of one type: tell their lines apart
		}
		for _, bl := range wr.Bench {
			lw.line(bl, inst)
		}
	}
	lw.line(kernelBenchLine(r), "")
	lw.line(workload.BenchLine{Name: "CPUTime", Metrics: cpuTimeMetrics(r)}, "")
	if o.Units {
		for _, u := range lw.unitOrder {
			fmt.Fprintf(b, "Unit %s better=%s assume=exact\n", u, lw.units[u])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeBenchHeader writes the configuration lines of r: its config hash,
// whether it is incomplete, the machine, the kernel release and the plugins.
func writeBenchHeader(b *strings.Builder, r *Result) {
	c := r.Config
	fmt.Fprintf(b, "tickemu-config: %s\n", c.Hash)
	if r.Incomplete != nil {
		// A configuration line, so benchstat keeps these results apart.
		fmt.Fprintf(b, "incomplete: %s\n", IncompleteText(r.Incomplete))
	}
	fmt.Fprintf(b, "cpus: %d\nhz: %d\nnohz: %s\nhighres: %v\n", c.CPUs, c.HZ, c.NoHZ, c.HighRes)
	if c.KernelVersion != "" {
		fmt.Fprintf(b, "kernel-version: %s\n", c.KernelVersion)
	}
	for _, p := range r.Plugins {
		role := ""
		if p.Role != "" {
			role = "-" + p.Role
		}
		fmt.Fprintf(b, "plugin-%s%s: %s %s%s\n", p.Kind, role, p.Name, p.Version, StrategyText(p))
	}
}

// benchPrefix is what every benchmark name of a result carries: the sweep
// point's keys first (they are part of what a line measures, with or
// without the variant key), then /variant=NAME if asked.
func benchPrefix(c ConfigInfo, variantKey bool) string {
	prefix := ""
	for _, kv := range c.Point {
		prefix += "/" + kv[0] + "=" + kv[1]
	}
	if variantKey && c.Variant != "" {
		prefix += "/variant=" + c.Variant
	}
	return prefix
}

// benchLineWriter writes result lines, noting each metric's unit (better
// direction) in the order first seen, for the Unit lines.
type benchLineWriter struct {
	b         *strings.Builder
	prefix    string
	units     map[string]string
	unitOrder []string
}

// line writes bench line bl of workload instance inst ("" when its type has
// one instance).
func (lw *benchLineWriter) line(bl workload.BenchLine, inst string) {
	name := "Benchmark" + bl.Name + lw.prefix
	if inst != "" {
		name += "/name=" + inst
	}
	if bl.Sub != "" {
		name += "/" + bl.Sub
	}
	lw.b.WriteString(name + " 1")
	for _, m := range bl.Metrics {
		lw.b.WriteString(" " + formatValue(m.Value) + " " + m.Name)
		if _, ok := lw.units[m.Name]; !ok {
			lw.unitOrder = append(lw.unitOrder, m.Name)
		}
		lw.units[m.Name] = m.Better
	}
	lw.b.WriteString("\n")
}

// kernelBenchLine is the Kernel line: the timer subsystem's totals and the
// idle entries by state.
func kernelBenchLine(r *Result) workload.BenchLine {
	return workload.BenchLine{Name: "Kernel", Metrics: append([]workload.Metric{
		{Name: "hrtimer-interrupts", Value: float64(r.Total("hrtimer_interrupts")), Better: "lower"},
		{Name: "device-writes", Value: float64(r.Total("device_writes")), Better: "lower"},
		{Name: "hrtimer-hangs", Value: float64(r.Total("hrtimer_hangs")), Better: "lower"},
		{Name: "softirq-timer-runs", Value: float64(r.Total("softirq_TIMER")), Better: "lower"},
		{Name: "wheel-iterations", Value: float64(r.Total("wheel_iterations")), Better: "lower"},
		{Name: "max-catchup-gap-jiffies", Value: float64(r.Kernel.CatchupGaps.Max), Better: "lower"},
		{Name: "tick-stops", Value: float64(r.Total("tick_stops")), Better: "lower"},
		{Name: "tick-retains", Value: float64(r.Total("tick_retains")), Better: "lower"},
	}, idleEntryMetrics(r)...)}
}

// cpuTimeMetrics are the machine's CPU time shares in percent: stat-* as
// /proc/stat reports them under the configured accounting (of the fields'
// sum, as mpstat computes them), exact-* the simulated time by context.
func cpuTimeMetrics(r *Result) []workload.Metric {
	var st [6]int64 // user (with nice), system, idle (with iowait), irq, softirq, total
	var ex [6]int64
	for _, c := range r.Kernel.CPUs {
		p := c.ProcStat
		st[0] += p.User + p.Nice
		st[1] += p.System
		st[2] += p.Idle + p.Iowait
		st[3] += p.IRQ
		st[4] += p.Softirq
		st[5] += p.Total()
		ex[0] += c.UserNS
		ex[1] += c.SystemNS
		ex[2] += c.IdleNS
		ex[3] += c.IRQNS
		ex[4] += c.SoftirqNS
		ex[5] += c.UserNS + c.SystemNS + c.IdleNS + c.IRQNS + c.SoftirqNS
	}
	names := [5]string{"user", "system", "idle", "irq", "softirq"}
	better := [5]string{"higher", "lower", "higher", "lower", "lower"}
	var out []workload.Metric
	for _, k := range []struct {
		prefix string
		v      *[6]int64
	}{{"stat-", &st}, {"exact-", &ex}} {
		for i, n := range names {
			pct := 0.0
			if k.v[5] > 0 {
				pct = math.Round(1e4*float64(k.v[i])/float64(k.v[5])) / 100
			}
			out = append(out, workload.Metric{Name: k.prefix + n + "-pct", Value: pct, Better: better[i]})
		}
	}
	return out
}

// idleEntryMetrics are the idle entries per state on machines with idle
// states: idle-enter-poll, then one per idle_state block in its order.
func idleEntryMetrics(r *Result) []workload.Metric {
	if len(r.Config.IdleStates) == 0 {
		return nil
	}
	var out []workload.Metric
	for _, st := range append([]string{"poll"}, r.Config.IdleStates...) {
		out = append(out, workload.Metric{Name: "idle-enter-" + st, Value: float64(r.Total("idle_enter:" + st)), Better: "lower"})
	}
	return out
}

func formatValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// IncompleteText says where an incomplete run stopped and what its figures
// cover.
func IncompleteText(in *Incomplete) string {
	return fmt.Sprintf("%s: stopped at %s of %s simulated; every figure covers the first %s only",
		in.Reason, FormatSpan(in.ReachedNS), FormatSpan(in.EndNS), FormatSpan(in.ReachedNS))
}

// FormatSpan prints a span of simulated time for people: 225h39m33.2s,
// 812.373ms (to the millisecond from a second up).
func FormatSpan(ns int64) string {
	d := time.Duration(ns)
	if d >= time.Second {
		d = d.Round(time.Millisecond)
	}
	return d.String()
}

// BenchRecord returns what a comparison keeps of a run, and what a shard
// stores: its bench configuration lines (WriteBench's header) and its result
// lines with the sweep and variant keys. None of them depends on the seed.
func BenchRecord(r *Result) (header, lines []string, err error) {
	var h, l bytes.Buffer
	if err := WriteBench(&h, r, BenchOptions{Header: true}); err != nil {
		return nil, nil, err
	}
	if err := WriteBench(&l, r, BenchOptions{VariantKey: true}); err != nil {
		return nil, nil, err
	}
	for _, x := range strings.Split(h.String(), "\n") {
		if x != "" && !strings.HasPrefix(x, "Benchmark") && !strings.HasPrefix(x, "Unit ") {
			header = append(header, x)
		}
	}
	for _, x := range strings.Split(l.String(), "\n") {
		if x != "" {
			lines = append(lines, x)
		}
	}
	return header, lines, nil
}
