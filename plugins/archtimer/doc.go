// Package archtimer is the builtin clockevent plugin "archtimer": the Arm
// architected (generic) timer, one per CPU, as drivers/clocksource/
// arm_arch_timer.c (v6.12) registers it in __arch_timer_setup(): device
// "arch_sys_timer", rating 450, ONESHOT, per CPU, with
// clockevents_config_and_register(arch_timer_rate, 0xf, max_delta).
//
// The counter (CNTVCT/CNTPCT) runs at arch_timer_rate (config freq, CNTFRQ).
// The default is 24 MHz, a common crystal-derived CNTFRQ (Apple M1/M2,
// Rockchip and Allwinner SoCs); Qualcomm parts use 19.2 MHz, Ampere Altra
// 25 MHz, and Armv8.6 and later mandate 1 GHz.
//
// Programming (config programming):
//
//   - "cval" (the driver since the 5.16 rework): set_next_event() reads CTL,
//     reads the counter, writes CVAL = counter + delta and writes CTL
//     (ENABLE, IT_MASK clear). The timer fires when the counter reaches CVAL
//     (an unsigned >= comparison, so a late write fires at once, no race).
//     max_delta = CLOCKSOURCE_MASK(arch_counter_get_width()), the width
//     guaranteeing a 40-year roll-over clamped to 56..64 bits.
//   - "tval" (older kernels, and XGene-1 with its broken CVAL): CTL read, TVAL
//     = delta, CTL write; the hardware sets CVAL = counter at the TVAL write
//   - sign-extended TVAL, so the write latency delays the event; max_delta
//     0x7fffffff (TVAL is a signed 32-bit down counter view).
//
// c3stop (config) is CLOCK_EVT_FEAT_C3STOP: the kernel sets it unless the
// firmware marks the timer always-on (DT "always-on", ACPI GTDT flag); then
// deep idle needs a broadcast device. The default false is the always-on case
// common on servers.
//
// Costs: sysreg_cost 10ns per system register access (20-100 ns per
// programming of four accesses, estimate; "pretty fast as it's next to
// the CPU", tglx); a programming costs 4 accesses (cval) or 3 (tval),
// shutdown 2, and the interrupt handler (timer_handler(): read CTL, write CTL
// with IT_MASK) 2 plus ack_cost 50ns for the GIC acknowledge/EOI; irq_latency
// 50ns from the condition to interrupt entry (estimates).
//
// Divergence: the errata workarounds (out-of-line counter reads), the event
// stream and the memory-mapped arch_mem_timer are not modelled.
package archtimer
