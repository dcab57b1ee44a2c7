package lapic

import (
	"math"
	"math/big"
	"testing"
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
