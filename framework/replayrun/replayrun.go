// Package replayrun runs a replayed capture (the workload "replay") on the
// model and scores the capture and the model's own trace with the counting
// rules of framework/replay: what `tickemu replay` prints.
package replayrun

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tickemu/tickemu/framework/bundle"
	"github.com/tickemu/tickemu/framework/bundlescenario"
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
		b, err := config.ReadFile(cfgFile)
		if err != nil {
			return nil, "", err
		}
		src, name = b, cfgFile
	}
	return ConfigSrc(src, name, capture, cp, pmQoS)
}

// ConfigSrc is ConfigWith with the configuration's text (machine, plugins,
// kernel block, variants) given, named name in diagnostics.
func ConfigSrc(src []byte, name, capture string, cp *replay.Capture, pmQoS int64) ([]byte, string, error) {
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

// LeaveOutScenario blanks out a scenario file's workload blocks, and its
// run block with them, so that the file's machine, plugins, kernel block
// and variants replay a capture (`tickemu replay CAPTURE --config
// configs/default.hcl`): the replay runs the capture's workload and covers
// the capture, not the scenario's load and duration. Lines keep their
// numbers for diagnostics. It returns what it left out, for the output's
// header; a file without workloads comes back as it is.
func LeaveOutScenario(src []byte, name string) ([]byte, []string) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return src, nil // the load names the error
	}
	var workloads []string
	var cut []hcl.Range
	for _, bl := range f.Body.(*hclsyntax.Body).Blocks {
		if bl.Type == "workload" {
			workloads = append(workloads, strings.Join(bl.Labels, " "))
			cut = append(cut, bl.Range())
		}
	}
	if len(workloads) == 0 {
		return src, nil
	}
	for _, bl := range f.Body.(*hclsyntax.Body).Blocks {
		if bl.Type == "run" {
			cut = append(cut, bl.Range())
		}
	}
	out := append([]byte{}, src...)
	for _, r := range cut {
		for i := r.Start.Byte; i < r.End.Byte && i < len(out); i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
	}
	return out, []string{fmt.Sprintf("%s: its workloads (%s) and run block are left out: the replay runs the capture's workload over the capture's span on the file's machine, plugins, kernel block and variants",
		name, strings.Join(workloads, ", "))}
}

// BundleMachine is, for a capture bundle, the configuration a replay of its
// trace runs on when no other is given: the machine, plugin and kernel
// blocks of the bundle's host (bundlescenario.Machine: CPUs, HZ, NO_HZ
// mode, high-res timers, cpuidle states and governor, clockevent device,
// kernel release, timer_migration), what they approximate, and the PM QoS
// CPU latency constraint in force on the host before the run, in ns (-1:
// none). ok is false for a file that is not a bundle.
func BundleMachine(path string) (src []byte, notes []string, pmQoS int64, ok bool, err error) {
	if !bundle.Sniff(path) {
		return nil, nil, -1, false, nil
	}
	b, err := bundle.Open(path)
	if errors.Is(err, bundle.ErrNotBundle) {
		return nil, nil, -1, false, nil
	}
	if err != nil {
		return nil, nil, -1, true, err
	}
	src, notes, err = bundlescenario.Machine(&b.Manifest, bundlescenario.Options{})
	if err != nil {
		return nil, nil, -1, true, fmt.Errorf("%s: %w", path, err)
	}
	pmQoS = -1
	if us := b.Manifest.Host.PMQoSLatencyUS; us >= 0 && us < 2_000_000_000 {
		pmQoS = us * 1000
		notes = append(notes, fmt.Sprintf("the host held a PM QoS CPU latency request of %d us before the run: the replay holds it", us))
	}
	return src, notes, pmQoS, true, nil
}

// Outcome is a scored replay.
type Outcome struct {
	// Notes are printed in the header (what a bundle's host translation
	// approximates).
	Notes []string
	// Kallsyms, when set, names the callbacks kept as raw addresses (an
	// LTTng capture's); KallsymsFile is its file, for the header.
	Kallsyms     *traceimport.Kallsyms
	KallsymsFile string
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
	fmt.Fprintf(&b, "# model: %d CPUs, HZ %d, plugins %s", res.Config.CPUs, res.Config.HZ, res.PluginNames())
	b.WriteString("\n")
	for _, n := range slices.Concat(o.Notes, o.resolve()) {
		b.WriteString("# note: " + n + "\n")
	}
	for _, wr := range res.Workloads {
		for _, l := range wr.Text {
			b.WriteString("# " + strings.TrimSpace(l) + "\n")
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	rows := replay.Table(o.CaptureScore, o.ModelScore, cp.Format == "babeltrace", !cp.OffsetKnown)
	if err := replay.WriteTable(w, rows); err != nil {
		return err
	}
	_, err := io.WriteString(w, tickNote(rows))
	return err
}

// resolve names the raw callback addresses of both scores with
// o.Kallsyms and returns the header's note on those left unresolved.
func (o *Outcome) resolve() []string {
	name := func(string) (string, bool) { return "", false }
	if o.Kallsyms != nil {
		name = o.Kallsyms.Name
	}
	raw := append(o.CaptureScore.Resolve(name), o.ModelScore.Resolve(name)...)
	slices.Sort(raw)
	raw = slices.Compact(raw)
	switch {
	case len(raw) == 0:
		return nil
	case o.Kallsyms == nil:
		return []string{fmt.Sprintf("raw callback addresses: %d (the capture names none; LTTng records addresses); --kallsyms FILE, a copy of the capture machine's /proc/kallsyms read as root, names them", len(raw))}
	}
	return []string{fmt.Sprintf("raw callback addresses: %d (%s), below every text symbol of %s: is it the capture machine's /proc/kallsyms of the same boot?", len(raw), strings.Join(raw, ", "), o.KallsymsFile)}
}

// tickNote explains, under the table, tick expiries that differ between
// the capture and the model ("tick expiries 1 vs 0, -100%" said nothing of
// why): which side kept its tick on idle CPUs, which stopped it.
func tickNote(rows []replay.Row) string {
	get := func(name string) replay.Row {
		for _, r := range rows {
			if r.Name == name {
				return r
			}
		}
		return replay.Row{NA: true}
	}
	exp, kept, stops := get("tick expiries"), get("idle ticks kept"), get("tick stops")
	if exp.Capture == exp.Model {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# tick expiries %d in the capture, %d in the model: each side stops or keeps its tick by its own NO_HZ decisions", exp.Capture, exp.Model)
	if !kept.NA {
		fmt.Fprintf(&b, "; idle CPUs kept it %d times in the capture, %d in the model", kept.Capture, kept.Model)
	}
	if !stops.NA {
		fmt.Fprintf(&b, "; it was stopped %d times in the capture, %d in the model", stops.Capture, stops.Model)
	}
	b.WriteString(".\n# An idle CPU keeps its tick for a timer due within a tick, RCU callbacks (rcu_needs_cpu()), irq_work or the cpuidle governor's choice (tick_nohz_next_event());" +
		" the model decides on the replayed load with its governor and has none of the capture's other activity (docs/replay.md, the counting rules 7 and 8).\n")
	return b.String()
}
