package clockmath

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

const ulongMax = ^uint64(0)

// TestConfig checks clockevents_config() (kernel/time/clockevents.c, v6.12)
// for every device tickemu models. Expected values are derived by hand from the
// kernel's formulas:
//
//	sec    = max_delta_ticks / freq, >= 1, capped at 600 if max > UINT_MAX
//	sftacc = 32 - bits(sec*1e9 >> 32)
//	shift  = largest s <= 32 with (freq<<s + 5e8)/1e9 < 2^sftacc; mult that value
//	min_ns = max(1000, ((min<<shift) + mult-1) / mult)
//	max_ns = max(1000, ((max<<shift, or ~0 on overflow) [+ mult-1]) / mult)
func TestConfig(t *testing.T) {
	tests := []struct {
		name           string
		freq           uint32
		minT, maxT     uint64
		sec            uint32
		mult, shift    uint32
		minNs, maxNs   uint64
		derivationNote string
	}{
		{
			// arch/x86/kernel/apic/apic.c:setup_APIC_timer(): tsc_khz*(1000/8),
			// 0xF, ~0UL. 3 GHz TSC -> 375 MHz. sec capped to 600; 600e9>>32 =
			// 139 (8 bits) -> sftacc 24; 0.375*2^25 = 12582912 < 2^24 at
			// shift 25 (2^26 gives 25165824 >= 2^24). min: (15<<25+mult-1)/mult
			// = 40 -> floored 1000. max: ~0<<25 overflows -> ~0, no round-up
			// (it would overflow): (2^64-1)/12582912 = 1466015503701.
			name: "lapic-deadline 3GHz TSC", freq: 375_000_000, minT: 0xF, maxT: ulongMax,
			sec: 600, mult: 12582912, shift: 25, minNs: 1000, maxNs: 1466015503701,
		},
		{
			// 2.4 GHz TSC -> 300 MHz: 0.3*2^25 = 10066329.6, +0.5 rounds to
			// 10066330; max = (2^64-1)/10066330 = 1832519306808.
			name: "lapic-deadline 2.4GHz TSC", freq: 300_000_000, minT: 0xF, maxT: ulongMax,
			sec: 600, mult: 10066330, shift: 25, minNs: 1000, maxNs: 1832519306808,
		},
		{
			// arch/x86/kernel/hpet.c: hpet_freq 14318180, HPET_MIN_PROG_DELTA
			// 192, 0x7FFFFFFF. sec = 2147483647/14318180 = 149; 149e9>>32 =
			// 34 (6 bits) -> sftacc 26; 14318180*2^32/1e9 = 61496114.69 ->
			// 61496115 < 2^26 at shift 32. min: (192<<32 + 61496114)/61496115
			// = 13410 ns (HPET_MIN_PROG_DELTA, ~13.4 us); max:
			// (0x7FFFFFFF<<32 + mult-1)/mult = 149983003521 (~150 s).
			name: "hpet 14.31818MHz", freq: 14_318_180, minT: 192, maxT: 0x7FFFFFFF,
			sec: 149, mult: 61496115, shift: 32, minNs: 13410, maxNs: 149983003521,
		},
		{
			// drivers/clocksource/arm_arch_timer.c:__arch_timer_setup(): rate,
			// 0xf, CLOCKSOURCE_MASK(width); width(19.2 MHz) = clamp(ilog2(40y
			// * rate - 1)+1, 56, 64) = 56. sec capped 600 -> sftacc 24;
			// 0.0192*2^29 = 10307921.5 -> 10307922. min 15 ticks = 781 ns ->
			// floored 1000. max: (2^56-1)<<29 overflows -> ~0 / mult =
			// 1789569621666.
			name: "arch_sys_timer 19.2MHz", freq: 19_200_000, minT: 0xF, maxT: 1<<56 - 1,
			sec: 600, mult: 10307922, shift: 29, minNs: 1000, maxNs: 1789569621666,
		},
		{
			// 24 MHz: 0.024*2^29 = 12884901.9 -> 12884902; 15 ticks = 625 ns
			// -> 1000; max = (2^64-1)/12884902 = 1431655752888.
			name: "arch_sys_timer 24MHz", freq: 24_000_000, minT: 0xF, maxT: 1<<56 - 1,
			sec: 600, mult: 12884902, shift: 29, minNs: 1000, maxNs: 1431655752888,
		},
		{
			// 50 MHz: 0.05*2^28 = 13421772.8 -> 13421773 (< 2^24; shift 29
			// would give 26843546 >= 2^24); 300 ns -> 1000; max =
			// (2^64-1)/13421773 = 1374389514240.
			name: "arch_sys_timer 50MHz", freq: 50_000_000, minT: 0xF, maxT: 1<<56 - 1,
			sec: 600, mult: 13421773, shift: 28, minNs: 1000, maxNs: 1374389514240,
		},
		{
			// 1 GHz (Armv8.6): width = ilog2(1.26e18-1)+1 = 61. mult = 2^23
			// exactly at shift 23; max: (2^61-1)<<23 overflows -> ~0; mult >
			// 1<<shift is false (equal), but ~0 - clc = 0 forbids the round-up:
			// (2^64-1)/2^23 = 2199023255551.
			name: "arch_sys_timer 1GHz", freq: 1_000_000_000, minT: 0xF, maxT: 1<<61 - 1,
			sec: 600, mult: 8388608, shift: 23, minNs: 1000, maxNs: 2199023255551,
		},
		{
			// Older kernels (TVAL, max 0x7fffffff) at 24 MHz: sec = 89; 89e9>>32
			// = 20 (5 bits) -> sftacc 27; 0.024*2^32 = 103079215.1 ->
			// 103079215 at shift 32; max = (0x7fffffff<<32 + mult-1)/mult =
			// 89478485382.
			name: "arch_sys_timer TVAL 24MHz", freq: 24_000_000, minT: 0xF, maxT: 0x7FFFFFFF,
			sec: 89, mult: 103079215, shift: 32, minNs: 1000, maxNs: 89478485382,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Config(sdk.FeatOneshot, tt.freq, tt.minT, tt.maxT)
			want := Scale{Mult: tt.mult, Shift: tt.shift, MinDeltaNs: tt.minNs, MaxDeltaNs: tt.maxNs, MaxSec: tt.sec}
			if got != want {
				t.Errorf("Config(oneshot, %d, %#x, %#x) = %+v, want %+v", tt.freq, tt.minT, tt.maxT, got, want)
			}
		})
	}
}

// TestConfigNoOneshot: clockevents_config() returns early for a device without
// CLOCK_EVT_FEAT_ONESHOT.
func TestConfigNoOneshot(t *testing.T) {
	if got := Config(sdk.FeatPeriodic, 14_318_180, 192, 0x7FFFFFFF); got != (Scale{}) {
		t.Errorf("Config(periodic only) = %+v, want zero", got)
	}
}

// TestScaleFromDriver checks the count-down LAPIC timer, whose scale
// arch/x86/kernel/apic/apic.c:lapic_init_clockevent() sets itself:
// mult = div_sc(lapic_timer_period/16, TICK_NSEC, 32), limits with
// clockevent_delta2ns() (round-up for both).
func TestScaleFromDriver(t *testing.T) {
	tests := []struct {
		name         string
		perJiffy     uint64 // lapic_timer_period / APIC_DIVISOR
		tickNsec     uint64
		mult         uint32
		minNs, maxNs uint64
	}{
		// 100 MHz bus, HZ=1000: period 100000, /16 = 6250 ticks per jiffy;
		// mult = 6250<<32/1e6 = 26843545 (26843545.6 truncated);
		// min = (15<<32 + 26843544)/26843545 = 2401;
		// max = (0x7FFFFFFF<<32 + 26843544)/26843545 = 343597391201.
		{"100MHz bus HZ=1000", 6250, 1_000_000, 26843545, 2401, 343597391201},
		// HZ=250: 25000 ticks per 4 ms jiffy -> the same rate and mult.
		{"100MHz bus HZ=250", 25000, 4_000_000, 26843545, 2401, 343597391201},
		// 25 MHz crystal, HZ=1000: 25000/16 = 1562 (1562.5 truncated);
		// mult = 1562<<32/1e6 = 6708738; min = 9604; max = 1374829667303.
		{"25MHz crystal HZ=1000", 1562, 1_000_000, 6708738, 9604, 1374829667303},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mult := DivSC(tt.perJiffy, tt.tickNsec, 32)
			if mult != tt.mult {
				t.Fatalf("DivSC(%d, %d, 32) = %d, want %d", tt.perJiffy, tt.tickNsec, mult, tt.mult)
			}
			got := ScaleFromDriver(mult, 32, 0xF, 0x7FFFFFFF)
			want := Scale{Mult: tt.mult, Shift: 32, MinDeltaNs: tt.minNs, MaxDeltaNs: tt.maxNs}
			if got != want {
				t.Errorf("ScaleFromDriver(%d, 32, 0xF, 0x7FFFFFFF) = %+v, want %+v", mult, got, want)
			}
		})
	}
}

// TestNsToTicks checks clockevents_program_event()'s (delta*mult)>>shift with
// the scales above; values by hand: 15 us on the HPET is
// 15000*61496115>>32 = 214 cycles; 13410 ns is 192 cycles (min_delta_ns maps
// back onto min_delta_ticks); 1 ms on TSC/8 at 375 MHz is 375000; 1000 ns at
// 24 MHz is 23 (23.99 truncated, so the min delta of 15 ticks is honoured).
func TestNsToTicks(t *testing.T) {
	hpet := Scale{Mult: 61496115, Shift: 32}
	tsc := Scale{Mult: 12582912, Shift: 25}
	arm := Scale{Mult: 12884902, Shift: 29}
	tests := []struct {
		name  string
		s     Scale
		delta uint64
		want  uint64
	}{
		{"hpet 15us", hpet, 15000, 214},
		{"hpet min_delta_ns", hpet, 13410, 192},
		{"hpet max_delta_ns", hpet, 149983003521, 0x7FFFFFFF},
		{"tsc 1ms", tsc, 1_000_000, 375000},
		{"arm 1us", arm, 1000, 24},
	}
	for _, tt := range tests {
		if got := tt.s.NsToTicks(tt.delta); got != tt.want {
			t.Errorf("%s: NsToTicks(%d) = %d, want %d", tt.name, tt.delta, got, tt.want)
		}
	}
}

// TestDeltaToNs covers cev_delta2ns()'s corner rules.
func TestDeltaToNs(t *testing.T) {
	tests := []struct {
		name        string
		latch       uint64
		mult, shift uint32
		ismax       bool
		want        uint64
	}{
		{"floor at 1us", 1, 1 << 20, 20, false, 1000},
		{"round up min", 3000, 3, 1, false, 2000},       // (6000+2)/3 = 2000
		{"round up not exact", 3001, 3, 1, false, 2001}, // (6002+2)/3 = 2001
		// mult > 1<<shift (device > 1 GHz): no round-up for the maximum.
		{">1GHz max no round", 4000, 3, 1, true, 2666}, // 8000/3
		{">1GHz min rounds", 4000, 3, 1, false, 2667},  // 8002/3
		{"zero mult treated as 1", 2000, 0, 0, false, 2000},
		{"shift overflow saturates", 1 << 40, 1 << 30, 30, true, ulongMax / (1 << 30)},
	}
	for _, tt := range tests {
		if got := DeltaToNs(tt.latch, tt.mult, tt.shift, tt.ismax); got != tt.want {
			t.Errorf("%s: DeltaToNs(%d, %d, %d, %v) = %d, want %d", tt.name, tt.latch, tt.mult, tt.shift, tt.ismax, got, tt.want)
		}
	}
}

// TestCalcMultShiftNoFit: when no shift fits, the kernel's loop ends with
// shift 0 and the mult computed for shift 1.
func TestCalcMultShiftNoFit(t *testing.T) {
	// from=1, to=2^31, maxsec=2^31: 2^31>>32 = 0 so sftacc = 32; at every
	// shift s, 2^31<<s >> 32 != 0 (down to s=1: 2^32>>32 = 1), so the loop
	// runs out.
	mult, shift := CalcMultShift(1, 1<<31, 1<<31)
	if mult != 0 || shift != 0 { // (2^31<<1 + 0)/1 = 2^32 truncated to u32 = 0
		t.Errorf("CalcMultShift(1, 2^31, 2^31) = (%d, %d), want (0, 0)", mult, shift)
	}
}
