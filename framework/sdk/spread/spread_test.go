package spread

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/simrand"
)

func TestParseRoundTrip(t *testing.T) {
	for _, s := range []string{
		"",
		"p50=0",
		"p1=-9.3us p10=-8.5us p50=-2.6us p90=+6.1us p99=+91us p99.9=+1.2ms",
		"p25=-850ns p75=+850ns",
	} {
		q, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if got := q.String(); got != s {
			t.Errorf("Parse(%q).String() = %q", s, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"p50", "want p<percent>=<duration>"},
		{"x50=1us", "want p<percent>=<duration>"},
		{"p100=1us", "strictly between 0 and 100"},
		{"p0=1us", "strictly between 0 and 100"},
		{"pten=1us", "strictly between 0 and 100"},
		{"p50=3", "is not a duration"},
		{"p50=1us p10=2us", "percents must ascend"},
		{"p10=2us p50=1us", "below the one before it"},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v; want an error containing %q", c.in, err, c.want)
		}
	}
}

func TestAt(t *testing.T) {
	q, _ := Parse("p10=-10ns p50=0 p90=+100ns")
	for _, c := range []struct{ u, want float64 }{
		{0, -10}, {0.1, -10}, {0.3, -5}, {0.5, 0}, {0.7, 50}, {0.9, 100}, {0.99, 100},
	} {
		if got := q.At(c.u); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("At(%g) = %g; want %g", c.u, got, c.want)
		}
	}
	// Mean: 0.1*-10 + 0.4*-5 + 0.4*50 + 0.1*100 = 27.
	if got := q.Mean(); math.Abs(got-27) > 1e-9 {
		t.Errorf("Mean() = %g; want 27", got)
	}
}

// Draws follow the quantiles (the empirical quantiles of many draws land on
// the written ones), never go below zero, and come from the stream alone.
func TestDraw(t *testing.T) {
	q, _ := Parse("p10=-5us p50=0 p90=+8us p99=+90us")
	r := simrand.New(1, "lapic/local")
	const n = 200000
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(q.Draw(10000, r))
	}
	slices.Sort(x)
	for _, c := range []struct{ p, want float64 }{{0.1, 5000}, {0.5, 10000}, {0.9, 18000}, {0.99, 100000}} {
		got := x[int(c.p*n)]
		if math.Abs(got-c.want) > 0.02*c.want+50 {
			t.Errorf("draws' p%g = %g; want %g", c.p*100, got, c.want)
		}
	}
	low, _ := Parse("p50=-1ms")
	if v := low.Draw(10, r); v != 0 {
		t.Errorf("a draw below zero = %d; want 0", v)
	}
	a, b := simrand.New(3, "s"), simrand.New(3, "s")
	for range 100 {
		if q.Draw(1000, a) != q.Draw(1000, b) {
			t.Fatal("the same stream drew differently")
		}
	}
}

// No spread draws nothing: the stream is where it was, and the cost is itself.
func TestZeroDrawsNothing(t *testing.T) {
	var q Quantiles
	r, ref := simrand.New(5, "x"), simrand.New(5, "x")
	if v := q.Draw(1234, r); v != 1234 {
		t.Errorf("Draw with no spread = %d; want 1234", v)
	}
	if r.Uint64() != ref.Uint64() {
		t.Error("Draw with no spread advanced the stream")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("p1=-9.3us p10=-8.5us p50=-2.6us p90=+6.1us p99=+91us")
	f.Add("p50=0")
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Parse(s)
		if err != nil {
			return
		}
		// What parses prints to a form that parses to the same order.
		q2, err := Parse(q.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q does not parse: %v", s, q.String(), err)
		}
		if len(q2.P) != len(q.P) {
			t.Fatalf("round trip of %q changed the quantile count", s)
		}
	})
}

// TestCheck: Check accepts what Parse gives and the zero spread, and
// refuses what Draw cannot sample, naming the quantile.
func TestCheck(t *testing.T) {
	q, err := Parse("p1=-7.45us p50=-343ns p99.9=+86.3us")
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []Quantiles{q, {}} {
		if err := ok.Check(); err != nil {
			t.Errorf("Check(%v) = %v, want nil", ok, err)
		}
	}
	for _, tc := range []struct {
		q    Quantiles
		want string
	}{
		{Quantiles{P: []float64{0.5}}, "1 probabilities but 0 deviations"},
		{Quantiles{P: []float64{0}, Dev: []float64{1}}, "quantile 0: probability 0"},
		{Quantiles{P: []float64{0.5, 1}, Dev: []float64{1, 2}}, "quantile 1: probability 1"},
		{Quantiles{P: []float64{0.5, 0.5}, Dev: []float64{1, 2}}, "quantile 1: probabilities must ascend"},
		{Quantiles{P: []float64{0.1, 0.5}, Dev: []float64{1, 0}}, "quantile 1: deviation 0 below"},
		{Quantiles{P: []float64{0.1}, Dev: []float64{math.NaN()}}, "quantile 0: deviation NaN"},
		{Quantiles{P: []float64{math.NaN()}, Dev: []float64{1}}, "quantile 0: probability NaN"},
	} {
		if err := tc.q.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%+v) = %v, want an error containing %q", tc.q, err, tc.want)
		}
	}
}
