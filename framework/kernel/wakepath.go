package kernel

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Worst-case attribution. When a workload asks for it (RecordSpans), every CPU
// keeps a short log of what it did: idle, the idle exit, irq entry,
// hrtimer_interrupt(), each softirq vector, tick-sched work and task
// segments. WakePath intersects that log with one wakeup's window (from the
// task's target time to its clock read) and names where the latency went, the
// way one reads a trace around a cyclictest Max: the wheel's catch-up in
// TIMER_SOFTIRQ, a deep C-state exit, the broadcast hand-off, an hrtimer hang,
// another task. Nothing is logged when no workload asked, so the hot path
// pays one branch.

// SpanKind is what a CPU was doing during a span.
type SpanKind uint8

// Span kinds.
const (
	SpanIdle          SpanKind = iota // in an idle state (Detail: the state; "poll" for polling)
	SpanIdleExit                      // the idle state's exit latency
	SpanBroadcastExit                 // tick_broadcast_exit() on idle exit
	SpanIRQEntry                      // irq entry (and tick_nohz_irq_enter()'s jiffies update)
	SpanHRTimer                       // hrtimer_interrupt() with its hard callbacks
	SpanTick                          // the low-res tick handler
	SpanBroadcastIRQ                  // the broadcast device's interrupt (tick_handle_oneshot_broadcast())
	SpanIPI                           // other IPI handlers (clock_was_set retrigger)
	SpanIRQExit                       // irq exit
	SpanSoftirq                       // one softirq vector (Detail: the vector's name)
	SpanTickSched                     // tick-sched work outside irq: tick stop on idle entry, restart on exit
	SpanTask                          // a task segment (Pid, Detail: comm)
	SpanDeviceIRQ                     // a device's interrupt handler (Kernel.DeviceInterrupt)
	numSpanKinds
)

var spanNames = [numSpanKinds]string{"idle", "idle exit", "broadcast exit", "irq entry", "hrtimer_interrupt",
	"tick", "broadcast irq", "ipi", "irq exit", "softirq", "tick-sched", "task", "device irq"}

func (k SpanKind) String() string { return spanNames[k] }

// Span is one stretch of a CPU's time.
type Span struct {
	Kind       SpanKind
	Start, End ktime.Time
	Detail     string // idle state, softirq vector or comm
	Pid        int    // SpanTask
	Gap        uint64 // SpanSoftirq TIMER: jiffies the wheel caught up
	Hang       int64  // SpanHRTimer: the hang delay the interrupt programmed (0: no hang)
}

// spanLogSize bounds each CPU's span log: enough for the few milliseconds
// around a wakeup on a busy CPU.
const spanLogSize = 256

// spanRec is a logged span. It holds no pointer, so that logging one is a
// plain copy (no GC write barrier on the hot path); names are looked up
// when a span is read (Spans).
type spanRec struct {
	start, end ktime.Time
	// arg is the kind's number: for SpanSoftirq the TIMER vector's
	// catch-up in jiffies, for SpanHRTimer the hang delay in ns (no span
	// has both).
	arg  uint64
	code int32 // idle state index (-1 poll), softirq vector, or pid
	kind SpanKind
}

// spanLog is a ring of a CPU's recent spans (CPU.spanBuf).
type spanLog struct {
	s   *[spanLogSize]spanRec
	n   uint64 // spans ever added
	gap uint64 // the last TIMER_SOFTIRQ's catch-up gap
}

func (l *spanLog) add(s spanRec) {
	if s.end <= s.start {
		return
	}
	l.s[l.n%spanLogSize] = s
	l.n++
}

// RecordSpans turns the per-CPU span logs on (a workload that reports its
// worst case asks in Setup). The CPUs' logs are one slab.
func (k *Kernel) RecordSpans() {
	if k.cpus[0].spans != nil {
		return // on already
	}
	rings := make([][spanLogSize]spanRec, len(k.cpus))
	for i, c := range k.cpus {
		c.spanBuf = spanLog{s: &rings[i]}
		c.spans = &c.spanBuf
	}
}

// span logs one span on c when logging is on.
func (c *CPU) span(kind SpanKind, start, end ktime.Time, code int32) {
	if c.spans != nil {
		c.spans.add(spanRec{kind: kind, start: start, end: end, code: code})
	}
}

// public names a logged span.
func (k *Kernel) public(r spanRec) Span {
	s := Span{Kind: r.kind, Start: r.start, End: r.end}
	switch r.kind {
	case SpanHRTimer:
		s.Hang = int64(r.arg)
	case SpanIdle, SpanIdleExit:
		s.Detail = "poll"
		if i := int(r.code); i >= 0 && i < len(k.m.IdleStates) {
			s.Detail = k.m.IdleStates[i].Name
		}
	case SpanSoftirq:
		s.Gap = r.arg
		if v := int(r.code); v >= 0 && v < nrSoftirqs {
			s.Detail = softirqNames[v]
		}
	case SpanTask:
		s.Pid = int(r.code)
		for _, t := range k.tasks {
			if t.Pid == s.Pid {
				s.Detail = t.Comm
				break
			}
		}
	}
	return s
}

// Spans returns c's logged spans that overlap [from, to], by start time, and
// whether the log reaches back to from (false: older spans were overwritten).
func (k *Kernel) Spans(cpu int, from, to ktime.Time) ([]Span, bool) {
	return k.appendSpans(nil, cpu, from, to)
}

// appendSpans is Spans appending to dst.
func (k *Kernel) appendSpans(dst []Span, cpu int, from, to ktime.Time) ([]Span, bool) {
	l := k.cpus[cpu].spans
	if l == nil {
		return dst, false
	}
	n := l.n
	first := uint64(0)
	if n > spanLogSize {
		first = n - spanLogSize
	}
	m := 0
	for i := first; i < n; i++ {
		if r := &l.s[i%spanLogSize]; r.end > from && r.start < to {
			m++
		}
	}
	out := slices.Grow(dst, m) // at its length: a thread's first worst case allocates it once
	complete := n <= spanLogSize
	for i := first; i < n; i++ {
		r := l.s[i%spanLogSize]
		if r.end > from && r.start < to {
			out = append(out, k.public(r))
		}
		if r.start <= from {
			complete = true
		}
	}
	slices.SortStableFunc(out[len(dst):], func(a, b Span) int { return cmp.Compare(a.Start, b.Start) })
	return out, complete
}

// WakePart is one named part of a wakeup's latency.
type WakePart struct {
	Cause  string `json:"cause"`            // e.g. "TIMER_SOFTIRQ", "idle exit C6", "irq entry"
	NS     int64  `json:"ns"`               // time spent in it
	Detail string `json:"detail,omitempty"` // e.g. "catch-up 303678 jiffies"
	// Gap is the wheel's catch-up for a TIMER_SOFTIRQ part (jiffies).
	Gap uint64 `json:"catchup_jiffies,omitempty"`
}

// WakePath is where one wakeup's latency went.
type WakePath struct {
	// At is the sim time the task was due (its target); CPU its CPU.
	At  ktime.Time `json:"at_ns"`
	CPU int        `json:"cpu"`
	// LatencyNS is the measured latency (target to clock read).
	LatencyNS int64 `json:"latency_ns"`
	// Parts, largest first; their sum is LatencyNS. "unattributed" is time
	// the span log does not cover (it reached back less far than the window).
	Parts []WakePart `json:"parts"`
	// Spans is the CPU's timeline over the window, for drawing it.
	Spans []Span `json:"-"`
}

// WakePath sets *wp to where the latency of t's last wakeup went, latency ns
// measured up to t's last clock read: the window is [read - latency, read].
// The idle time before the last sleep's hard expiry (target plus timer
// slack) is slack, after it the interrupt's delay. wp's Parts and Spans are
// overwritten in place (a workload that keeps only its latest worst case
// allocates them once). Span logging must be on (RecordSpans).
func (k *Kernel) WakePath(wp *WakePath, t *Task, latency int64) {
	c := t.cpu
	end := t.clockReadAt
	target := end - ktime.Time(latency)
	*wp = WakePath{At: target, CPU: c.id, LatencyNS: latency, Parts: wp.Parts[:0], Spans: wp.Spans[:0]}
	if latency <= 0 {
		wp.Parts, wp.Spans = nil, nil
		return
	}
	spans, _ := k.appendSpans(wp.Spans, c.id, target, end)
	wp.Spans = spans
	w := wakeAttribution{t: t, hard: max(t.lastHardExpiry, target), broadcast: t.wakeBroadcast > 0, parts: wakeParts{wp.Parts}}
	covered := int64(0)
	cursor := target
	for _, s := range spans {
		a, b := max(s.Start, cursor), min(s.End, end) // spans of one CPU do not overlap; clip any rounding
		if b <= a {
			continue
		}
		cursor = b
		covered += int64(b - a)
		w.span(s, a, b)
	}
	w.parts.add("unattributed", "", wp.LatencyNS-covered, 0)
	if wp.Parts = w.parts.largestFirst(); len(wp.Parts) == 0 {
		wp.Parts = nil // as a fresh WakePath (JSON null); a window always has a part
	}
}

// wakeAttribution names the parts of one wakeup's window, span by span.
type wakeAttribution struct {
	t         *Task
	hard      ktime.Time // the sleep's hard expiry, not before the window
	broadcast bool       // the wakeup came through the tick broadcast
	hung      bool       // an hrtimer_interrupt() in the window hung
	parts     wakeParts
}

// span attributes [a, b), the part of span s inside the window.
func (w *wakeAttribution) span(s Span, a, b ktime.Time) {
	d := int64(b - a)
	switch s.Kind {
	case SpanIdle:
		w.idle(a, b)
	case SpanIdleExit:
		w.parts.add("idle exit "+s.Detail, "", d, 0)
	case SpanBroadcastExit:
		w.parts.add("broadcast hand-off", "tick_broadcast_exit", d, 0)
	case SpanIRQEntry, SpanIRQExit, SpanIPI, SpanBroadcastIRQ, SpanTick, SpanDeviceIRQ:
		w.parts.add("irq", "", d, 0)
	case SpanHRTimer:
		if s.Hang > 0 {
			w.hung = true
			w.parts.add("hrtimer_interrupt", "hang, next try in "+strconv.FormatInt(s.Hang/1000, 10)+" us", d, 0)
		} else {
			w.parts.add("hrtimer_interrupt", "", d, 0)
		}
	case SpanSoftirq:
		det := ""
		if s.Gap > 1 {
			det = "catch-up " + strconv.FormatUint(s.Gap, 10) + " jiffies"
		}
		w.parts.add(s.Detail+"_SOFTIRQ", det, d, s.Gap)
	case SpanTickSched:
		w.parts.add("tick-sched", "", d, 0)
	case SpanTask:
		if s.Pid == w.t.Pid {
			w.parts.add("return to user", "", d, 0) // the rest of the syscall, the context switch, the clock read
		} else {
			w.parts.add("preempted", s.Detail+"-"+strconv.Itoa(s.Pid), d, 0)
		}
	}
}

// idle attributes idle time [a, b): before the hard expiry the timer was not
// due (slack); after it the interrupt was on its way, late because of a hang,
// the broadcast hand-off or the interrupt's own delay.
func (w *wakeAttribution) idle(a, b ktime.Time) {
	pre := int64(0)
	if a < w.hard {
		pre = int64(min(b, w.hard) - a)
	}
	w.parts.add("timer slack", "", pre, 0)
	late := int64(b-a) - pre
	switch {
	case w.hung:
		w.parts.add("hrtimer hang delay", "", late, 0)
	case w.broadcast:
		w.parts.add("broadcast hand-off", "waiting for the broadcast IPI", late, 0)
	default:
		w.parts.add("timer interrupt delay", "", late, 0)
	}
}

// wakeParts sums time by (cause, detail) in order of first appearance (a
// wakeup has a handful of parts: a list, not a map).
type wakeParts struct {
	ps []WakePart
}

// add counts ns (if positive) to the part (cause, detail), keeping its
// largest catch-up gap.
func (ps *wakeParts) add(cause, detail string, ns int64, gap uint64) {
	if ns <= 0 {
		return
	}
	i := slices.IndexFunc(ps.ps, func(p WakePart) bool { return p.Cause == cause && p.Detail == detail })
	if i < 0 {
		i = len(ps.ps)
		ps.ps = append(ps.ps, WakePart{Cause: cause, Detail: detail})
	}
	p := &ps.ps[i]
	p.NS += ns
	if gap > p.Gap {
		p.Gap = gap
	}
}

// largestFirst sorts the parts by time spent, ties in order of appearance,
// and returns them.
func (ps *wakeParts) largestFirst() []WakePart {
	slices.SortStableFunc(ps.ps, func(a, b WakePart) int { return cmp.Compare(b.NS, a.NS) })
	return ps.ps
}
