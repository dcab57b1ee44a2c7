package resultfmt

import (
	"github.com/tickemu/tickemu/framework/experiment"

	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/perf/benchunit"

	"github.com/tickemu/tickemu/framework/stats"
)

// WriteCompareText writes the human report of a comparison: the run
// configuration, one benchstat-style table per unit, the LKP-style %change
// view, and the failed runs.
//
// The tables show what `benchstat -col /variant` prints for the bench output
// of the same comparison (units tidied the same way, ns → sec; medians ± the
// 95% interval; the delta with the Mann-Whitney p-value, "~" when not
// significant; a geomean row), plus a "paired" column per variant: the median
// per-seed difference and the Wilcoxon signed-rank p-value over the shared
// seeds.
func WriteCompareText(w io.Writer, c *experiment.Comparison) error {
	var b bytes.Buffer
	writeCompareHeader(&b, c)
	for _, t := range unitTables(c) {
		b.WriteString("\n")
		writeUnitTable(&b, c, t)
	}
	b.WriteString("\n")
	writeLKP(&b, c)
	// Interrupted runs did not fail: they never finished. They are listed
	// apart.
	var failed, interrupted []experiment.Failure
	for _, f := range c.Failures {
		if f.Interrupted {
			interrupted = append(interrupted, f)
		} else {
			failed = append(failed, f)
		}
	}
	for _, l := range []struct {
		what string
		fs   []experiment.Failure
	}{{"failed", failed}, {"interrupted (INCOMPLETE: not run to the end)", interrupted}} {
		if len(l.fs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%d of %d runs %s:\n", len(l.fs), len(c.Runs), l.what)
		for _, f := range l.fs {
			fmt.Fprintf(&b, "  %s: %s\n", runLabel(f.Variant, f.Point, f.Seed), f.Error)
		}
	}
	writeIncompleteRuns(&b, c)
	writeComparePluginStats(&b, c)
	_, err := w.Write(b.Bytes())
	return err
}

// writeIncompleteRuns shows the partial results of the runs the interrupt
// stopped, each under a line that says INCOMPLETE and what its figures
// cover, as the bench lines `tickemu run --format bench` writes.
func writeIncompleteRuns(b *bytes.Buffer, c *experiment.Comparison) {
	for _, i := range c.Grid.Order() {
		r := c.Runs[i]
		var ie *experiment.IncompleteError
		if !errors.As(r.Err, &ie) {
			continue
		}
		fmt.Fprintf(b, "\nINCOMPLETE %s: %s\n", runLabel(r.Variant, r.Point.Key(), r.Seed), experiment.IncompleteText(ie.Incomplete))
		for _, l := range r.Bench {
			b.WriteString("  " + l + "\n")
		}
	}
}

// interruptedNote is ", N interrupted" for the header when runs were.
func interruptedNote(c *experiment.Comparison) string {
	if c.Interrupted == 0 {
		return ""
	}
	return fmt.Sprintf(", %d interrupted", c.Interrupted)
}

func writeCompareHeader(b *bytes.Buffer, c *experiment.Comparison) {
	if len(c.Sweeps) == 0 {
		fmt.Fprintf(b, "tickemu compare %s: %d variants × %d seeds (%s), base %s; %d runs, %d failed%s\n",
			c.File, len(c.Variants), len(c.Seeds), seedRange(c.Seeds), c.Variants[0], len(c.Runs), len(c.Failures)-c.Interrupted, interruptedNote(c))
	} else {
		var axes []string
		for _, sw := range c.Sweeps {
			axes = append(axes, fmt.Sprintf("%s=%s", sw.Key, strings.Join(sw.Values, ",")))
		}
		base := c.Variants[0]
		if base == "" {
			base = "none (no variant)"
		}
		fmt.Fprintf(b, "tickemu compare %s: %d variants × %d sweep points (%s) × %d seeds (%s), base %s; %d runs, %d failed%s\n",
			c.File, len(c.Variants), len(c.Grid.Points()), strings.Join(axes, " × "), len(c.Seeds), seedRange(c.Seeds), base, len(c.Runs), len(c.Failures)-c.Interrupted, interruptedNote(c))
	}
	if c.Interrupted > 0 {
		fmt.Fprintf(b, "INCOMPLETE: interrupted; %d of %d runs did not finish (listed at the end); the statistics use the %d that did\n",
			c.Interrupted, len(c.Runs), len(c.Runs)-len(c.Failures))
	}
	common, own := configLines(c)
	for _, l := range common {
		b.WriteString(l + "\n")
	}
	for i := range own {
		for _, l := range own[i] {
			fmt.Fprintf(b, "%s: %s\n", columnLabel(c, i, "variant "), l)
		}
	}
}

// seedRange renders seeds as "1..10" when consecutive, else as a list.
func seedRange(seeds []uint64) string {
	if len(seeds) == 0 {
		return "none"
	}
	consecutive := true
	for i := 1; i < len(seeds); i++ {
		if seeds[i] != seeds[i-1]+1 {
			consecutive = false
		}
	}
	if consecutive {
		if len(seeds) == 1 {
			return strconv.FormatUint(seeds[0], 10)
		}
		return fmt.Sprintf("%d..%d", seeds[0], seeds[len(seeds)-1])
	}
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatUint(s, 10)
	}
	return strings.Join(parts, ",")
}

// configLines splits the bench-format configuration lines of each
// column's first successful run into those every column with a run shares,
// in the first such column's order, and each column's own. A column is a
// variant at a sweep point (index v*points+p); without sweeps, a variant.
func configLines(c *experiment.Comparison) (common []string, own [][]string) {
	np := len(c.Grid.Points())
	own = make([][]string, len(c.Variants)*np)
	var per [][]string // header lines of the columns that have a run
	owner := []int{}
	for v := range c.Variants {
		for p := range np {
			for s := range c.Seeds {
				if r := c.Run(v, p, s); r.Err == nil && r.Header != nil {
					per = append(per, r.Header)
					owner = append(owner, v*np+p)
					break
				}
			}
		}
	}
	if len(per) == 0 {
		return nil, own
	}
	shared := map[string]bool{}
	for _, l := range per[0] {
		inAll := true
		for _, ls := range per[1:] {
			inAll = inAll && slices.Contains(ls, l)
		}
		if inAll {
			common = append(common, l)
			shared[l] = true
		}
	}
	for i, ls := range per {
		for _, l := range ls {
			if !shared[l] {
				own[owner[i]] = append(own[owner[i]], l)
			}
		}
	}
	return common, own
}

// columnLabel names column i of configLines: "variant V" without sweeps,
// else the point's keys and the variant as in bench names
// ("hz=250/variant=V").
func columnLabel(c *experiment.Comparison, i int, prefix string) string {
	np := len(c.Grid.Points())
	v, p := c.Variants[i/np], c.Grid.Points()[i%np]
	if len(c.Sweeps) == 0 {
		return prefix + v
	}
	if v == "" {
		return p.Key()
	}
	return p.Key() + "/variant=" + v
}

// runLabel names a run in failure lists: "variant V seed S", after the
// point's keys with sweeps.
func runLabel(variant, point string, seed uint64) string {
	s := fmt.Sprintf("variant %s seed %d", variant, seed)
	if variant == "" {
		s = fmt.Sprintf("seed %d", seed)
	}
	if point != "" {
		s = point + " " + s
	}
	return s
}

// unitTable is one benchstat table: the metrics of one (tidied) unit.
type unitTable struct {
	unit    string // tidied, as benchstat shows it
	metrics []*experiment.MetricComparison
}

// unitTables groups the metrics by tidied unit, in order of appearance.
func unitTables(c *experiment.Comparison) []unitTable {
	var ts []unitTable
	idx := map[string]int{}
	for i := range c.Metrics {
		m := &c.Metrics[i]
		_, u := benchunit.Tidy(1, m.Unit)
		j, ok := idx[u]
		if !ok {
			j = len(ts)
			idx[u] = j
			ts = append(ts, unitTable{unit: u})
		}
		ts[j].metrics = append(ts[j].metrics, m)
	}
	return ts
}

// tidy converts a value to the tidied unit, as benchfmt does on reading.
func tidy(v float64, unit string) float64 {
	t, _ := benchunit.Tidy(v, unit)
	return t
}

// DeterministicNote is the footnote of an exact difference.
const DeterministicNote = "deterministic: every seed gave the same value on both sides, so the difference is exact (no test needed)"

// CompareCells are the formatted cells of one metric and variant, exactly as
// benchstat formats them (exported for tests that hold them against
// benchstat's own output).
type CompareCells struct {
	Center, Range, Delta, Test, PairedDelta, PairedTest string
	Warnings                                            []string
}

// Cells formats metric m of variant v with the row's common scale, as
// benchstat's table does.
func Cells(m *experiment.MetricComparison, v int) CompareCells {
	_, unit := benchunit.Tidy(1, m.Unit)
	scaler := rowScaler(m, unit)
	vs := m.Variants[v]
	var cc CompareCells
	if vs.Summary.N == 0 {
		return cc
	}
	cc.Center = scaler.Format(tidy(vs.Summary.Median, m.Unit))
	cc.Range = vs.Summary.RangePct()
	cc.Warnings = append(cc.Warnings, vs.Summary.Warnings...)
	if vb := vs.VsBase; vb != nil {
		cc.Delta = vb.Delta
		cc.Test = vb.UTest.String()
		cc.PairedDelta = vb.PairedDelta
		cc.PairedTest = experiment.PairedString(vb.Paired)
		cc.Warnings = append(cc.Warnings, vb.UTest.Warnings...)
		cc.Warnings = append(cc.Warnings, vb.Warnings...)
		if vb.Exact {
			cc.Test, cc.PairedTest = "exact", "exact"
			cc.Warnings = append(cc.Warnings, DeterministicNote)
		}
	}
	return cc
}

func rowScaler(m *experiment.MetricComparison, tidyUnit string) benchunit.Scaler {
	var centers []float64
	for _, v := range m.Variants {
		if v.Summary.N > 0 {
			centers = append(centers, tidy(v.Summary.Median, m.Unit))
		}
	}
	return benchunit.CommonScale(centers, benchunit.ClassOf(tidyUnit))
}

// Geomean is a table's summary row for one variant, computed as benchstat's
// summarizeCol does: the geometric mean of the medians, and for non-base
// variants the geometric mean of the per-row ratios to the base. ok is false
// when a value is not positive (benchstat then leaves the cell empty).
func Geomean(metrics []*experiment.MetricComparison, v int) (center float64, centerOK bool, ratio float64, ratioOK bool) {
	var centers, ratios []float64
	badRatio := false
	for _, m := range metrics {
		vs := m.Variants[v]
		if vs.Summary.N == 0 {
			continue
		}
		a := tidy(vs.Summary.Median, m.Unit)
		centers = append(centers, a)
		if v > 0 && m.Variants[0].Summary.N > 0 {
			b := tidy(m.Variants[0].Summary.Median, m.Unit)
			switch {
			case a == b:
				ratios = append(ratios, 1)
			case b == 0:
				badRatio = true
			default:
				ratios = append(ratios, a/b)
			}
		}
	}
	center = stats.GeoMean(centers)
	centerOK = !math.IsNaN(center)
	if v > 0 && !badRatio {
		ratio = stats.GeoMean(ratios)
		ratioOK = !math.IsNaN(ratio)
	}
	return
}

// Column kinds of a unit table, per variant.
const (
	colCenter = iota
	colRange
	colNote
	colDelta
	colTest
	colDeltaNote
	colPaired
	colPairedTest
	colPairedNote
	colsPerVariant
)

// writeUnitTable writes one unit's table, as benchstat lays it out, then its
// footnotes.
func writeUnitTable(b *bytes.Buffer, c *experiment.Comparison, t unitTable) {
	l := unitLayout{nv: len(c.Variants)}
	tab := l.newTable()
	l.headers(tab, c.Variants, t.unit)
	notes := &footnotes{}
	for _, m := range t.metrics {
		tab.rows = append(tab.rows, l.metricRow(m, notes))
	}
	if len(t.metrics) > 1 {
		tab.rows = append(tab.rows, l.geomeanRow(t.metrics, notes))
	}
	tab.write(b)
	notes.write(b)
}

// unitLayout is the column layout of a unit table with nv variants: the
// name column, then the base's center, range and note, then per other
// variant colsPerVariant columns.
type unitLayout struct{ nv int }

func (l unitLayout) ncol() int { return 1 + colCenter + colNote + 1 + (l.nv-1)*colsPerVariant }

// start is variant v's first column.
func (l unitLayout) start(v int) int {
	if v == 0 {
		return 1
	}
	return 1 + (colNote + 1) + (v-1)*colsPerVariant
}

// newTable is an empty table with the layout's margins, separators and
// alignment.
func (l unitLayout) newTable() *textTable {
	tab := newTextTable(l.ncol())
	tab.align[0] = 'l'
	for v := range l.nv {
		s := l.start(v)
		tab.margin[s] = 3 // " │ " in headers
		tab.bar[s] = true
		tab.margin[s+colRange] = 3
		tab.sep[s+colRange] = " ± "
		tab.margin[s+colNote] = 1
		tab.align[s+colNote] = 'l'
		if v > 0 {
			tab.margin[s+colDelta] = 2
			tab.margin[s+colTest] = 1
			tab.align[s+colTest] = 'l'
			tab.margin[s+colDeltaNote] = 1
			tab.align[s+colDeltaNote] = 'l'
			tab.margin[s+colPaired] = 2
			tab.margin[s+colPairedTest] = 1
			tab.align[s+colPairedTest] = 'l'
			tab.margin[s+colPairedNote] = 1
			tab.align[s+colPairedNote] = 'l'
		}
	}
	return tab
}

// headers are the two header rows: the variants' names, then the unit and
// the comparison columns' titles.
func (l unitLayout) headers(tab *textTable, variants []string, unit string) {
	h1 := tab.headerRow()
	h2 := tab.headerRow()
	for v, name := range variants {
		s := l.start(v)
		end := s + colNote + 1
		if v > 0 {
			end = s + colsPerVariant
		}
		h1.span(s, end, name, 'c')
		h2.span(s, s+colNote+1, unit, 'c')
		if v > 0 {
			h2.span(s+colDelta, s+colDeltaNote+1, "vs base", 'l')
			h2.span(s+colPaired, s+colPairedNote+1, "paired", 'l')
		}
	}
}

// metricRow is one metric's row: per variant its cells, their warnings as
// footnote marks.
func (l unitLayout) metricRow(m *experiment.MetricComparison, notes *footnotes) []string {
	row := make([]string, l.ncol())
	row[0] = m.Bench
	for v := range l.nv {
		s := l.start(v)
		cc := Cells(m, v)
		if cc.Center == "" {
			continue
		}
		row[s+colCenter] = cc.Center
		row[s+colRange] = cc.Range
		vs := m.Variants[v]
		row[s+colNote] = notes.mark(vs.Summary.Warnings)
		if vb := vs.VsBase; vb != nil {
			row[s+colDelta] = cc.Delta
			row[s+colTest] = "(" + cc.Test + ")"
			dn := vb.UTest.Warnings
			if vb.Exact {
				dn = []string{DeterministicNote}
			}
			row[s+colDeltaNote] = notes.mark(dn)
			row[s+colPaired] = cc.PairedDelta
			row[s+colPairedTest] = "(" + cc.PairedTest + ")"
			row[s+colPairedNote] = notes.mark(vb.Warnings)
		}
	}
	return row
}

// geomeanRow is the summary row of a table with more than one metric
// (Geomean).
func (l unitLayout) geomeanRow(metrics []*experiment.MetricComparison, notes *footnotes) []string {
	row := make([]string, l.ncol())
	row[0] = "geomean"
	_, unit := benchunit.Tidy(1, metrics[0].Unit)
	cls := benchunit.ClassOf(unit)
	for v := range l.nv {
		s := l.start(v)
		center, cok, ratio, rok := Geomean(metrics, v)
		if !hasSample(metrics, v) {
			continue
		}
		if cok {
			row[s+colCenter] = benchunit.Scale(center, cls)
		} else {
			row[s+colNote] = notes.mark([]string{"summaries must be >0 to compute geomean"})
		}
		if v > 0 {
			if rok {
				row[s+colDelta] = fmt.Sprintf("%+.2f%%", (ratio-1)*100)
			} else {
				row[s+colDelta] = "?"
				row[s+colDeltaNote] = notes.mark([]string{"ratios must be >0 to compute geomean"})
			}
		}
	}
	return row
}

// hasSample reports whether variant v has a value for some metric of the
// table.
func hasSample(metrics []*experiment.MetricComparison, v int) bool {
	for _, m := range metrics {
		if m.Variants[v].Summary.N > 0 {
			return true
		}
	}
	return false
}

// footnotes numbers distinct warnings in order of first use, as benchstat
// does with superscripts.
type footnotes struct {
	list []string
	idx  map[string]int
}

func (f *footnotes) mark(ws []string) string {
	if f.idx == nil {
		f.idx = map[string]int{}
	}
	var marks []string
	for _, w := range ws {
		i, ok := f.idx[w]
		if !ok {
			i = len(f.list)
			f.idx[w] = i
			f.list = append(f.list, w)
		}
		marks = append(marks, superscript(i+1))
	}
	return strings.Join(marks, " ")
}

func (f *footnotes) write(b *bytes.Buffer) {
	for i, w := range f.list {
		fmt.Fprintf(b, "%s %s\n", superscript(i+1), w)
	}
}

func superscript(i int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	s := strconv.Itoa(i)
	var out strings.Builder
	for _, d := range s {
		r := []rune(digits)[d-'0']
		out.WriteRune(r)
	}
	return out.String()
}

// textTable lays out a fixed-width table: data rows of cells, each column
// right- or left-aligned after a margin of spaces, and header rows of text
// spans over column ranges, with a "│" at the start of the barred columns
// and at the right edge (benchstat's look).
type textTable struct {
	align  []byte // 'r' (default) or 'l'
	margin []int  // spaces before the column
	bar    []bool // header rows draw " │ " in this column's margin
	// sep, when set, replaces a column's margin in data rows where the
	// cell is not empty (the " ± " before a range).
	sep     []string
	headers []*headerRow
	rows    [][]string
}

type headerRow struct{ spans []headerSpan }

type headerSpan struct {
	from, to int // columns [from, to)
	text     string
	align    byte // 'c' or 'l'
}

func newTextTable(ncol int) *textTable {
	t := &textTable{align: make([]byte, ncol), margin: make([]int, ncol), bar: make([]bool, ncol), sep: make([]string, ncol)}
	for i := range t.align {
		t.align[i] = 'r'
	}
	return t
}

func (t *textTable) headerRow() *headerRow {
	h := &headerRow{}
	t.headers = append(t.headers, h)
	return h
}

func (h *headerRow) span(from, to int, text string, align byte) {
	h.spans = append(h.spans, headerSpan{from, to, text, align})
}

func width(s string) int { return utf8.RuneCountInString(s) }

func (t *textTable) write(b *bytes.Buffer) {
	n := len(t.align)
	w := make([]int, n)
	for _, r := range t.rows {
		for i, c := range r {
			w[i] = max(w[i], width(c))
		}
	}
	// x[i] is where column i's text starts; x[n] is the right edge.
	pos := func() []int {
		x := make([]int, n+1)
		at := 0
		for i := range n {
			at += t.margin[i]
			x[i] = at
			at += w[i]
		}
		x[n] = at
		return x
	}
	// end is where the text of the columns before i ends.
	end := func(x []int, i int) int {
		if i == n {
			return x[n]
		}
		return x[i] - t.margin[i]
	}
	// Widen the last column of a span whose text does not fit.
	for _, h := range t.headers {
		for _, s := range h.spans {
			x := pos()
			if need := width(s.text) - (end(x, s.to) - x[s.from]); need > 0 {
				w[s.to-1] += need
			}
		}
	}
	x := pos()
	for _, h := range t.headers {
		line := []rune(strings.Repeat(" ", x[n]+2))
		for i := range n {
			if t.bar[i] {
				line[x[i]-2] = '│'
			}
		}
		line[x[n]+1] = '│'
		for _, s := range h.spans {
			avail := end(x, s.to) - x[s.from]
			off := 0
			if s.align == 'c' {
				off = (avail - width(s.text)) / 2
			}
			copy(line[x[s.from]+off:], []rune(s.text))
		}
		b.WriteString(strings.TrimRight(string(line), " ") + "\n")
	}
	for _, r := range t.rows {
		var sb strings.Builder
		for i, c := range r {
			if t.sep[i] != "" && c != "" {
				sb.WriteString(t.sep[i])
			} else {
				sb.WriteString(strings.Repeat(" ", t.margin[i]))
			}
			pad := strings.Repeat(" ", w[i]-width(c))
			if t.align[i] == 'l' {
				sb.WriteString(c + pad)
			} else {
				sb.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(sb.String(), " ") + "\n")
	}
}
