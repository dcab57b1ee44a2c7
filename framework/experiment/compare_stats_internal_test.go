package experiment

import "testing"

// TestExactComparison: two deterministic samples give the exact change with
// no test and no warning; a sample that varies keeps the tests.
func TestExactComparison(t *testing.T) {
	for _, tc := range []struct {
		base, v []float64
		exact   bool
		delta   string
	}{
		{[]float64{200, 200, 200}, []float64{150, 150, 150}, true, "-25.00%"},
		{[]float64{200, 200, 200}, []float64{200, 200, 200}, true, "0.00%"},
		{[]float64{0, 0, 0}, []float64{3, 3, 3}, true, "?"},
		{[]float64{200, 201, 200}, []float64{150, 150, 150}, false, "~"},
	} {
		m := &MetricComparison{Unit: "ns", Variants: []VariantStats{{Variant: "a", Values: tc.base}, {Variant: "b", Values: tc.v}}}
		analyzeMetric(m, 0.05, 0.95)
		vb := m.Variants[1].VsBase
		if vb.Exact != tc.exact || vb.Delta != tc.delta {
			t.Errorf("%v vs %v: exact %v delta %q, want %v %q", tc.base, tc.v, vb.Exact, vb.Delta, tc.exact, tc.delta)
		}
		if tc.exact && (len(vb.Warnings) > 0 || len(vb.UTest.Warnings) > 0 || vb.PairedDelta != tc.delta) {
			t.Errorf("%v vs %v: warnings %q %q, paired %q", tc.base, tc.v, vb.Warnings, vb.UTest.Warnings, vb.PairedDelta)
		}
	}
}

func TestPercentChange(t *testing.T) {
	for _, c := range []struct {
		diff, base float64
		want       string
	}{
		{-1, 26280, "-0.0038%"},
		{1, 26280, "+0.0038%"},
		{-100, 200, "-50.00%"},
		{0.01, 200, "+0.01%"},
		{0.006, 200, "+0.003%"},
		{1, 1e12, "+1e-10%"},
		{5, -100, "+5.00%"},
	} {
		if got := percentChange(c.diff, c.base); got != c.want {
			t.Errorf("percentChange(%v, %v) = %q, want %q", c.diff, c.base, got, c.want)
		}
	}
}
