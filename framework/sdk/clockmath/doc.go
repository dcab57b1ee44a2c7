// Package clockmath is the clock arithmetic of the kernel's clockevents layer,
// for device plugins and the host alike, reproduced bit for bit:
//
//	kernel/time/clocksource.c:clocks_calc_mult_shift()  -> CalcMultShift
//	kernel/time/clockevents.c:cev_delta2ns()            -> DeltaToNs
//	kernel/time/clockevents.c:clockevents_config()      -> Config (a Scale)
//	include/linux/clockchips.h:div_sc()                 -> DivSC
//	(delta * mult) >> shift in clockevents_program_event() -> Scale.NsToTicks
//
// and Clock, a free-running hardware counter (TSC, HPET main counter, divided
// LAPIC bus clock, Arm system counter) converted exactly between simulated
// nanoseconds and ticks. It is part of the SDK (see framework/sdk's
// compatibility promise).
package clockmath
