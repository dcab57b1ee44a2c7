package resultfmt

import (
	"github.com/tickemu/tickemu/framework/experiment"

	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, r *experiment.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the human summary: per workload its own output, then the
// kernel counters.
func WriteText(w io.Writer, r *experiment.Result) error {
	return WriteTextWith(w, r, TextOptions{})
}

// TextOptions shape the text summary.
type TextOptions struct {
	// FoldCounters prints one line for the plugins' raw counters instead
	// of a line each (thirty lines on the default scenario, most of them
	// repeating the kernel lines above): tickemu run shows them with
	// --counters.
	FoldCounters bool
}

// WriteTextWith is WriteText with options.
func WriteTextWith(w io.Writer, r *experiment.Result, o TextOptions) error {
	b := &strings.Builder{}
	c := r.Config
	fmt.Fprintf(b, "# tickemu run: %d CPUs, HZ=%d, nohz=%s, highres=%v, seed=%d", c.CPUs, c.HZ, c.NoHZ, c.HighRes, c.Seed)
	if c.Variant != "" {
		fmt.Fprintf(b, ", variant=%s", c.Variant)
	}
	for _, kv := range c.Point {
		fmt.Fprintf(b, ", %s=%s", kv[0], kv[1])
	}
	fmt.Fprintf(b, "\n# simulated %s (+%s warmup), %d events, config %s\n", ktime.FormatDuration(c.DurationNS), ktime.FormatDuration(c.WarmupNS), c.Events, shortHash(c.Hash))
	if c.Break != "" {
		fmt.Fprintf(b, "# stopped by --breaktrace at %.6f s: %s\n", float64(c.BreakNS)/float64(ktime.Second), c.Break)
	}
	if r.Incomplete != nil {
		fmt.Fprintf(b, "# INCOMPLETE: %s\n", experiment.IncompleteText(r.Incomplete))
	}
	for _, p := range r.Plugins {
		role := ""
		if p.Role != "" {
			role = " " + strconv.Quote(p.Role)
		}
		fmt.Fprintf(b, "# %s%s: %s %s%s\n", p.Kind, role, p.Name, p.Version, experiment.StrategyText(p))
	}
	if l := versionText(c); l != "" {
		b.WriteString(l)
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
	writeCPUTime(b, r, quiet)
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
	if lines := pluginLines(r); o.FoldCounters {
		fmt.Fprintf(b, "plugin counters: %d, not shown (--counters lists them; --format json holds them)\n", len(lines))
	} else {
		b.WriteString("plugin counters (sum over CPUs; max for max_*):\n")
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
		}
	}
	writeRunPluginStats(b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

func idleLines(r *experiment.Result) string {
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

func pluginLines(r *experiment.Result) []string {
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
func quietCPU(cs experiment.CPUSummary) bool {
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

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func avgF(sum, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

func avgUS(sumNS, n int64) float64 { return avgF(sumNS, n) / 1000 }

// versionText is the summary's kernel version line and the attributes the
// file overrides, or "" without a version.
func versionText(c experiment.ConfigInfo) string {
	if c.KernelVersion == "" && len(c.Overridden) == 0 {
		return ""
	}
	b := &strings.Builder{}
	if c.KernelVersion != "" {
		fmt.Fprintf(b, "# kernel %s: versioned settings as that release has them (docs/kernel-changes.md)", c.KernelVersion)
	} else {
		b.WriteString("# kernel: versioned settings preset")
	}
	if len(c.Overridden) == 0 {
		b.WriteString("; the file overrides none\n")
		return b.String()
	}
	b.WriteString("; the file overrides ")
	for i, o := range c.Overridden {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s = %s (the version has %s)", o.Setting, o.Value, o.Version)
	}
	b.WriteString("\n")
	return b.String()
}

// writeCPUTime writes the CPU time table: per CPU (the quiet ones left
// out, as in the kernel table) and machine-wide, the shares /proc/stat
// gives under the configured accounting, then the exact simulated shares.
func writeCPUTime(b *strings.Builder, r *experiment.Result, quiet []int) {
	c := r.Config
	irq := "no irq time accounting"
	if c.IRQTimeAccounting {
		irq = "irq time accounting"
	}
	idle := "idle from ticks"
	if c.NoHZ != "off" {
		idle = "idle = ts->idle_sleeptime"
	}
	acct := "tick sampling"
	if c.CputimeAccounting == "vtime" {
		acct = "vtime on nohz_full CPUs, tick sampling elsewhere"
	}
	fmt.Fprintf(b, "cpu time, %% of each row: /proc/stat (%s, %s, %s) | exact simulated time\n", acct, irq, idle)
	fmt.Fprintf(b, "%4s %7s %7s %7s %7s %7s %7s | %7s %7s %7s %7s %7s\n", "CPU", "user", "system", "idle", "iowait", "irq", "softirq",
		"user", "system", "idle", "irq", "softirq")
	var all experiment.CPUSummary
	row := func(name string, cs experiment.CPUSummary) {
		p := cs.ProcStat
		st := float64(p.Total())
		ex := float64(cs.UserNS + cs.SystemNS + cs.IdleNS + cs.IRQNS + cs.SoftirqNS)
		sh := func(v int64, tot float64) float64 {
			if tot == 0 {
				return 0
			}
			return 100 * float64(v) / tot
		}
		fmt.Fprintf(b, "%4s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f | %7.2f %7.2f %7.2f %7.2f %7.2f\n", name,
			sh(p.User+p.Nice, st), sh(p.System, st), sh(p.Idle, st), sh(p.Iowait, st), sh(p.IRQ, st), sh(p.Softirq, st),
			sh(cs.UserNS, ex), sh(cs.SystemNS, ex), sh(cs.IdleNS, ex), sh(cs.IRQNS, ex), sh(cs.SoftirqNS, ex))
	}
	q := 0
	for _, cs := range r.Kernel.CPUs {
		all.UserNS += cs.UserNS
		all.SystemNS += cs.SystemNS
		all.IdleNS += cs.IdleNS
		all.IRQNS += cs.IRQNS
		all.SoftirqNS += cs.SoftirqNS
		p := &all.ProcStat
		p.User += cs.ProcStat.User
		p.Nice += cs.ProcStat.Nice
		p.System += cs.ProcStat.System
		p.Idle += cs.ProcStat.Idle
		p.Iowait += cs.ProcStat.Iowait
		p.IRQ += cs.ProcStat.IRQ
		p.Softirq += cs.ProcStat.Softirq
		p.Steal += cs.ProcStat.Steal
	}
	row("all", all)
	for _, cs := range r.Kernel.CPUs {
		if q < len(quiet) && quiet[q] == cs.CPU {
			q++
			continue
		}
		row(strconv.Itoa(cs.CPU), cs)
	}
}
