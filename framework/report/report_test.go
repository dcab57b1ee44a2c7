package report

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/workload"
)

var update = flag.Bool("update", false, "rewrite testdata/*.html from the current report")

func sweep(name, key string, values ...string) config.Sweep {
	sw := config.Sweep{Name: name, Key: key}
	for _, v := range values {
		sw.Values = append(sw.Values, config.SweepValue{Text: v})
	}
	return sw
}

// sweepComparison is a comparison of variants a and b over the sweeps given
// and 3 seeds, with made-up metrics that depend on every axis: a's
// wheel-iterations grow with hz, b's do not; max-latency-ns has a seed
// spread; hrtimer-hangs is 0 everywhere. The run of b at the last point with
// seed 2 failed.
func sweepComparison(sweeps ...config.Sweep) *experiment.Comparison {
	g, runs := sweepRuns(sweeps...)
	return experiment.AnalyzeGrid("s.hcl", g, runs, 0, 0)
}

// interruptedComparison is sweepComparison without sweeps, interrupted
// (Ctrl-C) at seed 3: a's run stopped early with partial metrics, b's not
// started; b's seed 2 failed as there.
func interruptedComparison() *experiment.Comparison {
	g, runs := sweepRuns()
	a3, b3 := g.Index(0, 0, 2), g.Index(1, 0, 2)
	runs[a3].Err = &experiment.IncompleteError{Incomplete: &experiment.Incomplete{Reason: "interrupted", ReachedNS: 4e9, EndNS: 10e9}}
	runs[a3].Detail = nil
	runs[b3] = experiment.RunOutcome{Variant: "b", Seed: 3, Err: experiment.ErrInterrupted}
	c := experiment.AnalyzeGrid("s.hcl", g, runs, 0, 0)
	c.Interrupted = 2
	return c
}

// sweepRuns are sweepComparison's grid and runs.
func sweepRuns(sweeps ...config.Sweep) (experiment.Grid, []experiment.RunOutcome) {
	g := experiment.NewGrid([]string{"a", "b"}, sweeps, []uint64{1, 2, 3})
	runs := make([]experiment.RunOutcome, g.Len())
	for i := range runs {
		cell := g.Cell(i)
		r := experiment.RunOutcome{Variant: cell.Variant, Point: cell.Point, Seed: cell.Seed}
		if cell.V == 1 && cell.P == len(g.Points())-1 && cell.S == 1 {
			r.Err = errors.New("plugin wheel exited: signal: killed")
			runs[i] = r
			continue
		}
		key := "" // the point's keys, as WriteBench puts them after the name
		if k := cell.Point.Key(); k != "" {
			key = "/" + k
		}
		scale := float64(cell.P + 1)
		iters := 600.0
		if cell.V == 0 {
			iters = 600 * scale * scale * scale * 10
		}
		maxNS := 3000 + 1000*float64(cell.V)*scale + 10*float64(cell.S)
		r.Metrics = []experiment.RunMetric{
			{Bench: "Cyclictest" + key + "/thread=0", Unit: "max-latency-ns", Better: "lower", Value: maxNS},
			{Bench: "Kernel" + key, Unit: "wheel-iterations", Better: "lower", Value: iters},
			{Bench: "Kernel" + key, Unit: "hrtimer-hangs", Better: "lower", Value: 0},
		}
		at := ktime.Time(ktime.Second + 100*ktime.Microsecond*int64(cell.P))
		lat := int64(maxNS)
		wc := workload.WorstCase{Thread: 0, WakePath: kernel.WakePath{At: at, CPU: 1, LatencyNS: lat,
			Parts: []kernel.WakePart{{Cause: "TIMER_SOFTIRQ", NS: lat - 1000, Detail: "catch-up 42 jiffies"}, {Cause: "irq", NS: 1000}},
			Spans: []kernel.Span{
				{Kind: kernel.SpanIRQEntry, Start: at - 500, End: at + 500},
				{Kind: kernel.SpanSoftirq, Start: at + 500, End: at + ktime.Time(lat), Detail: "TIMER", Gap: 42},
			}}}
		res := &experiment.Result{
			Workloads: []workload.Report{{Type: "cyclictest", Name: "rt", Extra: map[string]any{
				"latency_us": []workload.LatencyHist{{Thread: 0, Buckets: [][2]int64{{3, 90}, {lat / 1000, 10}}, MaxNS: lat}},
				"worst":      []workload.WorstCase{wc},
			}}},
			Kernel: experiment.KernelSummary{CPUs: []experiment.CPUSummary{
				{CPU: 0, LocalTimerIRQs: 1},
				{CPU: 1, LocalTimerIRQs: 100, HRTimerIRQs: 100, DeviceWrites: 200, DeviceWriteCostNS: 30000, Ticks: 50, TickStops: 40,
					IdleNS: 900000, TaskNS: 50000, IRQNS: 30000, SoftirqNS: 20000},
			}},
		}
		r.Detail = experiment.DetailOf(res)
		runs[i] = r
	}
	return g, runs
}

func render(t *testing.T, c *experiment.Comparison) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, Input{File: "s.hcl", Source: []byte("machine { cpus = 2 }\n"), Comparison: c, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSweepGolden: the report of a sweep over hz (the x axis) and catch-up
// (a line per variant and catch-up value) is testdata/sweep.html byte for
// byte. Regenerate with go test ./framework/report -run TestSweepGolden
// -update, and look at the page in a browser before committing it.
func TestSweepGolden(t *testing.T) {
	golden(t, "sweep.html", func() *experiment.Comparison {
		return sweepComparison(sweep("hz", "hz", "100", "250", "1000"), sweep("wheel.catchup", "catchup", "per_jiffy", "next_expiry"))
	})
}

// TestCompareGolden: the report of the same variants without sweeps is
// testdata/compare.html byte for byte (-update rewrites it).
func TestCompareGolden(t *testing.T) {
	golden(t, "compare.html", func() *experiment.Comparison { return sweepComparison() })
}

// TestInterruptedGolden: the report of a comparison interrupted at seed 3
// is testdata/interrupted.html byte for byte (-update rewrites it).
func TestInterruptedGolden(t *testing.T) {
	golden(t, "interrupted.html", interruptedComparison)
}

// TestInterruptedSections: the runs an interrupt stopped are not failures:
// they are listed under Interrupted runs (the one stopped early with where
// it stopped and its partial figures in us, the one not run as such), the
// failed run alone under Failed runs, and the page says at the top that it
// is incomplete.
func TestInterruptedSections(t *testing.T) {
	page := string(render(t, interruptedComparison()))
	failed := section(t, page, "failures")
	if n := strings.Count(failed, "<li>"); n != 1 || !strings.Contains(failed, "<li>variant b seed 2: plugin wheel exited: signal: killed</li>") {
		t.Errorf("Failed runs lists %d runs, want b's seed 2 alone:\n%s", n, failed)
	}
	interrupted := section(t, page, "interrupted")
	for _, want := range []string{
		"<li>variant a seed 3: stopped early: interrupted: stopped at 4s of 10s simulated; every figure covers the first 4s only; its partial figures (below) are out of the statistics",
		`<td class="l">Cyclictest/thread=0 max-latency (us)</td><td>3.02</td>`,
		"<li>variant b seed 3: not run: interrupted before it started</li>",
	} {
		if !strings.Contains(interrupted, want) {
			t.Errorf("Interrupted runs lacks %q:\n%s", want, interrupted)
		}
	}
	top := page[strings.Index(page, "<body>"):strings.Index(page, `<nav class="toc"`)]
	for _, want := range []string{`<span class="incomplete-tag">INCOMPLETE</span></h1>`,
		"<b>INCOMPLETE: interrupted.</b> 2 of 6 runs did not finish (1 stopped early, 1 not run): the statistics, tables and plots use the 3 runs that finished."} {
		if !strings.Contains(top, want) {
			t.Errorf("the top of the page lacks %q:\n%s", want, top)
		}
	}
	if strings.Contains(string(render(t, sweepComparison())), "INCOMPLETE") {
		t.Error("a report with every run finished or failed says INCOMPLETE")
	}
}

// golden compares the report of mk() with the golden file of that name under testdata, and checks that
// two reports of the same comparison are the same bytes.
func golden(t *testing.T, name string, mk func() *experiment.Comparison) {
	t.Helper()
	got := render(t, mk())
	if again := render(t, mk()); !bytes.Equal(got, again) {
		t.Fatal("two reports of the same comparison differ")
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("the report differs from %s at byte %d (run with -update and review the page):\ngot  %q\nwant %q", path, i,
			got[i:min(i+120, len(got))], want[i:min(i+120, len(want))])
	}
}

// TestSweepSections checks what the sweep report shows, whatever its
// drawing: the sweep plots (one per metric that varies), the constant
// metric listed instead, the x axis ticks at the swept values, a table per
// point with the metrics named without the point, the failed run with its
// point, and the latency, CPU and worst-case sections per series.
func TestSweepSections(t *testing.T) {
	page := string(render(t, sweepComparison(sweep("hz", "hz", "100", "250", "1000"), sweep("wheel.catchup", "catchup", "per_jiffy", "next_expiry"))))
	sweepPart := section(t, page, "sweep")
	if n := plots(sweepPart); n != 2 {
		t.Errorf("%d sweep plots, want 2 (max-latency-ns and wheel-iterations; hrtimer-hangs is constant)", n)
	}
	for _, want := range []string{
		"Metrics against hz",
		"series (a catchup=per_jiffy, a catchup=next_expiry, b catchup=per_jiffy, b catchup=next_expiry)",
		"<li>Kernel hrtimer-hangs = 0</li>",
		">Cyclictest/thread=0 max-latency (us), lower is better<", ">Kernel wheel-iterations, lower is better, log scale<", // ns metrics in us; a log axis says so in the title
		">250<", ">1000<", // the ticks are the swept values
	} {
		if !strings.Contains(sweepPart, want) {
			t.Errorf("the sweep section lacks %q", want)
		}
	}
	tables := section(t, page, "compare")
	if n := strings.Count(tables, `<h3 id="point-`); n != 6 {
		t.Errorf("%d tables, want one per point (6)", n)
	}
	for _, want := range []string{"Comparison with a at each sweep point", `<h3 id="point-hz-250_catchup-next_expiry">`, ">Kernel wheel-iterations <"} {
		if !strings.Contains(tables, want) {
			t.Errorf("the tables lack %q", want)
		}
	}
	if strings.Contains(tables, "Kernel/hz=") {
		t.Error("a per-point table names its metrics with the point's keys")
	}
	for _, want := range []string{
		"hz = 100, 250, 1000</b> × <b>wheel.catchup = per_jiffy, next_expiry</b> (6 points)",
		`<a href="#point-hz-250_catchup-next_expiry">hz=250/catchup=next_expiry</a>`, // in the contents
		"<li>hz=1000/catchup=next_expiry variant b seed 2: plugin wheel exited: signal: killed</li>",
		`Latency: cyclictest &#34;rt&#34; at hz=1000`,
		"<details><summary>hz=250/catchup=per_jiffy/variant=b, seed 1</summary>",          // CPU counters per column
		"<h3>hz=1000/catchup=next_expiry/variant=b: cyclictest &#34;rt&#34;, seed 3</h3>", // seed 2 failed
		// The largest Max of all: b at the last point, seed 3.
		"hz=1000/catchup=next_expiry/variant=b, seed 3, cyclictest &#34;rt&#34; thread 0: Max 9 us",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, `<h2 id="latency-`); n != 3 {
		t.Errorf("%d latency sections, want one per hz value (3)", n)
	}
}

// TestSweepAxes: a first sweep of names is a nominal axis with a tick per
// value; a numeric one spanning 10x or more is logarithmic, else linear;
// durations are seconds.
func TestSweepAxes(t *testing.T) {
	for _, tc := range []struct {
		values       []string
		nominal, log bool
		label        string
		wantPos      []float64
	}{
		{[]string{"per_jiffy", "next_expiry"}, true, false, "x", []float64{0, 1}},
		{[]string{"100", "250", "1000"}, false, true, "x", []float64{100, 250, 1000}},
		{[]string{"2", "4", "8"}, false, false, "x", []float64{2, 4, 8}},
		{[]string{"1ms", "10ms", "1s"}, false, true, "x", []float64{0.001, 0.01, 1}},
		{[]string{"1", "fast"}, true, false, "x", []float64{0, 1}},
		{[]string{"-1", "0", "100"}, false, false, "x", []float64{-1, 0, 100}},
	} {
		ax := newXAxis(experiment.SweepInfo{Name: "x", Key: "x", Values: tc.values})
		if ax.nominal != tc.nominal || ax.log != tc.log || ax.label != tc.label || fmt.Sprint(ax.pos) != fmt.Sprint(tc.wantPos) {
			t.Errorf("%v: axis %+v, want nominal %v log %v label %q at %v", tc.values, ax, tc.nominal, tc.log, tc.label, tc.wantPos)
		}
	}
	// A nominal first sweep draws its values as tick labels.
	page := string(render(t, sweepComparison(sweep("wheel.catchup", "catchup", "per_jiffy", "next_expiry"))))
	sw := section(t, page, "sweep")
	for _, want := range []string{">per_jiffy<", ">next_expiry<", "One line per variant"} {
		if !strings.Contains(sw, want) {
			t.Errorf("the sweep section over catch-up lacks %q", want)
		}
	}
}

// TestNoSweepUnchanged: without sweeps there is no sweep section and one
// comparison table, as before sweeps.
func TestNoSweepUnchanged(t *testing.T) {
	page := string(render(t, sweepComparison()))
	if strings.Contains(page, `id="sweep"`) || strings.Contains(page, "sweep point") {
		t.Error("a report without sweeps has a sweep section")
	}
	// One table of the metrics that differ; those the same in every
	// variant folded away below it.
	cmp := section(t, page, "compare")
	shown, folded, _ := strings.Cut(cmp, `<details class="unchanged">`)
	if n := strings.Count(shown, "<table>"); n != 1 {
		t.Errorf("%d comparison tables, want 1", n)
	}
	if !strings.Contains(folded, "metrics the same in every variant (folded)</summary>") || !strings.Contains(folded, "<table>") {
		t.Errorf("no folded table of the unchanged metrics:\n%s", folded)
	}
	for _, want := range []string{"Comparison with a", "<h3>b, seed 1</h3>", "variant b, seed 3, cyclictest &#34;rt&#34; thread 0: Max 4 us"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestSweepExtremeValues: metrics of ±Inf, NaN, 1e300 and 1e-300 (a ratio
// over nothing, an edited shard file) draw their plottable values and write
// the page; an axis reaching infinity would never finish its ticks.
func TestSweepExtremeValues(t *testing.T) {
	for _, bad := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), 1e300, 1e-300, -1e300} {
		c := sweepComparison(sweep("hz", "hz", "100", "1000"))
		for i := range c.Metrics {
			m := &c.Metrics[i]
			if m.Unit != "wheel-iterations" {
				continue
			}
			m.Variants[0].Values[0] = bad
			m.Variants[1].Summary.Median = bad
		}
		page := string(render(t, c))
		if n := plots(section(t, page, "sweep")); n != 2 {
			t.Errorf("%v: %d sweep plots, want 2", bad, n)
		}
	}
}

// section returns the page from <h2 id="ID"> to the next <h2.
func section(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `<h2 id="`+id+`">`)
	if i < 0 {
		t.Fatalf("no section %q", id)
	}
	rest := page[i+1:]
	if j := regexp.MustCompile(`<h2 id="`).FindStringIndex(rest); j != nil {
		return rest[:j[0]]
	}
	return rest
}

// TestPageStructure: every id on the page is unique and every entry of the
// table of contents leads to one; the plots' text is in DejaVu Sans, the
// font it is measured with, or a narrower sans-serif;
// the explore layer is inline, with its data, and names nothing outside the
// page.
func TestPageStructure(t *testing.T) {
	for name, c := range map[string]*experiment.Comparison{
		"compare": sweepComparison(),
		"sweep":   sweepComparison(sweep("hz", "hz", "100", "250", "1000"), sweep("wheel.catchup", "catchup", "per_jiffy", "next_expiry")),
	} {
		page := string(render(t, c))
		ids := map[string]int{}
		for _, m := range regexp.MustCompile(` id="([^"]*)"`).FindAllStringSubmatch(page, -1) {
			ids[m[1]]++
		}
		for id, n := range ids {
			if n > 1 {
				t.Errorf("%s: id %q appears %d times", name, id, n)
			}
		}
		toc := regexp.MustCompile(`<a href="#([^"]*)">`).FindAllStringSubmatch(page, -1)
		if len(toc) < 5 {
			t.Errorf("%s: %d table of contents entries, want at least 5", name, len(toc))
		}
		for _, m := range toc {
			if ids[m[1]] != 1 {
				t.Errorf("%s: contents entry #%s leads nowhere", name, m[1])
			}
		}
		if strings.Contains(page, "Liberation") || !strings.Contains(page, "font-family:DejaVu Sans, Bitstream Vera Sans, sans-serif") {
			t.Errorf("%s: the plots are not in their measuring font, DejaVu Sans, then sans-serif", name)
		}
		if strings.Contains(page, "e-05") && strings.Contains(page, "9.999999") {
			t.Errorf("%s: an axis label in float noise", name)
		}
		script := page[strings.LastIndex(page, "<script>"):]
		if strings.Contains(script, "http") && !strings.Contains(script, `"http://www.w3.org/2000/svg"`) || strings.Contains(page, "<script src") {
			t.Errorf("%s: the script names something outside the page", name)
		}
		if !strings.Contains(page, `<div class="explore" data-src="latency-1-data">`) || !strings.Contains(page, `<script type="application/json" id="latency-1-data">[{"name":`) {
			t.Errorf("%s: no explore chart with its data under the first latency section", name)
		}
	}
}

// TestDecadeTicks: powers of ten labelled as written, the steps between
// them unlabelled.
func TestDecadeTicks(t *testing.T) {
	var labels []string
	for _, tk := range (decadeTicks{}).Ticks(1e-6, 2e6) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	want := "1e-06 1e-05 0.0001 0.001 0.01 0.1 1 10 100 1000 10000 1e+05 1e+06"
	if got := strings.Join(labels, " "); got != want {
		t.Errorf("labels %q, want %q", got, want)
	}
	if n := len((decadeTicks{}).Ticks(1, 100)); n != 19 {
		t.Errorf("%d ticks from 1 to 100, want 19 (1..9, 10..90, 100)", n)
	}
	// A short axis labels its minor ticks too.
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0.8, 4.5, "0.8 0.9 1 2 3 4"},
		{0.8, 200, "1 2 5 10 20 50 100 200"},
		{0.8, 2000, "1 10 100 1000"},
	} {
		var got []string
		for _, tk := range (decadeTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%v..%v: labels %q, want %q", tc.lo, tc.hi, strings.Join(got, " "), tc.want)
		}
	}
}

// TestWorstShareScale: every worst-case chart has the same scale, set by
// the largest Max on the page.
func TestWorstShareScale(t *testing.T) {
	page := string(render(t, sweepComparison()))
	worst := section(t, page, "worst")
	if n := strings.Count(worst, "one scale for every variant"); n < 2 {
		t.Fatalf("%d worst-case charts with the shared scale, want at least 2", n)
	}
}

// plots counts the plots in part of a page: its SVG elements but the
// legends' swatches (32 x 10 lines, 14 x 10 boxes).
func plots(part string) int {
	return strings.Count(part, "<svg") - strings.Count(part, `<svg width="32" height="10"`) - strings.Count(part, `<svg width="14" height="10"`)
}
