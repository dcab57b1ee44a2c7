package experiment

import (
	"encoding/json"
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

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the human summary: per workload its own output, then the
// kernel counters.
func WriteText(w io.Writer, r *Result) error {
	b := &strings.Builder{}
	c := r.Config
	fmt.Fprintf(b, "# tickemu run: %d CPUs, HZ=%d, nohz=%s, highres=%v, seed=%d", c.CPUs, c.HZ, c.NoHZ, c.HighRes, c.Seed)
	if c.Variant != "" {
		fmt.Fprintf(b, ", variant=%s", c.Variant)
	}
	fmt.Fprintf(b, "\n# simulated %s (+%s warmup), %d events, config %s\n", ktime.FormatDuration(c.DurationNS), ktime.FormatDuration(c.WarmupNS), c.Events, shortHash(c.Hash))
	if c.Break != "" {
		fmt.Fprintf(b, "# stopped by --breaktrace at %.6f s: %s\n", float64(c.BreakNS)/float64(ktime.Second), c.Break)
	}
	if r.Incomplete != nil {
		fmt.Fprintf(b, "# INCOMPLETE: %s\n", incompleteText(r.Incomplete))
	}
	for _, p := range r.Plugins {
		role := ""
		if p.Role != "" {
			role = " " + strconv.Quote(p.Role)
		}
		fmt.Fprintf(b, "# %s%s: %s %s%s\n", p.Kind, role, p.Name, p.Version, strategyText(p))
	}
	for _, wr := range r.Workloads {
		if len(wr.Text) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n== workload %s %q ==\n", wr.Type, wr.Name)
		for _, l := range wr.Text {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("\n== kernel ==\n")
	fmt.Fprintf(b, "%4s %12s %12s %10s %12s %9s %9s %7s %7s %7s %7s\n", "CPU", "timer-irqs", "hrtimer-irqs", "dev-writes", "write-us", "ticks", "tickstops", "idle%", "task%", "irq%", "sirq%")
	var quiet []int
	for _, cs := range r.Kernel.CPUs {
		if quietCPU(cs) && len(r.Kernel.CPUs) > 8 {
			quiet = append(quiet, cs.CPU)
			continue
		}
		tot := float64(cs.IdleNS + cs.TaskNS + cs.IRQNS + cs.SoftirqNS)
		pct := func(v int64) float64 {
			if tot == 0 {
				return 0
			}
			return 100 * float64(v) / tot
		}
		fmt.Fprintf(b, "%4d %12d %12d %10d %12.1f %9d %9d %7.2f %7.2f %7.2f %7.2f\n", cs.CPU, cs.LocalTimerIRQs, cs.HRTimerIRQs,
			cs.DeviceWrites, float64(cs.DeviceWriteCostNS)/1000, cs.Ticks, cs.TickStops, pct(cs.IdleNS), pct(cs.TaskNS), pct(cs.IRQNS), pct(cs.SoftirqNS))
	}
	if len(quiet) > 0 {
		fmt.Fprintf(b, "%4s %d CPUs idle throughout (at most one timer interrupt and device write, no task or softirq time): %s\n", "", len(quiet), cpuList(quiet))
	}
	fmt.Fprintf(b, "hrtimer: starts %d cancels %d expiries %d (soft %d) interrupts %d retries %d hangs %d (nr_hangs %d, max_hang_time %d ns)\n",
		r.Total("hrtimer_start"), r.Total("hrtimer_cancel"), r.Total("hrtimer_expire"), r.Total("hrtimer_expire_soft"),
		r.Total("hrtimer_interrupts"), r.Total("hrtimer_retries"), r.Total("hrtimer_hangs"),
		r.PluginTotal("hrtimer", "nr_hangs"), r.PluginMax("hrtimer", "max_hang_time"))
	fmt.Fprintf(b, "wheel: starts %d cancels %d expiries %d softirq runs %d catch-up iterations %d cascades %d\n",
		r.Total("timer_start"), r.Total("timer_cancel"), r.Total("timer_expire"), r.Total("wheel_runs"), r.Total("wheel_iterations"), r.Total("wheel_cascades"))
	g := r.Kernel.CatchupGaps
	fmt.Fprintf(b, "wheel catch-up gaps (jiffies, runs with gap > 1): n=%d p50=%d p99=%d max=%d\n", g.Count, g.P50, g.P99, g.Max)
	fmt.Fprintf(b, "signals: delivered %d dropped-stale %d stale-delivered %d; posix timer fires %d overruns %d; wakeups %d; context switches %d; ipis %d\n",
		r.Total("signals_delivered"), r.Total("signals_dropped"), r.Total("signals_stale_delivered"), r.Total("posix_timer_fires"),
		r.Total("posix_timer_overruns"), r.Total("wakeups"), r.Total("context_switches"), r.Total("ipi_sent"))
	if n := r.Total("broadcast_interrupts"); n > 0 || r.Total("broadcast_enter") > 0 {
		ipis := r.Total("broadcast_ipis")
		fmt.Fprintf(b, "broadcast: enters %d exits %d interrupts %d ipis %d device writes %d; wake delay avg %.1f us per IPI\n",
			r.Total("broadcast_enter"), r.Total("broadcast_exit"), n, ipis, r.Total("broadcast_device_writes"), avgUS(r.Total("broadcast_wake_delay_ns"), ipis))
	}
	if w := r.Total("wakeups"); w > 0 {
		exits := r.Total("idle_exits")
		fmt.Fprintf(b, "device writes %d (cost of the writes %.1f us, %.0f ns each), -ETIME %d, retries %d; idle exit latency avg %.1f us over %d exits\n",
			r.Total("device_writes"), float64(r.Total("device_write_cost_ns"))/1000, avgF(r.Total("device_write_cost_ns"), r.Total("device_writes")),
			r.Total("device_etime"), r.Total("device_retries"), avgUS(r.Total("idle_exit_latency_ns"), exits), exits)
	}
	if idle := idleLines(r); idle != "" {
		b.WriteString(idle)
	}
	b.WriteString("plugin counters (sum over CPUs; max for max_*):\n")
	for _, l := range pluginLines(r) {
		b.WriteString("  " + l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func idleLines(r *Result) string {
	res := map[string]int64{}
	var names []string
	for _, c := range r.Kernel.Counters {
		if c.Source == "kernel" && strings.HasPrefix(c.Name, "idle_enter:") {
			n := strings.TrimPrefix(c.Name, "idle_enter:")
			if _, ok := res[n]; !ok {
				names = append(names, n)
			}
			res[n] += c.Value
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	s := "idle entries:"
	for _, n := range names {
		s += fmt.Sprintf(" %s=%d", n, res[n])
		if v := r.Total("idle_residency_ns:" + n); v > 0 {
			s += fmt.Sprintf(" (%s resident)", ktime.FormatDuration(v-v%1000))
		}
	}
	return s + "\n"
}

func pluginLines(r *Result) []string {
	type acc struct {
		v   int64
		max bool
	}
	sums := map[string]*acc{}
	var keys []string
	for _, c := range r.Kernel.Counters {
		if c.Source == "kernel" {
			continue
		}
		key := c.Source + " " + c.Name
		a := sums[key]
		if a == nil {
			a = &acc{max: strings.HasPrefix(c.Name, "max")}
			sums[key] = a
			keys = append(keys, key)
		}
		if a.max {
			a.v = max(a.v, c.Value)
		} else {
			a.v += c.Value
		}
	}
	var out []string
	for _, k := range keys {
		l := fmt.Sprintf("%s = %d", k, sums[k].v)
		if note := counterNote(k); note != "" {
			l += "  (" + note + ")"
		}
		out = append(out, l)
	}
	return out
}

// counterNote explains a plugin counter that a kernel line above counts
// differently, so that the two figures do not seem to disagree.
func counterNote(key string) string {
	src, name, _ := strings.Cut(key, " ")
	switch {
	case src == "hrtimer" && name == "device_writes":
		return "programs the hrtimer plugin asked for; the kernel's device writes are those that reached the device"
	case strings.HasPrefix(src, "clockevent") && name == "cost_ns":
		return "every device call: writes, interrupt acks and state changes; the kernel's cost is the writes'"
	case strings.HasPrefix(src, "clockevent") && name == "writes":
		return "the device's own count of ->set_next_event()"
	}
	return ""
}

// quietCPU reports whether a CPU did nothing but boot and idle.
func quietCPU(cs CPUSummary) bool {
	return cs.LocalTimerIRQs <= 1 && cs.DeviceWrites <= 1 && cs.TaskNS == 0 && cs.SoftirqNS == 0 && cs.Ticks <= 1
}

// cpuList prints CPU numbers as a kernel cpulist: "1-9,14-39".
func cpuList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(",")
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		} else {
			fmt.Fprintf(&b, "%d", cpus[i])
		}
		i = j + 1
	}
	return b.String()
}

func strategyText(p PluginInfo) string {
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

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
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
	c := r.Config
	if o.Header {
		fmt.Fprintf(b, "tickemu-config: %s\n", c.Hash)
		if r.Incomplete != nil {
			// A configuration line, so benchstat keeps these results apart.
			fmt.Fprintf(b, "incomplete: %s\n", incompleteText(r.Incomplete))
		}
		fmt.Fprintf(b, "cpus: %d\nhz: %d\nnohz: %s\nhighres: %v\n", c.CPUs, c.HZ, c.NoHZ, c.HighRes)
		for _, p := range r.Plugins {
			role := ""
			if p.Role != "" {
				role = "-" + p.Role
			}
			fmt.Fprintf(b, "plugin-%s%s: %s %s%s\n", p.Kind, role, p.Name, p.Version, strategyText(p))
		}
	}
	prefix := ""
	if o.VariantKey && c.Variant != "" {
		prefix = "/variant=" + c.Variant
	}
	units := map[string]string{}
	var unitOrder []string
	line := func(bl workload.BenchLine, inst string) {
		name := "Benchmark" + bl.Name + prefix
		if inst != "" {
			name += "/name=" + inst
		}
		if bl.Sub != "" {
			name += "/" + bl.Sub
		}
		b.WriteString(name + " 1")
		for _, m := range bl.Metrics {
			b.WriteString(" " + formatValue(m.Value) + " " + m.Name)
			if _, ok := units[m.Name]; !ok {
				unitOrder = append(unitOrder, m.Name)
			}
			units[m.Name] = m.Better
		}
		b.WriteString("\n")
	}
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
			line(bl, inst)
		}
	}
	line(workload.BenchLine{Name: "Kernel", Metrics: append([]workload.Metric{
		{Name: "hrtimer-interrupts", Value: float64(r.Total("hrtimer_interrupts")), Better: "lower"},
		{Name: "device-writes", Value: float64(r.Total("device_writes")), Better: "lower"},
		{Name: "hrtimer-hangs", Value: float64(r.Total("hrtimer_hangs")), Better: "lower"},
		{Name: "softirq-timer-runs", Value: float64(r.Total("softirq_TIMER")), Better: "lower"},
		{Name: "wheel-iterations", Value: float64(r.Total("wheel_iterations")), Better: "lower"},
		{Name: "max-catchup-gap-jiffies", Value: float64(r.Kernel.CatchupGaps.Max), Better: "lower"},
		{Name: "tick-stops", Value: float64(r.Total("tick_stops")), Better: "lower"},
		{Name: "tick-retains", Value: float64(r.Total("tick_retains")), Better: "lower"},
	}, idleEntryMetrics(r)...)}, "")
	if o.Units {
		for _, u := range unitOrder {
			fmt.Fprintf(b, "Unit %s better=%s assume=exact\n", u, units[u])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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

func avgF(sum, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

func avgUS(sumNS, n int64) float64 { return avgF(sumNS, n) / 1000 }

// incompleteText says where an incomplete run stopped and what its figures
// cover.
func incompleteText(in *Incomplete) string {
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
