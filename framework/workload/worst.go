package workload

import (
	"fmt"
	"strings"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/metrics"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// LatencyHist is one thread's latency distribution in whole microseconds
// (cyclictest -h buckets), sparse: [us, count] for the non-empty buckets,
// then the samples past the last bucket.
type LatencyHist struct {
	Thread   int        `json:"thread"`
	Buckets  [][2]int64 `json:"buckets"`
	Overflow int64      `json:"overflow"`
	MaxNS    int64      `json:"max_ns"`
}

func histOf(thread int, h *metrics.Latency) LatencyHist {
	lh := LatencyHist{Thread: thread, Overflow: h.Overflow(), MaxNS: h.Max, Buckets: [][2]int64{}}
	for us, n := range h.Buckets() {
		lh.Buckets = append(lh.Buckets, [2]int64{int64(us), n})
	}
	return lh
}

// WorstCase is a latency workload's slowest wakeup of one thread, explained
// (kernel.WakePath): when it was due, on which CPU, and where the time went.
type WorstCase struct {
	Thread int `json:"thread"`
	kernel.WakePath
}

// Line is the one-line summary: "Max 1034 us at 300.105 s on CPU 2:
// TIMER_SOFTIRQ catch-up 303678 jiffies 1011 us, irq 5 us". Parts under half
// a microsecond are left out.
func (w WorstCase) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Max %d us at %.3f s on CPU %d:", w.LatencyNS/1000, float64(w.At)/float64(ktime.Second), w.CPU)
	n := 0
	for _, p := range w.Parts {
		if p.NS < 500 {
			continue
		}
		if n > 0 {
			b.WriteString(",")
		}
		n++
		b.WriteString(" " + p.Cause)
		if p.Detail != "" {
			b.WriteString(" " + p.Detail)
		}
		b.WriteString(" " + usString(p.NS))
	}
	if n == 0 {
		b.WriteString(" nothing over 0.5 us")
	}
	return b.String()
}

// usString prints ns as microseconds: one decimal below 10 us.
func usString(ns int64) string {
	if ns < 10000 {
		return fmt.Sprintf("%.1f us", float64(ns)/1000)
	}
	return fmt.Sprintf("%d us", (ns+500)/1000)
}
