package experiment

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/tickemu/tickemu/framework/stats"
)

// Comparison is the outcome of Compare: every run, and per metric the
// statistics of each variant and its comparison with the base.
type Comparison struct {
	File     string   `json:"file"`
	Variants []string `json:"variants"` // Variants[0] is the base
	Seeds    []uint64 `json:"seeds"`
	// Sweeps are the experiment's sweeps; every metric's bench name
	// carries the point's keys ("Kernel/hz=250").
	Sweeps     []SweepInfo `json:"sweeps,omitempty"`
	Alpha      float64     `json:"alpha"`
	Confidence float64     `json:"confidence"`
	// Runs hold every cell of Grid, numbered as Grid.Index numbers them
	// (variant-major: Variants[v] with Seeds[s] is Runs[v*len(Seeds)+s]
	// without sweeps).
	Runs     []RunOutcome `json:"-"`
	Grid     Grid         `json:"-"`
	Failures []Failure    `json:"failures"`
	// Interrupted counts the runs that did not finish because the
	// comparison was stopped (SIGINT); they are among Failures too.
	Interrupted int `json:"interrupted,omitempty"`
	// IncompleteRuns are the interrupted runs that stopped after their
	// current event with partial results (IncompleteError), which the
	// statistics leave out.
	IncompleteRuns []IncompleteRun `json:"incomplete_runs,omitempty"`
	// Metrics in the order benchstat meets them in the bench output: by
	// seed, then variant, then line and value.
	Metrics []MetricComparison `json:"metrics"`
	// PluginStats and PluginWall are --plugin-stats by variant
	// (Options.PluginStats; nil without it): PluginWall alone differs
	// between runs.
	PluginStats []VariantPluginStats `json:"plugin_stats,omitempty"`
	PluginWall  []VariantPluginWall  `json:"plugin_wall,omitempty"`
}

// IncompleteRun is a run the interrupt stopped, with its partial metrics:
// they cover the simulated time up to Incomplete.ReachedNS only.
type IncompleteRun struct {
	Variant    string      `json:"variant"`
	Point      string      `json:"point,omitempty"`
	Seed       uint64      `json:"seed"`
	Incomplete *Incomplete `json:"incomplete"`
	Metrics    []RunMetric `json:"metrics"`
}

// incompleteRuns lists the runs with partial results in report order.
func incompleteRuns(runs []RunOutcome) []IncompleteRun {
	var out []IncompleteRun
	for _, r := range runs {
		var ie *IncompleteError
		if errors.As(r.Err, &ie) {
			out = append(out, IncompleteRun{Variant: r.Variant, Point: r.Point.Key(), Seed: r.Seed, Incomplete: ie.Incomplete, Metrics: r.Metrics})
		}
	}
	return out
}

// SweepInfo is a sweep as reports show it.
type SweepInfo struct {
	Name   string   `json:"name"`
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// Run returns the run of variant v at point p with seed s.
func (c *Comparison) Run(v, p, s int) *RunOutcome { return &c.Runs[c.Grid.Index(v, p, s)] }

// MetricComparison is one metric (a benchmark line's unit) across variants.
type MetricComparison struct {
	Bench  string `json:"bench"`
	Unit   string `json:"unit"`
	Better string `json:"better,omitempty"`
	// Point indexes the sweep point (Grid.Points) the metric was measured
	// at, and Name is Bench without the point's keys
	// ("Cyclictest/thread=0" for "Cyclictest/hz=250/thread=0"): the same
	// Name and Unit at every point make one series of a sweep.
	Point int    `json:"-"`
	Name  string `json:"-"`
	// Variants has one entry per Comparison.Variants, in that order.
	Variants []VariantStats `json:"variants"`
}

// Key names the metric as LKP names its stats: "Cyclictest/thread=0.max-latency-ns".
func (m *MetricComparison) Key() string { return m.Bench + "." + m.Unit }

// VariantStats is one variant's sample of a metric.
type VariantStats struct {
	Variant string `json:"variant"`
	// Values holds one value per seed (Comparison.Seeds order); NaN (null
	// in JSON) where the run failed or lacked the metric.
	Values  Values        `json:"values"`
	Summary stats.Summary `json:"summary"`
	// VsBase compares with the base variant; nil for the base itself.
	VsBase *VsBase `json:"vs_base,omitempty"`
}

// VsBase is a variant's comparison with the base variant on one metric.
type VsBase struct {
	// UTest is benchstat's unpaired test; Delta is benchstat's cell ("~"
	// or the change of the median, "+9.95%").
	UTest stats.UTest `json:"mann_whitney"`
	Delta string      `json:"delta"`
	// Paired is the Wilcoxon signed-rank test over the seeds both variants
	// completed; PairedDelta shows its median per-seed difference in
	// percent of the base median ("~" when not significant).
	Paired      stats.SignedRank `json:"wilcoxon"`
	PairedDelta string           `json:"paired_delta"`
	// MeanChange is LKP's %change of the means (an absolute difference for
	// units ending in "%", as lkp-tests lib/compare.rb:calc_perf_change()
	// does for such stats; AbsChange says which).
	MeanChange float64 `json:"mean_change"`
	AbsChange  bool    `json:"abs_change,omitempty"`
	// Warnings about the paired test (too few pairs to ever reach alpha).
	Warnings []string `json:"warnings,omitempty"`
	// Exact says both samples are deterministic (every seed gave the same
	// value on each side): Delta and PairedDelta are then the exact change
	// of the value, "+12.34%" or "0.00%", with no test behind them and no
	// warning (a test's p-value could never reach alpha: identical seeds
	// are one observation repeated).
	Exact bool `json:"exact,omitempty"`
}

// MarshalJSON writes an undefined MeanChange (no sample) as null.
func (vb *VsBase) MarshalJSON() ([]byte, error) {
	type plain VsBase
	var mc any
	if !math.IsNaN(vb.MeanChange) && !math.IsInf(vb.MeanChange, 0) {
		mc = vb.MeanChange
	}
	return stats.MarshalJSON(struct {
		*plain
		MeanChange any `json:"mean_change"`
	}{(*plain)(vb), mc})
}

// Values is a per-seed series with NaN for missing values.
type Values []float64

// MarshalJSON writes missing values as null.
func (v Values) MarshalJSON() ([]byte, error) {
	out := make([]any, len(v))
	for i, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out[i] = x
		}
	}
	return stats.MarshalJSON(out)
}

// Present returns the values that are there (the seeds whose run succeeded).
func (v Values) Present() []float64 {
	var out []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

// Analyze computes the statistics of the runs of a grid without sweeps
// (variant-major). alpha and confidence default to benchstat's 0.05 and 0.95
// when zero.
func Analyze(file string, variants []string, seeds []uint64, runs []RunOutcome, alpha, confidence float64) *Comparison {
	return AnalyzeGrid(file, NewGrid(variants, nil, seeds), runs, alpha, confidence)
}

// AnalyzeGrid computes the statistics of the runs of grid g (every cell, in
// Grid order, as RunMatrix returns them). A metric is one bench line's unit
// at one sweep point: the point's keys are in its bench name.
func AnalyzeGrid(file string, g Grid, runs []RunOutcome, alpha, confidence float64) *Comparison {
	variants, seeds := g.Variants, g.Seeds
	if alpha == 0 {
		alpha = stats.DefaultAlpha
	}
	if confidence == 0 {
		confidence = stats.DefaultConfidence
	}
	c := &Comparison{File: file, Variants: variants, Seeds: seeds, Alpha: alpha, Confidence: confidence,
		Runs: runs, Grid: g, Failures: Failures(runs), IncompleteRuns: incompleteRuns(runs)}
	for _, sw := range g.Sweeps {
		si := SweepInfo{Name: sw.Name, Key: sw.Key}
		for _, v := range sw.Values {
			si.Values = append(si.Values, v.Text)
		}
		c.Sweeps = append(c.Sweeps, si)
	}
	index := map[metricKey]int{}
	for _, i := range g.Order() {
		if r := runs[i]; r.Err == nil { // not failed, nor partial (IncompleteError)
			c.addRunMetrics(index, g.Cell(i), r.Metrics)
		}
	}
	for i := range c.Metrics {
		analyzeMetric(&c.Metrics[i], alpha, confidence)
	}
	c.pluginStats()
	return c
}

// metricKey is what a metric of a comparison is: a bench line (with the
// sweep point's keys in its name) and a unit.
type metricKey struct{ bench, unit string }

// addRunMetrics files the metrics ms of the run of cell under their
// Comparison.Metrics entry (index: where each key's is), making the entry on
// first sight with a NaN for every variant and seed. A benchmark name that
// repeats within a run (two workloads writing the same line) gets "#2",
// "#3"... so that every value pairs with its counterpart of the same seed.
func (c *Comparison) addRunMetrics(index map[metricKey]int, cell Cell, ms []RunMetric) {
	seen := map[metricKey]int{}
	for _, m := range ms {
		k := metricKey{m.Bench, m.Unit}
		seen[k]++
		if n := seen[k]; n > 1 {
			k.bench = fmt.Sprintf("%s#%d", m.Bench, n)
		}
		i, ok := index[k]
		if !ok {
			i = len(c.Metrics)
			index[k] = i
			mc := MetricComparison{Bench: k.bench, Unit: m.Unit, Better: m.Better, Point: cell.P,
				Name: withoutPoint(k.bench, cell.Point.Key()), Variants: make([]VariantStats, len(c.Variants))}
			for vi, name := range c.Variants {
				vals := make(Values, len(c.Seeds))
				for j := range vals {
					vals[j] = math.NaN()
				}
				mc.Variants[vi] = VariantStats{Variant: name, Values: vals}
			}
			c.Metrics = append(c.Metrics, mc)
		}
		c.Metrics[i].Variants[cell.V].Values[cell.S] = m.Value
	}
}

// withoutPoint removes a sweep point's keys from a benchmark name: WriteBench
// writes them after the line's name ("Kernel/hz=250", "Cyclictest/hz=250/thread=0").
func withoutPoint(bench, key string) string {
	if key == "" {
		return bench
	}
	head, rest, _ := strings.Cut(bench, "/")
	r, ok := strings.CutPrefix(rest, key)
	if ok && (r == "" || r[0] == '/' || r[0] == '#') { // "Kernel/hz=250", ".../thread=0", "Kernel/hz=250#2"
		return head + r
	}
	return bench
}

func analyzeMetric(m *MetricComparison, alpha, confidence float64) {
	for i := range m.Variants {
		m.Variants[i].Summary = stats.Summarize(m.Variants[i].Values.Present(), confidence)
	}
	base := &m.Variants[0]
	for i := 1; i < len(m.Variants); i++ {
		v := &m.Variants[i]
		vb := &VsBase{}
		vb.UTest = stats.MannWhitney(base.Values.Present(), v.Values.Present(), alpha)
		vb.Delta = vb.UTest.FormatDelta(base.Summary.Median, v.Summary.Median)
		if base.Summary.N == 0 || v.Summary.N == 0 {
			// No sample on one side: nothing to compare.
			vb.Delta = "?"
		}
		var bx, vx []float64
		for s := range v.Values {
			if !math.IsNaN(base.Values[s]) && !math.IsNaN(v.Values[s]) {
				bx = append(bx, base.Values[s])
				vx = append(vx, v.Values[s])
			}
		}
		// Both slices come from the same seeds and hold no NaN, so the test
		// cannot fail.
		vb.Paired, _ = stats.WilcoxonSignedRank(bx, vx)
		vb.PairedDelta = pairedDelta(vb.Paired, base.Summary.Median, alpha)
		if need := pairsNeeded(alpha); vb.Paired.P > alpha && vb.Paired.Pairs > 0 && vb.Paired.Pairs < need {
			vb.Warnings = append(vb.Warnings, fmt.Sprintf("need >= %d pairs to detect a difference at alpha level %v", need, alpha))
		}
		if base.Summary.Deterministic && v.Summary.Deterministic {
			vb.Exact = true
			vb.Delta = exactDelta(base.Summary.Median, v.Summary.Median)
			vb.PairedDelta, vb.Warnings, vb.UTest.Warnings = vb.Delta, nil, nil
		}
		if strings.HasSuffix(m.Unit, "%") {
			vb.MeanChange, vb.AbsChange = v.Summary.Mean-base.Summary.Mean, true
		} else {
			// lkp-tests lib/compare.rb:calc_perf_change() divides by 1e-100
			// when the base mean is 0. Divergence: two zero means are a 0%
			// change here, not LKP's -100%.
			m0 := base.Summary.Mean
			switch {
			case m0 == 0 && v.Summary.Mean == 0:
				vb.MeanChange = 0
			case m0 == 0:
				vb.MeanChange = 100 * (v.Summary.Mean - 1e-100) / 1e-100
			default:
				vb.MeanChange = 100 * (v.Summary.Mean - m0) / m0
			}
		}
		v.VsBase = vb
	}
}

// pairedDelta renders the paired test like benchstat's delta cell: "~" when
// not significant, else the median per-seed difference in percent of the
// base median.
func pairedDelta(p stats.SignedRank, baseMedian, alpha float64) string {
	switch {
	case p.Pairs == 0:
		return "?"
	case p.P > alpha:
		return "~"
	case p.MedianDiff == 0:
		return "0.00%"
	case baseMedian == 0 || math.IsNaN(baseMedian):
		return "?"
	}
	return percentChange(p.MedianDiff, baseMedian)
}

// exactDelta is the change from a deterministic base value to a
// deterministic variant value, in benchstat's delta format.
func exactDelta(base, v float64) string {
	switch {
	case base == v:
		return "0.00%"
	case base == 0:
		return "?"
	}
	return percentChange(v-base, base)
}

// percentChange is diff as a signed percentage of base, in benchstat's
// format (two decimals), except that a change too small to show in two
// decimals keeps two significant digits: 26280 -> 26279 is -0.0038%, not a
// "-0.00%" that reads as no change next to a significance mark.
func percentChange(diff, base float64) string {
	pct := 100 * diff / math.Abs(base)
	if math.Abs(pct) < 0.005 {
		return fmt.Sprintf("%+.2g%%", pct)
	}
	return fmt.Sprintf("%+.2f%%", pct)
}

// pairsNeeded is the fewest pairs whose smallest possible two-sided exact
// p-value, 2/2^n (every difference of one sign), is at most alpha.
func pairsNeeded(alpha float64) int {
	n := 1
	for n < stats.ExactLimit && math.Ldexp(2, -n) > alpha {
		n++
	}
	return n
}

// PairedString is the paired test's "(p=0.002 n=10)" part, n counting pairs.
func PairedString(p stats.SignedRank) string {
	return fmt.Sprintf("p=%0.3f n=%d", p.P, p.Pairs)
}
