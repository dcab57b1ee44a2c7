package experiment

import (
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/workload"
)

// RunDetail is what the HTML report shows of a run besides its metrics: the
// latency histograms, the worst cases and the per-CPU counters. A run keeps
// it (RunOutcome.Detail) and a shard file carries it, so that `tickemu merge
// --report` writes the page the unsharded `compare --report` writes.
type RunDetail struct {
	// Latency holds the latency histograms of each workload that has them,
	// in the run's workload order.
	Latency []WorkloadHists `json:"latency,omitempty"`
	// Worst holds each latency workload's worst case per thread.
	Worst []WorkloadWorst `json:"worst,omitempty"`
	// CPUs are the kernel's per-CPU counters.
	CPUs []CPUSummary `json:"cpus"`
	// Timeline is the CPU's timeline around the run's largest worst case
	// (the first of Worst with the largest latency), the only one a report
	// draws; nil without worst cases.
	Timeline *WorstTimeline `json:"timeline,omitempty"`
}

// WorkloadHists is one workload's per-thread latency histograms.
type WorkloadHists struct {
	Type  string                 `json:"type"`
	Name  string                 `json:"name"`
	Hists []workload.LatencyHist `json:"hists"`
}

// WorkloadWorst is one workload's worst case per thread.
type WorkloadWorst struct {
	Type  string               `json:"type"`
	Name  string               `json:"name"`
	Cases []workload.WorstCase `json:"cases"`
}

// WorstTimeline locates the run's largest worst case in Worst and keeps its
// spans (kernel.WakePath.Spans, which the worst case's JSON leaves out).
type WorstTimeline struct {
	Workload int        `json:"workload"` // index in Worst
	Case     int        `json:"case"`     // index in its Cases
	Spans    []SpanJSON `json:"spans"`
}

// SpanJSON is a kernel.Span in a shard file.
type SpanJSON struct {
	Kind   kernel.SpanKind `json:"kind"`
	Start  int64           `json:"start_ns"`
	End    int64           `json:"end_ns"`
	Detail string          `json:"detail,omitempty"`
	Pid    int             `json:"pid,omitempty"`
	Gap    uint64          `json:"gap,omitempty"`
	Hang   int64           `json:"hang,omitempty"`
}

// DetailOf extracts r's report detail. The worst cases keep no spans but
// the timeline's.
func DetailOf(r *Result) *RunDetail {
	d := &RunDetail{CPUs: r.Kernel.CPUs}
	best := int64(-1)
	for _, wr := range r.Workloads {
		if hs, ok := wr.Extra["latency_us"].([]workload.LatencyHist); ok {
			d.Latency = append(d.Latency, WorkloadHists{Type: wr.Type, Name: wr.Name, Hists: hs})
		}
		wcs, ok := wr.Extra["worst"].([]workload.WorstCase)
		if !ok {
			continue
		}
		ww := WorkloadWorst{Type: wr.Type, Name: wr.Name}
		for i, wc := range wcs {
			if wc.LatencyNS > best {
				best = wc.LatencyNS
				d.Timeline = &WorstTimeline{Workload: len(d.Worst), Case: i, Spans: spansJSON(wc.Spans)}
			}
			wc.Spans = nil
			ww.Cases = append(ww.Cases, wc)
		}
		d.Worst = append(d.Worst, ww)
	}
	return d
}

// Case returns the worst case the timeline draws, with its spans.
func (d *RunDetail) Case() (workload.WorstCase, bool) {
	t := d.Timeline
	if t == nil || t.Workload >= len(d.Worst) || t.Case >= len(d.Worst[t.Workload].Cases) {
		return workload.WorstCase{}, false
	}
	wc := d.Worst[t.Workload].Cases[t.Case]
	wc.Spans = make([]kernel.Span, len(t.Spans))
	for i, s := range t.Spans {
		wc.Spans[i] = kernel.Span{Kind: s.Kind, Start: ktime.Time(s.Start), End: ktime.Time(s.End), Detail: s.Detail, Pid: s.Pid, Gap: s.Gap, Hang: s.Hang}
	}
	return wc, true
}

func spansJSON(spans []kernel.Span) []SpanJSON {
	out := make([]SpanJSON, len(spans))
	for i, s := range spans {
		out[i] = SpanJSON{Kind: s.Kind, Start: int64(s.Start), End: int64(s.End), Detail: s.Detail, Pid: s.Pid, Gap: s.Gap, Hang: s.Hang}
	}
	return out
}
