// Package lapic is the builtin clockevent plugin "lapic": the x86 local APIC
// timer, one channel per CPU, as arch/x86/kernel/apic/apic.c (v6.12) drives it.
//
// Two count modes (config mode):
//
//   - "tsc_deadline" (the default on every CPU since Haswell): the device the
//     kernel registers as "lapic-deadline" in setup_APIC_timer() with
//     clockevents_config_and_register(tsc_khz * (1000/TSC_DIVISOR), 0xF, ~0UL),
//     i.e. a frequency of TSC/8, min delta 15 ticks (120 TSC cycles), no max.
//     lapic_next_deadline() reads the TSC and writes IA32_TSC_DEADLINE =
//     tsc + delta*8; the interrupt is raised when the TSC reaches the
//     deadline, or at once if it already has when the write lands (Intel SDM
//     vol. 3A 10.5.4.1). Features ONESHOT only: no periodic mode.
//   - "oneshot": the count-down timer "lapic". The timer counts the bus (or
//     crystal) clock through the divide configuration register (the kernel
//     always uses divide-by-16, APIC_DIVISOR); lapic_next_event() writes the
//     initial count to TMICT and the interrupt is raised when the current
//     count reaches zero. Its scale is the driver's own
//     (lapic_init_clockevent(): mult = div_sc(lapic_timer_period/16,
//     TICK_NSEC, 32), shift 32, min 0xF, max 0x7FFFFFFF), where
//     lapic_timer_period is bus clocks per jiffy; the plugin takes the exact
//     value floor(bus_freq/HZ), as CPUID leaf 0x15 gives it
//     (Divergence: the PM-timer calibration's measurement error is not
//     modelled). Periodic mode reloads lapic_timer_period/16 every jiffy
//     whatever period is asked (the driver ignores it too).
//
// ARAT (config arat, CPUID.06H:EAX[2]) keeps the timer running in deep
// C-states: the kernel then clears CLOCK_EVT_FEAT_C3STOP and rates the device
// 150 instead of 100. Without ARAT the device has FeatC3Stop and needs the
// broadcast device in deep idle.
//
// Costs (defaults are estimates; no cycle-accurate public figure exists,
// docs/reference/calibration.md §3-4):
//
//   - deadline_write_cost 60ns: RDTSC + one non-serializing WRMSR (~100-300
//     cycles at 2-3 GHz on bare metal; a VM exit, 1-3 us, in a guest).
//   - oneshot_write_cost 100ns: one APIC register access (TMICT write; xAPIC
//     MMIO is serializing, x2APIC a WRMSR; 0.05-0.3 us bare metal). State
//     changes cost one such access per register the driver touches
//     (lapic_timer_shutdown(): 3; __setup_APIC_LVTT(): 1 in deadline mode, 3
//     or 4 in count mode).
//   - eoi_cost 50ns: the EOI write of sysvec_apic_timer_interrupt(), which
//     comes before its local_timer_entry tracepoint; in a guest without EOI
//     acceleration it exits to the hypervisor like the deadline write.
//   - irq_latency 50ns: from the timer's match to interrupt entry on the
//     same core.
//
// In a KVM guest both are the hypervisor's: the deadline write exits to it
// and the interrupt is injected from a host timer. profiles/kvm-guest.hcl
// holds the figures tickemu calibrate measured on one (deadline_write_cost
// 8.3 us, eoi_cost 7.7 us, irq_latency 10.7 us; docs/devices.md,
// docs/calibration-fit.md),
// and irq_latency_spread: the quantiles of the interrupt's deviation from
// irq_latency (the host schedules the vCPU that takes it), from which each
// interrupt draws its latency with the plugin's seeded stream. In
// TSC-deadline mode the plugin declares all of it (sdk.DeadlineModel, the
// spreads and the stream's name included), so out of process the host draws
// the same latencies and EOI costs from its own copy of the stream instead of
// asking for each write and EOI.
//
// Divergence: the 2026 "coupled" programming mode (f246ec3478cf, absolute
// TSC deadline without RDTSC) and the TSC-deadline errata table
// (apic_validate_deadline_timer()) are not modelled; weak_wrmsr_fence() is
// part of deadline_write_cost.
package lapic
