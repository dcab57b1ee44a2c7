package policy

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// HangCap is the 100 ms cap of every builtin hang delay
// (kernel/time/hrtimer.c: "Limit it to a sensible value as we enforce a
// longer delay", 100 * NSEC_PER_MSEC).
const HangCap = 100 * ktime.Millisecond

// base is what every builtin policy shares: no attributes, one counter.
type base struct {
	kind      sdk.Kind
	name      string
	desc      string
	decisions int64
}

// newBase is the base of a policy its Factory f makes.
func newBase(f sdk.Factory, desc string) base { return base{kind: f.Kind, name: f.Name, desc: desc} }

// Info implements sdk.Plugin.
func (b *base) Info() sdk.Info {
	return sdk.Info{Kind: b.kind, Name: b.name, Version: "1.0.0", Description: b.desc}
}

// Schema implements sdk.Plugin: the builtins take no attributes.
func (b *base) Schema() sdk.Schema { return sdk.Schema{} }

// Configure implements sdk.Plugin.
func (b *base) Configure(sdk.Setup, sdk.Config) sdk.Diagnostics {
	b.decisions = 0
	return nil
}

// Counters implements sdk.Plugin: decisions is how often the policy was asked.
func (b *base) Counters() []sdk.Counter {
	return []sdk.Counter{{Name: "decisions", CPU: -1, Value: b.decisions}}
}

// Hang is a builtin hang_policy.
type Hang struct {
	base
	decide func(sdk.HangRequest) sdk.HangDecision
}

var _ sdk.HangPolicy = (*Hang)(nil)

// Hang implements sdk.HangPolicy.
func (h *Hang) Hang(r sdk.HangRequest) sdk.HangDecision {
	h.decisions++
	return h.decide(r)
}

// Proportional is hrtimer_interrupt()'s hang handling from 41d2e4949377
// (2.6.32) to 7.0: delay = the time the interrupt spent, at most 100 ms;
// hang_detected stays set until a later interrupt programs successfully.
var Proportional = hang("proportional",
	"hrtimer_interrupt() hang delay = time spent in the interrupt, capped at 100 ms (41d2e4949377, 2.6.32 .. 7.0)",
	func(r sdk.HangRequest) sdk.HangDecision {
		return sdk.HangDecision{Delay: min(int64(r.Now-r.Entry), HangCap), KeepDetected: true}
	})

// Fixed100ms is 2889243848560 ("hrtimer: Re-arrange hrtimer_interrupt()",
// tip 2026): always 100 ms, hang_detected cleared at once.
var Fixed100ms = hang("fixed_100ms",
	"hrtimer_interrupt() hang delay = 100 ms, hang_detected cleared at once (2889243848560)",
	func(sdk.HangRequest) sdk.HangDecision { return sdk.HangDecision{Delay: HangCap} })

// MaxHangTime is its fix ("hrtimer: Less agressive interrupt hang
// handling", 2026): delay = min(100 ms, max_hang_time), hang_detected kept
// until the next interrupt.
var MaxHangTime = hang("max_hang_time",
	"hrtimer_interrupt() hang delay = min(100 ms, max_hang_time), hang_detected kept until the next interrupt (the 2026 fix)",
	func(r sdk.HangRequest) sdk.HangDecision {
		return sdk.HangDecision{Delay: min(HangCap, r.MaxHangTime), KeepDetected: true}
	})

// hang declares a builtin hang_policy called name that decides with decide.
func hang(name, desc string, decide func(sdk.HangRequest) sdk.HangDecision) sdk.Factory {
	f := sdk.Factory{Kind: sdk.KindHangPolicy, Name: name}
	f.New = func() sdk.Plugin { return &Hang{base: newBase(f, desc), decide: decide} }
	return f
}

// Catchup is a builtin catchup_policy: one mode whatever the base's state.
type Catchup struct {
	base
	mode sdk.CatchupMode
}

var _ sdk.CatchupPolicy = (*Catchup)(nil)

// Catchup implements sdk.CatchupPolicy.
func (c *Catchup) Catchup(sdk.CatchupRequest) sdk.CatchupDecision {
	c.decisions++
	return sdk.CatchupDecision{Mode: c.mode}
}

// Mode is the builtin's constant answer.
func (c *Catchup) Mode() sdk.CatchupMode { return c.mode }

// PerJiffy is 3.10 __run_timers(): one iteration per jiffy.
var PerJiffy = catchup("per_jiffy", "__run_timers() walks one jiffy per iteration (3.10)", sdk.CatchupWalk)

// SkipEmpty is 3.15 catchup_timer_jiffies() (d550e81dc0dd): an empty
// base's clock jumps to jiffies.
var SkipEmpty = catchup("skip_empty",
	"__run_timers() walks one jiffy per iteration, an empty base jumps to jiffies (d550e81dc0dd, 3.15)", sdk.CatchupSkipEmpty)

// NextExpiry is 4.8's 236968383cf5 and 5.9's next_expiry: the clock
// jumps to the next jiffy with work.
var NextExpiry = catchup("next_expiry",
	"__run_timers() jumps to the next jiffy with work (236968383cf5, 4.8; next_expiry 5.9)", sdk.CatchupNextExpiry)

// catchup declares a builtin catchup_policy called name that answers mode.
func catchup(name, desc string, mode sdk.CatchupMode) sdk.Factory {
	f := sdk.Factory{Kind: sdk.KindCatchupPolicy, Name: name}
	f.New = func() sdk.Plugin { return &Catchup{base: newBase(f, desc), mode: mode} }
	return f
}

// Restart is a builtin restart_policy.
type Restart struct {
	base
	deferred bool
}

var _ sdk.RestartPolicy = (*Restart)(nil)

// Restart implements sdk.RestartPolicy.
func (r *Restart) Restart(sdk.RestartRequest) sdk.RestartDecision {
	r.decisions++
	return sdk.RestartDecision{Deferred: r.deferred}
}

// Deferred is the builtin's constant answer.
func (r *Restart) Deferred() bool { return r.deferred }

// Double is __hrtimer_start_range_ns() before 627ef5ae2df8: reprogram on
// removal of the first timer and again after the enqueue.
var Double = restart("double",
	"restarting the first hrtimer reprograms on removal and after the enqueue (before 627ef5ae2df8)", false)

// Deferred is 627ef5ae2df8: force_local, one reprogramming after the
// enqueue.
var Deferred = restart("deferred",
	"restarting the first hrtimer keeps it local and reprograms once after the enqueue (627ef5ae2df8)", true)

// restart declares a builtin restart_policy called name.
func restart(name, desc string, deferred bool) sdk.Factory {
	f := sdk.Factory{Kind: sdk.KindRestartPolicy, Name: name}
	f.New = func() sdk.Plugin { return &Restart{base: newBase(f, desc), deferred: deferred} }
	return f
}

// Factories lists the builtin policies, by kind then name as the attribute
// lists them.
func Factories() []sdk.Factory {
	return []sdk.Factory{Proportional, Fixed100ms, MaxHangTime, PerJiffy, SkipEmpty, NextExpiry, Double, Deferred}
}

// New returns a fresh builtin policy of kind k called name, or nil.
func New(k sdk.Kind, name string) sdk.Plugin {
	for _, f := range Factories() {
		if f.Kind == k && f.Name == name {
			return f.New()
		}
	}
	return nil
}
