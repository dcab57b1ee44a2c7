package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"golang.org/x/perf/benchfmt"

	"github.com/tickemu/tickemu/framework/config"
)

// CompareOptions configure Compare: which runs to make and how to summarise
// them.
type CompareOptions struct {
	// File names the configuration in reports.
	File string
	// Variants to run, in report order; Variants[0] is the base every other
	// variant is compared with.
	Variants []string
	// Seeds every variant runs, the same for all, in report order.
	Seeds []uint64
	// Sweeps are the experiment's sweeps (config.Spec.Sweeps): every
	// variant runs at each of their points.
	Sweeps []config.Sweep
	// Cells, when set, lists the cells of the grid to run (a shard,
	// Grid.Shard); the others are not run.
	Cells []int
	// Jobs is the number of runs simulated at once, each on its own
	// goroutine; values below 1 mean 1.
	Jobs int
	// Load evaluates the configuration of one run. It must behave as
	// `tickemu run FILE --variant V --seed S --sweep NAME=VALUE...` does,
	// so that each run of a comparison is that run. It is called from
	// several goroutines.
	Load func(c Cell) (*config.Spec, error)
	// Run holds the options every run shares; Run.Trace must be nil. Each
	// run logs through Run.Log with variant and seed fields.
	Run Options
	// Progress, when set, is called after each run ends with the number of
	// runs ended and the total, from one goroutine at a time.
	Progress func(done, total int)
	// Alpha is the significance level of the tests (default
	// stats.DefaultAlpha) and Confidence the level of the median intervals
	// (default stats.DefaultConfidence), as benchstat's -alpha and
	// -confidence.
	Alpha, Confidence float64
}

// RunOutcome is one run of a comparison: a (variant, point, seed) cell and
// what it gave.
type RunOutcome struct {
	Variant string
	Point   config.Point
	Seed    uint64
	// Result is nil when the run failed, and after a merge (the shards keep
	// what the reports need: Header, Bench and Metrics).
	Result *Result
	// Metrics are the run's benchmark metrics in bench-format order.
	Metrics []RunMetric
	// Header holds the run's bench configuration lines and Bench its
	// result lines with the sweep and variant keys, as `tickemu run
	// --format bench` writes them (BenchRecord).
	Header, Bench []string
	// Detail is what the HTML report shows of the run (DetailOf), kept
	// after a merge too; nil when the run failed.
	Detail *RunDetail
	// Err says why the run failed: a *DiagError for a configuration error,
	// an *sdk.TransportError for a plugin that died, a *PanicError for a
	// crash inside the process.
	Err error
}

// RunMetric is one value of one benchmark line: the unit in benchstat terms.
type RunMetric struct {
	// Bench is the benchmark name without "Benchmark" and without the
	// variant key: "Cyclictest/thread=0", "Kernel", "Kernel/hz=250".
	Bench  string  `json:"bench"`
	Unit   string  `json:"unit"`             // "max-latency-ns"
	Better string  `json:"better,omitempty"` // "higher" or "lower"
	Value  float64 `json:"value"`
}

// PanicError is a run that panicked (an in-process plugin crash, a model
// invariant violation). Stack is the goroutine's stack at the panic.
type PanicError struct {
	Value any
	Stack string
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// ErrNoVariants is returned when a comparison is asked to compare nothing.
var ErrNoVariants = errors.New("experiment: compare needs at least one variant and one seed")

// Compare runs every variant for every seed, spreading the runs over Jobs
// goroutines, and summarises the metrics. A failed run does not stop the
// others: it is recorded in Comparison.Failures, and the statistics use the
// runs that succeeded. The result does not depend on Jobs or on the order in
// which runs finish.
func Compare(o CompareOptions) (*Comparison, error) {
	if len(o.Variants) == 0 || len(o.Seeds) == 0 {
		return nil, ErrNoVariants
	}
	if o.Run.Trace != nil {
		return nil, errors.New("experiment: compare cannot trace; run a single variant and seed with a trace instead")
	}
	runs := RunMatrix(o)
	c := AnalyzeGrid(o.File, NewGrid(o.Variants, o.Sweeps, o.Seeds), runs, o.Alpha, o.Confidence)
	for _, r := range runs {
		if errors.Is(r.Err, ErrInterrupted) {
			c.Interrupted++
		}
	}
	return c, nil
}

// RunMatrix makes the runs of a comparison (o.Cells, or every cell of the
// grid) and returns the whole grid in Grid order (Grid.Index); cells not run
// have only their variant, point and seed set.
func RunMatrix(o CompareOptions) []RunOutcome {
	g := NewGrid(o.Variants, o.Sweeps, o.Seeds)
	out := make([]RunOutcome, g.Len())
	for i := range out {
		c := g.Cell(i)
		out[i] = RunOutcome{Variant: c.Variant, Point: c.Point, Seed: c.Seed}
	}
	order := runOrder(g, o.Cells)
	work := make(chan int)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range min(max(o.Jobs, 1), len(order)) {
		wg.Go(func() {
			for i := range work {
				if runCell(o, g.Cell(i), &out[i]) {
					done <- struct{}{}
				}
			}
		})
	}
	go func() {
		feedRuns(o.Run, order, work, out)
		close(work)
		wg.Wait()
		close(done)
	}()
	n := 0
	for range done {
		n++
		if o.Progress != nil {
			o.Progress(n, len(order))
		}
	}
	return out
}

// runOrder is the order in which the cells of g run: Grid.Order, kept to
// cells when that is not nil.
func runOrder(g Grid, cells []int) []int {
	order := g.Order()
	if cells != nil {
		want := map[int]bool{}
		for _, c := range cells {
			want[c] = true
		}
		order = slices.DeleteFunc(order, func(c int) bool { return !want[c] })
	}
	return order
}

// runCell makes the run of cell c into r, with its bench record and detail,
// and reports whether it started: a run handed out after o.Run.Stop or
// o.Run.Interrupt closed does not (the feeder's select picks at random
// between a free worker and a closed channel).
func runCell(o CompareOptions, c Cell, r *RunOutcome) bool {
	if interrupted(o.Run.Stop) || interrupted(o.Run.Interrupt) {
		r.Err = ErrInterrupted
		return false
	}
	r.Result, r.Metrics, r.Err = runOne(o, c)
	if r.Result != nil {
		// A run stopped by Run.Interrupt keeps its bench lines too, to be
		// shown marked INCOMPLETE.
		var err error
		if r.Header, r.Bench, err = BenchRecord(r.Result); r.Err == nil {
			r.Err = err
		}
	}
	if r.Err == nil {
		r.Detail = DetailOf(r.Result)
	}
	return true
}

// feedRuns hands the cells of order to the workers through work until
// they are all out or the runs are stopped. Closing ro.Stop ends the runs
// under way (ErrInterrupted), closing ro.Interrupt ends them with their
// partial results (IncompleteError); either way the runs not started are
// marked interrupted in out, so a comparison interrupted by SIGINT reports
// the runs that finished and no run that never started looks finished.
func feedRuns(ro Options, order []int, work chan<- int, out []RunOutcome) {
	for k, i := range order {
		select {
		case work <- i:
			continue
		case <-ro.Stop:
		case <-ro.Interrupt:
		}
		for _, j := range order[k:] {
			out[j].Err = ErrInterrupted
		}
		return
	}
}

// runOne makes one run, turning a panic into a *PanicError so that the
// other runs go on.
func runOne(o CompareOptions, c Cell) (res *Result, ms []RunMetric, err error) {
	ro := o.Run
	lc := o.Run.Log.With().Str("variant", c.Variant).Uint64("seed", c.Seed)
	if len(c.Point) > 0 {
		lc = lc.Str("point", c.Point.Key())
	}
	ro.Log = lc.Logger()
	defer func() {
		if r := recover(); r != nil {
			stack := string(debug.Stack())
			ro.Log.Error().Str("stack", stack).Msgf("run panicked: %v", r)
			res, ms, err = nil, nil, &PanicError{Value: r, Stack: stack}
		}
	}()
	spec, err := o.Load(c)
	if err != nil {
		return nil, nil, err
	}
	ro.Log.Debug().Msg("run started")
	res, err = Run(spec, ro)
	if err != nil {
		if interrupted(o.Run.Stop) || interrupted(o.Run.Interrupt) {
			// Its plugin processes were killed with the interrupt: the
			// run did not fail, it was not let finish.
			return nil, nil, ErrInterrupted
		}
		return nil, nil, err
	}
	if res.Incomplete != nil && !interrupted(o.Run.Interrupt) {
		// Statistics over runs of different lengths mean nothing.
		return nil, nil, fmt.Errorf("incomplete: %s", IncompleteText(res.Incomplete))
	}
	ms, err = BenchMetrics(res)
	if err != nil {
		return nil, nil, err
	}
	if res.Incomplete != nil {
		// Stopped by the interrupt after its current event: its partial
		// results are kept for the outputs to show, out of the statistics.
		ro.Log.Info().Uint64("events", res.Config.Events).Msg("run interrupted")
		return res, ms, &IncompleteError{Incomplete: res.Incomplete}
	}
	ro.Log.Info().Uint64("events", res.Config.Events).Msg("run finished")
	return res, ms, nil
}

// BenchMetrics returns the metrics of r as `tickemu run --format bench`
// writes them, read back with the parser benchstat uses, so that a
// comparison sees exactly what benchstat would. Units are the original ones
// (benchfmt's tidied "sec" units are for display).
func BenchMetrics(r *Result) ([]RunMetric, error) {
	var buf bytes.Buffer
	if err := WriteBench(&buf, r, BenchOptions{Units: true}); err != nil {
		return nil, err
	}
	rd := benchfmt.NewReader(&buf, "run")
	type pending struct {
		bench string
		vals  []benchfmt.Value
	}
	var lines []pending
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			lines = append(lines, pending{bench: string(rec.Name.Full()), vals: append([]benchfmt.Value(nil), rec.Values...)})
		case *benchfmt.SyntaxError:
			return nil, fmt.Errorf("bench output: %v", rec)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	units := rd.Units()
	var ms []RunMetric
	for _, l := range lines {
		for _, v := range l.vals {
			unit, value := v.Unit, v.Value
			if v.OrigUnit != "" {
				unit, value = v.OrigUnit, v.OrigValue
			}
			better := ""
			switch units.GetBetter(v.Unit) {
			case 1:
				better = "higher"
			case -1:
				better = "lower"
			}
			ms = append(ms, RunMetric{Bench: l.bench, Unit: unit, Better: better, Value: value})
		}
	}
	return ms, nil
}

// Failure is a run that failed, for reports.
type Failure struct {
	Variant string `json:"variant"`
	// Point is the sweep point as benchmark keys ("hz=250"); empty
	// without sweeps.
	Point string `json:"point,omitempty"`
	Seed  uint64 `json:"seed"`
	Error string `json:"error"`
	// Interrupted is set for a run the interrupt stopped or kept from
	// starting: it did not fail, it was not let finish.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Failures lists the failed runs in report order (variant, point, seed).
func Failures(runs []RunOutcome) []Failure {
	var fs []Failure
	for _, r := range runs {
		if r.Err != nil {
			fs = append(fs, Failure{Variant: r.Variant, Point: r.Point.Key(), Seed: r.Seed, Error: r.ErrorLine(),
				Interrupted: errors.Is(r.Err, ErrInterrupted)})
		}
	}
	return fs
}

// IncompleteError is the error of a comparison's run stopped by
// Options.Interrupt: the run is not a failure, and RunOutcome keeps its
// partial Result, bench lines and metrics, which the statistics leave out
// (they cover less simulated time than the others) and the outputs show
// marked INCOMPLETE. It is an ErrInterrupted (errors.Is).
type IncompleteError struct{ Incomplete *Incomplete }

func (e *IncompleteError) Error() string { return "INCOMPLETE: " + IncompleteText(e.Incomplete) }

// Is makes an IncompleteError count as interrupted.
func (e *IncompleteError) Is(target error) bool { return target == ErrInterrupted }

// ErrorLine is the first line of the run's error, as failure lists show it.
func (r RunOutcome) ErrorLine() string {
	s := strings.TrimSpace(r.Err.Error())
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// interrupted reports whether stop is closed.
func interrupted(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}
