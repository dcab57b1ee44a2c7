package lapic

import (
	"math"
	"math/big"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestMulAdd checks mulAdd against big-integer arithmetic at the edges of
// 64 bits: the product overflowing, the sum overflowing, and neither.
func TestMulAdd(t *testing.T) {
	max := uint64(math.MaxUint64)
	for _, c := range []struct{ a, b, c uint64 }{
		{0, max, max}, {1, max, 0}, {1, max, 1}, {2, max / 2, 1}, {2, max / 2, 2},
		{1 << 32, 1 << 32, 0}, {1<<32 - 1, 1<<32 + 1, 0}, {1<<32 - 1, 1<<32 + 1, 1},
		{tscDivisor, 1 << 40, 12345}, {3, 5, 7},
	} {
		want := new(big.Int).Mul(new(big.Int).SetUint64(c.a), new(big.Int).SetUint64(c.b))
		want.Add(want, new(big.Int).SetUint64(c.c))
		overflow := !want.IsUint64()
		got, gotOver := mulAdd(c.a, c.b, c.c)
		if gotOver != overflow || !overflow && got != want.Uint64() {
			t.Errorf("mulAdd(%d, %d, %d) = %d, %v; want %v, overflow %v", c.a, c.b, c.c, got, gotOver, want, overflow)
		}
	}
}

// FuzzTSCConversions: at a whole number of GHz the TSC read and the
// deadline's time (tscAt, tscTime) are the general counter clock's
// (clockmath.Clock TicksAt and TimeOf), at the edges of 64 bits too.
func FuzzTSCConversions(f *testing.F) {
	for _, s := range []struct {
		ghz  uint8
		t    int64
		tick uint64
	}{{3, 1_000_000, 3_000_007}, {1, math.MaxInt64, math.MaxUint64}, {3, math.MaxInt64 / 3, math.MaxUint64 - 1},
		{4, -5, 0}, {2, 0, 1}, {7, math.MaxInt64/7 + 1, 1 << 63}} {
		f.Add(s.ghz, s.t, s.tick)
	}
	f.Fuzz(func(t *testing.T, ghz uint8, at int64, tick uint64) {
		if ghz == 0 {
			return
		}
		p := &Plugin{tsc: clockmath.ClockHz(uint64(ghz) * 1_000_000_000), tscPerNs: uint64(ghz)}
		if got, want := p.tscAt(ktime.Time(at)), p.tsc.TicksAt(ktime.Time(at)); got != want {
			t.Errorf("%d GHz: tscAt(%d) = %d, TicksAt %d", ghz, at, got, want)
		}
		if got, want := p.tscTime(tick), p.tsc.TimeOf(tick); got != want {
			t.Errorf("%d GHz: tscTime(%d) = %d, TimeOf %d", ghz, tick, got, want)
		}
	})
}
