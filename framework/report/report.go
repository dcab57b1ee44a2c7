// Package report writes one self-contained HTML page about a run or a
// comparison: the configuration, per-variant latency histograms and CDFs,
// the comparison table with confidence intervals, counters per CPU, the
// worst-case breakdowns and a timeline of the worst wakeup. Plots are
// gonum/plot SVG inlined in the page; the page loads nothing else and runs
// no script, and the same input gives the same bytes.
package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/resultfmt"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/workload"
)

// Input is what a report shows.
type Input struct {
	// File is the configuration's path and Source its text.
	File   string
	Source []byte
	// Comparison holds the runs (variant-major) and their statistics; a
	// single run is a comparison of one variant and one seed.
	Comparison *experiment.Comparison
	// Version is the tickemu version that made the runs.
	Version string
}

// page is the template's data.
type page struct {
	Title, File, Version, Source string
	Variants                     []string
	Seeds                        string
	Failures                     []string
	Latency                      []latencySection
	Table                        []tableRow
	Single                       bool
	CPUs                         []cpuSection
	Worst                        []worstSection
	Timeline                     *timelineSection
}

type latencySection struct {
	Workload  string
	Hist, CDF template.HTML
	Rows      []latencyRow
}

type latencyRow struct {
	Variant                  string
	Samples                  int64
	P50, P99, P999, Max, Avg string
}

type tableRow struct {
	Metric, Better string
	Cells          []tableCell
}

type tableCell struct {
	Center, CI, Delta, P, Paired string
	Base, Significant, Worse     bool
}

type cpuSection struct {
	Variant string
	Seed    uint64
	Rows    []experiment.CPUSummary
	Hidden  int
}

type worstSection struct {
	Variant, Workload string
	Seed              uint64
	Lines             []string
	Plot              template.HTML
}

type timelineSection struct {
	Caption string
	Plot    template.HTML
	Parts   []workload.WorstCase
}

// Write renders the report to w.
func Write(w io.Writer, in Input) error {
	c := in.Comparison
	if c == nil || len(c.Variants) == 0 {
		return fmt.Errorf("report: nothing to report")
	}
	pg := page{Title: "tickemu: " + in.File, File: in.File, Version: in.Version, Source: string(in.Source),
		Variants: c.Variants, Seeds: seedRange(c.Seeds), Single: len(c.Variants) == 1 && len(c.Seeds) == 1}
	for _, f := range c.Failures {
		pg.Failures = append(pg.Failures, fmt.Sprintf("%s seed %d: %s", f.Variant, f.Seed, f.Error))
	}
	var err error
	if pg.Latency, err = latencySections(c); err != nil {
		return err
	}
	pg.Table = compareTable(c)
	pg.CPUs = cpuSections(c)
	if pg.Worst, pg.Timeline, err = worstSections(c); err != nil {
		return err
	}
	return pageTemplate.Execute(w, pg)
}

// run returns the run of variant v and seed index s (nil if it failed).
func run(c *experiment.Comparison, v, s int) *experiment.Result {
	i := v*len(c.Seeds) + s
	if i >= len(c.Runs) {
		return nil
	}
	return c.Runs[i].Result
}

// firstRun is the first seed's run of variant v that succeeded.
func firstRun(c *experiment.Comparison, v int) (*experiment.Result, uint64) {
	for s := range c.Seeds {
		if r := run(c, v, s); r != nil {
			return r, c.Seeds[s]
		}
	}
	return nil, 0
}

// latencySections merges each latency workload's histograms over threads
// and seeds, per variant.
func latencySections(c *experiment.Comparison) ([]latencySection, error) {
	type key struct{ typ, name string }
	var order []key
	hists := map[key][][]workload.LatencyHist{} // per variant
	for v := range c.Variants {
		for s := range c.Seeds {
			r := run(c, v, s)
			if r == nil {
				continue
			}
			for _, wr := range r.Workloads {
				hs, ok := wr.Extra["latency_us"].([]workload.LatencyHist)
				if !ok {
					continue
				}
				k := key{wr.Type, wr.Name}
				if _, ok := hists[k]; !ok {
					order = append(order, k)
					hists[k] = make([][]workload.LatencyHist, len(c.Variants))
				}
				hists[k][v] = append(hists[k][v], hs...)
			}
		}
	}
	var out []latencySection
	for _, k := range order {
		ms := make([]merged, len(c.Variants))
		sec := latencySection{Workload: fmt.Sprintf("%s %q", k.typ, k.name)}
		for v := range c.Variants {
			ms[v] = mergeHists(hists[k][v])
			m := ms[v]
			var sum float64
			for us, n := range m.counts {
				sum += float64(us) * float64(n)
			}
			row := latencyRow{Variant: c.Variants[v], Samples: m.n, P50: pct(m, 0.5), P99: pct(m, 0.99), P999: pct(m, 0.999),
				Max: fmt.Sprintf("%d", m.maxUS)}
			if m.n > 0 {
				row.Avg = fmt.Sprintf("%.1f", sum/float64(m.n))
			}
			sec.Rows = append(sec.Rows, row)
		}
		title := fmt.Sprintf("%s: wakeup latency, every thread and seed", sec.Workload)
		h, err := histPlot(title, c.Variants, ms)
		if err != nil {
			return nil, err
		}
		cdf, err := cdfPlot(title+": CDF tail", c.Variants, ms)
		if err != nil {
			return nil, err
		}
		sec.Hist, sec.CDF = template.HTML(h), template.HTML(cdf)
		out = append(out, sec)
	}
	return out, nil
}

// pct is the q-quantile in whole us (">= N" when it falls in the overflow).
func pct(m merged, q float64) string {
	if m.n == 0 {
		return ""
	}
	need := int64(math.Ceil(q * float64(m.n)))
	acc := int64(0)
	for _, k := range m.keys() {
		acc += m.counts[k]
		if acc >= need {
			return fmt.Sprintf("%d", k)
		}
	}
	return fmt.Sprintf("%d", m.maxUS)
}

// compareTable is the comparison's metrics with the medians' confidence
// intervals and the tests against the base.
func compareTable(c *experiment.Comparison) []tableRow {
	var rows []tableRow
	for i := range c.Metrics {
		m := &c.Metrics[i]
		row := tableRow{Metric: m.Bench + " " + m.Unit, Better: m.Better}
		for v := range m.Variants {
			vs := m.Variants[v]
			cc := resultfmt.Cells(m, v)
			cell := tableCell{Center: cc.Center, Base: v == 0}
			if vs.Summary.N > 0 {
				if math.IsInf(vs.Summary.Lo, 0) || math.IsInf(vs.Summary.Hi, 0) {
					cell.CI = "—" // too few seeds for an interval at this level
				} else {
					cell.CI = fmt.Sprintf("[%s, %s] %.0f%%", num(vs.Summary.Lo), num(vs.Summary.Hi), vs.Summary.Confidence*100)
				}
			}
			if vb := vs.VsBase; vb != nil {
				cell.Delta, cell.P, cell.Paired = cc.Delta, cc.Test, cc.PairedDelta
				cell.Significant = cc.Delta != "~" && cc.Delta != ""
				if cell.Significant && m.Better != "" {
					up := strings.HasPrefix(cc.Delta, "+")
					cell.Worse = up == (m.Better == "lower")
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		rows = append(rows, row)
	}
	return rows
}

func num(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// cpuSections are the kernel's per-CPU counters of each variant's first
// run; CPUs that did nothing are folded into a count.
func cpuSections(c *experiment.Comparison) []cpuSection {
	var out []cpuSection
	for v, name := range c.Variants {
		r, seed := firstRun(c, v)
		if r == nil {
			continue
		}
		sec := cpuSection{Variant: name, Seed: seed}
		for _, cs := range r.Kernel.CPUs {
			if cs.LocalTimerIRQs <= 1 && cs.TaskNS == 0 && cs.SoftirqNS == 0 && cs.DeviceWrites <= 1 {
				sec.Hidden++
				continue
			}
			sec.Rows = append(sec.Rows, cs)
		}
		out = append(out, sec)
	}
	return out
}

// worstSections explain every variant's worst cases (the run with the
// largest Max) and draw the timeline of the largest of all.
func worstSections(c *experiment.Comparison) ([]worstSection, *timelineSection, error) {
	var out []worstSection
	var worstAll *workload.WorstCase
	var worstWhere string
	for v, name := range c.Variants {
		var best []workload.WorstCase
		var bestSeed uint64
		var bestMax int64 = -1
		var wl string
		for s := range c.Seeds {
			r := run(c, v, s)
			if r == nil {
				continue
			}
			for _, wr := range r.Workloads {
				wcs, ok := wr.Extra["worst"].([]workload.WorstCase)
				if !ok {
					continue
				}
				for _, wc := range wcs {
					if wc.LatencyNS > bestMax {
						bestMax, best, bestSeed, wl = wc.LatencyNS, wcs, c.Seeds[s], fmt.Sprintf("%s %q", wr.Type, wr.Name)
					}
				}
			}
		}
		if best == nil {
			continue
		}
		sec := worstSection{Variant: name, Workload: wl, Seed: bestSeed}
		for _, wc := range best {
			sec.Lines = append(sec.Lines, fmt.Sprintf("T:%2d %s", wc.Thread, wc.Line()))
			if worstAll == nil || wc.LatencyNS > worstAll.LatencyNS {
				w := wc
				worstAll = &w
				worstWhere = fmt.Sprintf("variant %s, seed %d, %s thread %d", name, bestSeed, wl, wc.Thread)
			}
		}
		sorted := append([]workload.WorstCase(nil), best...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Thread > sorted[j].Thread }) // T:0 on top
		svg, err := breakdownPlot(fmt.Sprintf("%s: where each thread's Max went (seed %d)", name, bestSeed), sorted)
		if err != nil {
			return nil, nil, err
		}
		sec.Plot = template.HTML(svg)
		out = append(out, sec)
	}
	if worstAll == nil {
		return out, nil, nil
	}
	svg, err := timelinePlot(fmt.Sprintf("The worst wakeup: %d us on CPU %d at %.6f s", worstAll.LatencyNS/1000, worstAll.CPU,
		float64(worstAll.At)/float64(ktime.Second)), *worstAll)
	if err != nil {
		return nil, nil, err
	}
	return out, &timelineSection{Caption: worstWhere + ": " + worstAll.Line(), Plot: template.HTML(svg)}, nil
}

func seedRange(seeds []uint64) string {
	if len(seeds) == 1 {
		return fmt.Sprintf("%d", seeds[0])
	}
	return fmt.Sprintf("%d..%d (%d seeds)", seeds[0], seeds[len(seeds)-1], len(seeds))
}

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct":  func(ns, total int64) string { return fmt.Sprintf("%.2f", 100*float64(ns)/float64(max(total, 1))) },
	"us":   func(ns int64) string { return fmt.Sprintf("%.1f", float64(ns)/1000) },
	"busy": func(c experiment.CPUSummary) int64 { return c.IdleNS + c.TaskNS + c.IRQNS + c.SoftirqNS },
}).Parse(pageHTML))
