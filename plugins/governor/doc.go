// Package governor holds the builtin cpuidle governor plugins (kind
// "governor", sdk.Governor):
//
//	menu         drivers/cpuidle/governors/menu.c as of v5.4 (the microsecond
//	             version): the sleep length scaled by a correction factor per
//	             bucket of its magnitude, lowered to the typical interval of the
//	             last 8 idle durations when they repeat; state 0 with the tick
//	             kept when the PM QoS limit is 0 or state 1 does not fit; the
//	             tick is kept (stop_tick = false) for a polling state or a
//	             predicted idle shorter than a tick unless it is stopped already.
//	teo          drivers/cpuidle/governors/teo.c as of v6.6: "hits" and
//	             "intercepts" per bin of target residencies with the recent
//	             intercepts, the util-awareness shortcut, and the same tick rule
//	             on the expected duration.
//	always_stop  the 3.10-era idle loop: tick_nohz_idle_enter() stopped the tick
//	             on every idle entry before the governor ran; the state is the
//	             deepest one whose target residency fits the sleep length and
//	             whose exit latency meets the PM QoS limit.
//	haltpoll     drivers/cpuidle/governors/haltpoll.c, the governor of KVM
//	             guests with the cpuidle-haltpoll driver (POLL, then a halt that
//	             exits to the host): polls with the tick kept for a zero PM QoS
//	             request or while its adaptive guest_halt_poll_ns window is
//	             open, else halts with the tick stopped.
//
// One plugin value serves every CPU; the per-CPU data is what the kernel keeps
// in struct menu_device and struct teo_cpu.
//
// Divergences: no iowait (menu's performance multiplier is 1 and its iowait
// buckets are never used); poll_idle()'s time limit is not modelled, so
// dev->poll_time_limit is never set; teo's CPU utilisation is the host's
// PELT-like average of the CPU's task time (IdleSelect.Util), compared with
// teo's threshold of capacity >> 6.
package governor
