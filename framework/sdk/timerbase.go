package sdk

// TimerID identifies a timer for the life of a run. The host allocates IDs; a
// plugin uses them only as keys (and to break ties deterministically).
type TimerID uint64

// NoExpiry is the "nothing pending" jiffy value a TimerBase reports.
const NoExpiry = ^uint64(0)

// TimerFlags mirror timer_list.flags bits (include/linux/timer.h).
type TimerFlags uint32

// Timer flags.
const (
	TimerDeferrable TimerFlags = 1 << iota // TIMER_DEFERRABLE: never wakes an idle CPU
	TimerPinned                            // TIMER_PINNED: stays on the CPU it was added on
)

// WheelTimer is a struct timer_list as the wheel sees it.
type WheelTimer struct {
	ID      TimerID
	Expires uint64 // absolute jiffies
	Flags   TimerFlags
	// CallbackCost is how long the host's callback runs, in ns.
	CallbackCost int64
	// Period > 0 declares that the callback re-arms the timer with
	// mod_timer(timer, jiffies + Period), jiffies being the global jiffies
	// of the run; the plugin does it in place.
	Period uint64
	// Placement is the machine's state for the target choice of
	// __mod_timer() (nil unless Setup.TimerMigration).
	Placement *Placement
}

// WheelState is the part of a CPU's base the host caches after every call, so
// that the tick and NO_HZ decisions need no call of their own.
type WheelState struct {
	// RaiseAt: run_local_timers() raises TIMER_SOFTIRQ on a tick whose jiffies
	// is >= RaiseAt (3.10: the base clock, i.e. every tick; 5.9+: next_expiry).
	RaiseAt uint64
	// NextExpiry is the jiffy at which the earliest non-deferrable timer fires
	// (its bucket expiry), NoExpiry if none: what get_next_timer_interrupt()
	// would answer, without its side effects.
	NextExpiry uint64
	// Pending counts queued timers, deferrable ones included.
	Pending int
	// Split: the CPU has the 6.9+ bases BASE_LOCAL (pinned timers),
	// BASE_GLOBAL and BASE_DEF, and LocalNext and GlobalNext are valid: the
	// bucket expiry of the earliest BASE_LOCAL and BASE_GLOBAL timer
	// (NoExpiry if none), what fetch_next_timer_interrupt() splits into
	// tevt.local and tevt.global. An idle CPU hands GlobalNext to the
	// timer-migration hierarchy and wakes only for LocalNext.
	Split                 bool
	LocalNext, GlobalNext uint64
}

// WheelOpResult is the result of ModTimer and DelTimer.
type WheelOpResult struct {
	Cost       int64 // ns
	WasPending bool  // the return value of mod_timer()/del_timer()
	State      WheelState
	// BucketExpiry and Index say where ModTimer queued the timer: the jiffy
	// its bucket is processed at and the bucket's index, as the timer_start
	// tracepoint prints them (bucket_expiry=, idx=). Zero for DelTimer.
	BucketExpiry uint64
	Index        int
	// Moved says ModTimer queued the timer on CPU, not on the calling CPU
	// (get_nohz_timer_target(), or a pending timer kept on its old base by
	// __mod_timer()'s same-bucket shortcut); State is then CPU's. CPU is 0
	// unless Moved.
	Moved bool
	CPU   int
}

// WheelExpiry is one timer callback run by RunTimers.
type WheelExpiry struct {
	ID     TimerID
	Offset int64  // ns from the start of RunTimers to the start of the callback
	Jiffy  uint64 // the base clock the timer was collected at
	// Rearmed is true when a declared Period re-armed the timer; NewExpires is then its new expiry.
	Rearmed    bool
	NewExpires uint64
}

// RunTimersResult is the result of RunTimers.
type RunTimersResult struct {
	Expired    []WheelExpiry
	Cost       int64  // ns, callbacks included
	Gap        uint64 // jiffies between the base clock and jiffies at entry
	Iterations uint64 // catch-up loop iterations (3.10: one per jiffy)
	Cascades   uint64 // cascade() calls (legacy wheel)
	State      WheelState
}

// NextTimerResult is the result of NextTimerInterrupt.
type NextTimerResult struct {
	Next  uint64 // jiffy of the next non-deferrable expiry, NoExpiry if none
	Cost  int64
	State WheelState
}

// TimerBase models the per-CPU timer wheel bases of kernel/time/timer.c.
// Jiffies passed in are the global jiffies at the time of the call.
type TimerBase interface {
	Plugin
	// ModTimer adds or modifies a timer on cpu (mod_timer / __mod_timer).
	ModTimer(cpu int, jiffies uint64, t WheelTimer) WheelOpResult
	// DelTimer removes a timer (del_timer / timer_delete).
	DelTimer(cpu int, jiffies uint64, id TimerID) WheelOpResult
	// RunTimers is run_timer_softirq(): catch the base up to jiffies with the
	// configured strategy and run the due timers.
	RunTimers(cpu int, jiffies uint64) RunTimersResult
	// NextTimerInterrupt is get_next_timer_interrupt() at idle entry, with its
	// side effects (marking the base idle, forwarding its clock) in the eras that
	// have them.
	NextTimerInterrupt(cpu int, jiffies uint64) NextTimerResult
}

// InPlaceNextTimer is an optional TimerBase extension for plugins linked in
// process: NextTimerInterruptInto is NextTimerInterrupt writing its answer
// into *r instead of returning it, the same call with the same effects and
// answer. A host that asks through it (framework/kernel does, on every idle
// entry) skips copying the 64-byte answer through each layer between the
// plugin and the caller: Go returns it in registers, and each layer's copy of
// freshly stored registers stalls store forwarding. Out of process the plain
// call is made.
type InPlaceNextTimer interface {
	NextTimerInterruptInto(cpu int, jiffies uint64, r *NextTimerResult)
}

// RepeatFreeNextTimer is an optional TimerBase extension for plugins linked
// in process. A plugin whose NextTimerRepeatFree reports true (it is asked
// once, after Configure) promises: NextTimerInterrupt for a CPU at the
// jiffies of that CPU's previous NextTimerInterrupt, with no ModTimer,
// DelTimer, RunTimers or ExpireRemote call on any CPU since, answers what
// that previous call answered, at cost 0, and changes nothing. The host then
// uses the previous answer instead of making the call (framework/kernel does,
// on every idle entry after the first of a jiffy). The levels wheel keeps it:
// its first call recalculates next_expiry and forwards the base clocks, a
// repeat finds nothing to do (NextTimerModel's RepeatCost 0).
type RepeatFreeNextTimer interface {
	NextTimerRepeatFree() bool
}

// NextTimerModel declares how NextTimerInterrupt answers on one CPU, so that a
// host computes the answer itself instead of waiting for an out-of-process
// wheel; the call is still made, in order, later (sent with the plugin's next
// waited-for call), and its answer is checked against the model: a
// difference is the plugin's fault.
//
// Valid promises that, until a call other than NextTimerInterrupt is made on
// the plugin, NextTimerInterrupt(cpu, j) answers:
//
//	Next: j when Expiry is not NoExpiry and j is at or after Expiry
//	    (time_after_eq), else Expiry when Pending, else NoExpiry;
//	Cost: Cost for the first such call, RepeatCost for each later one;
//	State: State (the call leaves the cached state as it is).
type NextTimerModel struct {
	Valid bool
	// Expiry is the base's next expiry as get_next_timer_interrupt() will
	// see it (after its own recalculation), NoExpiry when it has none.
	Expiry uint64
	// Pending: a non-deferrable timer is queued (timers_pending).
	Pending          bool
	Cost, RepeatCost int64
	State            WheelState
}

// NextTimerModeler is implemented by a TimerBase that can declare a
// NextTimerModel of a CPU (Valid false when it cannot). It is asked after
// Configure, out of process only, after the calls of each message.
type NextTimerModeler interface {
	NextTimerModel(cpu int) NextTimerModel
}

// RemoteTimerBase is a TimerBase with the 6.9+ split bases (WheelState.Split)
// whose global timers another CPU can expire: the timer-migration
// hierarchy's migrator calls ExpireRemote for an idle CPU.
type RemoteTimerBase interface {
	TimerBase
	// ExpireRemote is timer_expire_remote(cpu): __run_timer_base() of cpu's
	// BASE_GLOBAL at jiffies, run by another CPU (the callbacks run there).
	// State is cpu's.
	ExpireRemote(cpu int, jiffies uint64) RunTimersResult
}
