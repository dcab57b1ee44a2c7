package suggest

import "testing"

func TestNearest(t *testing.T) {
	known := []string{"cyclictest", "timermix", "stress_ng_timer", "stress_ng_hrtimers"}
	for _, tc := range []struct{ given, want string }{
		{"cyclictst", "cyclictest"},
		{"timermx", "timermix"},
		{"stress_ng_timers", "stress_ng_timer"},
		{"cyclic", ""}, // four edits: a different name
		{"", ""},
	} {
		if got := Nearest(tc.given, known); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.given, got, tc.want)
		}
	}
}
