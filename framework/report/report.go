// Package report writes one self-contained HTML page about a run or a
// comparison: the configuration, per-variant latency histograms and CDFs,
// the comparison table with confidence intervals, counters per CPU, the
// worst-case breakdowns and a timeline of the worst wakeup; with sweeps,
// each metric plotted against the first swept setting (one line per variant
// and point of the other sweeps) and the tables per sweep point. Plots are
// gonum/plot SVG inlined in the page; the page loads nothing else and runs
// nothing but its own inline explore script (explore.go), and the same
// input gives the same bytes.
package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/resultfmt"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/stats"
	"github.com/tickemu/tickemu/framework/workload"
)

// Input is what a report shows.
type Input struct {
	// File is the configuration's path and Source its text.
	File   string
	Source []byte
	// Comparison holds the runs (variant-major) and their statistics; a
	// single run is a comparison of one variant and one seed. The report
	// reads the runs only through their RunOutcome.Detail and the metrics,
	// which shard files carry, so `tickemu merge --report` writes the page
	// the unsharded comparison writes.
	Comparison *experiment.Comparison
	// Version is the tickemu version that made the runs.
	Version string
}

// page is the template's data.
type page struct {
	Title, File, Version, Source string
	Variants                     []string
	Seeds                        string
	Sweeps                       []string // "hz = 100, 250, 1000"
	Points                       int
	// Failures are the runs that failed; Interrupted those an interrupt
	// (Ctrl-C, SIGTERM) kept from finishing, which did not fail, and
	// Incomplete the note at the top of a page that lacks them.
	Failures    []string
	Interrupted []interruptedRun
	Incomplete  string
	Latency     []latencySection
	Sweep       *sweepSection
	Table       []tableRow
	PointTables []pointTable
	Single      bool
	CPUs        []cpuSection
	Worst       []worstSection
	Timeline    *timelineSection
	// TOC lists the sections (and the latency sections and sweep points
	// under them) by their ids, each unique on the page.
	TOC []tocEntry
	// Script is the explore layer (explore.js), inline.
	Script template.JS
}

// interruptedRun is a run the interrupt stopped early, with its partial
// metrics, or kept from starting (Metrics nil).
type interruptedRun struct {
	Label, What string
	Metrics     []partialMetric
}

type partialMetric struct{ Metric, Value string }

type tocEntry struct {
	ID, Title string
	Sub       []tocEntry
}

type latencySection struct {
	ID        string
	Workload  string
	Hist, CDF template.HTML
	Rows      []latencyRow
	// Data is the section's histograms for the explore layer (JSON).
	Data template.JS
	// Legend names the lines of the three plots.
	Legend []legendItem
}

type latencyRow struct {
	Label                    string
	Samples                  int64
	P50, P99, P999, Max, Avg string
}

type tableRow struct {
	Metric, Better string
	Cells          []tableCell
	// Unchanged: every variant's median is the base's (the page folds
	// these rows away).
	Unchanged bool
}

// displayUnit is how the report writes a metric's unit: nanosecond metrics
// in microseconds, as every latency on the page ("max-latency-ns" is
// "max-latency (us)", its values divided by 1000), others as they are.
func displayUnit(unit string) (label string, scale float64) {
	if name, ok := strings.CutSuffix(unit, "-ns"); ok {
		return name + " (us)", 1e-3
	}
	return unit, 1
}

type tableCell struct {
	Center, CI, Delta, P, Paired string
	Base, Significant, Worse     bool
}

// pointTable is the comparison table of one sweep point.
type pointTable struct {
	ID, Point string
	Rows      []tableRow
}

type cpuSection struct {
	Label  string
	Seed   uint64
	Rows   []experiment.CPUSummary
	Hidden int
}

type worstSection struct {
	Label, Workload string
	Seed            uint64
	Lines           []string
	Plot            template.HTML
	Legend          []legendItem
}

type timelineSection struct {
	Caption string
	Plot    template.HTML
	Legend  []legendItem
	Parts   []workload.WorstCase
}

// Write renders the report to w.
func Write(w io.Writer, in Input) error {
	c := in.Comparison
	if c == nil || len(c.Variants) == 0 {
		return fmt.Errorf("report: nothing to report")
	}
	pg := page{Title: "tickemu: " + in.File, File: in.File, Version: in.Version, Source: string(in.Source),
		Variants: c.Variants, Seeds: seedRange(c.Seeds), Points: len(c.Grid.Points()),
		Single: len(c.Variants) == 1 && len(c.Seeds) == 1 && len(c.Sweeps) == 0}
	for _, sw := range c.Sweeps {
		pg.Sweeps = append(pg.Sweeps, sw.Name+" = "+strings.Join(sw.Values, ", "))
	}
	pg.Failures, pg.Interrupted, pg.Incomplete = unfinished(c)
	var err error
	if pg.Latency, err = latencySections(c); err != nil {
		return err
	}
	if len(c.Sweeps) == 0 {
		pg.Table = compareTable(c.Metrics, false)
	} else {
		if pg.Sweep, err = sweepPlots(c); err != nil {
			return err
		}
		for p, pt := range c.Grid.Points() {
			var ms []experiment.MetricComparison
			for _, m := range c.Metrics {
				if m.Point == p {
					ms = append(ms, m)
				}
			}
			pg.PointTables = append(pg.PointTables, pointTable{Point: pt.Key(), Rows: compareTable(ms, true)})
		}
	}
	pg.CPUs = cpuSections(c)
	if pg.Worst, pg.Timeline, err = worstSections(c); err != nil {
		return err
	}
	pg.TOC = contents(&pg)
	pg.Script = template.JS(exploreJS)
	return pageTemplate.Execute(w, pg)
}

// unfinished lists the runs that failed and, apart, those an interrupt
// stopped early or kept from starting (not failures: they were not let
// finish), with the note that says the page is incomplete.
func unfinished(c *experiment.Comparison) (failed []string, interrupted []interruptedRun, note string) {
	partial := map[string]experiment.IncompleteRun{}
	key := func(variant, point string, seed uint64) string {
		return fmt.Sprintf("%s\x00%s\x00%d", variant, point, seed)
	}
	for _, ir := range c.IncompleteRuns {
		partial[key(ir.Variant, ir.Point, ir.Seed)] = ir
	}
	stopped := 0
	for _, f := range c.Failures {
		label := c.Grid.Label(experiment.Cell{Variant: f.Variant, Seed: f.Seed, Point: pointOf(c, f.Point)})
		if !f.Interrupted {
			failed = append(failed, fmt.Sprintf("%s: %s", label, f.Error))
			continue
		}
		ir, ok := partial[key(f.Variant, f.Point, f.Seed)]
		if !ok {
			interrupted = append(interrupted, interruptedRun{Label: label, What: "not run: interrupted before it started"})
			continue
		}
		stopped++
		r := interruptedRun{Label: label, What: "stopped early: " + experiment.IncompleteText(ir.Incomplete) + "; its partial figures (below) are out of the statistics"}
		for _, m := range ir.Metrics {
			unit, scale := displayUnit(m.Unit)
			r.Metrics = append(r.Metrics, partialMetric{Metric: m.Bench + " " + unit, Value: num(m.Value * scale)})
		}
		interrupted = append(interrupted, r)
	}
	if len(interrupted) > 0 {
		note = fmt.Sprintf("%d of %d runs did not finish (%d stopped early, %d not run): the statistics, tables and plots use the %d runs that finished. They are listed under Interrupted runs.",
			len(interrupted), len(c.Runs), stopped, len(interrupted)-stopped, len(c.Runs)-len(c.Failures))
	}
	return failed, interrupted, note
}

// contents gives the latency sections and the sweep points their ids and
// lists every section for the table of contents.
func contents(pg *page) []tocEntry {
	ids := map[string]bool{"config": true, "sweep": true, "compare": true, "cpus": true, "worst": true, "timeline": true, "failures": true,
		"interrupted": true, "incomplete": true}
	unique := func(id string) string {
		id = idChars.ReplaceAllString(strings.ReplaceAll(id, "=", "-"), "_")
		for n, base := 2, id; ids[id]; n++ {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		ids[id] = true
		return id
	}
	var toc []tocEntry
	add := func(ok bool, id, title string) {
		if ok {
			toc = append(toc, tocEntry{ID: id, Title: title})
		}
	}
	add(len(pg.Failures) > 0, "failures", "Failed runs")
	add(len(pg.Interrupted) > 0, "interrupted", "Interrupted runs")
	add(true, "config", "Configuration")
	add(pg.Sweep != nil, "sweep", "Metrics against the sweep")
	for i := range pg.Latency {
		l := &pg.Latency[i]
		l.ID = unique(fmt.Sprintf("latency-%d", i+1))
		toc = append(toc, tocEntry{ID: l.ID, Title: "Latency: " + l.Workload})
	}
	cmp := tocEntry{ID: "compare", Title: "Comparison"}
	if pg.Single {
		cmp.Title = "Results"
	}
	for i := range pg.PointTables {
		pt := &pg.PointTables[i]
		pt.ID = unique("point-" + pt.Point)
		cmp.Sub = append(cmp.Sub, tocEntry{ID: pt.ID, Title: pt.Point})
	}
	toc = append(toc, cmp)
	add(true, "cpus", "Counters per CPU")
	add(len(pg.Worst) > 0, "worst", "Worst cases")
	add(pg.Timeline != nil, "timeline", "Timeline of the worst wakeup")
	return toc
}

// idChars are the characters an id keeps ("=" becomes "-", others "_"):
// what a link's fragment carries unescaped.
var idChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// pointOf finds the grid's point whose keys are key.
func pointOf(c *experiment.Comparison, key string) config.Point {
	for _, p := range c.Grid.Points() {
		if p.Key() == key {
			return p
		}
	}
	return nil
}

// column is a variant at a sweep point: a line of the latency plots and a
// row of their table. Without sweeps there is one point and a column is a
// variant.
type column struct {
	v, p  int
	label string
}

// variantLabel names variant v; the file as written (--no-variants) has
// none.
func variantLabel(c *experiment.Comparison, v int) string {
	if c.Variants[v] == "" {
		return "no variant"
	}
	return c.Variants[v]
}

// series are the lines of a sweep: every variant at every point of the
// sweeps after the first, whose values are the x axis. group(x) lists them
// at the first sweep's x-th value. Without sweeps there is one group, the
// variants.
type series struct {
	c     *experiment.Comparison
	nx    int      // values of the first sweep (1 without sweeps)
	rest  int      // points of the other sweeps
	names []string // per series: variant, then the other sweeps' keys
}

func newSeries(c *experiment.Comparison) series {
	sr := series{c: c, nx: 1, rest: len(c.Grid.Points())}
	if len(c.Sweeps) > 0 {
		sr.nx = len(c.Sweeps[0].Values)
		sr.rest /= sr.nx
	}
	for v := range c.Variants {
		for r := range sr.rest {
			name := ""
			if c.Variants[v] != "" || len(c.Variants) > 1 {
				name = variantLabel(c, v)
			}
			if len(c.Sweeps) > 1 {
				var keys []string
				for _, pv := range c.Grid.Points()[r][1:] {
					keys = append(keys, pv.Key+"="+pv.Text)
				}
				name = strings.TrimSpace(name + " " + strings.Join(keys, " "))
			}
			if name == "" {
				name = variantLabel(c, v)
			}
			sr.names = append(sr.names, name)
		}
	}
	return sr
}

// point is the grid point of series i at x.
func (sr series) point(i, x int) int { return x*sr.rest + i%sr.rest }

// variant is series i's variant.
func (sr series) variant(i int) int { return i / sr.rest }

// group lists the columns at the first sweep's x-th value, one per series.
func (sr series) group(x int) []column {
	var out []column
	for i, name := range sr.names {
		out = append(out, column{v: sr.variant(i), p: sr.point(i, x), label: name})
	}
	return out
}

// xLabel names the first sweep's x-th value for section titles ("" without
// sweeps).
func (sr series) xLabel(x int) string {
	if len(sr.c.Sweeps) == 0 {
		return ""
	}
	sw := sr.c.Sweeps[0]
	return sw.Key + "=" + sw.Values[x]
}

// detail returns the report detail of the run of column col with seed
// index s (nil if it failed).
func detail(c *experiment.Comparison, col column, s int) *experiment.RunDetail {
	i := c.Grid.Index(col.v, col.p, s)
	if i >= len(c.Runs) || c.Runs[i].Err != nil {
		return nil
	}
	return c.Runs[i].Detail
}

// columns lists every variant at every point, variant-major, labelled as
// the text output labels configuration columns.
func columns(c *experiment.Comparison) []column {
	var out []column
	for v := range c.Variants {
		for p, pt := range c.Grid.Points() {
			label := variantLabel(c, v)
			if len(c.Sweeps) > 0 {
				label = pt.Key()
				if c.Variants[v] != "" {
					label += "/variant=" + c.Variants[v]
				}
			}
			out = append(out, column{v: v, p: p, label: label})
		}
	}
	return out
}

// latencySections merges each latency workload's histograms over threads
// and seeds, per column; with sweeps, one section per value of the first
// sweep, with a line per series.
func latencySections(c *experiment.Comparison) ([]latencySection, error) {
	sr := newSeries(c)
	var out []latencySection
	for x := range sr.nx {
		secs, err := latencyGroup(c, sr.group(x), sr.xLabel(x))
		if err != nil {
			return nil, err
		}
		out = append(out, secs...)
	}
	return out, nil
}

func latencyGroup(c *experiment.Comparison, cols []column, at string) ([]latencySection, error) {
	type key struct{ typ, name string }
	var order []key
	hists := map[key][][]workload.LatencyHist{} // per column
	for ci, col := range cols {
		for s := range c.Seeds {
			d := detail(c, col, s)
			if d == nil {
				continue
			}
			for _, wh := range d.Latency {
				k := key{wh.Type, wh.Name}
				if _, ok := hists[k]; !ok {
					order = append(order, k)
					hists[k] = make([][]workload.LatencyHist, len(cols))
				}
				hists[k][ci] = append(hists[k][ci], wh.Hists...)
			}
		}
	}
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = col.label
	}
	var out []latencySection
	for _, k := range order {
		ms := make([]merged, len(cols))
		sec := latencySection{Workload: fmt.Sprintf("%s %q", k.typ, k.name)}
		if at != "" {
			sec.Workload += " at " + at
		}
		for i := range cols {
			ms[i] = mergeHists(hists[k][i])
			m := ms[i]
			var sum float64
			for us, n := range m.counts {
				sum += float64(us) * float64(n)
			}
			row := latencyRow{Label: names[i], Samples: m.n, P50: pct(m, 0.5), P99: pct(m, 0.99), P999: pct(m, 0.999),
				Max: fmt.Sprintf("%d", m.maxUS)}
			if m.n > 0 {
				row.Avg = fmt.Sprintf("%.1f", sum/float64(m.n))
			}
			sec.Rows = append(sec.Rows, row)
		}
		// The section's heading names the workload: the plots' titles say
		// what they count, which must fit their width.
		title := "Wakeup latency, every thread and seed"
		h, err := histPlot(title, names, ms)
		if err != nil {
			return nil, err
		}
		cdf, err := cdfPlot(title, names, ms)
		if err != nil {
			return nil, err
		}
		sec.Hist, sec.CDF = template.HTML(h), template.HTML(cdf)
		sec.Legend = seriesLegend(names)
		if sec.Data, err = exploreData(names, ms); err != nil {
			return nil, err
		}
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

// compareTable is the metrics ms with the medians' confidence intervals
// and the tests against the base; named without their sweep point's keys
// when bare (the table is the point's).
func compareTable(ms []experiment.MetricComparison, bare bool) []tableRow {
	var rows []tableRow
	for i := range ms {
		m := &ms[i]
		name := m.Bench
		if bare {
			name = m.Name
		}
		unit, scale := displayUnit(m.Unit)
		row := tableRow{Metric: name + " " + unit, Better: m.Better, Unchanged: len(m.Variants) > 1}
		for v := range m.Variants {
			vs := m.Variants[v]
			cc := resultfmt.Cells(m, v)
			cell := tableCell{Base: v == 0}
			if vs.Summary.N > 0 {
				cell.Center = num(vs.Summary.Median * scale)
				cell.CI = ciText(vs.Summary, scale)
			}
			if vb := vs.VsBase; vb != nil {
				cell.Delta, cell.P, cell.Paired = cc.Delta, cc.Test, cc.PairedDelta
				same := vs.Summary.N > 0 && m.Variants[0].Summary.N > 0 && vs.Summary.Median == m.Variants[0].Summary.Median
				cell.Significant = cc.Delta != "~" && cc.Delta != "" && !same
				if cell.Significant && m.Better != "" {
					up := strings.HasPrefix(cc.Delta, "+")
					cell.Worse = up == (m.Better == "lower")
				}
				if !same {
					row.Unchanged = false
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		rows = append(rows, row)
	}
	return rows
}

// ciText is a median's confidence interval, its ends times scale (the
// display unit's).
func ciText(s stats.Summary, scale float64) string {
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) {
		return "—" // too few seeds for an interval at this level
	}
	return fmt.Sprintf("[%s, %s] %.0f%%", num(s.Lo*scale), num(s.Hi*scale), s.Confidence*100)
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

// cpuSections are the kernel's per-CPU counters of each column's first
// run; CPUs that did nothing are folded into a count.
func cpuSections(c *experiment.Comparison) []cpuSection {
	var out []cpuSection
	for _, col := range columns(c) {
		for s, seed := range c.Seeds {
			d := detail(c, col, s)
			if d == nil {
				continue
			}
			sec := cpuSection{Label: col.label, Seed: seed}
			for _, cs := range d.CPUs {
				if cs.LocalTimerIRQs <= 1 && cs.TaskNS == 0 && cs.SoftirqNS == 0 && cs.DeviceWrites <= 1 {
					sec.Hidden++
					continue
				}
				sec.Rows = append(sec.Rows, cs)
			}
			out = append(out, sec)
			break
		}
	}
	return out
}

// worstSections explain every column's worst cases (the run with the
// largest Max) and draw the timeline of the largest of all.
func worstSections(c *experiment.Comparison) ([]worstSection, *timelineSection, error) {
	var out []worstSection
	var cases [][]workload.WorstCase // per section, its bars
	var worstAll *workload.WorstCase
	var worstWhere string
	for _, col := range columns(c) {
		var best []workload.WorstCase
		var bestRun *experiment.RunDetail
		var bestSeed uint64
		var bestMax int64 = -1
		var wl string
		for s := range c.Seeds {
			d := detail(c, col, s)
			if d == nil {
				continue
			}
			for _, ww := range d.Worst {
				for _, wc := range ww.Cases {
					if wc.LatencyNS > bestMax {
						bestMax, best, bestRun, bestSeed, wl = wc.LatencyNS, ww.Cases, d, c.Seeds[s], fmt.Sprintf("%s %q", ww.Type, ww.Name)
					}
				}
			}
		}
		if best == nil {
			continue
		}
		sec := worstSection{Label: col.label, Workload: wl, Seed: bestSeed}
		for _, wc := range best {
			sec.Lines = append(sec.Lines, fmt.Sprintf("T:%2d %s", wc.Thread, wc.Line()))
		}
		if wc, ok := bestRun.Case(); ok && (worstAll == nil || wc.LatencyNS > worstAll.LatencyNS) {
			worstAll = &wc
			where := "variant " + col.label
			if len(c.Sweeps) > 0 {
				where = col.label
			}
			worstWhere = fmt.Sprintf("%s, seed %d, %s thread %d", where, bestSeed, wl, wc.Thread)
		}
		sorted := append([]workload.WorstCase(nil), best...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Thread > sorted[j].Thread }) // T:0 on top
		out = append(out, sec)
		cases = append(cases, sorted)
	}
	// One scale for every bar chart: the largest Max of all.
	widest := 0.0
	for _, wcs := range cases {
		for _, wc := range wcs {
			widest = math.Max(widest, float64(wc.LatencyNS)/1000)
		}
	}
	for i := range out {
		svg, legend, err := breakdownPlot(fmt.Sprintf("%s: where each thread's Max went (seed %d)", out[i].Label, out[i].Seed), cases[i], widest)
		if err != nil {
			return nil, nil, err
		}
		out[i].Plot, out[i].Legend = template.HTML(svg), legend
	}
	if worstAll == nil {
		return out, nil, nil
	}
	svg, legend, err := timelinePlot(fmt.Sprintf("The worst wakeup: %d us on CPU %d at %.6f s", worstAll.LatencyNS/1000, worstAll.CPU,
		float64(worstAll.At)/float64(ktime.Second)), *worstAll)
	if err != nil {
		return nil, nil, err
	}
	return out, &timelineSection{Caption: worstWhere + ": " + worstAll.Line(), Plot: template.HTML(svg), Legend: legend}, nil
}

// tableData is a comparison table for the template.
type tableData struct {
	Variants           []string
	Changed, Unchanged []tableRow
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
	// tableOf splits a comparison table's rows into those that differ
	// somewhere and those the page folds away; rowsOf is one of the parts.
	"tableOf": func(variants []string, rows []tableRow) any {
		t := tableData{Variants: variants}
		for _, r := range rows {
			if r.Unchanged {
				t.Unchanged = append(t.Unchanged, r)
			} else {
				t.Changed = append(t.Changed, r)
			}
		}
		return t
	},
	"rowsOf": func(variants []string, rows []tableRow) any { return tableData{Variants: variants, Changed: rows} },
}).Parse(pageHTML))
