package sdk

import "github.com/tickemu/tickemu/framework/sdk/ktime"

// Policy kinds: the decisions a kernel change typically swaps, as plugins of
// their own. A policy is asked only at its decision, by the base plugin that
// makes it (the hrtimer base asks its hang and restart policies, the wheel
// its catch-up policy), so a strategy is a few lines and owns no timer base.
//
// A base plugin's strategy attribute (hrtimer hang_delay and restart, wheel
// catchup) names the builtin policy it uses, per kernel era; a top-level
// block of the policy's kind (`hang_policy { plugin = "NAME" ... }`) puts
// any policy of that kind in its place, linked in or in its own process. The
// host hands the configured policy to the base through the base's
// PolicyUser method after both are configured; a base in its own process
// gets a proxy that asks the host over the base's session, which answers
// with the configured policy, linked in or in its own process
// (docs/protocol.md, "Policies of a base in its own process").
const (
	// KindHangPolicy decides what hrtimer_interrupt() does after it gives
	// up (HangPolicy).
	KindHangPolicy Kind = "hang_policy"
	// KindCatchupPolicy decides how __run_timers() brings a timer wheel
	// base's clock up to jiffies after NO_HZ idle (CatchupPolicy).
	KindCatchupPolicy Kind = "catchup_policy"
	// KindRestartPolicy decides how restarting a CPU's first hrtimer
	// reprograms the clockevent device (RestartPolicy).
	KindRestartPolicy Kind = "restart_policy"
)

// PolicyKinds lists the policy kinds in a stable order.
var PolicyKinds = []Kind{KindHangPolicy, KindCatchupPolicy, KindRestartPolicy}

// HangRequest is what kernel/time/hrtimer.c:hrtimer_interrupt() knows when
// its third pass has failed (the next event is still in the past): it has
// counted the hang (cpu_base->nr_hangs++, max_hang_time updated) and must
// now push the next event out so the CPU makes progress.
type HangRequest struct {
	CPU int
	// Now is the time the interrupt gives up at (its last ktime_get()).
	Now ktime.Time
	// Entry is entry_time, the interrupt's first ktime_get(); Now - Entry
	// is the time the interrupt spent (the pre-2026 delay).
	Entry ktime.Time
	// NrHangs is cpu_base->nr_hangs with this hang counted (u16 in the
	// kernel, so it wraps at 65536); MaxHangTime cpu_base->max_hang_time in
	// ns with this hang included (u32).
	NrHangs     int64
	MaxHangTime int64
}

// HangDecision is a hang policy's answer.
type HangDecision struct {
	// Delay: the next event is programmed at Now + Delay (ns, >= 0; the
	// contract caps it at 10 s).
	Delay int64
	// KeepDetected keeps cpu_base->hang_detected set after the write, so
	// that hrtimer_start() does not reprogram the device before the next
	// interrupt (or, in the pre-2026 loop, the next successful
	// programming); false clears it at once.
	KeepDetected bool
}

// HangPolicy is a hang_policy plugin.
type HangPolicy interface {
	Plugin
	// Hang is asked once per hang, on the CPU whose interrupt gave up.
	Hang(HangRequest) HangDecision
}

// CatchupMode is how __run_timers() advances a base's clock.
type CatchupMode int

// Catch-up modes (kernel/time/timer.c, kernel/timer.c). Every mode expires
// the same timers in the same softirq; what they cost differs (one charged
// loop iteration per jiffy walked, per collect pass) and so do the wheel's
// iteration counters.
const (
	// CatchupWalk walks one jiffy per loop iteration up to jiffies (3.10
	// __run_timers()).
	CatchupWalk CatchupMode = iota
	// CatchupSkipEmpty walks, but an empty base's clock jumps to jiffies at
	// no cost (3.15 catchup_timer_jiffies(), d550e81dc0dd).
	CatchupSkipEmpty
	// CatchupNextExpiry jumps straight to the next jiffy with work (4.8
	// 236968383cf5, 5.9 next_expiry).
	CatchupNextExpiry
)

// CatchupRequest is one base's state when __run_timers() runs on it.
type CatchupRequest struct {
	CPU int
	// Base is the timer base on the CPU: 0 BASE_STD (BASE_LOCAL under the
	// 6.9+ pull model), 1 BASE_DEF, 2 BASE_GLOBAL (pull model only); the
	// cascading wheel of 3.10 has one base, 0.
	Base int
	// Jiffies is the softirq's jiffies; Clk where the base's walk stands
	// (timer_jiffies on the cascading wheel; on the levels wheel, whose clk
	// follows next_expiry, where a one-jiffy-per-iteration walk resumes):
	// from Clk to Jiffies are to catch up (none when Jiffies < Clk).
	Jiffies, Clk uint64
	// Pending is the number of timers queued on the base.
	Pending int
}

// CatchupDecision is a catch-up policy's answer.
type CatchupDecision struct {
	Mode CatchupMode
}

// CatchupPolicy is a catchup_policy plugin.
type CatchupPolicy interface {
	Plugin
	// Catchup is asked at every __run_timers() on a base (levels wheel),
	// or when one finds jiffies to catch up (cascading wheel).
	Catchup(CatchupRequest) CatchupDecision
}

// RestartRequest is __hrtimer_start_range_ns() restarting the timer that is
// its CPU's first (cpu_base->next_timer), on that CPU.
type RestartRequest struct {
	CPU int
	Now ktime.Time
	// Old is the timer's queued expiry, New the one it is restarted with.
	Old, New ktime.Time
}

// RestartDecision is a restart policy's answer.
type RestartDecision struct {
	// Deferred keeps the timer local and reprograms once after the enqueue
	// (627ef5ae2df8, force_local); false reprograms on removal and again
	// after the enqueue when needed (up to two device writes).
	Deferred bool
}

// RestartPolicy is a restart_policy plugin.
type RestartPolicy interface {
	Plugin
	Restart(RestartRequest) RestartDecision
}

// PolicyUser is a base plugin that takes policies: the host calls
// UsePolicy for each policy block, after Configure of both and before the
// first simulation call. kind is the policy's kind and p implements that
// kind's interface. A base answers false for a kind it does not ask.
type PolicyUser interface {
	UsePolicy(kind Kind, p Plugin) bool
}
