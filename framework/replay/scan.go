package replay

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/traceimport"
)

// TickFunctions are the tick's hrtimer callbacks: tick_sched_timer (high
// resolution, up to 6.8) and tick_nohz_handler (its name since 6.9).
var TickFunctions = map[string]bool{"tick_sched_timer": true, "tick_nohz_handler": true}

// RCUGPKthreads are the comms of RCU's grace-period kthreads, rcu_state.name
// (kernel/rcu/tree.h RCU_NAME: "rcu_preempt" under PREEMPT_RCU, else
// "rcu_sched"; kernels up to 4.19 ran "rcu_bh" too, and 3.x "rcu_sched"
// beside "rcu_preempt"). Each waits for its force-quiescent-state scans in
// rcu_gp_fqs_loop() (rcu_gp_kthread() before 5.x) with a timeout:
// swait_event_idle_timeout_exclusive() -> schedule_timeout(), a
// process_timeout timer on its stack.
var RCUGPKthreads = map[string]bool{"rcu_preempt": true, "rcu_sched": true, "rcu_bh": true}

// Running follows the comm of the task each CPU runs (sched_switch's
// next_comm), for events that carry no comm of their own (babeltrace
// without the procname context).
type Running map[int]string

// Update follows e.
func (r Running) Update(e *traceimport.Event) {
	if e.Kind == traceimport.SchedSwitch {
		r[e.CPU] = e.NextComm
	}
}

// RCUGPWait reports whether e, a timer_list start, is an RCU grace-period
// kthread's force-quiescent-state wait: a process_timeout timer started by
// one of RCUGPKthreads, the event's task or, when the event names none,
// the task r shows running on its CPU. A capture that gives callbacks as
// addresses (babeltrace of a kernel without symbols) names no function:
// any timer_list timer such a kthread starts is its wait (rcu_gp_kthread()
// starts no other).
func RCUGPWait(e *traceimport.Event, r Running) bool {
	if e.Kind != traceimport.TimerStart {
		return false
	}
	comm := e.Comm
	if comm == "" {
		comm = r[e.CPU]
	}
	if !RCUGPKthreads[comm] {
		return false
	}
	return e.Function == "process_timeout" || unresolved(e.Function)
}

// unresolved reports whether fn is a callback address rather than a symbol.
func unresolved(fn string) bool {
	if fn == "" {
		return false
	}
	for _, c := range strings.TrimPrefix(fn, "0x") {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Capture is what a first pass over a capture learns.
type Capture struct {
	Format string
	// CPUs is the header's CPU count, else the highest CPU seen + 1.
	CPUs       int
	CPUsStated bool
	// HZ is inferred from the spacing of the tick's expiries (0: no tick
	// seen often enough to say); HZStated when it is instead the kernel's
	// CONFIG_HZ, stated by a capture bundle's manifest.
	HZ       int
	HZStated bool
	// First and Last are the first and last event times (trace clock).
	First, Last int64
	// Offset is the timers' CLOCK_MONOTONIC minus the trace clock, from the
	// first tick expiry (hrtimer_expire_entry's now= against its timestamp);
	// OffsetKnown is false when the capture has no tick expiry (then 0).
	Offset      int64
	OffsetKnown bool
	// Tick is the tick's callback as the capture names it: a TickFunctions
	// name, or for captures with raw addresses (babeltrace) the callback
	// whose timers expire one tick apart most often. A capture that names
	// a TickFunctions callback anywhere has no other tick, even when that
	// one never expires in it (a tickless CPU woken by a 1 ms hrtimer).
	Tick string
	// Periods holds, per hrtimer callback whose timers expire again without
	// a traced start (HRTIMER_RESTART), the median spacing of those
	// expiries.
	Periods map[string]int64
	// WheelPeriods is the same for timer_list callbacks, in jiffies: a real
	// kernel traces every mod_timer(), so only tickemu's own trace (a
	// declared re-arm period) has them.
	WheelPeriods map[string]int64
	// Deferrable holds the timer_list callbacks inferred deferrable in a
	// capture whose timer_start has no flags (kernels before 4.2 kept
	// TIMER_DEFERRABLE in the low bits of timer->base, which no event
	// shows): at least 3 expiries with their start in the capture, more
	// than half of them 2 jiffies or more late. A NO_HZ kernel programs the
	// stopped tick for the next timer that is not deferrable
	// (__next_timer_interrupt() skips tbase_get_deferrable() ones), so a
	// deferrable timer on an idle CPU waits for the next tick the CPU takes
	// anyway; an ordinary timer expires at its jiffy.
	Deferrable map[string]bool
	// SelfRearm holds the timer_list callbacks that re-arm their own timer:
	// at least 3 expiries, 90% of them followed within 20 us on the same
	// CPU by a start of the same timer (mod_timer() from the callback).
	SelfRearm map[string]bool
	// RCUGPTimers holds the timer_list timers (by pointer) an RCU
	// grace-period kthread (RCUGPKthreads) started as process_timeout: its
	// force-quiescent-state waits, which a model with its own RCU makes
	// itself (framework/kernel/rcu.go).
	RCUGPTimers map[uint64]bool
	// PreArmed lists the timers whose first event is their expiry: armed
	// before the capture began.
	PreArmed []PreArmed
	// Tasks are the tasks that start hrtimer_wakeup sleepers or are switched
	// in, one per (pid, CPU), in order of appearance (at most MaxTasks).
	Tasks  []TaskInfo
	Events int64
	Stats  traceimport.Stats
}

// TaskInfo is a task the capture shows, on one CPU.
type TaskInfo struct {
	PID, CPU int
	Comm     string
	// ZeroSlack is set when its sleepers had no slack (an RT task:
	// hrtimer_nanosleep() gives RT tasks none).
	ZeroSlack bool
	Sleeps    int64
	// EarlyWakes counts its hrtimer_wakeup sleeps that ended before their
	// timer expired: the timer cancelled while queued, then started again
	// or never expired (a futex or poll wait woken by another task, a
	// sleep a signal ended), not the cancel kernels before f2e388a019e4
	// trace right before the expiry.
	EarlyWakes int64
	// Prio is the kernel priority the capture last showed for it
	// (sched_switch's prev_prio/next_prio, the wakeup events' prio: 0-99
	// real-time, MAX_RT_PRIO-1 - rt_priority; 100-139 SCHED_OTHER, 120 +
	// nice); -1 when no event gave one.
	Prio int
}

// MaxTasks bounds Capture.Tasks, MaxPreArmed Capture.PreArmed.
const (
	MaxTasks    = 4096
	MaxPreArmed = 1 << 16
)

// PreArmed is a timer the capture first shows expiring.
type PreArmed struct {
	Wheel    bool
	Timer    uint64
	Function string
	CPU      int
	Time     int64 // of its first expiry (trace clock)
	Now      int64 // its now= (ns or jiffies)
}

// BackwardsTolerance is how far an event may be older than the latest one
// before it: tracefs and trace-cmd merge the per-CPU buffers in time order,
// so a real capture goes back by nothing, or by the little a CPU's clock
// lags another's on a machine whose trace clock is not synchronised (the
// "local" clock: microseconds). Further back is a capture made of two runs
// (two files concatenated, a second `cat trace` appended) or per-CPU
// buffers written one after the other, which a replay would apply as one
// timeline: it is refused.
const BackwardsTolerance = 1_000_000

// BackwardsError is a capture whose timestamps go back by more than
// BackwardsTolerance.
type BackwardsError struct {
	Line, LastLine int64 // the event and the latest event before it
	Time, Last     int64 // their timestamps (trace clock, ns)
}

func (e *BackwardsError) Error() string {
	return fmt.Sprintf("line %d: field \"timestamp\": %s s is %s s before line %d's %s s (more than %d ms back): "+
		"the capture holds two runs or unmerged per-CPU buffers; split it where the time goes back, or sort it by timestamp",
		e.Line, traceSecs(e.Time), traceSecs(e.Last-e.Time), e.LastLine, traceSecs(e.Last), BackwardsTolerance/1_000_000)
}

func traceSecs(ns int64) string { return fmt.Sprintf("%d.%06d", ns/1e9, (ns%1e9)/1e3) }

// Span is the capture's length.
func (c *Capture) Span() int64 { return c.Last - c.First }

// Lead is where a replay on a machine with tick period tickNsec puts the
// capture's first event: the capture's CLOCK_MONOTONIC time of it modulo the
// tick period, so that the model's tick grid (boot at a tick boundary, the
// tick on multiples of TICK_NSEC) falls where the capture's does. 0 without
// a clock offset.
func (c *Capture) Lead(tickNsec int64) int64 {
	if !c.OffsetKnown || tickNsec <= 0 {
		return 0
	}
	m := (c.First + c.Offset) % tickNsec
	if m < 0 {
		m += tickNsec
	}
	return m
}

// TickNsec is the capture's tick period (HZ 1000 when not inferred).
func (c *Capture) TickNsec() int64 {
	if c.HZ == 0 {
		return ktime.TickNsec(1000)
	}
	return ktime.TickNsec(c.HZ)
}

// IsTick reports whether fn is the capture's tick callback.
func (c *Capture) IsTick(fn string) bool { return TickFunctions[fn] || (c.Tick != "" && fn == c.Tick) }

type scanTimer struct {
	lastNow  int64
	lastTime int64
	expired  bool // last event was an expiry (no start since)
	seen     bool
	// armed: a wheel timer started in the capture and not expired since,
	// to expire at startExp (jiffies).
	armed    bool
	startExp int64
	// justExpired: a wheel timer expired at lastTime on expCPU, no start
	// since.
	justExpired bool
	expCPU      int
}

// selfTally counts a wheel callback's expiries and those its own start
// follows within selfRearmWindow.
type selfTally struct{ n, self int }

const selfRearmWindow = 20_000

// lateTally counts a wheel callback's expiries whose start is in the
// capture, and those 2 jiffies or more late.
type lateTally struct{ n, late int }

const maxSpacings = 64

// levelZeroSpan is the number of jiffies the 4.8+ wheel's level 0 covers
// (LVL_SIZE, 64 buckets of one jiffy): a timer due sooner is queued one
// jiffy late and no further rounded.
const levelZeroSpan = 64

// maxScanTimers bounds the first pass's per-timer table: past it, new
// pointers are not tracked (their restarts and first expiries go unseen).
const maxScanTimers = 1 << 20

// Scan reads a whole capture once (constant memory in the number of events;
// the tables grow with the number of distinct timers and callbacks).
func Scan(r traceimport.Reader) (*Capture, error) {
	c := &Capture{Periods: map[string]int64{}, WheelPeriods: map[string]int64{}, Deferrable: map[string]bool{}, SelfRearm: map[string]bool{}, RCUGPTimers: map[uint64]bool{}}
	wheelSpacings := map[string][]int64{}
	// wheelRound: per timer_list callback, bucket_expiry - expires of its
	// starts less than a level-0 span ahead (the 4.8+ wheel queues a
	// level-0 timer one jiffy past its expiry, calc_index()); -1 unseen.
	wheelRound := map[string]int64{}
	late := map[string]*lateTally{}
	selfs := map[string]*selfTally{}
	flagsTraced := false
	timers := map[tkey]*scanTimer{}
	running := Running{}
	spacings := map[string][]int64{} // per callback, silent-restart spacings
	votes := map[string]map[int]int{}
	firstOff := map[string]int64{} // per callback, its first expiry's now - time
	var anyOff int64
	anyOffKnown := false
	taskIdx := map[[2]int]int{}
	task := func(pid, cpu int, comm string) *TaskInfo {
		k := [2]int{pid, cpu}
		if i, ok := taskIdx[k]; ok {
			return &c.Tasks[i]
		}
		if len(c.Tasks) >= MaxTasks || pid <= 0 {
			return nil
		}
		taskIdx[k] = len(c.Tasks)
		c.Tasks = append(c.Tasks, TaskInfo{PID: pid, CPU: cpu, Comm: strings.Clone(comm), ZeroSlack: true, Prio: -1})
		return &c.Tasks[len(c.Tasks)-1]
	}
	maxCPU := -1
	first := true
	// namedTick: a start or expiry of a TickFunctions callback is in the
	// capture, which then names its tick and no other callback is taken
	// for it (a 1 ms hrtimer of a tickless CPU has one-tick spacings too).
	namedTick := false
	var lastLine int64
	// sleepers: the task (index into c.Tasks) of each hrtimer_wakeup timer
	// queued now, and whether a cancel of it waits for its next event.
	type sleeperTimer struct {
		task      int
		cancelled bool
	}
	sleepers := map[uint64]*sleeperTimer{}
	early := func(ptr uint64) {
		if st := sleepers[ptr]; st != nil {
			if st.cancelled {
				c.Tasks[st.task].EarlyWakes++
			}
			delete(sleepers, ptr)
		}
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		c.Events++
		if first {
			c.First, first = e.Time, false
		}
		if e.Time < c.Last-BackwardsTolerance {
			return nil, &BackwardsError{Line: e.Line, Time: e.Time, LastLine: lastLine, Last: c.Last}
		}
		if e.Time >= c.Last {
			c.Last, lastLine = e.Time, e.Line
		}
		maxCPU = max(maxCPU, e.CPU)
		running.Update(e)
		if (e.Kind == traceimport.HRStart || e.Kind == traceimport.HRExpireEntry) && TickFunctions[e.Function] {
			namedTick = true
		}
		switch e.Kind {
		case traceimport.HRStart, traceimport.TimerStart:
			k := tkey{e.Timer, e.Kind == traceimport.TimerStart}
			st := timers[k]
			if st == nil {
				st = &scanTimer{}
				if len(timers) < maxScanTimers {
					timers[k] = st
				}
			}
			if e.Kind == traceimport.HRStart && st.expired && e.Time-st.lastTime < 200_000 {
				// A tick re-armed by its own handler's path right after
				// its expiry: expires - now is a little under one tick.
				d := e.Expires - st.lastNow
				v := votes[e.Function]
				if v == nil {
					v = map[int]int{}
					votes[e.Function] = v
				}
				for _, hz := range []int{100, 250, 300, 1000} {
					if tn := ktime.TickNsec(hz); d > tn-tn/10 && d <= tn {
						v[hz] += 3 // as good as three spacings: the start names the period
					}
				}
			}
			st.seen, st.expired = true, false
			if e.Kind == traceimport.TimerStart {
				if st.justExpired && e.CPU == st.expCPU && e.Time-st.lastTime <= selfRearmWindow {
					if t := selfs[e.Function]; t != nil {
						t.self++
					}
				}
				st.justExpired = false
				st.armed, st.startExp = true, e.Expires
				if e.BucketExpiry > 0 && e.HasTimeout && e.Timeout >= 0 && e.Timeout < levelZeroSpan && len(wheelRound) < 1<<12 {
					wheelRound[e.Function] = e.BucketExpiry - e.Expires
				}
				flagsTraced = flagsTraced || e.FlagsTraced
				if RCUGPWait(e, running) && len(c.RCUGPTimers) < maxScanTimers {
					c.RCUGPTimers[e.Timer] = true
				}
			}
			if e.Kind == traceimport.HRStart && e.Function == "hrtimer_wakeup" {
				early(e.Timer)
				if ti := task(e.PID, e.CPU, e.Comm); ti != nil {
					ti.Sleeps++
					if e.Expires != e.SoftExpires {
						ti.ZeroSlack = false
					}
					if len(sleepers) < maxScanTimers {
						sleepers[e.Timer] = &sleeperTimer{task: taskIdx[[2]int{e.PID, e.CPU}]}
					}
				}
			}
		case traceimport.SchedSwitch:
			if ti := task(e.NextPID, e.CPU, e.NextComm); ti != nil && e.NextPrio >= 0 {
				ti.Prio = e.NextPrio
			}
			if i, ok := taskIdx[[2]int{e.PrevPID, e.CPU}]; ok && e.PrevPrio >= 0 {
				c.Tasks[i].Prio = e.PrevPrio
			}
		case traceimport.HRCancel, traceimport.TimerCancel:
			if st := sleepers[e.Timer]; st != nil && e.Kind == traceimport.HRCancel {
				st.cancelled = true
			}
			// A cancel does not make a timer seen: before f2e388a019e4 the
			// kernel traces one in __run_hrtimer() / expire_timers() right
			// before the expiry (debug_deactivate()), so a timer armed before
			// the capture first shows as cancel + expiry; one that is really
			// cancelled does not expire again without a traced start.
		case traceimport.HRExpireEntry, traceimport.TimerExpireEntry:
			wheel := e.Kind == traceimport.TimerExpireEntry
			if !wheel {
				delete(sleepers, e.Timer) // expired: whatever cancel came first was debug_deactivate()'s
			}
			k := tkey{e.Timer, wheel}
			st := timers[k]
			if st == nil {
				st = &scanTimer{}
				if len(timers) < maxScanTimers {
					timers[k] = st
				}
			}
			if !st.seen && len(c.PreArmed) < MaxPreArmed {
				c.PreArmed = append(c.PreArmed, PreArmed{Wheel: wheel, Timer: e.Timer, Function: e.Function, CPU: e.CPU, Time: e.Time, Now: e.Now})
			}
			if wheel {
				t := selfs[e.Function]
				if t == nil && len(selfs) < 1<<12 {
					t = &selfTally{}
					selfs[e.Function] = t
				}
				if t != nil {
					t.n++
				}
			}
			if wheel && st.armed {
				lt := late[e.Function]
				if lt == nil && len(late) < 1<<12 {
					lt = &lateTally{}
					late[e.Function] = lt
				}
				if lt != nil {
					lt.n++
					if e.Now-st.startExp >= 2 {
						lt.late++
					}
				}
				st.armed = false
			}
			if wheel && st.expired && e.Now > st.lastNow {
				if sp := wheelSpacings[e.Function]; len(sp) < maxSpacings {
					wheelSpacings[e.Function] = append(sp, e.Now-st.lastNow)
				}
			}
			if !wheel {
				if st.expired && e.Now > st.lastNow {
					d := e.Now - st.lastNow
					if s := spacings[e.Function]; len(s) < maxSpacings {
						spacings[e.Function] = append(s, d)
					}
					v := votes[e.Function]
					if v == nil {
						v = map[int]int{}
						votes[e.Function] = v
					}
					for _, hz := range []int{100, 250, 300, 1000} {
						tn := ktime.TickNsec(hz)
						if d > tn-tn/20 && d < tn+tn/20 {
							v[hz]++
						}
					}
				}
				if _, ok := firstOff[e.Function]; !ok && len(firstOff) < 1<<12 {
					firstOff[e.Function] = e.Now - e.Time
				}
				if !anyOffKnown {
					anyOff, anyOffKnown = e.Now-e.Time, true
				}
			}
			st.seen, st.expired, st.lastNow, st.lastTime = true, true, e.Now, e.Time
			st.justExpired, st.expCPU = wheel, e.CPU
		}
	}
	for ptr := range sleepers {
		early(ptr) // cancelled and never expired
	}
	c.Stats = r.Stats()
	c.Format = r.Header().Format
	c.CPUs = r.Header().CPUs
	c.CPUsStated = c.CPUs > 0
	if c.CPUs < maxCPU+1 {
		c.CPUs, c.CPUsStated = maxCPU+1, false
	}
	if c.CPUs < 1 {
		c.CPUs = 1
	}
	if c.CPUs > config.MaxCPUs {
		// The replay would advise machine.cpus = that many, over the
		// limit every configuration is held to.
		return nil, fmt.Errorf("the capture names CPU %d (or a header of %d CPUs); tickemu emulates at most %d (machine.cpus)", c.CPUs-1, c.CPUs, config.MaxCPUs)
	}
	// The tick: a known name, else the callback with the most one-tick
	// spacings (at least 3).
	best, bestVotes, bestHZ := "", 0, 0
	names := make([]string, 0, len(votes))
	for fn := range votes {
		names = append(names, fn)
	}
	sort.Strings(names)
	for _, fn := range names {
		if namedTick && !TickFunctions[fn] {
			continue
		}
		for _, hz := range []int{100, 250, 300, 1000} {
			n := votes[fn][hz]
			if TickFunctions[fn] {
				n += 1 << 30
			}
			if n > bestVotes && votes[fn][hz] >= 3 {
				best, bestVotes, bestHZ = fn, n, hz
			}
		}
	}
	if best != "" {
		c.Tick, c.HZ = best, bestHZ
	}
	for _, fn := range names {
		if c.IsTick(fn) {
			continue
		}
		if s := spacings[fn]; len(s) >= 2 {
			sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
			c.Periods[fn] = s[len(s)/2]
		}
	}
	wnames := make([]string, 0, len(wheelSpacings))
	for fn := range wheelSpacings {
		wnames = append(wnames, fn)
	}
	sort.Strings(wnames)
	for _, fn := range wnames {
		if s := wheelSpacings[fn]; len(s) >= 2 {
			sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
			p := s[len(s)/2]
			// The spacing of a level-0 timer re-armed at jiffies + period
			// from its callback is the period plus the wheel's rounding
			// (its starts' bucket_expiry - expires): the period is what
			// the replay declares, and the model's wheel rounds it again.
			if r, ok := wheelRound[fn]; ok && p < levelZeroSpan && p-r > 0 {
				p -= r
			}
			c.WheelPeriods[fn] = p
		}
	}
	for fn, t := range selfs {
		if t.n >= 3 && 10*t.self >= 9*t.n {
			c.SelfRearm[fn] = true
		}
	}
	if !flagsTraced {
		for fn, lt := range late {
			if lt.n >= 3 && 2*lt.late > lt.n {
				c.Deferrable[fn] = true
			}
		}
	}
	if off, ok := firstOff[c.Tick]; ok && c.Tick != "" {
		c.Offset, c.OffsetKnown = off, true
	} else if anyOffKnown {
		// No tick: the first hrtimer expiry (most run on CLOCK_MONOTONIC).
		c.Offset, c.OffsetKnown = anyOff, true
	}
	return c, nil
}
