package experiment

import (
	"cmp"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/workload"
)

// Result is everything one run reports. It contains no wall-clock data
// except PluginWall, set only when asked for (Options.PluginStats), so the
// same config and seed give byte-identical encodings once that is left out.
type Result struct {
	Config    ConfigInfo        `json:"config"`
	Plugins   []PluginInfo      `json:"plugins"`
	Workloads []workload.Report `json:"workloads"`
	Kernel    KernelSummary     `json:"kernel"`
	// Incomplete is set when the run stopped at its wall-clock bound
	// (run.max_wall, --max-wall) before the end: every figure covers the
	// simulated time up to Incomplete.ReachedNS only.
	Incomplete *Incomplete `json:"incomplete,omitempty"`
	// PluginStats counts each plugin's calls and round trips, and
	// PluginWall the wall time spent in them (Options.PluginStats; nil
	// without it). PluginWall alone differs between runs.
	PluginStats []PluginStats `json:"plugin_stats,omitempty"`
	PluginWall  []PluginWall  `json:"plugin_wall,omitempty"`
}

// ConfigInfo identifies what ran.
type ConfigInfo struct {
	Hash    string      `json:"hash"`
	Variant string      `json:"variant,omitempty"`
	Seed    uint64      `json:"seed"`
	Vars    [][2]string `json:"vars,omitempty"`
	// Point is the sweep point the run is: (benchmark key, value) pairs in
	// sweep order.
	Point             [][2]string `json:"point,omitempty"`
	CPUs              int         `json:"cpus"`
	HZ                int         `json:"hz"`
	NoHZ              string      `json:"nohz"`
	HighRes           bool        `json:"highres"`
	DurationNS        int64       `json:"duration_ns"`
	WarmupNS          int64       `json:"warmup_ns"`
	Events            uint64      `json:"events"`
	PosixTimerSignals string      `json:"posix_timer_signals"`
	// CputimeAccounting and IRQTimeAccounting are the kernel's CPU time
	// accounting, which makes the CPUs' proc_stat.
	CputimeAccounting string `json:"cputime_accounting"`
	IRQTimeAccounting bool   `json:"irq_time_accounting"`
	// KernelVersion is the release whose settings apply (kernel.version,
	// --kernel-version); Overridden the versioned attributes the file sets
	// otherwise. Both empty without a version.
	KernelVersion string            `json:"kernel_version,omitempty"`
	Overridden    []config.Override `json:"overridden,omitempty"`
	IdleStates    []string          `json:"idle_states,omitempty"` // the machine's idle_state names, in order
	// Break says why --breaktrace stopped the run at BreakNS (simulated
	// time); empty when it ran to the end.
	Break   string `json:"break,omitempty"`
	BreakNS int64  `json:"break_ns,omitempty"`
}

// CPUSummary is one CPU's line of the kernel table.
type CPUSummary struct {
	CPU               int   `json:"cpu"`
	LocalTimerIRQs    int64 `json:"local_timer_interrupts"`
	HRTimerIRQs       int64 `json:"hrtimer_interrupts"`
	DeviceWrites      int64 `json:"device_writes"`
	DeviceWriteCostNS int64 `json:"device_write_cost_ns"`
	Ticks             int64 `json:"ticks"`
	TickStops         int64 `json:"tick_stops"`
	IdleNS            int64 `json:"idle_ns"`
	TaskNS            int64 `json:"task_ns"`
	IRQNS             int64 `json:"irq_ns"`
	SoftirqNS         int64 `json:"softirq_ns"`
	// UserNS and SystemNS split TaskNS exactly: user-mode computation, and
	// syscalls and kernel work on behalf of a task.
	UserNS   int64 `json:"user_ns"`
	SystemNS int64 `json:"system_ns"`
	// ProcStat is the CPU's /proc/stat line as the configured accounting
	// makes it (kernel cputime_accounting, irq_time_accounting), in ns:
	// what the kernel reports, not the exact times above.
	ProcStat kernel.ProcStat `json:"proc_stat"`
}

// Counter is one counter value, from the kernel model or a plugin.
type Counter struct {
	Source string `json:"source"` // "kernel" or the plugin kind/role
	Name   string `json:"name"`
	CPU    int    `json:"cpu"`
	Value  int64  `json:"value"`
}

// GapSummary summarises the wheel catch-up gaps (jiffies behind at a
// TIMER_SOFTIRQ run, gaps > 1 only).
type GapSummary struct {
	Count int   `json:"count"`
	P50   int64 `json:"p50"`
	P99   int64 `json:"p99"`
	Max   int64 `json:"max"`
}

// KernelSummary is the machine-wide part of a result.
type KernelSummary struct {
	CPUs        []CPUSummary `json:"cpus"`
	CatchupGaps GapSummary   `json:"catchup_gaps"`
	Counters    []Counter    `json:"counters"`
}

// Total sums a kernel counter over CPUs.
func (r *Result) Total(name string) int64 {
	var s int64
	for _, c := range r.Kernel.Counters {
		if c.Source == "kernel" && c.Name == name {
			s += c.Value
		}
	}
	return s
}

// collect is the result of the run b made of spec, which ended at end: what
// ran, each workload's report, the per-CPU summaries, the catch-up gaps, and
// the kernel's and the plugins' counters.
func collect(spec *config.Spec, b *built, end ktime.Time) (*Result, error) {
	k := b.k
	r := &Result{Plugins: b.plugins, Config: configInfo(spec, b, end)}
	for _, w := range b.workloads {
		r.Workloads = append(r.Workloads, w.Report(k, end))
	}
	r.Kernel.CPUs = cpuSummaries(k)
	gaps := &k.CatchupGaps
	r.Kernel.CatchupGaps = GapSummary{Count: gaps.Count(), P50: gaps.Quantile(0.5), P99: gaps.Quantile(0.99), Max: gaps.Max()}
	var err error
	if r.Kernel.Counters, err = allCounters(k, b.plugins); err != nil {
		return nil, err
	}
	r.pluginStats(b.plugins)
	return r, nil
}

// configInfo says what the run b of spec was, ending at end.
func configInfo(spec *config.Spec, b *built, end ktime.Time) ConfigInfo {
	k := b.k
	ci := ConfigInfo{Hash: spec.Hash(), Variant: spec.Variant, Seed: spec.Run.Seed, CPUs: spec.Machine.CPUs,
		HZ: spec.Machine.HZ, NoHZ: spec.Machine.NoHZ, HighRes: spec.Machine.HighRes, DurationNS: spec.Run.Duration,
		WarmupNS: spec.Run.Warmup, Events: k.Events(), PosixTimerSignals: b.settings.PosixTimerSignals}
	ci.CputimeAccounting, ci.IRQTimeAccounting = k.CPUTimeAccounting()
	if !spec.KernelVersion.IsZero() {
		ci.KernelVersion = spec.KernelVersion.String()
	}
	ci.Overridden = b.overrides
	for _, s := range spec.Machine.IdleStates {
		ci.IdleStates = append(ci.IdleStates, s.Name)
	}
	if why := k.Broke(); why != "" {
		ci.Break, ci.BreakNS = why, int64(end)
	}
	for _, pv := range spec.Point() {
		ci.Point = append(ci.Point, [2]string{pv.Key, pv.Text})
	}
	for _, v := range spec.Vars {
		ci.Vars = append(ci.Vars, [2]string{v.Name, ctyString(v.Value)})
	}
	return ci
}

// cpuSummaries is each CPU's timer counts and time by context.
func cpuSummaries(k *kernel.Kernel) []CPUSummary {
	ctx := k.ContextTimes()
	exact, stat := k.ExactTimes(), k.ProcStats()
	out := make([]CPUSummary, 0, k.CPUs())
	for cpu := 0; cpu < k.CPUs(); cpu++ {
		g := func(n string) int64 { return k.Counters.Get(n, cpu) }
		out = append(out, CPUSummary{CPU: cpu, LocalTimerIRQs: g("local_timer_interrupts"),
			HRTimerIRQs: g("hrtimer_interrupts"), DeviceWrites: g("device_writes"), DeviceWriteCostNS: g("device_write_cost_ns"),
			Ticks: g("ticks"), TickStops: g("tick_stops"), IdleNS: ctx[cpu][0], TaskNS: ctx[cpu][1], IRQNS: ctx[cpu][2], SoftirqNS: ctx[cpu][3],
			UserNS: exact[cpu].User, SystemNS: exact[cpu].System, ProcStat: stat[cpu]})
	}
	return out
}

// allCounters is the kernel's counters, then each plugin's sorted by name
// and CPU, in one list allocated once at its length (on 64 CPUs some
// thousands).
func allCounters(k *kernel.Kernel, plugins []PluginInfo) ([]Counter, error) {
	ks := k.Counters.Samples()
	pcs := make([][]sdk.Counter, len(plugins))
	n := len(ks)
	for i, p := range plugins {
		if err := catchTransport(func() { pcs[i] = p.plugin.Counters() }); err != nil {
			return nil, err
		}
		n += len(pcs[i])
	}
	out := make([]Counter, 0, n)
	for _, s := range ks {
		out = append(out, Counter{Source: "kernel", Name: s.Name, CPU: s.CPU, Value: s.Value})
	}
	for i, p := range plugins {
		src := string(p.Kind)
		if p.Role != "" {
			src += "/" + p.Role
		}
		from := len(out)
		for _, c := range pcs[i] {
			out = append(out, Counter{Source: src, Name: c.Name, CPU: c.CPU, Value: c.Value})
		}
		slices.SortStableFunc(out[from:], func(a, b Counter) int {
			if c := strings.Compare(a.Name, b.Name); c != 0 {
				return c
			}
			return cmp.Compare(a.CPU, b.CPU)
		})
	}
	return out, nil
}

// PluginMax is the largest value of a plugin counter over CPUs.
func (r *Result) PluginMax(source, name string) int64 {
	var m int64
	for _, c := range r.Kernel.Counters {
		if strings.HasPrefix(c.Source, source) && c.Name == name && c.Value > m {
			m = c.Value
		}
	}
	return m
}

// PluginTotal sums a plugin counter (by source prefix and name) over CPUs.
func (r *Result) PluginTotal(source, name string) int64 {
	var s int64
	for _, c := range r.Kernel.Counters {
		if strings.HasPrefix(c.Source, source) && c.Name == name {
			s += c.Value
		}
	}
	return s
}

// ctyString renders a variable's value as HCL would print it.
func ctyString(v cty.Value) string {
	if !v.IsKnown() || v.IsNull() {
		return "null"
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return v.GoString()
	}
	return string(b)
}

// PluginNames lists the run's plugins for a one-line header: "wheel,
// hrtimer, clockevent lapic, governor menu", the kind named only where the
// plugin's name is not the kind's own ("wheel wheel" read as a typo).
func (r *Result) PluginNames() string {
	var names []string
	for _, p := range r.Plugins {
		if string(p.Kind) == p.Name {
			names = append(names, p.Name)
		} else {
			names = append(names, string(p.Kind)+" "+p.Name)
		}
	}
	return strings.Join(names, ", ")
}
