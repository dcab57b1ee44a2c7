package experiment_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/resultfmt"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// lapicSrc is a small, fast scenario (one CPU, 10 ms) whose two variants
// differ clearly: the LAPIC in count-down one-shot mode against TSC-deadline
// mode, under stress-ng timermix and cyclictest. A third variant asks for a
// mode the LAPIC plugin does not have, so every run of it fails with a
// configuration diagnostic.
const lapicSrc = `
variable "mode" { default = "tsc_deadline" }
machine {
  cpus = 1
  hz   = 1000
}
clockevent "local" { mode = var.mode }
workload "timermix" "tm" { instances = 1 }
workload "cyclictest" "rt" {
  threads  = 1
  interval = "200us"
  priority = 99
}
run {
  duration = "10ms"
  seed     = 1
}
variant "oneshot"      { vars = { mode = "oneshot" } }
variant "tsc_deadline" { vars = { mode = "tsc_deadline" } }
variant "bogus"        { vars = { mode = "no_such_mode" } }
`

func load(src string) func(experiment.Cell) (*config.Spec, error) {
	return func(c experiment.Cell) (*config.Spec, error) {
		s, diags := config.LoadBytes("lapic.hcl", []byte(src), config.Options{Variant: c.Variant, Seed: &c.Seed})
		if diags.HasErrors() {
			return nil, &experiment.DiagError{Diags: diags, Files: s.Files()}
		}
		return s, nil
	}
}

func seedsFrom(first uint64, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = first + uint64(i)
	}
	return s
}

func compareOpts(variants []string, seeds []uint64, jobs int) experiment.CompareOptions {
	return experiment.CompareOptions{
		File:     "lapic.hcl",
		Variants: variants,
		Seeds:    seeds,
		Jobs:     jobs,
		Load:     load(lapicSrc),
		Run:      experiment.Options{Opener: experiment.InProcess(builtin.Factories())},
	}
}

func mustCompare(t testing.TB, o experiment.CompareOptions) *experiment.Comparison {
	t.Helper()
	c, err := experiment.Compare(o)
	if err != nil {
		t.Fatalf("Compare(%v x %v, jobs %d): %v", o.Variants, o.Seeds, o.Jobs, err)
	}
	return c
}

// TestCompareRunsAreSingleRuns checks that each (variant, seed) of a
// comparison is the run `tickemu run --variant V --seed S` makes: the same
// bench lines, byte for byte.
func TestCompareRunsAreSingleRuns(t *testing.T) {
	variants := []string{"oneshot", "tsc_deadline"}
	seeds := []uint64{3, 4, 5}
	c := mustCompare(t, compareOpts(variants, seeds, 2))
	if len(c.Failures) != 0 {
		t.Fatalf("Compare: failures %v, want none", c.Failures)
	}
	var all bytes.Buffer
	if err := resultfmt.WriteCompareBench(&all, c); err != nil {
		t.Fatal(err)
	}
	var wantLines []string
	for s, seed := range seeds {
		for v, variant := range variants {
			spec, err := load(lapicSrc)(experiment.Cell{Variant: variant, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			res, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
			if err != nil {
				t.Fatalf("Run(%s, seed %d): %v", variant, seed, err)
			}
			var want, got bytes.Buffer
			o := experiment.BenchOptions{VariantKey: true, Header: true, Units: true}
			if err := experiment.WriteBench(&want, res, o); err != nil {
				t.Fatal(err)
			}
			r := c.Runs[v*len(seeds)+s]
			if r.Variant != variant || r.Seed != seed {
				t.Fatalf("Runs[%d] = %s seed %d, want %s seed %d", v*len(seeds)+s, r.Variant, r.Seed, variant, seed)
			}
			if err := experiment.WriteBench(&got, r.Result, o); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("compare run %s seed %d:\n%s\nwant (tickemu run):\n%s", variant, seed, got.String(), want.String())
			}
			for _, l := range strings.Split(want.String(), "\n") {
				if strings.HasPrefix(l, "Benchmark") {
					wantLines = append(wantLines, l)
				}
			}
		}
	}
	// The bench output holds exactly those lines, seed by seed.
	var gotLines []string
	for _, l := range strings.Split(all.String(), "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			gotLines = append(gotLines, l)
		}
	}
	if !slices.Equal(gotLines, wantLines) {
		t.Errorf("WriteCompareBench result lines =\n%s\nwant\n%s", strings.Join(gotLines, "\n"), strings.Join(wantLines, "\n"))
	}
}

// TestCompareDeterministic checks that the outputs do not depend on the
// number of jobs or on the order in which runs finish.
func TestCompareDeterministic(t *testing.T) {
	variants := []string{"oneshot", "tsc_deadline"}
	seeds := seedsFrom(1, 4)
	encoders := []struct {
		name string
		fn   func(*bytes.Buffer, *experiment.Comparison) error
	}{
		{"text", func(b *bytes.Buffer, c *experiment.Comparison) error { return resultfmt.WriteCompareText(b, c) }},
		{"json", func(b *bytes.Buffer, c *experiment.Comparison) error { return resultfmt.WriteCompareJSON(b, c) }},
		{"csv", func(b *bytes.Buffer, c *experiment.Comparison) error { return resultfmt.WriteCompareCSV(b, c) }},
		{"bench", func(b *bytes.Buffer, c *experiment.Comparison) error { return resultfmt.WriteCompareBench(b, c) }},
	}
	var first []string
	for _, jobs := range []int{1, 3, 1} {
		c := mustCompare(t, compareOpts(variants, seeds, jobs))
		var outs []string
		for _, e := range encoders {
			var b bytes.Buffer
			if err := e.fn(&b, c); err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			outs = append(outs, b.String())
		}
		if first == nil {
			first = outs
			continue
		}
		for i, e := range encoders {
			if outs[i] != first[i] {
				t.Errorf("Compare(jobs %d) %s output differs from jobs 1:\n%s\nwant\n%s", jobs, e.name, outs[i], first[i])
			}
		}
	}
}

// TestCompareFailures checks that failed runs are reported with their
// variant and seed while the other runs complete and are summarised.
func TestCompareFailures(t *testing.T) {
	variants := []string{"tsc_deadline", "bogus", "oneshot"}
	seeds := seedsFrom(1, 3)
	o := compareOpts(variants, seeds, 2)
	inner := o.Load
	o.Load = func(c experiment.Cell) (*config.Spec, error) {
		if c.Variant == "oneshot" && c.Seed == 2 {
			// Stands for a plugin crashing inside the process.
			panic("plugin crashed")
		}
		return inner(c)
	}
	c := mustCompare(t, o)
	var got []string
	for _, f := range c.Failures {
		got = append(got, fmt.Sprintf("%s/%d", f.Variant, f.Seed))
	}
	want := []string{"bogus/1", "bogus/2", "bogus/3", "oneshot/2"}
	if !slices.Equal(got, want) {
		t.Fatalf("Failures = %v, want %v", got, want)
	}
	for _, r := range c.Runs {
		var de *experiment.DiagError
		var pe *experiment.PanicError
		switch {
		case r.Variant == "bogus":
			if !errors.As(r.Err, &de) || !strings.Contains(de.Error(), "no_such_mode") {
				t.Errorf("run bogus/%d error = %v, want a DiagError naming no_such_mode", r.Seed, r.Err)
			}
		case r.Variant == "oneshot" && r.Seed == 2:
			if !errors.As(r.Err, &pe) || pe.Value != "plugin crashed" || !strings.Contains(pe.Stack, "runOne") {
				t.Errorf("run oneshot/2 error = %#v, want a PanicError with the stack", r.Err)
			}
		default:
			if r.Err != nil || r.Result == nil || len(r.Metrics) == 0 {
				t.Errorf("run %s/%d = err %v, result %v, %d metrics; want a result", r.Variant, r.Seed, r.Err, r.Result != nil, len(r.Metrics))
			}
		}
	}
	for _, m := range c.Metrics {
		ns := []int{m.Variants[0].Summary.N, m.Variants[1].Summary.N, m.Variants[2].Summary.N}
		if !slices.Equal(ns, []int{3, 0, 2}) {
			t.Errorf("%s: sample sizes %v, want [3 0 2]", m.Key(), ns)
		}
		if p := m.Variants[2].VsBase.Paired.Pairs; p != 2 {
			t.Errorf("%s: oneshot paired over %d seeds, want 2", m.Key(), p)
		}
		if d := m.Variants[1].VsBase.Delta; d != "?" {
			t.Errorf("%s: delta of a variant without runs = %q, want ?", m.Key(), d)
		}
		if !math.IsNaN(m.Variants[2].Values[1]) {
			t.Errorf("%s: oneshot seed 2 value = %v, want NaN", m.Key(), m.Variants[2].Values[1])
		}
	}
	// Every encoder still writes the completed runs.
	var text, bench, js, csv bytes.Buffer
	if err := resultfmt.WriteCompareText(&text, c); err != nil {
		t.Fatal(err)
	}
	if err := resultfmt.WriteCompareBench(&bench, c); err != nil {
		t.Fatal(err)
	}
	if err := resultfmt.WriteCompareJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	if err := resultfmt.WriteCompareCSV(&csv, c); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"4 of 9 runs failed", "variant oneshot seed 2: panic: plugin crashed", "variant bogus seed 1: "} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("WriteCompareText: no %q in\n%s", s, text.String())
		}
	}
	if !strings.Contains(bench.String(), "# failed: variant oneshot seed 2: panic: plugin crashed") ||
		!strings.Contains(bench.String(), "BenchmarkTimermix/variant=oneshot 1 ") {
		t.Errorf("WriteCompareBench lacks the failure comment or the completed runs:\n%s", bench.String())
	}
	if !strings.Contains(js.String(), `"error": "panic: plugin crashed"`) {
		t.Errorf("WriteCompareJSON lacks the failure:\n%s", js.String())
	}
}

func TestCompareErrors(t *testing.T) {
	o := compareOpts(nil, []uint64{1}, 1)
	if _, err := experiment.Compare(o); !errors.Is(err, experiment.ErrNoVariants) {
		t.Errorf("Compare(no variants) error = %v, want ErrNoVariants", err)
	}
	o = compareOpts([]string{"oneshot"}, nil, 1)
	if _, err := experiment.Compare(o); !errors.Is(err, experiment.ErrNoVariants) {
		t.Errorf("Compare(no seeds) error = %v, want ErrNoVariants", err)
	}
	o = compareOpts([]string{"oneshot"}, []uint64{1}, 1)
	o.Run.Trace = &bytes.Buffer{}
	if _, err := experiment.Compare(o); err == nil {
		t.Errorf("Compare(with a trace) error = nil, want one")
	}
}

// TestCompareProgress checks the progress callback: once per run, counting
// up to the total.
func TestCompareProgress(t *testing.T) {
	o := compareOpts([]string{"oneshot", "tsc_deadline"}, seedsFrom(1, 3), 2)
	var calls []int
	o.Progress = func(done, total int) {
		if total != 6 {
			t.Errorf("Progress total = %d, want 6", total)
		}
		calls = append(calls, done)
	}
	mustCompare(t, o)
	if !slices.Equal(calls, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("Progress calls = %v, want 1..6", calls)
	}
}

// BenchmarkCompareJobs measures the wall time of the same comparison with
// one job and with two, alternating, and reports the median of the
// per-iteration ratios jobs1/jobs2 (robust to load from other processes):
// on two otherwise idle cores it should be close to 2.
func BenchmarkCompareJobs(b *testing.B) {
	variants := []string{"oneshot", "tsc_deadline"}
	seeds := seedsFrom(1, 8)
	var t1, t2 time.Duration
	var ratios []float64
	for b.Loop() {
		start := time.Now()
		mustCompare(b, compareOpts(variants, seeds, 1))
		d1 := time.Since(start)
		start = time.Now()
		mustCompare(b, compareOpts(variants, seeds, 2))
		d2 := time.Since(start)
		t1, t2 = t1+d1, t2+d2
		ratios = append(ratios, float64(d1)/float64(d2))
	}
	slices.Sort(ratios)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(t1.Seconds()/float64(b.N), "jobs1-s/op")
	b.ReportMetric(t2.Seconds()/float64(b.N), "jobs2-s/op")
	b.ReportMetric(ratios[len(ratios)/2], "jobs1/jobs2")
}
