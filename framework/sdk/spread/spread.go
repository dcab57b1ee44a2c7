// Package spread is how a cost that is not the same every time is written
// and drawn: the quantiles of its deviation from the cost's centre, as
// tickemu calibrate measures them on a real machine's trace
// (docs/calibration-fit.md), and a draw by the inverse of that distribution
// from a seeded stream (framework/sdk/simrand), so a run stays
// byte-deterministic.
//
// The written form is a string attribute beside the cost, one p<percent>=<duration>
// per quantile, separated by spaces, percents ascending:
//
//	irq_latency        = "18366ns"
//	irq_latency_spread = "p1=-9.3us p10=-8.5us p50=-2.6us p90=+6.1us p99=+91us"
//
// A draw is the cost plus the deviation at a uniform probability u: linear
// between the two quantiles around u, the first quantile's deviation below
// it and the last's above it (no extrapolation past what was measured). An
// empty spread is no spread: the cost itself, and no number drawn.
package spread

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tickemu/tickemu/framework/sdk/simrand"
)

// Quantiles is a distribution of deviations from a cost's centre, in ns:
// Dev[i] at probability P[i] (P ascending in (0, 1), Dev not decreasing).
// The zero value is no spread.
type Quantiles struct {
	P   []float64
	Dev []float64
}

// Zero reports whether q is no spread.
func (q Quantiles) Zero() bool { return len(q.P) == 0 }

// Parse reads the written form ("p10=-5us p50=0 p99=+60us"); the empty
// string is no spread. Each error names the field.
func Parse(s string) (Quantiles, error) {
	var q Quantiles
	for _, f := range strings.Fields(s) {
		name, val, ok := strings.Cut(f, "=")
		if !ok || !strings.HasPrefix(name, "p") {
			return Quantiles{}, fmt.Errorf("%q: want p<percent>=<duration> (p99=+60us)", f)
		}
		pct, err := strconv.ParseFloat(name[1:], 64)
		if err != nil || !(pct > 0 && pct < 100) {
			return Quantiles{}, fmt.Errorf("%q: the percent %q is not a number strictly between 0 and 100", f, name[1:])
		}
		var dev float64
		if val != "0" && val != "+0" && val != "-0" {
			d, err := time.ParseDuration(val)
			if err != nil {
				return Quantiles{}, fmt.Errorf("%q: %q is not a duration (-3us, +1.5ms, 250ns)", f, val)
			}
			dev = float64(d.Nanoseconds())
		}
		p := pct / 100
		if n := len(q.P); n > 0 {
			if p <= q.P[n-1] {
				return Quantiles{}, fmt.Errorf("%q: percents must ascend (after p%s)", f, fmtPct(q.P[n-1]))
			}
			if dev < q.Dev[n-1] {
				return Quantiles{}, fmt.Errorf("%q: a quantile below the one before it (%s)", f, fmtDev(q.Dev[n-1]))
			}
		}
		q.P = append(q.P, p)
		q.Dev = append(q.Dev, dev)
	}
	return q, nil
}

// Check reports whether q is a distribution Draw can sample: as many
// deviations as probabilities, the probabilities ascending strictly inside
// (0, 1), the deviations finite and not decreasing (what Parse accepts; a
// Quantiles that came another way, such as over the wire, is checked here).
func (q Quantiles) Check() error {
	if len(q.P) != len(q.Dev) {
		return fmt.Errorf("%d probabilities but %d deviations", len(q.P), len(q.Dev))
	}
	for i, p := range q.P {
		d := q.Dev[i]
		switch {
		case !(p > 0 && p < 1):
			return fmt.Errorf("quantile %d: probability %g is not strictly between 0 and 1", i, p)
		case math.IsNaN(d) || math.IsInf(d, 0):
			return fmt.Errorf("quantile %d: deviation %g is not a finite number", i, d)
		case i > 0 && p <= q.P[i-1]:
			return fmt.Errorf("quantile %d: probabilities must ascend (%g after %g)", i, p, q.P[i-1])
		case i > 0 && d < q.Dev[i-1]:
			return fmt.Errorf("quantile %d: deviation %g below the one before it (%g)", i, d, q.Dev[i-1])
		}
	}
	return nil
}

// String is the written form Parse reads.
func (q Quantiles) String() string {
	var b strings.Builder
	for i := range q.P {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("p" + fmtPct(q.P[i]) + "=" + fmtDev(q.Dev[i]))
	}
	return b.String()
}

// At is the deviation at probability u in [0, 1).
func (q Quantiles) At(u float64) float64 {
	n := len(q.P)
	switch {
	case n == 0:
		return 0
	case u <= q.P[0]:
		return q.Dev[0]
	case u >= q.P[n-1]:
		return q.Dev[n-1]
	}
	i := 1
	for q.P[i] < u {
		i++
	}
	f := (u - q.P[i-1]) / (q.P[i] - q.P[i-1])
	return q.Dev[i-1] + f*(q.Dev[i]-q.Dev[i-1])
}

// Draw returns centre plus a deviation drawn from q with r, never below 0
// (a cost is not negative); with no spread it returns centre and draws
// nothing, so a run without a spread draws the same numbers as before one
// existed. Draw inlines to that test: a device draws a latency per
// interrupt, and most runs set no spread.
func (q Quantiles) Draw(centre int64, r *simrand.Rand) int64 {
	if q.Zero() {
		return centre
	}
	return q.draw(centre, r)
}

// draw is Draw from a spread that is set.
func (q Quantiles) draw(centre int64, r *simrand.Rand) int64 {
	return max(0, centre+int64(math.Round(q.At(r.Float64()))))
}

// Mean is the mean deviation of the distribution Draw samples (the
// piecewise-linear inverse CDF's integral, the flat ends included).
func (q Quantiles) Mean() float64 {
	n := len(q.P)
	if n == 0 {
		return 0
	}
	m := q.P[0]*q.Dev[0] + (1-q.P[n-1])*q.Dev[n-1]
	for i := 1; i < n; i++ {
		m += (q.P[i] - q.P[i-1]) * (q.Dev[i] + q.Dev[i-1]) / 2
	}
	return m
}

func fmtPct(p float64) string { return strconv.FormatFloat(p*100, 'f', -1, 64) }

// fmtDev prints a deviation with its sign, in the largest unit that keeps
// it above 1, to three significant figures: "+91.2us", "-850ns", "0".
func fmtDev(ns float64) string {
	if ns == 0 {
		return "0"
	}
	sign := "+"
	if ns < 0 {
		sign = "-"
	}
	a := math.Abs(ns)
	unit, div := "ns", 1.0
	switch {
	case a >= 1e6:
		unit, div = "ms", 1e6
	case a >= 1e3:
		unit, div = "us", 1e3
	}
	v := strconv.FormatFloat(a/div, 'g', 3, 64)
	if strings.ContainsAny(v, "e") { // 3 significant figures of 100-999 in ns
		v = strconv.FormatFloat(math.Round(a/div), 'f', 0, 64)
	}
	return sign + v + unit
}
