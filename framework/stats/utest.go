package stats

import (
	"slices"

	"golang.org/x/perf/benchmath"
)

// UTest is the unpaired comparison of a variant's sample with the base's:
// the two-sided Mann-Whitney U test as benchmath.AssumeNothing.Compare runs
// it (exact distribution for small samples, with ties).
type UTest struct {
	P     float64 `json:"p"`
	N1    int     `json:"n_base"`
	N2    int     `json:"n"`
	Alpha float64 `json:"alpha"`
	// Warnings say when the test could not run (all values equal) or the
	// samples are too small to ever reach Alpha.
	Warnings []string `json:"warnings,omitempty"`
}

// MannWhitney compares sample x with base at significance level alpha.
// Neither slice is modified. With all values equal the test is meaningless
// and, as in benchmath, P is 1 with a warning.
func MannWhitney(base, x []float64, alpha float64) UTest {
	t := benchmath.Thresholds{CompareAlpha: alpha}
	a := benchmath.NewSample(slices.Clone(base), &t)
	b := benchmath.NewSample(slices.Clone(x), &t)
	c := benchmath.AssumeNothing.Compare(a, b)
	return UTest{P: c.P, N1: c.N1, N2: c.N2, Alpha: c.Alpha, Warnings: errorStrings(c.Warnings)}
}

// Significant reports whether the null hypothesis is rejected; like
// benchmath.Comparison.FormatDelta, a p-value equal to alpha counts.
func (u UTest) Significant() bool { return u.P <= u.Alpha }

func (u UTest) comparison() benchmath.Comparison {
	return benchmath.Comparison{P: u.P, N1: u.N1, N2: u.N2, Alpha: u.Alpha}
}

// String is benchstat's "p=0.000 n=10" (or "n=9+10" for unequal sizes).
func (u UTest) String() string { return u.comparison().String() }

// FormatDelta is benchstat's delta cell: "~" when not significant, else the
// change from the old center to the new one, "+12.34%".
func (u UTest) FormatDelta(old, new float64) string { return u.comparison().FormatDelta(old, new) }
