package calibrate

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Estimate is one estimator's figure from one or more traces.
type Estimate struct {
	// N is the number of samples; 0: not constrained.
	N int
	// Centre is the fenced mean in ns (see Centre), SE its standard error.
	Centre, SE float64
	// Median is the plain median, printed beside it.
	Median float64
	// Interior is the mean number of traced events inside a sample.
	Interior float64
}

// Constrained reports whether there were samples.
func (e Estimate) Constrained() bool { return e.N > 0 }

// Centre is the robust centre of samples: the mean of the samples inside
// the far-out fences Q1 - 3·IQR and Q3 + 3·IQR, the IQR taken as at least
// the timestamps' resolution. Not the median: tracefs prints an ns clock
// with microsecond decimals, so an interval of 0.3 us reads as 0 or 1 us,
// and the median of such samples is a whole microsecond, while the mean of
// the truncated differences is the mean of the true ones (the truncation's
// phase is uniform). The fences drop what is not the cost: an interrupt or
// a preemption inside the interval.
func Centre(x []float64, resolution float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	q1 := stat.Quantile(0.25, stat.Empirical, s, nil)
	q3 := stat.Quantile(0.75, stat.Empirical, s, nil)
	iqr := max(q3-q1, resolution)
	lo, hi := q1-3*iqr, q3+3*iqr
	i := lowerBound(s, lo)
	j := lowerBound(s, math.Nextafter(hi, math.Inf(1)))
	return stat.Mean(s[i:j], nil)
}

// lowerBound is the index of the first element of s not below v.
func lowerBound(s []float64, v float64) int {
	i, _ := slices.BinarySearch(s, v)
	return i
}

// bootstrapRounds is how many resamples estimate a centre's standard error.
const bootstrapRounds = 200

// Reduce estimates one estimator from its samples, each less tp for every
// tracepoint it spans (the one of the event that opens it and one per
// event inside: Interval.Interior). tpSE is tp's standard error, added in
// quadrature. The bootstrap's generator is seeded from the sample count, so
// the same samples give the same figures.
func Reduce(iv []Interval, resolution int64, tp, tpSE float64) Estimate {
	if len(iv) == 0 {
		return Estimate{}
	}
	x := make([]float64, len(iv))
	var interior float64
	for i, v := range iv {
		x[i] = float64(v.NS) - tp*float64(1+v.Interior)
		interior += float64(v.Interior)
	}
	interior /= float64(len(iv))
	res := float64(resolution)
	e := Estimate{N: len(x), Centre: Centre(x, res), Interior: interior}
	s := slices.Clone(x)
	slices.Sort(s)
	e.Median = stat.Quantile(0.5, stat.Empirical, s, nil)
	rng := rand.New(rand.NewPCG(uint64(len(x)), 0x7469636b656d75))
	b := make([]float64, len(x))
	cs := make([]float64, bootstrapRounds)
	for k := range cs {
		for i := range b {
			b[i] = x[rng.IntN(len(x))]
		}
		cs[k] = Centre(b, res)
	}
	e.SE = stat.StdDev(cs, nil)
	// A floor: n samples of a constant read through a clock of this
	// resolution still leave res/sqrt(12n) unknown.
	e.SE = math.Hypot(max(e.SE, res/math.Sqrt(12*float64(len(x)))), (1+interior)*tpSE)
	return e
}

// Pool combines one estimator's estimates from several bundles: the
// inverse-variance weighted mean, its standard error scaled up by the Birge
// ratio sqrt(chi2/(k-1)) when the bundles disagree by more than their own
// errors say (a machine whose cost moves between runs).
func Pool(es []Estimate) Estimate {
	var xs, ws []float64
	var p Estimate
	var med, interior float64
	for _, e := range es {
		if !e.Constrained() {
			continue
		}
		se := max(e.SE, 1e-3)
		xs = append(xs, e.Centre)
		ws = append(ws, 1/(se*se))
		p.N += e.N
		med += e.Median * float64(e.N)
		interior += e.Interior * float64(e.N)
	}
	if len(xs) == 0 {
		return Estimate{}
	}
	p.Centre = stat.Mean(xs, ws)
	var sw, chi2 float64
	for i, x := range xs {
		sw += ws[i]
		chi2 += ws[i] * (x - p.Centre) * (x - p.Centre)
	}
	p.SE = 1 / math.Sqrt(sw)
	if k := len(xs); k > 1 && chi2 > float64(k-1) {
		p.SE *= math.Sqrt(chi2 / float64(k-1))
	}
	p.Median = med / float64(p.N)
	p.Interior = interior / float64(p.N)
	return p
}
