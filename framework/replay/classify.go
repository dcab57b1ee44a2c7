// Package replay turns a kernel capture (framework/traceimport) into timer
// operations classified the way docs/replay.md writes the counting rules, and
// scores a capture and a model run against each other with those rules:
// per callback function the starts, expiries, re-arms before expiry,
// cancels and expiry lateness, and for the tick its expiries, its arms more
// than one tick ahead and the tick stops.
package replay

import (
	"sort"

	"github.com/tickemu/tickemu/framework/traceimport"
)

// OpKind is what a classified operation did to a timer.
type OpKind uint8

// Operations.
const (
	OpStart OpKind = iota + 1
	OpCancel
	OpExpire
	OpTickStop
)

// Op is one timer operation, classified.
type Op struct {
	Kind OpKind
	// Wheel is true for a timer_list timer (jiffies), false for an hrtimer.
	Wheel bool
	Time  int64 // trace clock, ns
	CPU   int
	PID   int
	Comm  string
	Timer uint64
	// Function is the callback ("" for a cancel of a timer never seen
	// started or expired).
	Function string
	// Start: Expires/SoftExpires (hrtimer: ns of its clock; wheel:
	// jiffies), Timeout (wheel), Mode, Flags and TimerCPU as traced.
	Expires, SoftExpires, Timeout int64
	HasTimeout                    bool
	Mode, Flags                   string
	TimerCPU                      int
	// Rearm marks a start of a timer that was still queued.
	Rearm bool
	// Expire: Now (ns or jiffies) and, when the arming start is in the
	// capture, Lateness = Now - Expires of that start (ns or jiffies).
	Now         int64
	Lateness    int64
	HasLateness bool
	// TickStop: Success.
	Success int
}

// RestartWindow is how close a cancel and the next event of the same timer
// on the same CPU must be for the cancel to be part of that event: the
// kernel traces the removal of a queued timer (debug_deactivate(), i.e.
// trace_hrtimer_cancel / trace_timer_cancel) inside the same call as the
// restart or the expiry, microseconds apart with nothing else traced between.
const RestartWindow = 50_000

// Options configure a Classifier.
type Options struct {
	// Restarts, when set, reports the callbacks that restart their timer
	// (HRTIMER_RESTART) without a traced start: after their expiry the timer
	// counts as queued, so a start that follows without a traced cancel is a
	// re-arm. A trace that records the removal of a queued timer (kernels
	// before f2e388a019e4) or was_armed (since) needs none; tickemu's own trace, which
	// records neither, does.
	Restarts func(function string) bool
	// ExplicitCancels says the trace records a cancel only where the timer
	// was cancelled: tickemu's own trace, whose mod_timer() /
	// hrtimer_start() of a queued timer and whose expiries trace no removal.
	// A cancel is then a cancel at once, never paired with the next start
	// or expiry of the timer (a del_timer(), setup and mod_timer() of a
	// timer on the stack, as schedule_timeout() does, would else count as a
	// re-arm).
	ExplicitCancels bool
}

// timerState is what the classifier knows of a queued or just expired
// timer; dropped when the timer is neither, so the table holds the timers
// queued at the moment.
type timerState struct {
	queued  bool
	expires int64
	known   bool // expires is from a start in the capture
	fn      string
}

// Classifier applies the counting rules to a stream of events.
type Classifier struct {
	o       Options
	timers  map[tkey]*timerState
	pending map[int]*Op // a cancel per CPU, waiting for its CPU's next event
	out     []Op
}

type tkey struct {
	ptr   uint64
	wheel bool
}

// NewClassifier returns a classifier.
func NewClassifier(o Options) *Classifier {
	return &Classifier{o: o, timers: map[tkey]*timerState{}, pending: map[int]*Op{}}
}

// Feed classifies e and returns the operations it completed (valid until the
// next call).
func (c *Classifier) Feed(e *traceimport.Event) []Op {
	c.out = c.out[:0]
	if len(c.pending) > 0 {
		c.resolveStale(e.Time)
	}
	var matched *Op // the pending cancel e continues
	if p := c.pending[e.CPU]; p != nil {
		delete(c.pending, e.CPU)
		wheel := e.Kind == traceimport.TimerStart || e.Kind == traceimport.TimerExpireEntry
		cont := (e.Kind == traceimport.HRStart || e.Kind == traceimport.HRExpireEntry || wheel) &&
			e.Timer == p.Timer && wheel == p.Wheel && e.Time-p.Time <= RestartWindow
		if e.Kind == traceimport.HRStart && e.WasArmed == 0 {
			// A kernel that traces was_armed (f2e388a019e4) traces no
			// removal in hrtimer_start(), and this start found the timer
			// not queued: the cancel before it was a cancel.
			cont = false
		}
		if cont {
			matched = p
		} else {
			c.cancelled(p)
		}
	}
	switch e.Kind {
	case traceimport.HRStart, traceimport.TimerStart:
		c.start(e, matched != nil)
	case traceimport.HRCancel, traceimport.TimerCancel:
		wheel := e.Kind == traceimport.TimerCancel
		k := tkey{e.Timer, wheel}
		st := c.timers[k]
		op := &Op{Kind: OpCancel, Wheel: wheel, Time: e.Time, CPU: e.CPU, PID: e.PID, Comm: e.Comm, Timer: e.Timer, TimerCPU: -1}
		if st != nil {
			op.Function = st.fn
			st.queued = false
		}
		if c.o.ExplicitCancels {
			c.cancelled(op)
		} else {
			c.pending[e.CPU] = op
		}
	case traceimport.HRExpireEntry, traceimport.TimerExpireEntry:
		wheel := e.Kind == traceimport.TimerExpireEntry
		k := tkey{e.Timer, wheel}
		op := Op{Kind: OpExpire, Wheel: wheel, Time: e.Time, CPU: e.CPU, PID: e.PID, Comm: e.Comm, Timer: e.Timer,
			Function: e.Function, Now: e.Now, TimerCPU: -1}
		st := c.timers[k]
		if st != nil && st.known {
			op.Lateness, op.HasLateness = e.Now-st.expires, true
		}
		c.out = append(c.out, op)
		if c.o.Restarts != nil && c.o.Restarts(e.Function) {
			// Re-queued by its callback: queued, expiry unknown.
			c.timers[k] = &timerState{queued: true, fn: e.Function}
		} else {
			delete(c.timers, k)
		}
	case traceimport.TickStop:
		c.out = append(c.out, Op{Kind: OpTickStop, Time: e.Time, CPU: e.CPU, Success: e.Success, TimerCPU: -1})
	}
	return c.out
}

func (c *Classifier) start(e *traceimport.Event, afterCancel bool) {
	wheel := e.Kind == traceimport.TimerStart
	k := tkey{e.Timer, wheel}
	st := c.timers[k]
	rearm := afterCancel || (st != nil && st.queued) || e.WasArmed == 1
	if e.WasArmed == 0 {
		rearm = false
	}
	c.out = append(c.out, Op{Kind: OpStart, Wheel: wheel, Time: e.Time, CPU: e.CPU, PID: e.PID, Comm: e.Comm, Timer: e.Timer,
		Function: e.Function, Expires: e.Expires, SoftExpires: e.SoftExpires, Timeout: e.Timeout, HasTimeout: e.HasTimeout,
		Mode: e.Mode, Flags: e.Flags, TimerCPU: e.TimerCPU, Rearm: rearm})
	if st == nil {
		st = &timerState{}
		c.timers[k] = st
	}
	*st = timerState{queued: true, expires: e.Expires, known: true, fn: e.Function}
}

// resolveStale turns the pending cancels older than RestartWindow into
// cancels, in (time, CPU) order.
func (c *Classifier) resolveStale(now int64) {
	var stale []*Op
	for cpu, p := range c.pending {
		if now-p.Time > RestartWindow {
			stale = append(stale, p)
			delete(c.pending, cpu)
		}
	}
	sortOps(stale)
	for _, p := range stale {
		c.cancelled(p)
	}
}

// cancelled emits p as a cancel and forgets the timer unless it was queued
// again meanwhile.
func (c *Classifier) cancelled(p *Op) {
	c.out = append(c.out, *p)
	k := tkey{p.Timer, p.Wheel}
	if st := c.timers[k]; st != nil && !st.queued {
		delete(c.timers, k)
	}
}

// Finish returns the cancels still pending at the end of the capture.
func (c *Classifier) Finish() []Op {
	c.out = c.out[:0]
	c.resolveStale(1 << 62)
	return c.out
}

func sortOps(ops []*Op) {
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].Time != ops[j].Time {
			return ops[i].Time < ops[j].Time
		}
		return ops[i].CPU < ops[j].CPU
	})
}
