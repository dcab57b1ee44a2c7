package kernel

import (
	"testing"
	"unsafe"

	"github.com/tickemu/tickemu/framework/metrics"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestSpanRecord: a logged span is 32 bytes (two to a cache line), and each
// kind's number comes back as the field it means: the hang delay of an
// hrtimer_interrupt() span, the catch-up of a TIMER_SOFTIRQ span, nothing
// for the others.
func TestSpanRecord(t *testing.T) {
	if n := unsafe.Sizeof(spanRec{}); n != 32 {
		t.Errorf("spanRec is %d bytes, want 32", n)
	}
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

// TestCounterBlockFirst: the CPU's counter block is its first field, so it
// starts a cache line, it holds every slot, and each slot has its own name.
func TestCounterBlockFirst(t *testing.T) {
	var c CPU
	if off := unsafe.Offsetof(c.cnt); off != 0 {
		t.Errorf("CPU.cnt at offset %d, want 0", off)
	}
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
