// Package replayrun runs a replayed capture (the workload "replay") on the
// model and scores the capture and the model's own trace with the counting
// rules of framework/replay: what `tickemu replay` prints.
package replayrun

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/replay"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/traceimport"
)

// Tail is the simulated time a replay runs past the capture's end, so that
// operations in flight at its end complete; the model is scored over the
// capture's span only.
const Tail = 20_000_000

// Config builds a replay run's HCL: cfgFile's text (or nothing) with the
// replay workload for capture (an absolute path) and, when cfgFile has no
// run block, a run covering the capture plus a tick plus Tail. name is the file name
// diagnostics cite.
func Config(cfgFile, capture string, cp *replay.Capture) (src []byte, name string, err error) {
	return ConfigWith(cfgFile, capture, cp, -1)
}

// ConfigWith is Config with a PM QoS CPU latency request held for the run
// (the workload's dma_latency; pmQoS < 0: none).
func ConfigWith(cfgFile, capture string, cp *replay.Capture, pmQoS int64) (src []byte, name string, err error) {
	name = "replay.hcl"
	if cfgFile != "" {
		b, err := os.ReadFile(cfgFile)
		if err != nil {
			return nil, "", err
		}
		src, name = b, cfgFile
	}
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	hasRun := false
	if !diags.HasErrors() {
		for _, bl := range f.Body.(*hclsyntax.Body).Blocks {
			hasRun = hasRun || bl.Type == "run"
			if bl.Type == "workload" {
				return nil, "", fmt.Errorf("%s: holds a workload block; the replay adds the capture's (give the machine, plugins, kernel block and variants only)", name)
			}
		}
	}
	out := append([]byte{}, src...)
	qos := ""
	if pmQoS >= 0 {
		qos = fmt.Sprintf("  dma_latency = true\n  latency     = \"%dns\"\n", pmQoS)
	}
	out = append(out, fmt.Sprintf("\nworkload \"replay\" \"capture\" {\n  capture = %q\n%s}\n", capture, qos)...)
	if !hasRun {
		// The first event is at most a tick (10 ms at HZ 100) into the run.
		out = append(out, fmt.Sprintf("run {\n  duration = \"%dns\"\n}\n", cp.Span()+10_000_000+Tail)...)
	}
	return out, name, nil
}

// Outcome is a scored replay.
type Outcome struct {
	Capture      *replay.Capture
	CaptureScore *replay.Score
	ModelScore   *replay.Score
	Result       *experiment.Result
}

// traceEvents are the events the model's trace needs for scoring.
const traceEvents = "hrtimer_start,hrtimer_cancel,hrtimer_expire_entry,timer_start,timer_cancel,timer_expire_entry,tick_stop,sched_switch,softirq_raise"

// Run scores the capture at path (cp is its Scan), runs spec (which holds
// the replay workload) with eo and scores the model's trace, read back as it
// is written. eo.Trace and eo.TraceEvents are set here.
func Run(path string, cp *replay.Capture, spec *config.Spec, eo experiment.Options) (*Outcome, error) {
	f, err := traceimport.Open(path)
	if err != nil {
		return nil, err
	}
	capScore, err := replay.NewScorer(cp.IsTick, cp.TickNsec(), cp.Offset, replay.Options{}).ScoreReader(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	hz := spec.Machine.HZ
	if !spec.Machine.HZSet && cp.HZ != 0 {
		hz = cp.HZ
	}
	cpus := spec.Machine.CPUs // the workload's Machine hook raised it to the capture's
	if !spec.Machine.CPUsSet {
		cpus = max(cpus, cp.CPUs)
	}
	pr, pw := io.Pipe()
	type scored struct {
		s   *replay.Score
		err error
	}
	done := make(chan scored, 1)
	go func() {
		// tickemu's trace records neither the removal of a queued timer
		// nor was_armed: callbacks that restart their timer are named, and
		// every cancel it traces is a cancel.
		sc := replay.NewScorer(func(fn string) bool { return replay.TickFunctions[fn] }, ktime.TickNsec(hz), 0,
			replay.Options{Restarts: func(fn string) bool {
				return cp.Periods[fn] > 0 || cp.WheelPeriods[fn] > 0 || replay.TickFunctions[fn]
			}, ExplicitCancels: true})
		sc.Until = cp.Lead(ktime.TickNsec(hz)) + cp.Span() + 1
		sc.Setup = replay.SetupStarts(cp, cpus)
		s, err := sc.ScoreReader(traceimport.NewFtrace(pr))
		pr.CloseWithError(err)
		done <- scored{s, err}
	}()
	eo.Trace, eo.TraceEvents = pw, traceEvents
	res, runErr := experiment.Run(spec, eo)
	pw.Close()
	sc := <-done
	if runErr != nil {
		return nil, runErr
	}
	if sc.err != nil {
		return nil, fmt.Errorf("reading the model's trace: %w", sc.err)
	}
	return &Outcome{Capture: cp, CaptureScore: capScore, ModelScore: sc.s, Result: res}, nil
}

// Write prints the outcome: a header on the capture and the model, the
// replay workload's summary, and the side-by-side table. name is the
// capture as the user gave it.
func (o *Outcome) Write(w io.Writer, name string) error {
	cp := o.Capture
	var b strings.Builder
	fmt.Fprintf(&b, "# capture %s: %s, %d CPUs", name, cp.Format, cp.CPUs)
	if !cp.CPUsStated {
		b.WriteString(" (highest CPU seen)")
	}
	if cp.HZStated {
		fmt.Fprintf(&b, ", HZ %d (the bundle's CONFIG_HZ)", cp.HZ)
	} else if cp.HZ != 0 {
		fmt.Fprintf(&b, ", HZ %d (from the tick's expiries)", cp.HZ)
	} else {
		b.WriteString(", HZ not inferable (no tick seen)")
	}
	fmt.Fprintf(&b, ", %.6f s, %d events, %d unknown skipped\n", float64(cp.Span())/1e9, cp.Events, cp.Stats.UnknownTotal())
	res := o.Result
	fmt.Fprintf(&b, "# model: %d CPUs, HZ %d", res.Config.CPUs, res.Config.HZ)
	for _, p := range res.Plugins {
		fmt.Fprintf(&b, ", %s %s", p.Kind, p.Name)
	}
	b.WriteString("\n")
	for _, wr := range res.Workloads {
		for _, l := range wr.Text {
			b.WriteString("# " + strings.TrimSpace(l) + "\n")
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return replay.WriteTable(w, replay.Table(o.CaptureScore, o.ModelScore, cp.Format == "babeltrace", !cp.OffsetKnown))
}
