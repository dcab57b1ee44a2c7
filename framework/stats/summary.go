package stats

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Defaults used by benchstat (the -confidence and -alpha flags of
// golang.org/x/perf:cmd/benchstat).
const (
	DefaultConfidence = 0.95
	DefaultAlpha      = 0.05
)

// Summary describes one sample: a metric's values for one variant over the
// seeds that ran.
//
// Its JSON form (MarshalJSON) writes non-finite values as null.
type Summary struct {
	N int
	// Median and its confidence interval [Lo, Hi] as
	// benchmath.AssumeNothing.Summary computes them (order statistics of the
	// binomial distribution). With too few values Lo and Hi are ±Inf.
	Median, Lo, Hi float64
	// Confidence is the interval's actual confidence level (>= the one
	// asked for, as the interval's ends are sample values).
	Confidence float64
	// Mean and StdDev are what LKP prints: the arithmetic mean and the
	// population standard deviation (divide by n; lkp-tests
	// lib/statistics.rb:sample_variance()).
	Mean, StdDev float64
	// Warnings explain an infinite interval (too few values).
	Warnings []string
	// Deterministic says every value is the same (two values or more): a
	// deterministic simulation gives that for a metric no seed moves. The
	// median is then exact: Lo and Hi are the median, Confidence is 1 and
	// there is no warning, instead of an interval that needs more samples
	// than there can ever be different values.
	Deterministic bool
}

// Summarize summarises xs at the given confidence level (0.95 for 95%). xs
// is not modified. An empty xs gives a zero Summary with NaN statistics.
func Summarize(xs []float64, confidence float64) Summary {
	if len(xs) == 0 {
		nan := math.NaN()
		return Summary{Median: nan, Lo: nan, Hi: nan, Mean: nan, StdDev: nan}
	}
	// benchmath sorts the slice it is given.
	s := benchmath.NewSample(slices.Clone(xs), &benchmath.DefaultThresholds)
	bs := benchmath.AssumeNothing.Summary(s, confidence)
	out := Summary{N: len(xs), Median: bs.Center, Lo: bs.Lo, Hi: bs.Hi, Confidence: bs.Confidence,
		Warnings: errorStrings(bs.Warnings)}
	out.Mean, out.StdDev = meanStdDev(xs)
	if len(xs) >= 2 && slices.Min(xs) == slices.Max(xs) {
		out.Deterministic = true
		out.Lo, out.Hi, out.Confidence, out.Warnings = out.Median, out.Median, 1, nil
	}
	return out
}

// RangePct renders the confidence interval as benchstat's "± x%" cell does
// (benchmath.Summary.PctRangeString): the larger distance from the median to
// an end, in percent of the median; "∞" for an infinite interval and "?" when
// the ends and the median differ in sign.
func (s Summary) RangePct() string {
	return benchmath.Summary{Center: s.Median, Lo: s.Lo, Hi: s.Hi}.PctRangeString()
}

// RelStdDev is the standard deviation in percent of the mean, LKP's %stddev
// (lkp-tests lib/compare.rb:show_perf_change()); when the mean is 0 it is the
// standard deviation itself, as there.
func (s Summary) RelStdDev() float64 {
	if s.Mean == 0 {
		return s.StdDev
	}
	return 100 * s.StdDev / math.Abs(s.Mean)
}

func meanStdDev(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)))
}

// Median returns the median of xs (the mean of the two middle values for an
// even count), NaN for none. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// GeoMean is the geometric mean of xs, NaN when xs is empty or holds a value
// <= 0; computed as go-moremath's stats.GeoMean (the running mean of the
// logarithms), which benchstat's geomean row uses.
func GeoMean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	m := 0.0
	for i, x := range xs {
		if x <= 0 {
			return math.NaN()
		}
		m += (math.Log(x) - m) / float64(i+1)
	}
	return math.Exp(m)
}

func errorStrings(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// MarshalJSON writes non-finite statistics (an infinite interval, the NaNs
// of an empty sample) as null, which encoding/json cannot otherwise encode.
func (s Summary) MarshalJSON() ([]byte, error) {
	return MarshalJSON(struct {
		N          int      `json:"n"`
		Median     jsonNum  `json:"median"`
		Lo         jsonNum  `json:"ci_lo"`
		Hi         jsonNum  `json:"ci_hi"`
		Confidence jsonNum  `json:"confidence"`
		Mean       jsonNum  `json:"mean"`
		StdDev     jsonNum  `json:"stddev"`
		Warnings   []string `json:"warnings,omitempty"`
		Exact      bool     `json:"deterministic,omitempty"`
	}{s.N, jsonNum(s.Median), jsonNum(s.Lo), jsonNum(s.Hi), jsonNum(s.Confidence), jsonNum(s.Mean), jsonNum(s.StdDev), s.Warnings, s.Deterministic})
}

// jsonNum is a float64 that encodes NaN and ±Inf as null.
type jsonNum float64

func (f jsonNum) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// MarshalJSON is json.Marshal without escaping <, > and &, which warnings
// and reports use ("need >= 6 samples").
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
