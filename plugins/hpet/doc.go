// Package hpet is the builtin clockevent plugin "hpet": the x86 High Precision
// Event Timer as arch/x86/kernel/hpet.c (v6.12) drives it.
//
// One free-running main counter, by default at 14.31818 MHz (config freq; the
// hardware reports its period in femtoseconds, HPET_PERIOD = 69841279 fs, and
// the kernel's hpet_freq is 10^15 / period truncated: 14318179 Hz, the value
// the clockevents core scales with), and a set of comparators, the channels. Setup.Role picks the use:
//
//   - "broadcast" (or any role but "local"): the legacy channel 0, device
//     "hpet", rating 50, ONESHOT and PERIODIC (hpet_legacy_clockevent_register()
//     forces periodic), one global channel; the tick broadcast device.
//   - "local": one MSI channel per CPU (init_one_hpet_msi_clockevent(), rating
//     110, ONESHOT, per CPU), what the kernel sets up on CPUs without ARAT.
//
// The HPET keeps counting in every C-state (no C3STOP). Both uses register with
// clockevents_config_and_register(hpet_freq, HPET_MIN_PROG_DELTA = 192,
// 0x7FFFFFFF).
//
// Programming is hpet_clkevt_set_next_event(): read COUNTER, write the 32-bit
// comparator Tn_CMP = counter + delta, read COUNTER back and return -ETIME when
// the counter is fewer than HPET_MIN_CYCLES = 128 cycles short of the
// comparator (or past it): the comparator is equal-match only, so a value the
// counter has already passed would not fire until the 32-bit counter wraps
// (about 300 s). The model samples each counter read when the read completes,
// lets the comparator write take effect cmp_latch_cycles HPET cycles after it
// is posted (writes "delayed internally up to two HPET clock cycles" on ATI and
// ICH9/10), and raises the interrupt irq_latency after the counter matches the
// comparator, or after the next wrap if it had already passed it.
//
// An optional System Management Interrupt source (smi_rate per second, each
// lasting smi_duration) models what the kernel comment blames for the race: an
// SMI arriving between the counter read and the comparator write delays the
// write by its duration. SMIs are machine-wide (all CPUs enter SMM), so one
// Poisson stream serves every channel, drawn from a simrand.Rand seeded from
// Setup.Seed and Setup.Role. SMIs that land outside a programming window are
// not charged (Divergence: their effect on the rest of the machine is not
// modelled).
//
// Costs (docs/reference/calibration.md §5):
//
//   - read_cost 1us: one uncached MMIO read of the HPET (kernel comments:
//     "thousands of CPU cycles"; measured >= 1.4 us per read on a large NUMA
//     box under load, J. Wiesner, Feb 2026; ~0.5-1 us single socket, estimate).
//   - write_cost 100ns: a posted MMIO write (0.05-0.2 us, estimate).
//   - one programming = 2 reads + 1 write ≈ 2.1 us (1-3 us derived).
//   - ack_cost 50ns: the LAPIC EOI of the edge-triggered HPET interrupt (the
//     handler does not touch the HPET).
//   - irq_latency 1us: comparator match to interrupt entry through the
//     IO-APIC or MSI (estimate).
//
// State changes cost the register accesses the driver makes: shutdown and
// oneshot read and write Tn_CFG; periodic stops the counter, programs the
// comparator twice (the AMD-8111 quirk) with a udelay(1) and restarts it.
// The driver has no oneshot_stopped callback: the core's ONESHOT_STOPPED
// leaves an armed comparator armed, and it still fires.
//
// Divergence: the main counter is not stopped by periodic setup; the value of
// a comparator left from before a shutdown is treated as consumed.
package hpet
