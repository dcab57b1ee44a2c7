package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// signs makes paired samples whose differences y-x are d.
func diffs(d ...float64) (x, y []float64) {
	x = make([]float64, len(d))
	y = make([]float64, len(d))
	for i, v := range d {
		x[i] = 1000
		y[i] = 1000 + v
	}
	return x, y
}

// TestWilcoxonKnownValues checks the exact test against published values.
func TestWilcoxonKnownValues(t *testing.T) {
	tests := []struct {
		name          string
		x, y          []float64
		wPlus, wMinus float64
		p             float64
	}{
		{
			// Darwin's Zea mays data (Fisher 1935), cross minus self in
			// eighths of an inch; scipy.stats.wilcoxon's documented example:
			// statistic 24, two-sided p 0.041259765625 (= 2*676/32768).
			name:  "darwin",
			x:     make([]float64, 15),
			y:     []float64{6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75},
			wPlus: 96, wMinus: 24, p: 0.041259765625,
		},
		{
			// R's ?wilcox.test example (Hollander & Wolfe 1973, p. 29,
			// depression scale): wilcox.test(x, y, paired = TRUE,
			// alternative = "greater") gives V = 40, p-value = 0.01953;
			// two-sided is twice that, 40/1024.
			name:  "hollander-wolfe",
			x:     []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29},
			y:     []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30},
			wPlus: 40, wMinus: 5, p: 0.0390625,
		},
	}
	// Critical values of the classical table for n = 10 (e.g. Wilcoxon,
	// Katti & Wilcox 1963): P(T <= 3) = 5/1024, P(T <= 5) = 10/1024,
	// P(T <= 8) = 25/1024, P(T <= 10) = 43/1024; two-sided doubles them.
	for _, c := range []struct {
		neg   []float64
		count float64
	}{{[]float64{1, 2}, 5}, {[]float64{2, 3}, 10}, {[]float64{1, 3, 4}, 25}, {[]float64{4, 6}, 43}} {
		d := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
		t := 0.0
		for _, r := range c.neg {
			d[int(r)-1] = -r
			t += r
		}
		x, y := diffs(d...)
		tests = append(tests, struct {
			name          string
			x, y          []float64
			wPlus, wMinus float64
			p             float64
		}{name: "table-n10-T" + itoa(int(t)), x: x, y: y, wPlus: 55 - t, wMinus: t, p: 2 * c.count / 1024})
	}
	for _, tt := range tests {
		got, err := WilcoxonSignedRank(tt.x, tt.y)
		if err != nil {
			t.Fatalf("%s: WilcoxonSignedRank: %v", tt.name, err)
		}
		if got.WPlus != tt.wPlus || got.WMinus != tt.wMinus || !got.Exact {
			t.Errorf("%s: WilcoxonSignedRank() W+ = %v, W- = %v, exact %v; want %v, %v, true", tt.name, got.WPlus, got.WMinus, got.Exact, tt.wPlus, tt.wMinus)
		}
		if math.Abs(got.P-tt.p) > 1e-12 {
			t.Errorf("%s: WilcoxonSignedRank().P = %.12g, want %.12g", tt.name, got.P, tt.p)
		}
		// Swapping the samples flips the signs, not the p-value.
		sw, _ := WilcoxonSignedRank(tt.y, tt.x)
		if sw.WPlus != tt.wMinus || math.Abs(sw.P-tt.p) > 1e-12 {
			t.Errorf("%s: swapped: W+ = %v, P = %v; want %v, %v", tt.name, sw.WPlus, sw.P, tt.wMinus, tt.p)
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// bruteForceP enumerates all 2^n sign assignments of the mid-ranks: an
// independent reference for the exact conditional distribution with ties.
func bruteForceP(d []float64) float64 {
	var nz []float64
	for _, v := range d {
		if v != 0 {
			nz = append(nz, v)
		}
	}
	n := len(nz)
	rank := make([]float64, n)
	for i := range nz {
		less, eq := 0, 0
		for j := range nz {
			switch {
			case math.Abs(nz[j]) < math.Abs(nz[i]):
				less++
			case math.Abs(nz[j]) == math.Abs(nz[i]):
				eq++
			}
		}
		rank[i] = float64(less) + float64(eq+1)/2
	}
	obs := 0.0
	for i, v := range nz {
		if v > 0 {
			obs += rank[i]
		}
	}
	var lo, hi float64
	for mask := 0; mask < 1<<n; mask++ {
		s := 0.0
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				s += rank[i]
			}
		}
		if s <= obs+1e-9 {
			lo++
		}
		if s >= obs-1e-9 {
			hi++
		}
	}
	return math.Min(1, 2*math.Min(lo, hi)/float64(int(1)<<n))
}

// TestWilcoxonExactMatchesEnumeration checks the counting distribution with
// ties and zeros against full enumeration.
func TestWilcoxonExactMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for iter := 0; iter < 200; iter++ {
		n := 1 + r.IntN(14)
		d := make([]float64, n)
		for i := range d {
			// Few distinct magnitudes so ties and zeros are common.
			d[i] = float64(r.IntN(9) - 3)
		}
		x, y := diffs(d...)
		got, err := WilcoxonSignedRank(x, y)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteForceP(d)
		if math.Abs(got.P-want) > 1e-12 {
			t.Errorf("WilcoxonSignedRank(d=%v).P = %v, want %v (enumeration)", d, got.P, want)
		}
		if got.WPlus+got.WMinus != float64(got.N*(got.N+1))/2 {
			t.Errorf("WilcoxonSignedRank(d=%v): W+ + W- = %v, want N(N+1)/2 = %v", d, got.WPlus+got.WMinus, got.N*(got.N+1)/2)
		}
	}
}

// TestWilcoxonNormalApproximation checks the large-sample branch: the
// statistic by hand, and agreement with the exact distribution, which needs
// the tie correction.
func TestWilcoxonNormalApproximation(t *testing.T) {
	// 60 differences: magnitudes 1..20 three times each (20 tie groups of
	// 3), the three copies of 1, 4, 7, 10, 13, 16 and 19 negative.
	var d []float64
	for m := 1; m <= 20; m++ {
		for k := 0; k < 3; k++ {
			v := float64(m)
			if m%3 == 1 {
				v = -v
			}
			d = append(d, v)
		}
	}
	x, y := diffs(d...)
	got, err := WilcoxonSignedRank(x, y)
	if err != nil {
		t.Fatal(err)
	}
	// Ranks: magnitude m occupies ranks 3m-2..3m, mid-rank 3m-1.
	wMinus := 0.0
	for _, m := range []float64{1, 4, 7, 10, 13, 16, 19} {
		wMinus += 3 * (3*m - 1)
	}
	n := 60.0
	wPlus := n*(n+1)/2 - wMinus
	sigma := math.Sqrt(n*(n+1)*(2*n+1)/24 - 20*(27-3)/48.0)
	z := (wPlus - n*(n+1)/4 - 0.5) / sigma
	wantP := math.Erfc(z / math.Sqrt2)
	if got.Exact || got.N != 60 || got.WPlus != wPlus {
		t.Fatalf("WilcoxonSignedRank(60 tied) = N %d W+ %v exact %v, want 60, %v, false", got.N, got.WPlus, got.Exact, wPlus)
	}
	if math.Abs(got.Z-z) > 1e-12 || math.Abs(got.P-wantP) > 1e-12 {
		t.Errorf("WilcoxonSignedRank(60 tied) z, P = %v, %v; want %v, %v", got.Z, got.P, z, wantP)
	}
	// The exact conditional distribution of the same mid-ranks.
	ranks2, ties := doubledRanks(trimZeros(d))
	plus2 := int(2 * wPlus)
	exact := exactSignedRankP(ranks2, plus2)
	if len(ties) != 20 {
		t.Errorf("doubledRanks: %d tie groups, want 20", len(ties))
	}
	if math.Abs(got.P-exact) > 0.05*exact {
		t.Errorf("normal approximation P = %v, exact %v: differ by more than 5%%", got.P, exact)
	}
	// Without the tie correction the approximation is measurably worse.
	sigmaNoTies := math.Sqrt(n * (n + 1) * (2*n + 1) / 24)
	pNoTies := math.Erfc((wPlus - n*(n+1)/4 - 0.5) / sigmaNoTies / math.Sqrt2)
	if math.Abs(pNoTies-exact) <= math.Abs(got.P-exact) {
		t.Errorf("tie correction does not help: |%v-%v| <= |%v-%v|", pNoTies, exact, got.P, exact)
	}
}

func trimZeros(d []float64) []float64 {
	var out []float64
	for _, v := range d {
		if v != 0 {
			out = append(out, v)
		}
	}
	return out
}

// TestWilcoxonLimit checks the switch at ExactLimit and that both branches
// agree near it for untied data.
func TestWilcoxonLimit(t *testing.T) {
	for _, n := range []int{ExactLimit - 1, ExactLimit} {
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(i + 1)
			if i%3 == 0 {
				d[i] = -d[i]
			}
		}
		x, y := diffs(d...)
		got, err := WilcoxonSignedRank(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if got.Exact != (n < ExactLimit) {
			t.Errorf("WilcoxonSignedRank(n=%d).Exact = %v, want %v", n, got.Exact, n < ExactLimit)
		}
		ranks2, _ := doubledRanks(d)
		exact := exactSignedRankP(ranks2, int(2*got.WPlus))
		if math.Abs(got.P-exact) > 0.002 {
			t.Errorf("WilcoxonSignedRank(n=%d).P = %v, exact distribution %v", n, got.P, exact)
		}
	}
}

func TestWilcoxonEdgeCases(t *testing.T) {
	tests := []struct {
		name       string
		x, y       []float64
		n, zeros   int
		p          float64
		medianDiff float64
	}{
		{name: "all equal", x: []float64{1, 2, 3}, y: []float64{1, 2, 3}, n: 0, zeros: 3, p: 1, medianDiff: 0},
		{name: "empty", n: 0, p: 1},
		// Zeros are dropped: 2 non-zero positive differences, p = 2*(1/4).
		{name: "zeros dropped", x: []float64{5, 5, 5, 5}, y: []float64{5, 6, 7, 5}, n: 2, zeros: 2, p: 0.5, medianDiff: 0.5},
		// Six positive differences: the smallest two-sided p, 2/64.
		{name: "six up", x: []float64{1, 1, 1, 1, 1, 1}, y: []float64{2, 3, 4, 5, 6, 7}, n: 6, p: 0.03125, medianDiff: 3.5},
	}
	for _, tt := range tests {
		got, err := WilcoxonSignedRank(tt.x, tt.y)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got.N != tt.n || got.Zeros != tt.zeros || got.P != tt.p || got.MedianDiff != tt.medianDiff && !(len(tt.x) == 0 && math.IsNaN(got.MedianDiff)) {
			t.Errorf("%s: WilcoxonSignedRank() = N %d zeros %d P %v median %v; want %d %d %v %v", tt.name, got.N, got.Zeros, got.P, got.MedianDiff, tt.n, tt.zeros, tt.p, tt.medianDiff)
		}
	}
	if _, err := WilcoxonSignedRank([]float64{1}, []float64{1, 2}); !errors.Is(err, ErrPairs) {
		t.Errorf("WilcoxonSignedRank(len 1, len 2) error = %v, want ErrPairs", err)
	}
	if _, err := WilcoxonSignedRank([]float64{1}, []float64{math.NaN()}); !errors.Is(err, ErrPairs) {
		t.Errorf("WilcoxonSignedRank(NaN) error = %v, want ErrPairs", err)
	}
}

func BenchmarkWilcoxonExact49(b *testing.B) {
	d := make([]float64, 49)
	for i := range d {
		d[i] = float64(i%17 - 5)
	}
	x, y := diffs(d...)
	for b.Loop() {
		if _, err := WilcoxonSignedRank(x, y); err != nil {
			b.Fatal(err)
		}
	}
}
