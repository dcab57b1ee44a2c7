package resultfmt

import (
	"github.com/tickemu/tickemu/framework/experiment"

	"bytes"
	"strings"
	"testing"
)

// TestLKPMean checks the number formats of lkp-tests
// lib/compare.rb:show_perf_change() (printf "%10.2f", "%10.4g", "%10d").
func TestLKPMean(t *testing.T) {
	tests := []struct {
		avg  float64
		want string
	}{
		{5, "      5.00"},
		{999.994, "    999.99"},
		{-12.5, "    -12.50"},
		{1000, "      1000"},
		{123456.9, "    123456"}, // Ruby's %d truncates a Float
		{-4567.8, "     -4567"},
		{100_000_000, " 100000000"},
		{123_456_789, " 1.235e+08"},
	}
	for _, tt := range tests {
		if got := lkpMean(1, tt.avg); got != tt.want {
			t.Errorf("lkpMean(%v) = %q, want %q", tt.avg, got, tt.want)
		}
	}
	if got := lkpMean(0, 0); got != strings.Repeat(" ", lkpAbsWidth) {
		t.Errorf("lkpMean(no sample) = %q, want blanks", got)
	}
}

// TestLKPRows checks whole rows: stddev shown only above 2% (truncated to an
// integer), relative change with one decimal or %.2g from 100000%, absolute
// change for units ending in "%", unchanged metrics left out.
func TestLKPRows(t *testing.T) {
	var runs []experiment.RunOutcome
	seeds := []uint64{1, 2, 3, 4}
	base := []float64{100, 104, 96, 100} // mean 100, stddev 2.83%
	news := []float64{150, 150, 150, 150}
	for v, name := range []string{"a", "b"} {
		for s, seed := range seeds {
			x := base[s]
			if v == 1 {
				x = news[s]
			}
			runs = append(runs, experiment.RunOutcome{Variant: name, Seed: seed, Metrics: []experiment.RunMetric{
				{Bench: "W", Unit: "ops/s", Value: x},
				{Bench: "W", Unit: "idle%", Value: x / 10},
				{Bench: "W", Unit: "tiny", Value: float64(v)*999 + 0.001},
				{Bench: "W", Unit: "same", Value: 7},
			}})
		}
	}
	c := experiment.Analyze("f", []string{"a", "b"}, seeds, runs, 0, 0)
	var b bytes.Buffer
	writeLKP(&b, c)
	want := []string{
		"    100.00 ±  2%     +50.0%     150.00        W.ops/s",
		"     10.00 ±  2%      +5.0       15.00        W.idle%",
		"      0.00          +1e+08%     999.00        W.tiny",
	}
	got := b.String()
	for _, w := range want {
		if !strings.Contains(got, w+"\n") {
			t.Errorf("writeLKP: no row %q in\n%s", w, got)
		}
	}
	if strings.Contains(got, "W.same") {
		t.Errorf("writeLKP lists an unchanged metric:\n%s", got)
	}
	if !strings.Contains(got, "         %stddev     %change         %stddev\n") {
		t.Errorf("writeLKP: no LKP header in\n%s", got)
	}
}
