package sdk

import "github.com/tickemu/tickemu/framework/sdk/ktime"

// ClockID is a POSIX clock id, with Linux's values.
type ClockID int

// Clock ids (include/uapi/linux/time.h).
const (
	ClockRealtime  ClockID = 0
	ClockMonotonic ClockID = 1
	ClockBoottime  ClockID = 7
	ClockTAI       ClockID = 11
)

// String returns the kernel's name, as ftrace prints it.
func (c ClockID) String() string {
	switch c {
	case ClockRealtime:
		return "CLOCK_REALTIME"
	case ClockMonotonic:
		return "CLOCK_MONOTONIC"
	case ClockBoottime:
		return "CLOCK_BOOTTIME"
	case ClockTAI:
		return "CLOCK_TAI"
	}
	return "CLOCK_UNKNOWN"
}

// HRMode mirrors enum hrtimer_mode (include/linux/hrtimer.h).
type HRMode uint32

// hrtimer modes; composites are ORs (REL|SOFT = 0x05).
const (
	HRModeAbs    HRMode = 0x00
	HRModeRel    HRMode = 0x01
	HRModePinned HRMode = 0x02
	HRModeSoft   HRMode = 0x04
	HRModeHard   HRMode = 0x08
)

// String returns the name ftrace's hrtimer_start event prints (decode_hrtimer_mode).
func (m HRMode) String() string {
	names := map[HRMode]string{
		0x00: "ABS", 0x01: "REL", 0x02: "ABS|PINNED", 0x03: "REL|PINNED",
		0x04: "ABS|SOFT", 0x05: "REL|SOFT", 0x06: "ABS|PINNED|SOFT", 0x07: "REL|PINNED|SOFT",
		0x08: "ABS|HARD", 0x09: "REL|HARD", 0x0A: "ABS|PINNED|HARD", 0x0B: "REL|PINNED|HARD",
	}
	if s, ok := names[m]; ok {
		return s
	}
	return "UNKNOWN"
}

// ClockOffsets are the timekeeper's offsets from CLOCK_MONOTONIC
// (offs_real, offs_boot, offs_tai), in ns.
type ClockOffsets struct {
	Real, Boot, TAI int64
}

// HRTimer is a struct hrtimer as the plugin sees it: its clock, mode and a
// declaration of what its callback does.
type HRTimer struct {
	ID    TimerID
	Clock ClockID
	Mode  HRMode // SOFT selects a soft base; REL is resolved by the plugin
	// CallbackCost is how long the host's callback runs, in ns.
	CallbackCost int64
	// Period > 0 declares that the callback calls hrtimer_forward_now(timer,
	// Period) and returns HRTIMER_RESTART; 0 means HRTIMER_NORESTART.
	Period int64
	// Placement is the machine's state for switch_hrtimer_base()'s target
	// choice (nil unless Setup.TimerMigration).
	Placement *Placement
}

// ClockWasSet answers (HROpResult.Ret).
const (
	ClockWasSetIPI     = 1 // cpu is in clock_was_set()'s IPI mask
	ClockWasSetEachCPU = 2 // on_each_cpu(): every CPU runs retrigger_next_event()
)

// HROpResult is the result of a host-initiated hrtimer operation.
type HROpResult struct {
	Cost int64
	// Program lists the clockevent writes the operation made, in order
	// (tick_program_event(t, force=1) each); ktime.Max stops the device.
	// The host performs each through the clockevents core.
	Program []ktime.Time
	// Ret is hrtimer_try_to_cancel()'s return for Cancel (-1 callback running,
	// 0 not active, 1 removed); for Start, 1 if the timer was queued before;
	// for ClockWasSet, 0, ClockWasSetIPI or ClockWasSetEachCPU.
	Ret int
	// Expires and SoftExpires are the timer's resolved expiry in its own clock
	// (for Start): what the hrtimer_start trace event prints.
	Expires, SoftExpires ktime.Time
	// Moved says Start queued the timer on CPU's base, not on the calling
	// CPU's (switch_hrtimer_base() chose get_nohz_timer_target(), or the
	// running callback kept it on its old base). Program writes are the
	// calling CPU's device; a remote base is never reprogrammed, as
	// hrtimer_check_target() only moves a timer that is not the remote
	// CPU's first. CPU is 0 unless Moved.
	Moved bool
	CPU   int
}

// HRExpiry is one callback run by an interrupt or softirq pass.
type HRExpiry struct {
	ID TimerID
	// Now is the CLOCK_MONOTONIC time the callback started (host side effects
	// apply then); BaseNow is the same instant in the timer's clock, what
	// hrtimer_expire_entry prints as now=.
	Now, BaseNow ktime.Time
	Soft         bool
	Restarted    bool       // a declared Period re-armed it
	NewExpires   ktime.Time // when Restarted, in the timer's clock
	Overruns     int64      // hrtimer_forward()'s return when Restarted
}

// InterruptResult is the result of Interrupt, RunSoftirq and RunQueues.
// (The flags are last: 80 bytes, five 16-byte moves when the result is
// copied on every interrupt, with no overlapping tail.)
type InterruptResult struct {
	Expired []HRExpiry
	// End is when the handler returns (entry time plus the plugin's own costs
	// and the declared callback costs).
	End ktime.Time
	// Program lists the clockevent writes made, in order.
	Program   []ktime.Time
	Retries   int   // extra passes of the retry loop
	HangDelay int64 // ns the next event was pushed out by, when Hang
	// RaiseSoftirq: HRTIMER_SOFTIRQ must be raised on this CPU.
	RaiseSoftirq bool
	// TryProgram: the last Program entry is tick_program_event(t, force=0),
	// which may fail: the host writes it without force and, when the device
	// answers -ETIME, calls InterruptETIME to continue the interrupt (eras
	// whose hrtimer_interrupt() retries on the device's answer).
	TryProgram bool
	Hang       bool // a hang was detected in this interrupt
}

// HRTimerBase models the per-CPU hrtimer_cpu_base with its 8 clock bases
// (kernel/time/hrtimer.c). All times are CLOCK_MONOTONIC ns unless said.
type HRTimerBase interface {
	Plugin
	// Start is hrtimer_start_range_ns() on cpu: expires is in the timer's clock
	// (absolute, or relative for REL modes), slack the range delta in ns.
	Start(cpu int, now ktime.Time, t HRTimer, expires ktime.Time, slack int64) HROpResult
	// Cancel is hrtimer_try_to_cancel().
	Cancel(cpu int, now ktime.Time, id TimerID) HROpResult
	// Interrupt is hrtimer_interrupt() (high-res mode), entered at now.
	Interrupt(cpu int, now ktime.Time) InterruptResult
	// InterruptETIME continues the interrupt whose last result had
	// TryProgram, after that write returned -ETIME at now: the retry loop's
	// next pass, or the hang handling.
	InterruptETIME(cpu int, now ktime.Time) InterruptResult
	// RunSoftirq is hrtimer_run_softirq() (HRTIMER_SOFTIRQ), entered at now.
	RunSoftirq(cpu int, now ktime.Time) InterruptResult
	// RunQueues is hrtimer_run_queues() from the tick in low-res mode.
	RunQueues(cpu int, now ktime.Time) InterruptResult
	// ClockWasSet is clock_was_set()'s step for cpu, run on the CPU that set
	// the clock after the timekeeper's offsets became off (clock_settime):
	// the new offsets apply from now on, and Ret says whether cpu gets
	// retrigger_next_event(): 0 no; ClockWasSetIPI when cpu is in the IPI mask
	// (update_needs_ipi(), v5.15+: smp_call_function_many(), which skips the
	// calling CPU); ClockWasSetEachCPU when every CPU, the caller included,
	// runs it (on_each_cpu(), before 1e7f7fbcd40c). It writes no device.
	ClockWasSet(cpu int, now ktime.Time, off ClockOffsets) HROpResult
	// RetriggerNextEvent is retrigger_next_event() on cpu: refresh its base
	// offsets and reprogram its next event (the clock_was_set IPI handler).
	RetriggerNextEvent(cpu int, now ktime.Time) HROpResult
	// NextEvent is the earliest expiry on cpu in CLOCK_MONOTONIC, ignoring the
	// timer exclude (hrtimer_next_event_without(); exclude 0 = none), or
	// ktime.Max: what tick-sched and the idle governor ask.
	NextEvent(cpu int, now ktime.Time, exclude TimerID) ktime.Time
}

// HRTimerModelMaxQueue bounds HRTimerModel.Queue: a CPU with more timers
// queued has no model (its answers are asked for).
const HRTimerModelMaxQueue = 16

// HRQueued is one timer of an HRTimerModel's queue.
type HRQueued struct {
	ID      TimerID
	Expires ktime.Time // the hard expiry (HROpResult.Expires), CLOCK_MONOTONIC
	// SoftExpires, CallbackCost and Period are the timer's soft expiry and
	// the callback cost and period its last Start declared.
	SoftExpires  ktime.Time
	CallbackCost int64
	Period       int64
}

// HRTimerModel declares, for one CPU, the state from which a host computes
// the answers to Start and NextEvent on that CPU itself, so it need not wait
// for an out-of-process plugin; the calls are still made, in order, later
// (sent with the plugin's next waited-for call), and their answers are checked
// against the model: a difference is the plugin's fault. It describes the
// mainline hrtimer_cpu_base (kernel/time/hrtimer.c, 627ef5ae2df8 and later) in
// high-res mode while every timer of the CPU sits on the hard
// CLOCK_MONOTONIC base.
//
// Valid promises: high-res mode is active, no hang is pending (a device write
// is not held back), the softirq is not raised and no soft expiry is cached
// (softirq_expires_next is KTIME_MAX), no timer of the CPU sits on
// another base than the hard CLOCK_MONOTONIC one, and Queue lists every timer
// of the CPU in the order the base holds them (by Expires, equal expiries in
// enqueue order), at most HRTimerModelMaxQueue of them. The host then answers
// itself:
//
//	NextEvent(cpu, now, exclude): the first Expires of Queue, the second when
//	    the first is exclude; ktime.Max when there is none.
//	Start(cpu, now, t, exp, slack) of a timer whose clock is CLOCK_MONOTONIC
//	    (or CLOCK_REALTIME with HRModeRel), without HRModeSoft (and with
//	    HRModePinned when Migrates), with exp (plus
//	    now for HRModeRel) not negative, that is queued on no other CPU, whose
//	    callback is not running, and that is in Queue if it is NextTimer:
//	    Cost = StartCost; Ret = 1 if t is in Queue; SoftExpires = exp (+now
//	    for HRModeRel), Expires = SoftExpires + max(slack, 0). t leaves Queue
//	    and is queued after every entry whose Expires is not later than its
//	    own. If t was NextTimer, hrtimer_force_reprogram(skip_equal): NextTimer
//	    becomes the first timer of Queue (0 if its Expires is ktime.Max) and,
//	    when its Expires differs from ExpiresNext, ExpiresNext becomes it and
//	    Program writes it. Otherwise, when t is now the first timer of Queue
//	    and Expires < ExpiresNext (hrtimer_reprogram()), NextTimer becomes t,
//	    ExpiresNext becomes Expires and Program writes it; else Program is
//	    empty. The new entry carries SoftExpires and t's CallbackCost and
//	    Period.
//
// With Interrupts also set (the eras whose hrtimer_interrupt() retries when
// expires_next is already past, 2889243848560 and later, rather than on the
// device's -ETIME), the host answers Interrupt(cpu, now) too, unless a hang
// would be declared:
//
//	the clock starts at now + EntryCost; each pass (at most 3) samples it as
//	basenow, adds PassCost, and runs, first to last, every queued timer whose
//	SoftExpires <= basenow: ExpiryCost, then the callback starts (HRExpiry.Now
//	and BaseNow), a timer with a Period is forwarded as hrtimer_forward()
//	does past its callback's start (Overruns, NewExpires) and queued again,
//	then its CallbackCost. The next event is then the first Expires of Queue
//	(ktime.Max when empty); when it is before the clock, another pass runs
//	(Retries counts them; a third failure is a hang the host does not
//	model); else ExpiresNext becomes it, NextTimer becomes that timer (0 when
//	ktime.Max), Program writes it, and End is the clock.
type HRTimerModel struct {
	Valid bool
	// StartCost is Start's cost in ns.
	StartCost int64
	// Migrates: kernel.timer_migration is on, so a Start without
	// HRModePinned may queue the timer on another CPU (switch_hrtimer_base());
	// the host asks for those.
	Migrates bool
	// Interrupts: Interrupt is modelled too, with these costs in ns.
	Interrupts                      bool
	EntryCost, PassCost, ExpiryCost int64
	// ExpiresNext is the CPU's expires_next: what the device was last
	// programmed for (ktime.Max: nothing).
	ExpiresNext ktime.Time
	// NextTimer is the timer next_timer points to, 0 when NULL (it may be
	// one no longer queued).
	NextTimer TimerID
	// Queue lists the CPU's queued timers, first to expire first.
	Queue []HRQueued
}

// HRTimerModeler is implemented by an HRTimerBase that can declare an
// HRTimerModel of a CPU (Valid false when it cannot). It is asked after
// Configure, out of process only, after the calls of each message.
type HRTimerModeler interface {
	HRTimerModel(cpu int) HRTimerModel
}
