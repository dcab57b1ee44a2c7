// Package sidebyside holds the model against the real kernel for one
// capture bundle: it runs the bundle's own command as a scenario on the
// bundle's machine (framework/bundlescenario), scores the capture's trace
// and the model's trace with replay's counting rules (framework/replay), and
// lines up per-callback operations, the tick, interrupts, context switches,
// CPU time by context and the workload's own figures (cyclictest's
// latencies, stress-ng's bogo ops/s), each row with a tolerance class and a
// within/outside mark. `tickemu check` prints it.
package sidebyside

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/bundle"
	"github.com/tickemu/tickemu/framework/bundlescenario"
	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/replay"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/traceimport"
	"github.com/tickemu/tickemu/framework/workload"
)

// Class is a row's tolerance class.
type Class string

// The tolerance classes (issue 33): per-callback and other event counts
// 5%, the tick's figures 10%, throughput (bogo ops/s) 15%, latencies and
// their percentiles 25%, all relative to the real value; CPU time shares
// within 2 percentage points. A row without a class is shown, not judged.
const (
	ClassCount      Class = "count"
	ClassTick       Class = "tick"
	ClassThroughput Class = "throughput"
	ClassLatency    Class = "latency"
	ClassShare      Class = "share"
	ClassNone       Class = ""
)

// Tolerance is the class's bound: a fraction of the real value, or for
// ClassShare percentage points.
func (c Class) Tolerance() float64 {
	switch c {
	case ClassCount:
		return 0.05
	case ClassTick:
		return 0.10
	case ClassThroughput:
		return 0.15
	case ClassLatency:
		return 0.25
	case ClassShare:
		return 2
	}
	return math.NaN()
}

// Text is the tolerance as the table prints it ("5%", "2pt").
func (c Class) Text() string {
	switch c {
	case ClassNone:
		return ""
	case ClassShare:
		return fmt.Sprintf("%gpt", c.Tolerance())
	}
	return fmt.Sprintf("%g%%", 100*c.Tolerance())
}

// Unit is how a row's values print.
type Unit string

// Units: a plain count, ns (printed as a duration), us (cyclictest's own
// unit), a share of CPU time in percent, a rate per second.
const (
	UnitCount Unit = ""
	UnitNS    Unit = "ns"
	UnitUS    Unit = "us"
	UnitShare Unit = "%"
	UnitRate  Unit = "/s"
)

// Row is one figure, real against model.
type Row struct {
	Section, Name     string
	Real, Model       float64
	HasReal, HasModel bool
	Unit              Unit
	Class             Class
}

// Diff is (model - real) / real; NaN when real is 0 and model not.
func (r Row) Diff() float64 {
	if r.Real == 0 {
		if r.Model == 0 {
			return 0
		}
		return math.NaN()
	}
	return (r.Model - r.Real) / math.Abs(r.Real)
}

// Within reports whether the model is within the row's tolerance of the
// real value; ok is false for a row without a class or a value.
func (r Row) Within() (within, ok bool) {
	if r.Class == ClassNone || !r.HasReal || !r.HasModel {
		return false, false
	}
	if r.Class == ClassShare {
		return math.Abs(r.Model-r.Real) <= r.Class.Tolerance()+1e-9, true
	}
	d := r.Diff()
	if math.IsNaN(d) {
		return false, true
	}
	return math.Abs(d) <= r.Class.Tolerance()+1e-9, true
}

// Table is one bundle's side by side.
type Table struct {
	// Bundle is the bundle's name, Command its argv joined.
	Bundle, Command string
	// Header describes the capture and the model run; Notes what the
	// model approximates (the scenario's notes).
	Header, Notes []string
	Rows          []Row
}

// Within counts the rows within tolerance and the rows judged.
func (t *Table) Within() (within, marked int) {
	for _, r := range t.Rows {
		if in, ok := r.Within(); ok {
			marked++
			if in {
				within++
			}
		}
	}
	return within, marked
}

// Options are a check's choices.
type Options struct {
	// Scenario are the translation's options (profile, seed).
	Scenario bundlescenario.Options
	// Experiment runs the model (its Opener at least); Trace and
	// TraceEvents are set here.
	Experiment experiment.Options
	// NoBackground runs the command alone: without it, the capture's
	// background (its timers and tasks outside the command's process
	// tree) is replayed beside the command (bundlescenario's Background).
	NoBackground bool
}

// modelEvents are the events of the model's trace that the scoring reads
// (replay's, sched_switch for the context switches).
const modelEvents = "hrtimer_start,hrtimer_cancel,hrtimer_expire_entry,timer_start,timer_cancel,timer_expire_entry,tick_stop,sched_switch,softirq_raise"

// Prepared is a bundle ready to check: the capture's first pass, the
// command's process tree (nil when the command runs alone) and the
// scenario.
type Prepared struct {
	Bundle   *bundle.Bundle
	Capture  *replay.Capture
	Tree     *replay.ProcessTree
	Scenario *bundlescenario.Scenario
}

// Prepare reads the bundle at path and builds the scenario Check runs: the
// bundle's command and, unless o.NoBackground, the capture's background
// replayed beside it.
func Prepare(path string, o Options) (*Prepared, error) {
	b, err := bundle.Open(path)
	if err != nil {
		return nil, err
	}
	m := &b.Manifest
	// The capture's first pass learns its tick and periods (and, for the
	// background, its span).
	cp, err := scan(b)
	if err != nil {
		return nil, err
	}
	// The command's process tree: the workload's tasks, whose timers the
	// modelled command stands for; the rest is the background, replayed.
	var tree *replay.ProcessTree
	so := o.Scenario
	if !o.NoBackground && m.PID > 0 {
		if tree, err = processTree(b, m.PID); err != nil {
			return nil, err
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		tick := cp.TickNsec()
		if m.Host.HZ > 0 {
			tick = ktime.TickNsec(m.Host.HZ)
		}
		// The replay puts the capture's first event at Lead and runs to
		// its last: the run covers it, in whole milliseconds.
		so.Background, so.BackgroundNS = abs, (cp.Lead(tick)+cp.Span()+999_999)/1_000_000*1_000_000
	}
	sc, err := bundlescenario.FromManifest(m, so)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if tree != nil && sc.Command.MainUnmodelled {
		tree = tree.Without(m.PID) // replayed with the background
	}
	return &Prepared{Bundle: b, Capture: cp, Tree: tree, Scenario: sc}, nil
}

// Check runs the model for the bundle at path and builds its table.
func Check(path string, o Options) (*Table, error) {
	p, err := Prepare(path, o)
	if err != nil {
		return nil, err
	}
	b, cp, tree, sc := p.Bundle, p.Capture, p.Tree, p.Scenario
	m := &b.Manifest
	t := &Table{Bundle: name(m, path), Command: strings.Join(m.Command, " "), Notes: sc.Notes}
	h := m.Host
	t.Header = append(t.Header,
		fmt.Sprintf("real: Linux %s %s, %d CPUs, HZ %d, NO_HZ %s, clockevent %s, cpuidle %s/%s; ran %s, exit status %d",
			h.Release, h.Machine, h.CPUs, h.HZ, h.NoHZ, strings.Join(uniq(h.Clockevents), ","), h.CPUIdle.Driver, h.CPUIdle.Governor,
			replay.Dur(float64(m.WallNS)), m.ExitStatus))
	if m.Note != "" {
		t.Header = append(t.Header, "provenance: "+m.Note)
	}
	if lost := m.Trace.Total(); lost > 0 {
		t.Header = append(t.Header, fmt.Sprintf("the trace lost %d events: its counts are low", lost))
	}

	// The capture's second pass scores it (and counts its context
	// switches).
	tr, err := b.Trace()
	if err != nil {
		return nil, err
	}
	// The sleep timers of cyclictest's threads, per thread.
	comm := ""
	if sc.Command.Tool == "cyclictest" {
		comm = "cyclictest"
	}
	realObs := newObserver(comm)
	realObs.tree = tree
	realScore, err := replay.NewScorer(cp.IsTick, cp.TickNsec(), cp.Offset, replay.Options{}).
		ScoreReader(realObs.wrap(traceimport.Detect(tr)))
	tr.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, bundle.TraceName, err)
	}

	// The model: the scenario, its trace scored as it is written.
	spec, diags := config.LoadBytes(t.Bundle+".hcl", sc.HCL, config.Options{})
	if diags.HasErrors() {
		var files map[string]*hcl.File
		if spec != nil {
			files = spec.Files()
		}
		var sb strings.Builder
		config.WriteDiagnostics(&sb, diags, files, false)
		return nil, fmt.Errorf("%s: the translated scenario does not load:\n%s", path, sb.String())
	}
	modelObs := newObserver(comm)
	res, modelScore, err := runModel(spec, cp, tree != nil, o.Experiment, modelObs)
	if err != nil {
		return nil, fmt.Errorf("%s: model: %w", path, err)
	}
	prof := "default costs"
	if p := o.Scenario.Profile; p != "" {
		prof = "machine profile " + filepath.Base(p)
	}
	t.Header = append(t.Header, fmt.Sprintf("model: %d CPUs, HZ %d, %s simulated, seed %d%s; %s", res.Config.CPUs, res.Config.HZ,
		replay.Dur(float64(res.Config.DurationNS)), res.Config.Seed, plugins(res), prof))

	t.callbackRows(realScore, modelScore, cp, tree, realObs.workloadFns)
	t.systemRows(m, res, realObs.switches, modelObs.switches)
	out, err := commandOutput(b)
	if err != nil {
		return nil, err
	}
	if err := t.workloadRows(sc.Command, out, res, realObs, modelObs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func name(m *bundle.Manifest, path string) string {
	if m.Name != "" {
		return m.Name
	}
	base := path[strings.LastIndexByte(path, '/')+1:]
	return strings.TrimSuffix(base, bundle.Ext)
}

func uniq(xs []string) []string {
	var out []string
	for _, x := range xs {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

func plugins(r *experiment.Result) string { return ", plugins " + r.PluginNames() }

// processTree reads the bundle's trace for the process tree of pid.
func processTree(b *bundle.Bundle, pid int) (*replay.ProcessTree, error) {
	tr, err := b.Trace()
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	p, err := replay.NewProcessTree(traceimport.Detect(tr), []int{pid})
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", b.Path, bundle.TraceName, err)
	}
	return p, nil
}

// scan is replay's first pass over the bundle's trace.
func scan(b *bundle.Bundle) (*replay.Capture, error) {
	tr, err := b.Trace()
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	cp, err := replay.Scan(traceimport.Detect(tr))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", b.Path, bundle.TraceName, err)
	}
	return cp, nil
}

// observer watches the events a reader passes on: it counts the
// context switches (sched_switch) and, for the tasks called comm, the
// lateness of the sleep timers each task starts (hrtimer_wakeup: the
// expiry's now less the start's softexpires, the time the task asked to
// wake at), by pid.
type observer struct {
	r        traceimport.Reader
	switches int64
	comm     string
	// tree is the command's process tree (less the tasks the model runs
	// no copy of); workloadFns the callbacks (by score key: "timer:"
	// before a timer_list one's) of the timers its tasks own
	// (ProcessTree.Owns).
	tree        *replay.ProcessTree
	workloadFns map[string]bool
	// armed maps a sleep timer to the pid that started it and its
	// softexpires.
	armed    map[uint64][2]int64
	lateness map[int]*replay.Hist
}

func newObserver(comm string) *observer {
	return &observer{comm: comm, armed: map[uint64][2]int64{}, lateness: map[int]*replay.Hist{}, workloadFns: map[string]bool{}}
}

func (o *observer) wrap(r traceimport.Reader) traceimport.Reader { o.r = r; return o }

// Next passes the next event on, noting it.
func (o *observer) Next() (*traceimport.Event, error) {
	e, err := o.r.Next()
	if err != nil {
		return e, err
	}
	if o.tree != nil {
		if owned, _ := o.tree.Owns(e); owned {
			k := e.Function
			if e.Kind == traceimport.TimerStart {
				k = "timer:" + k
			}
			o.workloadFns[k] = true
		}
	}
	switch e.Kind {
	case traceimport.SchedSwitch:
		o.switches++
	case traceimport.HRStart:
		if o.comm != "" && e.Function == "hrtimer_wakeup" && e.Comm == o.comm {
			o.armed[e.Timer] = [2]int64{int64(e.PID), e.SoftExpires}
		} else {
			delete(o.armed, e.Timer)
		}
	case traceimport.HRCancel:
		delete(o.armed, e.Timer)
	case traceimport.HRExpireEntry:
		if a, ok := o.armed[e.Timer]; ok {
			delete(o.armed, e.Timer)
			h := o.lateness[int(a[0])]
			if h == nil {
				h = new(replay.Hist)
				o.lateness[int(a[0])] = h
			}
			h.Add(e.Now - a[1])
		}
	}
	return e, nil
}

// Header passes the wrapped reader's header on.
func (o *observer) Header() traceimport.Header { return o.r.Header() }

// Stats passes the wrapped reader's statistics on.
func (o *observer) Stats() traceimport.Stats { return o.r.Stats() }

// threads is the sleep timer lateness of the tasks seen, in pid order,
// without the first when there is one more task than threads: cyclictest's
// main thread (the lowest pid: it starts the others) sleeps with
// usleep() too.
func (o *observer) threads(n int) []*replay.Hist {
	pids := make([]int, 0, len(o.lateness))
	for p := range o.lateness {
		pids = append(pids, p)
	}
	sort.Ints(pids)
	if len(pids) == n+1 {
		pids = pids[1:]
	}
	out := make([]*replay.Hist, 0, len(pids))
	for _, p := range pids {
		out = append(out, o.lateness[p])
	}
	return out
}

// runModel runs spec with its trace scored as replay scores tickemu's own
// trace (replayrun does the same for a replay): the callbacks that the
// capture shows restarting their timer restart in the model too.
//
// With the background replayed, the replay's arming at time 0 of the
// timers the capture first shows expiring (replay.SetupStarts) is not
// counted: the capture shows no start for them.
func runModel(spec *config.Spec, cp *replay.Capture, background bool, eo experiment.Options, obs *observer) (*experiment.Result, *replay.Score, error) {
	pr, pw := io.Pipe()
	type scored struct {
		s   *replay.Score
		err error
	}
	done := make(chan scored, 1)
	go func() {
		sc := replay.NewScorer(func(fn string) bool { return replay.TickFunctions[fn] }, ktime.TickNsec(spec.Machine.HZ), 0,
			replay.Options{Restarts: func(fn string) bool {
				return cp.Periods[fn] > 0 || cp.WheelPeriods[fn] > 0 || replay.TickFunctions[fn]
			}, ExplicitCancels: true})
		if background {
			sc.Setup = replay.SetupStarts(cp, spec.Machine.CPUs)
		}
		s, err := sc.ScoreReader(obs.wrap(traceimport.NewFtrace(pr)))
		pr.CloseWithError(err)
		done <- scored{s, err}
	}()
	eo.Trace, eo.TraceEvents = pw, modelEvents
	res, runErr := experiment.Run(spec, eo)
	pw.Close()
	s := <-done
	if runErr != nil {
		return nil, nil, runErr
	}
	if s.err != nil {
		return nil, nil, fmt.Errorf("reading the model's trace: %w", s.err)
	}
	return res, s.s, nil
}

// The callback sections: the workload's callbacks, and with the background
// replayed the rest of the machine's.
const (
	SectionCallbacks  = "callbacks"
	SectionBackground = "background"
)

// callbackRows are replay's table (per callback, then the tick), each row
// classed; a callback row that is 0 on both sides is left out. With a
// process tree, the callbacks of timers the command's tasks started
// (workload) and those the capture does not have (the model's command
// made them: the replay only makes the capture's) are the callbacks
// section, the others the background section; the counts are the
// machine's on both sides (the model's command and the replayed
// background together), so a callback both use (hrtimer_wakeup: the
// command's sleeps and other tasks') compares whole.
func (t *Table) callbackRows(real, model *replay.Score, cp *replay.Capture, tree *replay.ProcessTree, workload map[string]bool) {
	var bg []Row
	for _, r := range replay.Table(real, model, cp.Format == "babeltrace", !cp.OffsetKnown) {
		row := Row{Name: r.Name, Real: float64(r.Capture), Model: float64(r.Model), HasReal: !r.NA, HasModel: true}
		switch {
		case strings.HasPrefix(r.Name, "tick ") || strings.HasPrefix(r.Name, "idle ticks"):
			row.Section, row.Class = "tick", ClassTick
		case strings.Contains(r.Name, " lateness "):
			row.Section, row.Class, row.Unit = SectionCallbacks, ClassLatency, UnitNS
		default:
			row.Section, row.Class = SectionCallbacks, ClassCount
		}
		if row.Section == SectionCallbacks && r.Capture == 0 && r.Model == 0 {
			continue
		}
		if row.Unit == UnitNS {
			// A lateness needs an expiry whose start is in the trace
			// (a timer armed before the capture has none): without
			// one the side has no value, not 0.
			fn := callbackOf(r.Name)
			row.HasReal = row.HasReal && lateSamples(real, fn)
			row.HasModel = lateSamples(model, fn)
		}
		if row.Section == SectionCallbacks && tree != nil {
			fn := callbackOf(r.Name)
			if _, inCapture := real.Funcs[fn]; inCapture && !workload[fn] {
				row.Section = SectionBackground
				bg = append(bg, row)
				continue
			}
		}
		if row.Section == "tick" && len(bg) > 0 {
			t.Rows = append(t.Rows, bg...)
			bg = nil
		}
		t.Rows = append(t.Rows, row)
	}
	t.Rows = append(t.Rows, bg...)
}

// lateSamples reports whether s has a lateness sample for callback fn.
func lateSamples(s *replay.Score, fn string) bool {
	f := s.Funcs[fn]
	return f != nil && f.Lateness.Count() > 0
}

// callbackOf is the callback a row of replay.Table is about ("timer:
// process_timeout" of "timer:process_timeout lateness p50").
func callbackOf(row string) string {
	for _, suf := range []string{" starts", " expiries", " re-arms", " cancels", " lateness p50", " lateness p99"} {
		if fn, ok := strings.CutSuffix(row, suf); ok {
			return fn
		}
	}
	return row
}

// systemRows: local timer interrupts (/proc/interrupts LOC against the
// model's), context switches (sched_switch events in both traces) and CPU
// time by context (/proc/stat against the model's /proc/stat, the same
// columns by the kernel's accounting rules).
func (t *Table) systemRows(m *bundle.Manifest, res *experiment.Result, realSwitches, modelSwitches int64) {
	var loc, modelLoc int64
	hasLoc := false
	for _, c := range m.After.Interrupts {
		if c.Name == "LOC" {
			hasLoc = true
		}
	}
	for _, v := range bundle.Delta(m.Before.Interrupts, m.After.Interrupts, "LOC") {
		loc += int64(v)
	}
	for _, c := range res.Kernel.CPUs {
		modelLoc += c.LocalTimerIRQs
	}
	t.Rows = append(t.Rows,
		Row{Section: "interrupts", Name: "local timer interrupts (LOC)", Real: float64(loc), HasReal: hasLoc, Model: float64(modelLoc), HasModel: true, Class: ClassCount},
		Row{Section: "sched", Name: "context switches (sched_switch)", Real: float64(realSwitches), HasReal: true, Model: float64(modelSwitches), HasModel: true, Class: ClassCount})

	var real bundle.CPUStat
	hasStat := false
	for _, d := range bundle.StatDelta(m.Before.Stat, m.After.Stat) {
		if d.CPU == -1 {
			real, hasStat = d, true
		}
	}
	realTotal := float64(real.User + real.Nice + real.System + real.Idle + real.IOWait + real.IRQ + real.Softirq + real.Steal)
	// The model's /proc/stat as its accounting makes it (tick sampling,
	// irq time accounting as the kernel was built), summed over CPUs.
	var ps kernel.ProcStat
	for _, c := range res.Kernel.CPUs {
		p := c.ProcStat
		ps.User, ps.Nice, ps.System, ps.Idle = ps.User+p.User, ps.Nice+p.Nice, ps.System+p.System, ps.Idle+p.Idle
		ps.Iowait, ps.IRQ, ps.Softirq, ps.Steal = ps.Iowait+p.Iowait, ps.IRQ+p.IRQ, ps.Softirq+p.Softirq, ps.Steal+p.Steal
	}
	modelTotal := float64(ps.Total())
	share := func(name string, r uint64, mv int64) Row {
		row := Row{Section: "cpu time", Name: name, Unit: UnitShare, Class: ClassShare, HasReal: hasStat && realTotal > 0, HasModel: modelTotal > 0}
		if row.HasReal {
			row.Real = 100 * float64(r) / realTotal
		}
		if row.HasModel {
			row.Model = 100 * float64(mv) / modelTotal
		}
		return row
	}
	t.Rows = append(t.Rows,
		share("user (user + nice)", real.User+real.Nice, ps.User+ps.Nice),
		share("system", real.System, ps.System),
		share("idle (idle + iowait)", real.Idle+real.IOWait, ps.Idle+ps.Iowait),
		share("irq", real.IRQ, ps.IRQ),
		share("softirq", real.Softirq, ps.Softirq))
	if hasStat && real.Steal > 0 {
		t.Rows = append(t.Rows, Row{Section: "cpu time", Name: "steal", Unit: UnitShare, Real: 100 * float64(real.Steal) / realTotal, HasReal: true})
	}
}

// commandOutput is the command's stdout and stderr together (stress-ng
// writes its metrics to either, by version).
func commandOutput(b *bundle.Bundle) ([]byte, error) {
	var out []byte
	for _, name := range []string{bundle.StdoutName, bundle.StderrName} {
		has := false
		for _, n := range b.Names() {
			has = has || n == name
		}
		if !has {
			continue
		}
		data, err := b.File(name)
		if err != nil {
			return nil, err
		}
		out = append(out, data...)
	}
	return out, nil
}

// workloadRows: cyclictest's per-thread cycles, Min, Avg, Max (and p99
// with -h) from its output against the model's report; stress-ng's bogo
// ops/s per stressor.
func (t *Table) workloadRows(cmd *bundlescenario.Command, out []byte, res *experiment.Result, realObs, modelObs *observer) error {
	switch cmd.Tool {
	case "cyclictest":
		return t.cyclictestRows(cmd, out, res, realObs, modelObs)
	case "stress-ng":
		return t.stressNGRows(out, res)
	}
	return nil
}

func metric(b workload.BenchLine, name string) (float64, bool) {
	for _, m := range b.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

func (t *Table) cyclictestRows(cmd *bundlescenario.Command, out []byte, res *experiment.Result, realObs, modelObs *observer) error {
	real, err := ParseCyclictest(out)
	if err != nil {
		return fmt.Errorf("%s: %w", bundle.StdoutName, err)
	}
	nsecs := false
	for _, w := range cmd.Workloads {
		for _, a := range w.Attrs {
			if a.Name == "nsecs" && a.Value.True() {
				nsecs = true
			}
		}
	}
	unit := 1000.0 // cyclictest prints us, or ns with -N
	if nsecs {
		unit = 1
	}
	var model []workload.BenchLine
	for _, w := range res.Workloads {
		if w.Type == "cyclictest" {
			model = append(model, w.Bench...)
		}
	}
	threads := len(model)
	for _, w := range cmd.Workloads {
		for _, a := range w.Attrs {
			if a.Name == "threads" {
				f, _ := a.Value.AsBigFloat().Int64()
				threads = int(f)
			}
		}
	}
	realTh, modelTh := realObs.threads(threads), modelObs.threads(threads)
	n := max(len(real), len(model))
	for i := 0; i < n; i++ {
		var rt *CyclictestThread
		for j := range real {
			if real[j].Thread == i {
				rt = &real[j]
			}
		}
		var mb *workload.BenchLine
		if i < len(model) {
			mb = &model[i]
		}
		sec := fmt.Sprintf("cyclictest T:%d", i)
		add := func(name string, rv int64, rhas bool, mname string, scale float64, class Class, u Unit) {
			row := Row{Section: sec, Name: name, Unit: u, Class: class}
			if rt != nil && rhas {
				row.Real, row.HasReal = float64(rv), true
			}
			if mb != nil {
				if v, ok := metric(*mb, mname); ok {
					row.Model, row.HasModel = v*scale, true
				}
			}
			t.Rows = append(t.Rows, row)
		}
		lu := UnitUS
		if nsecs {
			lu = UnitCount
		}
		var c, mn, av, mx, p int64
		var hasC, hasP bool
		if rt != nil {
			c, hasC, mn, av, mx, p, hasP = rt.Cycles, rt.HasCycles, rt.Min, rt.Avg, rt.Max, rt.P99, rt.HasP99
		}
		add("cycles", c, hasC, "cycles", 1, ClassCount, UnitCount)
		// The model's ns, in cyclictest's unit, truncated as it prints.
		add("min latency", mn, true, "min-latency-ns", 1/unit, ClassLatency, lu)
		add("avg latency", av, true, "avg-latency-ns", 1/unit, ClassLatency, lu)
		add("max latency", mx, true, "max-latency-ns", 1/unit, ClassLatency, lu)
		if hasP {
			add("p99 latency (-h histogram)", p, true, "p99-latency-ns", 1/unit, ClassLatency, lu)
		}
		// From the traces, with or without -h: when the thread's sleep
		// timer fired against the time it asked for (the kernel's part
		// of the latency, before the wakeup and the switch).
		for _, q := range []struct {
			name string
			q    float64
		}{{"sleep timer lateness p50 (trace)", 0.5}, {"sleep timer lateness p99 (trace)", 0.99}} {
			row := Row{Section: sec, Name: q.name, Unit: UnitNS, Class: ClassLatency}
			if i < len(realTh) && realTh[i].Count() > 0 {
				row.Real, row.HasReal = float64(realTh[i].Quantile(q.q)), true
			}
			if i < len(modelTh) && modelTh[i].Count() > 0 {
				row.Model, row.HasModel = float64(modelTh[i].Quantile(q.q)), true
			}
			t.Rows = append(t.Rows, row)
		}
	}
	for i := range t.Rows {
		if strings.HasPrefix(t.Rows[i].Section, "cyclictest") && t.Rows[i].HasModel && t.Rows[i].Unit != UnitCount {
			t.Rows[i].Model = math.Trunc(t.Rows[i].Model)
		}
	}
	if len(real) == 0 {
		t.Notes = append(t.Notes, "cyclictest printed no T: lines or histogram summary (-v, --histfile?): its latencies are n/a")
	}
	return nil
}

func (t *Table) stressNGRows(out []byte, res *experiment.Result) error {
	real, err := ParseStressNG(out)
	if err != nil {
		return err
	}
	byName := map[string]StressNGMetric{}
	for _, r := range real {
		byName[r.Stressor] = r
	}
	var names []string
	model := map[string]workload.Report{}
	for _, w := range res.Workloads {
		if w.Type == "replay" {
			continue // the background
		}
		model[w.Name] = w
		names = append(names, w.Name)
	}
	sort.Strings(names)
	for _, n := range names {
		row := Row{Section: "stress-ng " + n, Name: "bogo ops/s (real time)", Unit: UnitRate, Class: ClassThroughput}
		if r, ok := byName[n]; ok {
			row.Real, row.HasReal = r.Rate, true
		}
		for _, b := range model[n].Bench {
			if v, ok := metric(b, "bogo-ops/s"); ok {
				row.Model, row.HasModel = v, true
			}
		}
		t.Rows = append(t.Rows, row)
		// The stressor's own metrics that the model reports too.
		for _, mm := range stressNGMisc {
			if mm.stressor != n {
				continue
			}
			row := Row{Section: "stress-ng " + n, Name: mm.name, Unit: mm.unit, Class: mm.class}
			if r, ok := byName[n]; ok {
				if v, ok := r.Misc[mm.name]; ok {
					row.Real, row.HasReal = v, true
				}
			}
			for _, b := range model[n].Bench {
				if v, ok := metric(b, mm.metric); ok {
					row.Model, row.HasModel = v, true
				}
			}
			if row.HasReal || row.HasModel {
				t.Rows = append(t.Rows, row)
			}
		}
	}
	if len(real) == 0 {
		t.Notes = append(t.Notes, "stress-ng printed no metrics lines (run it with --metrics-brief): bogo ops/s are n/a")
	}
	return nil
}

// stressNGMisc are the stressors' "miscellaneous metrics" (stress-ng
// --metrics, --metrics-brief) that a workload reports as well.
var stressNGMisc = []struct {
	stressor, name, metric string
	unit                   Unit
	class                  Class
}{
	// stress_metrics_set(args, 0, "nanosec sleep overrun", ...): the mean
	// of each sleep's wakeup less its request (stress-nanosleep.c).
	{"nanosleep", "nanosec sleep overrun", "sleep-overrun-ns", UnitNS, ClassLatency},
}
