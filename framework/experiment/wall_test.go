package experiment_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/resultfmt"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// longSrc simulates 1000 hours: no test machine finishes it, so every run
// of it ends at its wall-clock bound or its interrupt.
const longSrc = `
machine {
  cpus = 1
}
workload "cyclictest" "rt" {
  threads = 1
}
run {
  duration = "1000h"
  max_wall = "200ms"
}
`

func mustLoad(t *testing.T, src string, o config.Options) *config.Spec {
	t.Helper()
	s, diags := config.LoadBytes("t.hcl", []byte(src), o)
	if diags.HasErrors() {
		t.Fatalf("LoadBytes: %v", diags)
	}
	return s
}

// TestMaxWallStopsCleanly: a 1000h run with run.max_wall stops at the bound
// and returns its results so far, marked incomplete; the estimate of its
// wall time comes first.
func TestMaxWallStopsCleanly(t *testing.T) {
	spec := mustLoad(t, longSrc, config.Options{})
	var estimates []experiment.WallEstimate
	for _, o := range []experiment.Options{
		{}, // run.max_wall = 200ms
		{MaxWall: 1200 * time.Millisecond, // --max-wall overrides it; long enough to estimate
			OnWallEstimate: func(e experiment.WallEstimate) { estimates = append(estimates, e) }},
	} {
		o.Opener = experiment.InProcess(builtin.Factories())
		res, err := experiment.Run(spec, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		in := res.Incomplete
		if in == nil {
			t.Fatalf("Run(1000h, max_wall) result is not marked incomplete")
		}
		if in.ReachedNS <= 0 || in.ReachedNS >= in.EndNS || in.EndNS != 1000*3600*1e9 {
			t.Errorf("Incomplete = %+v, want 0 < reached < end = 1000h", in)
		}
		want := "max_wall 200ms reached"
		if o.MaxWall > 0 {
			want = "max_wall 1.2s reached"
		}
		if in.Reason != want {
			t.Errorf("Incomplete.Reason = %q, want %q", in.Reason, want)
		}
		var text bytes.Buffer
		if err := resultfmt.WriteText(&text, res); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "# INCOMPLETE: "+want+": stopped at ") {
			t.Errorf("WriteText does not mark the result incomplete:\n%s", text.String())
		}
		var bench bytes.Buffer
		if err := experiment.WriteBench(&bench, res, experiment.BenchOptions{Header: true, Units: true}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(bench.String(), "\nincomplete: "+want) {
			t.Errorf("WriteBench does not mark the result incomplete:\n%s", bench.String())
		}
	}
	if len(estimates) != 1 {
		t.Fatalf("OnWallEstimate called %d times, want once", len(estimates))
	}
	// The estimate is the pace so far carried to the end. The test checks that
	// arithmetic, not the pace: a check of how long 1000h takes ("hours")
	// failed once the engine became fast enough to do it in 35 minutes.
	e := estimates[0]
	if e.Elapsed < experiment.EstimateAfter || e.MaxWall != 1200*time.Millisecond ||
		e.End != 1000*3600*1e9 || e.Reached <= 0 || e.Reached >= e.End {
		t.Errorf("WallEstimate = %+v, want 0 < reached < end = 1000h after %v, with the bound", e, experiment.EstimateAfter)
	}
	want := float64(e.Elapsed) * float64(e.End) / float64(e.Reached)
	if got := float64(e.Total); got < want*0.999 || got > want*1.001 || e.Total <= e.Elapsed {
		t.Errorf("WallEstimate.Total = %v, want elapsed x end / reached = %v", e.Total, time.Duration(want))
	}
}

// TestPollChangesNothing: the wall-clock watch, armed but never firing,
// leaves a run byte for byte what it is without it.
func TestPollChangesNothing(t *testing.T) {
	spec := mustLoad(t, lapicSrc, config.Options{Variant: "oneshot"})
	var outs [2]bytes.Buffer
	for i, o := range []experiment.Options{{}, {MaxWall: time.Hour, Stop: make(chan struct{}), OnWallEstimate: func(experiment.WallEstimate) {}}} {
		o.Opener = experiment.InProcess(builtin.Factories())
		res, err := experiment.Run(spec, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Incomplete != nil {
			t.Fatalf("Run(10ms, max_wall 1h) is incomplete: %+v", res.Incomplete)
		}
		if err := resultfmt.WriteJSON(&outs[i], res); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(outs[0].Bytes(), outs[1].Bytes()) {
		t.Errorf("a run with the wall watch armed differs from one without")
	}
}

// TestStopInterruptsRun: closing Options.Stop ends a run with ErrInterrupted.
func TestStopInterruptsRun(t *testing.T) {
	spec := mustLoad(t, strings.Replace(longSrc, `max_wall = "200ms"`, "", 1), config.Options{})
	stop := make(chan struct{})
	time.AfterFunc(100*time.Millisecond, func() { close(stop) })
	_, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories()), Stop: stop})
	if !errors.Is(err, experiment.ErrInterrupted) {
		t.Fatalf("Run with Stop closed = %v, want ErrInterrupted", err)
	}
}

// TestCompareStopKeepsFinishedRuns: a comparison stopped once its second
// run is under way keeps the first run's results and marks every other run
// interrupted (the second, missing, and those never started). Stop is
// closed from inside the second run, seen by its event count starting over
// (one job: the runs follow one another), not from the comparison's
// progress callback, which may come only after later runs have finished.
func TestCompareStopKeepsFinishedRuns(t *testing.T) {
	o := compareOpts([]string{"oneshot", "tsc_deadline"}, seedsFrom(1, 4), 1)
	stop := make(chan struct{})
	var once sync.Once
	var last uint64
	o.Run.Stop = stop
	o.Run.Progress = func(now, end ktime.Time, events uint64) {
		if events < last {
			once.Do(func() { close(stop) })
		}
		last = events
	}
	c := mustCompare(t, o)
	finished := 0
	for _, r := range c.Runs {
		switch {
		case r.Err == nil:
			finished++
		case !errors.Is(r.Err, experiment.ErrInterrupted):
			t.Errorf("run %s/%d failed with %v, want it finished or interrupted", r.Variant, r.Seed, r.Err)
		}
	}
	if finished != 1 || c.Interrupted != len(c.Runs)-finished || len(c.Failures) != c.Interrupted {
		t.Fatalf("finished %d, Interrupted %d, Failures %d of %d runs; want the first finished and the rest interrupted", finished, c.Interrupted, len(c.Failures), len(c.Runs))
	}
	var text bytes.Buffer
	if err := resultfmt.WriteCompareText(&text, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"INCOMPLETE: interrupted; ", "runs interrupted (INCOMPLETE: not run to the end):", "not finished: tickemu was interrupted", ", 0 failed, "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("WriteCompareText does not say %q:\n%s", want, text.String())
		}
	}
}

// TestCompareInterruptKeepsPartialRuns: Run.Interrupt closed while the
// second run is under way stops that run after its current event: it keeps
// its partial results (IncompleteRuns, marked in every format), out of the
// statistics; the first run's results are kept and the runs not started
// are marked interrupted.
func TestCompareInterruptKeepsPartialRuns(t *testing.T) {
	o := compareOpts([]string{"oneshot", "tsc_deadline"}, seedsFrom(1, 3), 1)
	interrupt := make(chan struct{})
	var once sync.Once
	var finished sync.Once
	oneDone := make(chan struct{})
	o.Run.Interrupt = interrupt
	o.Progress = func(done, total int) { finished.Do(func() { close(oneDone) }) }
	o.Run.Progress = func(now, end ktime.Time, events uint64) {
		select {
		case <-oneDone: // the second run is under way
			once.Do(func() { close(interrupt) })
		default:
		}
	}
	c := mustCompare(t, o)
	if len(c.IncompleteRuns) != 1 {
		t.Fatalf("%d incomplete runs, want the one under way; failures %+v", len(c.IncompleteRuns), c.Failures)
	}
	ir := c.IncompleteRuns[0]
	if ir.Incomplete.Reason != "interrupted" || ir.Incomplete.ReachedNS >= ir.Incomplete.EndNS || len(ir.Metrics) == 0 {
		t.Errorf("incomplete run %+v: want reason interrupted, stopped before the end, with metrics", ir)
	}
	done := 0
	for _, r := range c.Runs {
		if r.Err == nil {
			done++
		}
	}
	if done < 1 || c.Interrupted != len(c.Runs)-done {
		t.Errorf("%d finished, %d interrupted of %d: want >= 1 finished and the rest interrupted", done, c.Interrupted, len(c.Runs))
	}
	// The partial run is out of the statistics: its seed has no value.
	for _, m := range c.Metrics {
		for _, vs := range m.Variants {
			if vs.Variant != ir.Variant {
				continue
			}
			for s, seed := range c.Seeds {
				if seed == ir.Seed && !math.IsNaN(vs.Values[s]) {
					t.Fatalf("%s %s: the partial run's value %v is in the statistics", m.Bench, m.Unit, vs.Values[s])
				}
			}
		}
	}
	for format, want := range map[string][]string{
		"text":  {"INCOMPLETE: interrupted; ", "INCOMPLETE variant " + ir.Variant + " seed ", "every figure covers the first", "  BenchmarkKernel/variant="},
		"json":  {`"incomplete_runs": [`, `"reason": "interrupted"`, `"interrupted": true`},
		"bench": {"# INCOMPLETE: variant " + ir.Variant, "\nincomplete: interrupted: stopped at "},
		"csv":   {ir.Variant + " (INCOMPLETE: interrupted: stopped at "},
	} {
		var b bytes.Buffer
		var err error
		switch format {
		case "text":
			err = resultfmt.WriteCompareText(&b, c)
		case "json":
			err = resultfmt.WriteCompareJSON(&b, c)
		case "bench":
			err = resultfmt.WriteCompareBench(&b, c)
		case "csv":
			err = resultfmt.WriteCompareCSV(&b, c)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s output does not hold %q:\n%s", format, w, b.String())
			}
		}
	}
}
