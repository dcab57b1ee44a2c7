package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchmath"
)

// Inputs and the cells `benchstat -col /variant` (golang.org/x/perf at the
// version in go.mod) printed for them:
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
	benchBase  = []float64{101, 99, 104, 98, 102, 100, 97, 103, 100, 105}
	benchNew   = []float64{110, 108, 115, 107, 111, 109, 106, 113, 112, 114}
	benchSame  = []float64{100, 101, 99, 102, 98, 100, 103, 97, 101, 100}
	benchSmall = [2][]float64{{5, 6, 7}, {6, 7, 8}}
)

func TestSummarizeMatchesBenchstat(t *testing.T) {
	tests := []struct {
		name     string
		xs       []float64
		median   float64
		rangePct string
		warnings int
	}{
		{"base", benchBase, 100.5, "3%", 0},
		{"new", benchNew, 110.5, "3%", 0},
		{"same", benchSame, 100, "2%", 0},
		{"small", benchSmall[0], 6, "∞", 1},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.xs)
		got := Summarize(in, DefaultConfidence)
		if !slices.Equal(in, tt.xs) {
			t.Errorf("Summarize(%s) modified its input: %v", tt.name, in)
		}
		if got.Median != tt.median || got.RangePct() != tt.rangePct || len(got.Warnings) != tt.warnings {
			t.Errorf("Summarize(%s) = median %v ± %s (%d warnings), want %v ± %s (%d)", tt.name, got.Median, got.RangePct(), len(got.Warnings), tt.median, tt.rangePct, tt.warnings)
		}
		// The same numbers as benchmath itself.
		want := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(tt.xs), &benchmath.DefaultThresholds), DefaultConfidence)
		if got.Median != want.Center || got.Lo != want.Lo || got.Hi != want.Hi || got.Confidence != want.Confidence {
			t.Errorf("Summarize(%s) = %v [%v, %v] @%v, benchmath %v [%v, %v] @%v", tt.name, got.Median, got.Lo, got.Hi, got.Confidence, want.Center, want.Lo, want.Hi, want.Confidence)
		}
	}
	if w := Summarize(benchSmall[0], DefaultConfidence).Warnings; len(w) != 1 || w[0] != "need >= 6 samples for confidence interval at level 0.95" {
		t.Errorf("Summarize(3 values).Warnings = %q", w)
	}
}

func TestMannWhitneyMatchesBenchstat(t *testing.T) {
	tests := []struct {
		name          string
		base, x       []float64
		delta, pn     string
		significant   bool
		warningSuffix string
	}{
		{"shifted", benchBase, benchNew, "+9.95%", "p=0.000 n=10", true, ""},
		{"same", benchBase, benchSame, "~", "p=0.537 n=10", false, ""},
		{"small", benchSmall[0], benchSmall[1], "~", "p=0.500 n=3", false, "need >= 4 samples to detect a difference at alpha level 0.05"},
	}
	for _, tt := range tests {
		got := MannWhitney(tt.base, tt.x, DefaultAlpha)
		d := got.FormatDelta(Median(tt.base), Median(tt.x))
		if d != tt.delta || got.String() != tt.pn || got.Significant() != tt.significant {
			t.Errorf("MannWhitney(%s) = %q (%s) significant %v, want %q (%s) %v", tt.name, d, got, got.Significant(), tt.delta, tt.pn, tt.significant)
		}
		if tt.warningSuffix != "" && (len(got.Warnings) != 1 || got.Warnings[0] != tt.warningSuffix) {
			t.Errorf("MannWhitney(%s).Warnings = %q, want [%q]", tt.name, got.Warnings, tt.warningSuffix)
		}
		want := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(tt.base), &benchmath.DefaultThresholds),
			benchmath.NewSample(slices.Clone(tt.x), &benchmath.DefaultThresholds))
		if got.P != want.P || got.N1 != want.N1 || got.N2 != want.N2 {
			t.Errorf("MannWhitney(%s).P = %v (n %d+%d), benchmath %v (n %d+%d)", tt.name, got.P, got.N1, got.N2, want.P, want.N1, want.N2)
		}
	}
	// All values equal: benchmath reports P = 1 with a warning.
	eq := MannWhitney([]float64{3, 3, 3}, []float64{3, 3, 3}, DefaultAlpha)
	if eq.P != 1 || eq.Significant() || len(eq.Warnings) == 0 {
		t.Errorf("MannWhitney(all 3) = %+v, want P 1, not significant, a warning", eq)
	}
}

func TestGeoMeanMatchesBenchstat(t *testing.T) {
	// benchstat's geomean row above: centers 100.5 and 6 → 24.56;
	// 110.5 and 7 → 27.81; ratio of per-row ratios +13.26%.
	tests := []struct {
		xs   []float64
		want string
	}{
		{[]float64{100.5, 6}, "24.56"},
		{[]float64{110.5, 7}, "27.81"},
		{[]float64{110.5 / 100.5, 7.0 / 6}, "1.1326"},
	}
	for _, tt := range tests {
		got := GeoMean(tt.xs)
		prec := len(tt.want) - strings.Index(tt.want, ".") - 1
		if s := fmt.Sprintf("%.*f", prec, got); s != tt.want {
			t.Errorf("GeoMean(%v) = %s, want %s", tt.xs, s, tt.want)
		}
	}
	for _, xs := range [][]float64{nil, {1, 0}, {2, -1}} {
		if got := GeoMean(xs); !math.IsNaN(got) {
			t.Errorf("GeoMean(%v) = %v, want NaN", xs, got)
		}
	}
}

func TestLKPStatistics(t *testing.T) {
	// lkp-tests lib/statistics.rb: population standard deviation.
	s := Summarize([]float64{2, 4, 4, 4, 5, 5, 7, 9}, DefaultConfidence)
	if s.Mean != 5 || s.StdDev != 2 || s.RelStdDev() != 40 {
		t.Errorf("Summarize(2 4 4 4 5 5 7 9) mean %v stddev %v rel %v, want 5, 2, 40", s.Mean, s.StdDev, s.RelStdDev())
	}
	z := Summarize([]float64{-1, 1}, DefaultConfidence)
	if z.Mean != 0 || z.RelStdDev() != 1 {
		t.Errorf("Summarize(-1 1) mean %v rel stddev %v, want 0 and the plain stddev 1", z.Mean, z.RelStdDev())
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{-1}, -1}}
	for _, tt := range tests {
		if got := Median(tt.xs); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Errorf("Median(nil) = %v, want NaN", Median(nil))
	}
}

func TestSummaryJSON(t *testing.T) {
	b, err := json.Marshal(Summarize([]float64{1, 2}, DefaultConfidence))
	if err != nil {
		t.Fatalf("json.Marshal(Summary with infinite interval): %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["ci_lo"] != nil || m["median"] != 1.5 || m["n"] != 2.0 {
		t.Errorf("Summary JSON = %s, want ci_lo null, median 1.5, n 2", b)
	}
}

// TestSummarizeDeterministic: values that are all the same (a metric no seed
// moves) give an exact median, not an interval that needs more samples; one
// value, or values that differ, keep benchmath's interval and warning.
func TestSummarizeDeterministic(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		det  bool
		warn bool
	}{
		{[]float64{5, 5, 5}, true, false},
		{[]float64{0, 0}, true, false},
		{[]float64{5}, false, true},
		{[]float64{5, 5, 6}, false, true},
	} {
		s := Summarize(tc.xs, DefaultConfidence)
		if s.Deterministic != tc.det || (len(s.Warnings) > 0) != tc.warn {
			t.Errorf("%v: deterministic %v, warnings %q; want %v and warnings %v", tc.xs, s.Deterministic, s.Warnings, tc.det, tc.warn)
		}
		if tc.det && (s.Lo != s.Median || s.Hi != s.Median || s.Confidence != 1 || s.RangePct() != "0%") {
			t.Errorf("%v: interval [%v, %v] at %v, range %q; want the median exactly", tc.xs, s.Lo, s.Hi, s.Confidence, s.RangePct())
		}
	}
}
