package ktime

import (
	"errors"
	"math"
	"testing"
)

func TestTickNsec(t *testing.T) {
	// include/linux/jiffies.h: TICK_NSEC = (NSEC_PER_SEC + HZ/2) / HZ.
	for _, tc := range []struct {
		hz   int
		want int64
	}{{100, 10000000}, {250, 4000000}, {300, 3333333}, {1000, 1000000}} {
		if got := TickNsec(tc.hz); got != tc.want {
			t.Errorf("TickNsec(%d) = %d, want %d", tc.hz, got, tc.want)
		}
	}
}

func TestInitialJiffies(t *testing.T) {
	// INITIAL_JIFFIES = (unsigned long)(unsigned int)(-300*HZ): 0xFFFB6C20 at HZ=1000.
	if got := InitialJiffies(1000); got != 0xFFFB6C20 {
		t.Errorf("InitialJiffies(1000) = %#x, want 0xFFFB6C20", got)
	}
	if got := InitialJiffies(250); got != 0xFFFEDB08 { // 2^32 - 75000
		t.Errorf("InitialJiffies(250) = %#x", got)
	}
}

func TestAddSaturates(t *testing.T) {
	for _, tc := range []struct {
		t    Time
		d    int64
		want Time
	}{
		{5, 10, 15},
		{Max, 1, Max},
		{Max - 5, 10, Max},
		{10, -20, 0},
	} {
		if got := tc.t.Add(tc.d); got != tc.want {
			t.Errorf("Time(%d).Add(%d) = %d, want %d", tc.t, tc.d, got, tc.want)
		}
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		t    Time
		want string
	}{{0, "0.000000000"}, {1500000001, "1.500000001"}, {Max, "max"}, {-1, "-0.000000001"}} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("Time(%d).String() = %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  error
	}{
		{"250us", 250000, nil},
		{"1.5ms", 1500000, nil},
		{"2s", 2000000000, nil},
		{"100ns", 100, nil},
		{"1µs", 1000, nil},
		{"5m", 300000000000, nil},
		{"0s", 0, nil},
		{"250", 0, ErrNoUnit},
		{"3 parsecs", 0, ErrBadUnit},
		{"-1ms", 0, ErrNegative},
		{"1e300h", 0, ErrRange},
		{"", 0, ErrSyntax},
	} {
		got, err := ParseDuration(tc.in)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseFrequency(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		err  error
	}{
		{"14.31818MHz", 14318180, nil},
		{"24MHz", 24e6, nil},
		{"1GHz", 1e9, nil},
		{"32768Hz", 32768, nil},
		{"10khz", 10000, nil},
		{"24", 0, ErrNoUnit},
		{"0Hz", 0, ErrRange},
		{"5 furlongs", 0, ErrBadUnit},
	} {
		got, err := ParseFrequency(tc.in)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("ParseFrequency(%q) = %g, %v; want %g, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		want string
	}{{0, "0ns"}, {2000000000, "2s"}, {1500000, "1500us"}, {4000000, "4ms"}, {7, "7ns"}} {
		if got := FormatDuration(tc.ns); got != tc.want {
			t.Errorf("FormatDuration(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"250us", "1.5ms", "x", "1e9s", "-3ns", "0.0000001ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := ParseDuration(s)
		if err == nil && ns < 0 {
			t.Errorf("ParseDuration(%q) = %d, a negative duration without error", s, ns)
		}
	})
}

// FuzzAddCost: AddCost is Add for every cost d >= 0, at the edges of 64 bits
// too (the hrtimer and LAPIC plugins add their configured costs with it).
func FuzzAddCost(f *testing.F) {
	for _, s := range []struct{ t, d int64 }{
		{0, 0}, {1000, 100}, {math.MaxInt64, 0}, {math.MaxInt64, 5}, {math.MaxInt64 - 5, 5},
		{math.MaxInt64 - 5, 6}, {-7, 3}, {math.MinInt64, math.MaxInt64}, {1, math.MaxInt64},
	} {
		f.Add(s.t, s.d)
	}
	f.Fuzz(func(t *testing.T, at, d int64) {
		if d < 0 {
			d = -(d + 1) // every non-negative cost, MaxInt64 included
		}
		if got, want := Time(at).AddCost(d), Time(at).Add(d); got != want {
			t.Errorf("Time(%d).AddCost(%d) = %d, Add %d", at, d, got, want)
		}
	})
}
