package wheel

import (
	"fmt"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// refWheelIndex restates calc_wheel_index() (kernel/time/timer.c, 5.9+)
// arithmetically, independently of calcWheelIndex's unrolled structure:
// level n takes deltas in [63*8^(n-1), 63*8^n); a negative delta goes to the
// current level-0 slot; deltas at or past 63*8^(depth-1) are clamped to
// cutoff - 8^(depth-1).
func refWheelIndex(hz int, expires, clk uint64) (lvl, idx int, bucketExpiry uint64) {
	depth := 9
	if hz <= 100 {
		depth = 8
	}
	pow8 := func(n int) uint64 { return uint64(1) << (3 * uint(n)) }
	delta := expires - clk
	if int64(delta) < 0 {
		return 0, int(clk % 64), clk
	}
	cutoff := 63 * pow8(depth-1)
	if delta >= cutoff {
		lvl = depth - 1
		expires = clk + cutoff - pow8(depth-1)
	} else {
		for delta >= 63*pow8(lvl) {
			lvl++
		}
	}
	g := pow8(lvl)
	e := expires/g + 1
	return lvl, lvl*64 + int(e%64), e * g
}

func TestCalcWheelIndexVectors(t *testing.T) {
	const init1000 = 4294667296 // INITIAL_JIFFIES at HZ=1000
	tests := []struct {
		src              string
		hz               int
		clk, expires     uint64
		wantLvl, wantIdx int
		wantBucket       uint64
	}{
		{"V1", 1000, 0, 100, 1, 77, 104},
		{"V1 at HZ=250", 250, 0, 100, 1, 77, 104},
		{"V2 level 0 end", 1000, 0, 62, 0, 63, 63},
		{"V2 level 1 start", 1000, 0, 63, 1, 72, 64},
		{"V2 max lateness 8", 1000, 0, 64, 1, 73, 72},
		{"V2 level 1 end", 1000, 0, 503, 1, 127, 504},
		{"V2 level 2 start", 1000, 0, 504, 2, 136, 512},
		{"V3 delta 0", 1000, 1000, 1000, 0, 41, 1001},
		{"V3 past", 1000, 1000, 999, 0, 40, 1000},
		{"V4 +1", 1000, init1000, init1000 + 1, 0, 34, init1000 + 2},
		{"V4 +100", 1000, init1000, init1000 + 100, 1, 81, init1000 + 104},
		{"V4 +1000", 1000, init1000, init1000 + 1000, 2, 129, init1000 + 1056},
		{"V4 +300000 = 2^32", 1000, init1000, init1000 + 300000, 5, 321, 1<<32 + 32768},
		{"V5 5-minute timer", 1000, 0, 300000, 5, 330, 327680},
		{"V6 clamp depth 9", 1000, 0, 1_000_000_000_000, 8, 575, 1056964608},
		{"V6 clamp depth 8", 100, 0, 1_000_000_000_000, 7, 511, 132120576},
		{"V7 same bucket", 1000, 0, 103, 1, 77, 104},
		{"V7 next bucket", 1000, 0, 104, 1, 78, 112},
		{"V8 forwarded", 1000, 100, 150, 0, 23, 151},
		{"V8 not forwarded", 1000, 0, 150, 1, 83, 152},
		{"V9 T1", 1000, 0, 1005, 2, 144, 1024},
		{"V9 T2", 1000, 0, 300100, 5, 330, 327680},
		{"V11 A", 1000, 0, 511, 2, 136, 512},
		{"V11 B", 1000, 448, 511, 1, 64, 512},
		{"V11 C", 1000, 500, 511, 0, 0, 512},
	}
	for _, tt := range tests {
		g := newGeometry(tt.hz)
		idx, be := g.calcWheelIndex(tt.expires, tt.clk)
		lvl := levelOfBucket(idx)
		if lvl != tt.wantLvl || idx != tt.wantIdx || be != tt.wantBucket {
			t.Errorf("%s: calcWheelIndex(expires=%d, clk=%d) at HZ=%d = (%d, %d, %d), want (%d, %d, %d)",
				tt.src, tt.expires, tt.clk, tt.hz, lvl, idx, be, tt.wantLvl, tt.wantIdx, tt.wantBucket)
		}
	}
}

// TestCalcWheelIndexBoundaries checks every level boundary, the cutoff and
// the clamp at HZ 100, 250 and 1000 against refWheelIndex, and the lateness
// guarantee of calc_index(): 1 <= bucket - expires <= LVL_GRAN(level).
func TestCalcWheelIndexBoundaries(t *testing.T) {
	for _, hz := range []int{100, 250, 1000} {
		g := newGeometry(hz)
		var deltas []int64
		for n := 1; n <= g.depth; n++ {
			s := int64(lvlStart(n))
			deltas = append(deltas, s-1, s, s+1)
		}
		c := int64(g.cutoff)
		deltas = append(deltas, 0, 1, 2, 7, 8, 9, c-1, c, c+1, c*2, 1_000_000_000_000, -1, -2, -64, -1000)
		for _, clk := range []uint64{0, 1000, 1001, 4095, ktime.InitialJiffies(hz), 1<<32 - 5, 12345678901} {
			for _, d := range deltas {
				expires := clk + uint64(d)
				name := fmt.Sprintf("HZ=%d calcWheelIndex(expires=clk%+d, clk=%d)", hz, d, clk)
				idx, be := g.calcWheelIndex(expires, clk)
				wl, wi, wb := refWheelIndex(hz, expires, clk)
				if levelOfBucket(idx) != wl || idx != wi || be != wb {
					t.Errorf("%s = (%d, %d, %d), want (%d, %d, %d)", name, levelOfBucket(idx), idx, be, wl, wi, wb)
					continue
				}
				switch {
				case d < 0:
					if be != clk {
						t.Errorf("%s bucket = %d, want clk %d for a past expiry", name, be, clk)
					}
				case uint64(d) < g.cutoff:
					if late := be - expires; late < 1 || late > lvlGran(wl) {
						t.Errorf("%s lateness = %d, want 1..%d", name, late, lvlGran(wl))
					}
				default:
					if be > clk+g.cutoff {
						t.Errorf("%s bucket = clk+%d, want at most clk+cutoff %d", name, be-clk, g.cutoff)
					}
				}
			}
		}
	}
}

// TestGeometry checks the HZ-dependent constants (docs/reference/wheel-tick.md section 1).
func TestGeometry(t *testing.T) {
	tests := []struct {
		hz                 int
		depth              int
		cutoff, timeoutMax uint64
	}{
		{1000, 9, 1056964608, 1040187392},
		{300, 9, 1056964608, 1040187392},
		{250, 9, 1056964608, 1040187392},
		{100, 8, 132120576, 130023424},
	}
	for _, tt := range tests {
		g := newGeometry(tt.hz)
		if g.depth != tt.depth || g.cutoff != tt.cutoff || g.timeoutMax != tt.timeoutMax {
			t.Errorf("newGeometry(%d) = %+v, want depth %d cutoff %d max %d", tt.hz, g, tt.depth, tt.cutoff, tt.timeoutMax)
		}
	}
	starts := []uint64{63, 504, 4032, 32256, 258048, 2064384, 16515072, 132120576, 1056964608}
	for n, want := range starts {
		if got := lvlStart(n + 1); got != want {
			t.Errorf("lvlStart(%d) = %d, want %d", n+1, got, want)
		}
	}
}

// TestNextTimerInterruptLevels checks get_next_timer_interrupt() in jiffies:
// the earliest bucket, jiffies when due, NoExpiry without timers, and
// deferrable timers ignored (BASE_DEF is not consulted).
func TestNextTimerInterruptLevels(t *testing.T) {
	tests := []struct {
		name    string
		timers  []sdk.WheelTimer
		jiffies uint64
		want    uint64
	}{
		{"empty", nil, 5000, sdk.NoExpiry},
		{"V13 earliest bucket", []sdk.WheelTimer{{ID: 1, Expires: 5100}}, 5000, 5104},
		{"deferrable only", []sdk.WheelTimer{{ID: 1, Expires: 5001, Flags: sdk.TimerDeferrable}}, 5000, sdk.NoExpiry},
		{"deferrable earlier", []sdk.WheelTimer{{ID: 1, Expires: 5001, Flags: sdk.TimerDeferrable}, {ID: 2, Expires: 5100}}, 5000, 5104},
		{"already due", []sdk.WheelTimer{{ID: 1, Expires: 4990}}, 5000, 5000},
	}
	for _, tt := range tests {
		w := newWheel(t, 1000, 1)
		w.RunTimers(0, 4980) // initialises the base at 4980
		for _, tm := range tt.timers {
			w.ModTimer(0, 4980, tm)
		}
		got := w.NextTimerInterrupt(0, tt.jiffies)
		if got.Next != tt.want {
			t.Errorf("%s: NextTimerInterrupt(0, %d).Next = %d, want %d", tt.name, tt.jiffies, got.Next, tt.want)
		}
		if tt.want != sdk.NoExpiry && got.State.NextExpiry != sdk.NoExpiry && max(got.State.NextExpiry, tt.jiffies) != got.Next {
			t.Errorf("%s: State.NextExpiry = %d inconsistent with Next %d", tt.name, got.State.NextExpiry, got.Next)
		}
	}
}

// TestRaiseAt checks WheelState.RaiseAt for the raise rules: the base clock
// (every tick) or the earliest bucket, deferrable included (5.9+).
func TestRaiseAt(t *testing.T) {
	tests := []struct {
		layout, raise string
		want          uint64
	}{
		{"levels", "auto", 1011}, // next_expiry: deferrable 1010 -> bucket 1011 on BASE_DEF
		{"levels", "next_expiry", 1011},
		{"levels", "every_tick", 1000}, // clk
		{"cascade", "auto", 1000},      // every_tick: timer_jiffies
		{"cascade", "next_expiry", 1010},
	}
	for _, tt := range tests {
		w := newWheel(t, 1000, 1, "layout", tt.layout, "softirq_raise", tt.raise)
		w.ModTimer(0, 1000, sdk.WheelTimer{ID: 1, Expires: 1200})
		r := w.ModTimer(0, 1000, sdk.WheelTimer{ID: 2, Expires: 1010, Flags: sdk.TimerDeferrable})
		if r.State.RaiseAt != tt.want {
			t.Errorf("%s/%s: RaiseAt = %d, want %d", tt.layout, tt.raise, r.State.RaiseAt, tt.want)
		}
		if r.State.Pending != 2 {
			t.Errorf("%s/%s: Pending = %d, want 2", tt.layout, tt.raise, r.State.Pending)
		}
	}
}
