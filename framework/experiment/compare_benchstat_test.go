package experiment_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
	"golang.org/x/perf/benchunit"

	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/resultfmt"
)

// Fixed inputs and the table `benchstat -col /variant` (golang.org/x/perf at
// the version in go.mod) printed for them, as Go benchmark lines
// BenchmarkW/variant=base ... seed by seed:
//
//	        │     base     │                  new                   │
//	        │    ops/s     │    ops/s      vs base                  │
//	W         100.5 ± 3%     110.5 ± 3%     +9.95% (p=0.000 n=10)
//	S         6.000 ±  ∞ ¹   7.000 ±  ∞ ¹        ~ (p=0.500 n=3)  ²
//	geomean   24.56          27.81         +13.26%
//	¹ need >= 6 samples for confidence interval at level 0.95
//	² need >= 4 samples to detect a difference at alpha level 0.05
//
//	  │    base     │              new              │
//	  │   lat-sec   │   lat-sec    vs base          │
//	W   100.5µ ± 3%   100.0µ ± 2%  ~ (p=0.537 n=10)
var (
	fixedBase = []float64{101, 99, 104, 98, 102, 100, 97, 103, 100, 105}
	fixedNew  = []float64{110, 108, 115, 107, 111, 109, 106, 113, 112, 114}
	fixedSame = []float64{100, 101, 99, 102, 98, 100, 103, 97, 101, 100}
	fixedS    = [2][]float64{{5, 6, 7}, {6, 7, 8}}
)

// fixedRuns builds the outcomes of a comparison of "base" and "new" over ten
// seeds from the fixed inputs; metric S exists in the first three seeds only.
func fixedRuns() ([]string, []uint64, []experiment.RunOutcome) {
	variants := []string{"base", "new"}
	seeds := seedsFrom(1, 10)
	var runs []experiment.RunOutcome
	for v, name := range variants {
		for s, seed := range seeds {
			ops, lat := fixedBase[s], fixedBase[s]*1000
			if v == 1 {
				ops, lat = fixedNew[s], fixedSame[s]*1000
			}
			ms := []experiment.RunMetric{
				{Bench: "W", Unit: "ops/s", Better: "higher", Value: ops},
				{Bench: "W", Unit: "lat-ns", Better: "lower", Value: lat},
			}
			if s < 3 {
				ms = append(ms, experiment.RunMetric{Bench: "S", Unit: "ops/s", Better: "higher", Value: fixedS[v][s]})
			}
			runs = append(runs, experiment.RunOutcome{Variant: name, Seed: seed, Metrics: ms})
		}
	}
	return variants, seeds, runs
}

// TestAnalyzeFixedMatchesBenchstat checks Analyze's cells against the
// table benchstat printed for the same values.
func TestAnalyzeFixedMatchesBenchstat(t *testing.T) {
	variants, seeds, runs := fixedRuns()
	c := experiment.Analyze("fixed", variants, seeds, runs, 0, 0)
	want := map[string][2]resultfmt.CompareCells{
		"W.ops/s":  {{Center: "100.5", Range: "3%"}, {Center: "110.5", Range: "3%", Delta: "+9.95%", Test: "p=0.000 n=10"}},
		"S.ops/s":  {{Center: "6.000", Range: "∞"}, {Center: "7.000", Range: "∞", Delta: "~", Test: "p=0.500 n=3"}},
		"W.lat-ns": {{Center: "100.5µ", Range: "3%"}, {Center: "100.0µ", Range: "2%", Delta: "~", Test: "p=0.537 n=10"}},
	}
	if len(c.Metrics) != len(want) {
		t.Fatalf("Analyze: %d metrics, want %d", len(c.Metrics), len(want))
	}
	for i := range c.Metrics {
		m := &c.Metrics[i]
		w, ok := want[m.Key()]
		if !ok {
			t.Errorf("Analyze: unexpected metric %s", m.Key())
			continue
		}
		for v := range 2 {
			got := resultfmt.Cells(m, v)
			if got.Center != w[v].Center || got.Range != w[v].Range || got.Delta != w[v].Delta || got.Test != w[v].Test {
				t.Errorf("%s %s: Cells = %s ± %s %s (%s), want %s ± %s %s (%s)", m.Key(), variants[v],
					got.Center, got.Range, got.Delta, got.Test, w[v].Center, w[v].Range, w[v].Delta, w[v].Test)
			}
		}
	}
	// The geomean row of the ops/s table: 24.56, 27.81, +13.26%.
	var ops []*experiment.MetricComparison
	for i := range c.Metrics {
		if c.Metrics[i].Unit == "ops/s" {
			ops = append(ops, &c.Metrics[i])
		}
	}
	g0, ok0, _, _ := resultfmt.Geomean(ops, 0)
	g1, ok1, r1, rok := resultfmt.Geomean(ops, 1)
	got := fmt.Sprintf("%s %s %+.2f%%", benchunit.Scale(g0, benchunit.Decimal), benchunit.Scale(g1, benchunit.Decimal), (r1-1)*100)
	if !ok0 || !ok1 || !rok || got != "24.56 27.81 +13.26%" {
		t.Errorf("Geomean(ops/s) = %s (ok %v %v %v), want 24.56 27.81 +13.26%%", got, ok0, ok1, rok)
	}
}

// fixedText is WriteCompareText's report for fixedRuns: benchstat's tables
// with the paired columns, then the LKP view.
const fixedText = `tickemu compare fixed: 2 variants × 10 seeds (1..10), base base; 20 runs, 0 failed

        │     base     │                               new                               │
        │    ops/s     │    ops/s      vs base                   paired                  │
W         100.5 ± 3%     110.5 ± 3%     +9.95% (p=0.000 n=10)    +8.96% (p=0.002 n=10)
S         6.000 ±  ∞ ¹   7.000 ±  ∞ ¹        ~ (p=0.500 n=3)  ²       ~ (p=0.250 n=3)  ³
geomean   24.56          27.81         +13.26%
¹ need >= 6 samples for confidence interval at level 0.95
² need >= 4 samples to detect a difference at alpha level 0.05
³ need >= 6 pairs to detect a difference at alpha level 0.05

  │     base     │                        new                         │
  │   lat-sec    │   lat-sec     vs base            paired            │
W   100.5µ ± 3%    100.0µ ± 2%   ~ (p=0.537 n=10)   ~ (p=0.602 n=10)

=========================================================================================
file/seeds:
  fixed/1..10

variant: 
  base
  new

            base                         new 
---------------- --------------------------- 
         %stddev     %change         %stddev
             \          |                \  
    100.90 ±  2%      +9.5%     110.50 ±  2%  W.ops/s
    100900 ±  2%      -0.8%     100100        W.lat-ns
      6.00 ± 13%     +16.7%       7.00 ± 11%  S.ops/s
`

// TestCompareTextLayout pins the text report's layout on fixed inputs.
func TestCompareTextLayout(t *testing.T) {
	variants, seeds, runs := fixedRuns()
	c := experiment.Analyze("fixed", variants, seeds, runs, 0, 0)
	var b bytes.Buffer
	if err := resultfmt.WriteCompareText(&b, c); err != nil {
		t.Fatal(err)
	}
	if b.String() != fixedText {
		t.Errorf("WriteCompareText(fixed) =\n%s\nwant\n%s", b.String(), fixedText)
	}
}

// benchstatCells is what benchstat computes from a bench file, with its
// default projections (-table .config, -row .fullname) and -col /variant.
type benchstatCells struct {
	tables int // distinct .config+.unit keys
	units  benchfmt.UnitMetadataMap
	// values by tidied unit, row (full name without the variant key) and
	// column (variant), in file order.
	values map[[3]string][]float64
}

func readBenchstat(t *testing.T, bench []byte) benchstatCells {
	t.Helper()
	var parser benchproc.ProjectionParser
	filter, err := benchproc.NewFilter("*")
	if err != nil {
		t.Fatal(err)
	}
	tableBy, _, err := parser.ParseWithUnit(".config", filter)
	if err != nil {
		t.Fatal(err)
	}
	rowBy, err := parser.Parse(".fullname", filter)
	if err != nil {
		t.Fatal(err)
	}
	colBy, err := parser.Parse("/variant", filter)
	if err != nil {
		t.Fatal(err)
	}
	out := benchstatCells{values: map[[3]string][]float64{}}
	tables := map[benchproc.Key]bool{}
	r := benchfmt.NewReader(bytes.NewReader(bench), "compare.bench")
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		case *benchfmt.Result:
			row, col := rowBy.Project(rec).StringValues(), colBy.Project(rec).StringValues()
			for i, tk := range tableBy.ProjectValues(rec) {
				tables[tk] = true
				k := [3]string{rec.Values[i].Unit, row, col}
				out.values[k] = append(out.values[k], rec.Values[i].Value)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	out.tables = len(tables)
	out.units = r.Units()
	return out
}

func tidied(xs []float64, unit string) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i], _ = benchunit.Tidy(x, unit)
	}
	return out
}

// TestCompareBenchMatchesBenchmath writes a real comparison in bench format,
// reads it back as benchstat does (benchfmt, benchproc projections, unit
// metadata) and checks that benchmath on those samples gives the
// comparison's medians, intervals and p-values.
func TestCompareBenchMatchesBenchmath(t *testing.T) {
	c := mustCompare(t, compareOpts([]string{"oneshot", "tsc_deadline"}, seedsFrom(1, 6), 2))
	var bench bytes.Buffer
	if err := resultfmt.WriteCompareBench(&bench, c); err != nil {
		t.Fatal(err)
	}
	bs := readBenchstat(t, bench.Bytes())
	units := map[string]bool{}
	for i := range c.Metrics {
		_, u := benchunit.Tidy(1, c.Metrics[i].Unit)
		units[u] = true
	}
	if bs.tables != len(units) {
		t.Errorf("benchstat would print %d tables, want one per unit (%d): the header must not differ between variants", bs.tables, len(units))
	}
	checked := 0
	for i := range c.Metrics {
		m := &c.Metrics[i]
		_, unit := benchunit.Tidy(1, m.Unit)
		if a := bs.units.GetAssumption(unit); a != benchmath.AssumeNothing {
			t.Errorf("%s: benchstat assumption %v, want AssumeNothing", m.Key(), a.SummaryLabel())
		}
		var samples []*benchmath.Sample
		for v, vs := range m.Variants {
			got := bs.values[[3]string{unit, m.Bench, vs.Variant}]
			want := tidied(vs.Values.Present(), m.Unit)
			if !slices.Equal(got, want) {
				t.Fatalf("%s %s: benchstat reads %v, want %v", m.Key(), vs.Variant, got, want)
			}
			s := benchmath.NewSample(slices.Clone(got), &benchmath.DefaultThresholds)
			samples = append(samples, s)
			sum := benchmath.AssumeNothing.Summary(s, 0.95)
			center, _ := benchunit.Tidy(vs.Summary.Median, m.Unit)
			lo, _ := benchunit.Tidy(vs.Summary.Lo, m.Unit)
			hi, _ := benchunit.Tidy(vs.Summary.Hi, m.Unit)
			if vs.Summary.Deterministic {
				// Every seed the same: the median is exact (benchmath's
				// interval would need more samples than there are values).
				if math.Abs(sum.Center-center) > 1e-12*math.Abs(center) || lo != center || hi != center {
					t.Errorf("%s %s: deterministic median %v [%v, %v], want the interval at the median", m.Key(), vs.Variant, center, lo, hi)
				}
			} else if math.Abs(sum.Center-center) > 1e-12*math.Abs(center) || sum.Lo != lo || sum.Hi != hi {
				t.Errorf("%s %s: median %v [%v, %v], benchmath %v [%v, %v]", m.Key(), vs.Variant, center, lo, hi, sum.Center, sum.Lo, sum.Hi)
			}
			if v > 0 {
				cmp := benchmath.AssumeNothing.Compare(samples[0], s)
				if vs.VsBase.UTest.P != cmp.P || vs.VsBase.UTest.String() != cmp.String() {
					t.Errorf("%s %s: U test %v, benchmath %v", m.Key(), vs.Variant, vs.VsBase.UTest, cmp)
				}
				base := benchmath.AssumeNothing.Summary(samples[0], 0.95)
				if vs.VsBase.Exact {
					// The exact change of a deterministic value, where benchmath
					// says "~" for a p-value no number of equal seeds can lower.
					want := "0.00%"
					if base.Center != sum.Center {
						want = fmt.Sprintf("%+.2f%%", 100*(sum.Center-base.Center)/math.Abs(base.Center))
					}
					if base.Center == 0 && sum.Center != 0 {
						want = "?"
					}
					if vs.VsBase.Delta != want {
						t.Errorf("%s %s: exact delta %q, want %q", m.Key(), vs.Variant, vs.VsBase.Delta, want)
					}
				} else if d := cmp.FormatDelta(base.Center, sum.Center); d != vs.VsBase.Delta {
					t.Errorf("%s %s: delta %q, benchmath %q", m.Key(), vs.Variant, vs.VsBase.Delta, d)
				}
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no metric checked")
	}
}

// TestBenchstatCommand runs the real benchstat on the bench output and
// checks that every cell it prints is the one tickemu's table prints.
func TestBenchstatCommand(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building benchstat needs the go command: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "benchstat")
	if out, err := exec.Command(gobin, "build", "-o", bin, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Fatalf("go build benchstat: %v\n%s", err, out)
	}
	c := mustCompare(t, compareOpts([]string{"oneshot", "tsc_deadline"}, seedsFrom(1, 6), 2))
	var bench bytes.Buffer
	if err := resultfmt.WriteCompareBench(&bench, c); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "compare.bench")
	if err := os.WriteFile(file, bench.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-col", "/variant", file).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	got := parseBenchstatText(string(out))
	want := expectedRows(c)
	// Rows of metrics every seed gives the same value tickemu prints as
	// exact differences, where benchstat tests them; the other rows are
	// benchstat's cell for cell.
	exact := 0
	for i := range c.Metrics {
		m := &c.Metrics[i]
		for _, vs := range m.Variants[1:] {
			if vs.VsBase != nil && vs.VsBase.Exact {
				_, u := benchunit.Tidy(1, m.Unit)
				delete(want[u], m.Bench)
				delete(got[u], m.Bench)
				exact++
				break
			}
		}
	}
	if exact == len(c.Metrics) {
		t.Fatal("every metric is deterministic: nothing held against benchstat")
	}
	if len(got) != len(want) {
		t.Errorf("benchstat printed %d tables, tickemu %d\n%s", len(got), len(want), out)
	}
	for unit, rows := range want {
		for label, cells := range rows {
			if g := got[unit][label]; !slices.Equal(g, cells) {
				t.Errorf("table %s row %s: benchstat %q, tickemu %q", unit, label, g, cells)
			}
		}
		if len(got[unit]) != len(rows) {
			t.Errorf("table %s: benchstat has %d rows, tickemu %d", unit, len(got[unit]), len(rows))
		}
	}
}

// parseBenchstatText returns, per table unit, the cells of each row with
// footnote marks removed.
func parseBenchstatText(out string) map[string]map[string][]string {
	tables := map[string]map[string][]string{}
	var cur map[string][]string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		switch {
		case strings.Contains(l, "│"):
			if i+1 < len(lines) && strings.Contains(lines[i+1], "│") {
				continue // the column names row
			}
			unit := strings.Fields(strings.ReplaceAll(l, "│", " "))[0]
			cur = map[string][]string{}
			tables[unit] = cur
		case strings.TrimSpace(l) == "":
			cur = nil
		case cur != nil && !isFootnote(l):
			f := strings.Fields(l)
			cur[f[0]] = dropMarks(f[1:])
		}
	}
	return tables
}

func isFootnote(l string) bool {
	return strings.ContainsRune("⁰¹²³⁴⁵⁶⁷⁸⁹", []rune(l)[0])
}

func dropMarks(fs []string) []string {
	var out []string
	for _, f := range fs {
		if strings.Trim(f, "⁰¹²³⁴⁵⁶⁷⁸⁹") != "" {
			out = append(out, f)
		}
	}
	return out
}

// expectedRows renders c's tables as the token rows benchstat prints.
func expectedRows(c *experiment.Comparison) map[string]map[string][]string {
	tables := map[string]map[string][]string{}
	byUnit := map[string][]*experiment.MetricComparison{}
	for i := range c.Metrics {
		m := &c.Metrics[i]
		_, u := benchunit.Tidy(1, m.Unit)
		byUnit[u] = append(byUnit[u], m)
		if tables[u] == nil {
			tables[u] = map[string][]string{}
		}
		var row []string
		for v := range c.Variants {
			cc := resultfmt.Cells(m, v)
			row = append(row, cc.Center, "±", cc.Range)
			if v > 0 {
				row = append(row, cc.Delta)
				row = append(row, strings.Fields("("+cc.Test+")")...)
			}
		}
		tables[u][m.Bench] = row
	}
	for u, ms := range byUnit {
		if len(ms) < 2 {
			continue
		}
		var row []string
		for v := range c.Variants {
			center, ok, ratio, rok := resultfmt.Geomean(ms, v)
			if ok {
				row = append(row, benchunit.Scale(center, benchunit.ClassOf(u)))
			}
			if v > 0 {
				if rok {
					row = append(row, fmt.Sprintf("%+.2f%%", (ratio-1)*100))
				} else {
					row = append(row, "?")
				}
			}
		}
		tables[u]["geomean"] = row
	}
	return tables
}
