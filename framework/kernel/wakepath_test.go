package kernel

import (
	"reflect"
	"testing"

	"github.com/tickemu/tickemu/framework/metrics"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestSpanRecord: each kind's number comes back as the field it means: the
// hang delay of an hrtimer_interrupt() span, the catch-up of a
// TIMER_SOFTIRQ span, nothing for the others.
func TestSpanRecord(t *testing.T) {
	k := &Kernel{}
	tests := []struct {
		rec       spanRec
		gap       uint64
		hang      int64
		detail    string
		wantStart ktime.Time
	}{
		{rec: spanRec{kind: SpanHRTimer, start: 5, end: 9, arg: 100_000_000}, hang: 100_000_000, wantStart: 5},
		{rec: spanRec{kind: SpanSoftirq, start: 1, end: 2, code: TimerSoftirq, arg: 303678}, gap: 303678, detail: "TIMER", wantStart: 1},
		{rec: spanRec{kind: SpanSoftirq, start: 1, end: 2, code: HRTimerSoftirq}, detail: "HRTIMER", wantStart: 1},
		{rec: spanRec{kind: SpanIRQEntry, start: 3, end: 4}, wantStart: 3},
	}
	for _, tt := range tests {
		s := k.public(tt.rec)
		if s.Kind != tt.rec.kind || s.Start != tt.wantStart || s.End != tt.rec.end || s.Gap != tt.gap || s.Hang != tt.hang || s.Detail != tt.detail {
			t.Errorf("public(%+v) = %+v, want gap %d hang %d detail %q", tt.rec, s, tt.gap, tt.hang, tt.detail)
		}
	}
}

// TestCounterBlock: the CPU's counter block holds every slot, and each
// slot has its own name.
func TestCounterBlock(t *testing.T) {
	if numBlockCounters > metrics.BlockCap {
		t.Errorf("%d block counters, a Block holds %d", numBlockCounters, metrics.BlockCap)
	}
	seen := map[metrics.Name]int{}
	for i, n := range blockNames {
		if j, ok := seen[n]; ok {
			t.Errorf("block slots %d and %d are both %s", j, i, n)
		}
		seen[n] = i
	}
}

// TestWakePathReuse: WakePath names a window's parts (one per cause and
// detail, summed, largest first, ties in order of appearance) and gives the
// same answer into a used WakePath, one with more parts and spans than the
// new window, as into a fresh one.
func TestWakePathReuse(t *testing.T) {
	c := &CPU{id: 0}
	k := &Kernel{cpus: []*CPU{c}}
	c.spanBuf = spanLog{s: new([spanLogSize]spanRec)}
	c.spans = &c.spanBuf
	for _, r := range []spanRec{
		{kind: SpanIdle, start: 0, end: 100, code: -1},
		{kind: SpanIRQEntry, start: 100, end: 110},
		{kind: SpanHRTimer, start: 110, end: 150},
		{kind: SpanIRQExit, start: 150, end: 160},
		{kind: SpanSoftirq, start: 160, end: 200, code: TimerSoftirq, arg: 7},
		{kind: SpanTask, start: 200, end: 240, code: 1},
		{kind: SpanIRQEntry, start: 1000, end: 1020},
		{kind: SpanHRTimer, start: 1020, end: 1030},
	} {
		c.spans.add(r)
	}
	task := &Task{k: k, cpu: c, Pid: 1}
	wide := func(wp *WakePath) { task.clockReadAt, task.lastHardExpiry = 240, 60; k.WakePath(wp, task, 220) }
	narrow := func(wp *WakePath) { task.clockReadAt, task.lastHardExpiry = 1040, 0; k.WakePath(wp, task, 40) }
	var w, n WakePath
	wide(&w)
	narrow(&n)
	want := []WakePart{{Cause: "timer slack", NS: 40}, {Cause: "timer interrupt delay", NS: 40},
		{Cause: "hrtimer_interrupt", NS: 40}, {Cause: "TIMER_SOFTIRQ", NS: 40, Detail: "catch-up 7 jiffies", Gap: 7},
		{Cause: "return to user", NS: 40}, {Cause: "irq", NS: 20}}
	if !reflect.DeepEqual(w.Parts, want) || w.LatencyNS != 220 || w.At != 20 || len(w.Spans) != 6 {
		t.Errorf("wide window: %+v\nwant parts %+v", w, want)
	}
	want = []WakePart{{Cause: "irq", NS: 20}, {Cause: "hrtimer_interrupt", NS: 10}, {Cause: "unattributed", NS: 10}}
	if !reflect.DeepEqual(n.Parts, want) || len(n.Spans) != 2 {
		t.Errorf("narrow window: %+v\nwant parts %+v", n, want)
	}
	reused := w
	narrow(&reused)
	if !reflect.DeepEqual(reused, n) {
		t.Errorf("narrow into a used WakePath: %+v\nwant %+v", reused, n)
	}
	wide(&reused)
	if !reflect.DeepEqual(reused, w) {
		t.Errorf("wide into a used WakePath: %+v\nwant %+v", reused, w)
	}
}

// TestSpanLog: RecordSpans turns each CPU's log on (a second call keeps
// what is logged), and a CPU's spans come back from its own log only.
func TestSpanLog(t *testing.T) {
	k := &Kernel{cpus: []*CPU{{id: 0}, {id: 1}}}
	k.cpus[0].span(SpanTask, 1, 2, 1) // logging off: a no-op
	k.RecordSpans()
	k.cpus[0].span(SpanIdle, 3, 7, -1)
	k.RecordSpans()
	k.cpus[0].span(SpanIRQEntry, 7, 9, 0)
	spans, complete := k.Spans(0, 0, 1<<40)
	if len(spans) != 2 || spans[0].Kind != SpanIdle || spans[1].Kind != SpanIRQEntry || !complete {
		t.Errorf("CPU 0's spans = %+v, complete %v; want idle, irq entry, complete", spans, complete)
	}
	if spans, _ := k.Spans(1, 0, 1<<40); len(spans) != 0 {
		t.Errorf("CPU 1's log has %d spans, want none", len(spans))
	}
}
