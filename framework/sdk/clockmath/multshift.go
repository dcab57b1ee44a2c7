package clockmath

import "github.com/tickemu/tickemu/framework/sdk"

// NsecPerSec is NSEC_PER_SEC.
const NsecPerSec = 1_000_000_000

// minDeltaFloorNs is the floor cev_delta2ns() applies: "deltas less than 1usec
// are pointless noise".
const minDeltaFloorNs = 1000

// CalcMultShift models kernel/time/clocksource.c:clocks_calc_mult_shift()
// (v6.12): it picks the largest shift (at most 32) whose mult converts a value
// of up to maxsec seconds of the from-rate without overflowing 64 bits, with
// mult = round(to << shift / from). For a clockevent device, from is
// NSEC_PER_SEC and to is the device frequency (clockevents_calc_mult_shift()).
//
// The arithmetic is the kernel's, including the corner where no shift fits:
// the loop then ends with shift 0 and the mult computed for shift 1.
func CalcMultShift(from, to, maxsec uint32) (mult, shift uint32) {
	// Shift limiting the conversion range: 32 minus the bits maxsec*from
	// needs above 32.
	sftacc := uint32(32)
	tmp := (uint64(maxsec) * uint64(from)) >> 32
	for tmp != 0 {
		tmp >>= 1
		sftacc--
	}
	var sft uint32
	for sft = 32; sft > 0; sft-- {
		tmp = uint64(to) << sft
		tmp += uint64(from / 2)
		tmp /= uint64(from)
		if tmp>>sftacc == 0 {
			break
		}
	}
	return uint32(tmp), sft
}

// DeltaToNs models kernel/time/clockevents.c:cev_delta2ns() (v6.12): latch
// device ticks in nanoseconds, (latch << shift) / mult. The shift saturates to
// ~0 on overflow; mult-1 is added to round up, except for the maximum (ismax)
// of a device faster than 1 GHz (mult > 1 << shift) or when the add would
// overflow; the result is floored at 1000 ns. A zero mult is treated as 1, as
// the kernel does after its WARN.
func DeltaToNs(latch uint64, mult, shift uint32, ismax bool) uint64 {
	if mult == 0 {
		mult = 1
	}
	clc := latch << shift
	rnd := uint64(mult) - 1
	if clc>>shift != latch {
		clc = ^uint64(0)
	}
	if ^uint64(0)-clc > rnd && (!ismax || uint64(mult) <= uint64(1)<<shift) {
		clc += rnd
	}
	clc /= uint64(mult)
	if clc > minDeltaFloorNs {
		return clc
	}
	return minDeltaFloorNs
}

// DivSC models include/linux/clockchips.h:div_sc(): (ticks << shift) / nsec,
// the factor lapic_init_clockevent() uses for the count-down LAPIC timer.
func DivSC(ticks, nsec uint64, shift uint32) uint32 {
	return uint32((ticks << shift) / nsec)
}

// Scale holds a device's conversion factors and delta limits, the fields
// clockevents_config() fills in struct clock_event_device.
type Scale struct {
	Mult, Shift            uint32
	MinDeltaNs, MaxDeltaNs uint64
	// MaxSec is the conversion range clockevents_config() chose (0 when the
	// driver supplied mult/shift itself).
	MaxSec uint32
}

// Config models kernel/time/clockevents.c:clockevents_config() (v6.12) for a
// device of frequency freq Hz with the given tick limits: the conversion range
// is max_delta_ticks/freq seconds (at least 1; at most 600 when the device can
// count more than 32 bits), then mult/shift from CalcMultShift and the delta
// limits from DeltaToNs. A device without oneshot mode gets a zero Scale, as in
// the kernel.
func Config(features sdk.DeviceFeatures, freq uint32, minTicks, maxTicks uint64) Scale {
	if features&sdk.FeatOneshot == 0 || freq == 0 {
		return Scale{}
	}
	sec := maxTicks / uint64(freq)
	if sec == 0 {
		sec = 1
	} else if sec > 600 && maxTicks > 0xFFFFFFFF {
		sec = 600
	}
	mult, shift := CalcMultShift(NsecPerSec, freq, uint32(sec))
	return Scale{
		Mult:       mult,
		Shift:      shift,
		MinDeltaNs: DeltaToNs(minTicks, mult, shift, false),
		MaxDeltaNs: DeltaToNs(maxTicks, mult, shift, true),
		MaxSec:     uint32(sec),
	}
}

// ScaleFromDriver is the scale of a driver that sets mult/shift itself and
// converts its limits with clockevent_delta2ns() (ismax false for both), as
// arch/x86/kernel/apic/apic.c:lapic_init_clockevent() does.
func ScaleFromDriver(mult, shift uint32, minTicks, maxTicks uint64) Scale {
	return Scale{
		Mult:       mult,
		Shift:      shift,
		MinDeltaNs: DeltaToNs(minTicks, mult, shift, false),
		MaxDeltaNs: DeltaToNs(maxTicks, mult, shift, false),
	}
}

// NsToTicks is the conversion clockevents_program_event() applies to a clamped
// delta: (delta * mult) >> shift in 64-bit unsigned arithmetic (wrapping as C
// does; the clamp to MaxDeltaNs keeps it from wrapping).
func (s Scale) NsToTicks(delta uint64) uint64 {
	return (delta * uint64(s.Mult)) >> s.Shift
}
