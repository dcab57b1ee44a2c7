package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ExactLimit is the number of non-zero differences from which
// WilcoxonSignedRank switches from the exact distribution to the normal
// approximation; it is R's choice (wilcox.test: exact when n < 50).
const ExactLimit = 50

// ErrPairs reports paired samples of different lengths or with a NaN.
var ErrPairs = errors.New("stats: paired samples must have equal lengths and no NaN")

// SignedRank is the result of a two-sided Wilcoxon signed-rank test on the
// differences y[i] - x[i] of paired samples.
type SignedRank struct {
	// Pairs is the number of pairs; Zeros of them had equal values and were
	// dropped before ranking (Wilcoxon's convention and R's default); N =
	// Pairs - Zeros differences were ranked.
	Pairs int `json:"pairs"`
	Zeros int `json:"zeros"`
	N     int `json:"n"`
	// WPlus and WMinus are the sums of the ranks of |difference| over the
	// positive and the negative differences (mid-ranks for ties); WPlus +
	// WMinus = N(N+1)/2.
	WPlus  float64 `json:"w_plus"`
	WMinus float64 `json:"w_minus"`
	// Exact is true when P comes from the exact permutation distribution
	// (N < ExactLimit); otherwise Z is the normal approximation's statistic.
	Exact bool    `json:"exact"`
	Z     float64 `json:"z,omitempty"`
	// P is the two-sided p-value; 1 when every pair is equal.
	P float64 `json:"p"`
	// MedianDiff is the median of y[i] - x[i] over all pairs, zeros included.
	MedianDiff float64 `json:"median_diff"`
}

// WilcoxonSignedRank tests whether the differences y[i] - x[i] are
// symmetric about zero, i.e. whether y is shifted from x when both were
// measured on the same seeds.
//
// Method (Wilcoxon 1945, as R's stats::wilcox.test and the exact
// conditional test of exactRankTests::wilcox.exact):
//   - drop zero differences; rank the remaining |d| with mid-ranks for ties;
//   - WPlus is the rank sum of the positive differences;
//   - for N < ExactLimit, P = min(1, 2·min(P(W ≤ WPlus), P(W ≥ WPlus))) under
//     the exact null distribution of W, each rank independently positive
//     with probability 1/2. Ranks are doubled so mid-ranks are integers, and
//     the distribution is counted by dynamic programming over the rank sums;
//     without ties this is the classical table distribution;
//   - otherwise z = (WPlus - N(N+1)/4 - ½·sign) / σ with
//     σ² = N(N+1)(2N+1)/24 - Σ(t³-t)/48 over tie groups of size t, and
//     P = 2·(1 - Φ(|z|)) (R's continuity and tie corrections).
//
// Differences are compared exactly: values that are equal only up to
// floating-point rounding are not ties.
func WilcoxonSignedRank(x, y []float64) (SignedRank, error) {
	if len(x) != len(y) {
		return SignedRank{}, fmt.Errorf("%w: %d and %d values", ErrPairs, len(x), len(y))
	}
	r := SignedRank{Pairs: len(x)}
	d := make([]float64, 0, len(x))
	all := make([]float64, 0, len(x))
	for i := range x {
		v := y[i] - x[i]
		if math.IsNaN(v) {
			return SignedRank{}, fmt.Errorf("%w: pair %d is NaN", ErrPairs, i)
		}
		all = append(all, v)
		if v == 0 {
			r.Zeros++
			continue
		}
		d = append(d, v)
	}
	r.N = len(d)
	r.MedianDiff = Median(all)
	if r.N == 0 {
		r.P, r.Exact = 1, true
		return r, nil
	}
	ranks2, ties := doubledRanks(d)
	var plus2 int // 2·WPlus
	total2 := 0
	for i, v := range d {
		total2 += ranks2[i]
		if v > 0 {
			plus2 += ranks2[i]
		}
	}
	r.WPlus = float64(plus2) / 2
	r.WMinus = float64(total2-plus2) / 2
	if r.N < ExactLimit {
		r.Exact = true
		r.P = exactSignedRankP(ranks2, plus2)
		return r, nil
	}
	n := float64(r.N)
	mean := n * (n + 1) / 4
	tieSum := 0.0
	for _, t := range ties {
		tf := float64(t)
		tieSum += tf*tf*tf - tf
	}
	variance := n*(n+1)*(2*n+1)/24 - tieSum/48
	diff := r.WPlus - mean
	if variance <= 0 {
		r.P = 1
		return r, nil
	}
	corr := 0.0
	switch {
	case diff > 0:
		corr = 0.5
	case diff < 0:
		corr = -0.5
	}
	r.Z = (diff - corr) / math.Sqrt(variance)
	r.P = math.Min(1, math.Erfc(math.Abs(r.Z)/math.Sqrt2))
	return r, nil
}

// doubledRanks returns twice the mid-rank of each |d[i]| (rank 1 is the
// smallest), which is always an integer, and the sizes of the tie groups
// larger than one.
func doubledRanks(d []float64) (ranks2 []int, ties []int) {
	idx := make([]int, len(d))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := math.Abs(d[a]), math.Abs(d[b])
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	ranks2 = make([]int, len(d))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && math.Abs(d[idx[j]]) == math.Abs(d[idx[i]]) {
			j++
		}
		// Positions i..j-1 hold ranks i+1..j; their mean doubled is i+1+j.
		for k := i; k < j; k++ {
			ranks2[idx[k]] = i + 1 + j
		}
		if j-i > 1 {
			ties = append(ties, j-i)
		}
		i = j
	}
	return ranks2, ties
}

// exactSignedRankP is the two-sided p-value of the observed doubled rank
// sum plus2 under the null distribution in which each rank's sign is an
// independent fair coin. counts[s] is the number of the 2^n sign choices
// whose positive doubled ranks sum to s; with n < ExactLimit every count is
// below 2^53, so the float64 arithmetic is exact.
func exactSignedRankP(ranks2 []int, plus2 int) float64 {
	total := 0
	for _, r := range ranks2 {
		total += r
	}
	counts := make([]float64, total+1)
	counts[0] = 1
	reach := 0
	for _, r := range ranks2 {
		for s := reach; s >= 0; s-- {
			if counts[s] != 0 {
				counts[s+r] += counts[s]
			}
		}
		reach += r
	}
	var lower, upper float64
	for s, c := range counts {
		if s <= plus2 {
			lower += c
		}
		if s >= plus2 {
			upper += c
		}
	}
	all := math.Ldexp(1, len(ranks2))
	return math.Min(1, 2*math.Min(lower, upper)/all)
}

// MarshalJSON writes MedianDiff as null when there are no pairs.
func (r SignedRank) MarshalJSON() ([]byte, error) {
	type plain SignedRank
	return MarshalJSON(struct {
		plain
		MedianDiff jsonNum `json:"median_diff"`
	}{plain(r), jsonNum(r.MedianDiff)})
}
