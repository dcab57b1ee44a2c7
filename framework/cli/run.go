package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/internal/outfile"
	"github.com/tickemu/tickemu/framework/resultfmt"
)

// runFlags are `tickemu run`'s flags.
type runFlags struct {
	c          common
	tf         traceFlags
	file       string
	format     string
	reportFile string
	cpuProfile string
	maxWall    time.Duration
	counters   bool
}

// parseRunFlags parses run's command line; ok is false with the status to
// exit with (0 after --help).
func parseRunFlags(args []string, stdout, stderr io.Writer) (f *runFlags, status int, ok bool) {
	f = &runFlags{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.c.register(fs, true)
	f.c.registerPluginStats(fs)
	fs.StringVar(&f.format, "format", "text", "output format: text, json or bench")
	f.tf.register(fs)
	fs.StringVar(&f.reportFile, "report", "", "also write an HTML report (plots, counters, worst cases) to FILE")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run (pprof format, for go tool pprof) to FILE")
	fs.DurationVar(&f.maxWall, "max-wall", 0, "stop the run after this much wall-clock time, printing the results so far marked incomplete (overrides run.max_wall; -1s: no bound)")
	fs.BoolVar(&f.counters, "counters", false, "list every plugin's raw counters in the text summary (by default one line counts them)")
	if wantsHelp(fs, "tickemu run FILE [flags]", "run a scenario once and print its summary (or JSON, or benchmark lines)", args, stdout) {
		return nil, 0, false
	}
	if f.file, ok = parseFile(fs, args, stderr); !ok || !outputsAreNotInputs(stderr, []string{f.file}, [2]string{"--trace", f.tf.file},
		[2]string{"--report", f.reportFile}, [2]string{"--cpuprofile", f.cpuProfile}) {
		return nil, 2, false
	}
	switch f.format {
	case "text", "json", "bench":
	default:
		fmt.Fprintf(stderr, "tickemu: --format %q: want text, json or bench\n", f.format)
		return nil, 2, false
	}
	return f, 0, true
}

func (a *App) cmdRun(args []string, stdout, stderr io.Writer) int {
	f, status, ok := parseRunFlags(args, stdout, stderr)
	if !ok {
		return status
	}
	opts, log, ok := f.c.setup(stderr)
	if !ok {
		return 2
	}
	var eo experiment.Options
	if err := f.tf.options(&eo, log); err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	spec, ok := f.c.loadSpec(f.file, opts)
	if !ok {
		return 2
	}
	if sweeps := spec.Sweeps(); len(sweeps) > 0 {
		if len(config.Points(sweeps)) > 1 {
			if f.tf.file != "" || f.tf.breakUS != 0 || f.cpuProfile != "" {
				fmt.Fprintln(stderr, "tickemu: --trace, --breaktrace and --cpuprofile take one run: pick one sweep point (--sweep NAME=VALUE for each swept setting)")
				return 2
			}
			return a.runSweep(stdout, stderr, f, opts, log, spec)
		}
		// One point: the run is that point's.
		o := opts
		o.Point = config.PointIndex(sweeps, 0)
		if spec, ok = f.c.loadSpec(f.file, o); !ok {
			return 2
		}
	}
	op, closeOp, err := a.newOpener(&f.c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2 // a bad plugin flag, lock file or reattach value
	}
	defer closeOp()
	eo.Opener, eo.Isolation, eo.Log, eo.OnWarnings = op, f.c.isolation, log, f.c.diags.write
	eo.CallTimeout = f.c.pluginCallTimeout()
	eo.PluginStats = f.c.pluginStats
	eo.MaxWall = f.maxWall
	eo.OnWallEstimate = func(e experiment.WallEstimate) { printWallEstimate(stderr, e) }
	res, out, status := runOnce(spec, eo, f, stdout, stderr)
	if res == nil {
		return status
	}
	if code := a.finishRun(out, stderr, f, res); status == 0 {
		status = code
	}
	if status == 0 && f.format == "text" && opts.Variant == "" && f.tf.file == "" && f.reportFile == "" && len(spec.Variants()) > 0 {
		printCompareHint(stderr, f.file, spec.Variants())
	}
	return status
}

// runOnce runs spec with the trace, the CPU profile, the progress line and
// the interrupt run's flags ask for. It returns the result (nil after an
// error, reported), where to print it (stderr when the trace owns stdout)
// and the status a signal set (0 without one).
func runOnce(spec *config.Spec, eo experiment.Options, f *runFlags, stdout, stderr io.Writer) (*experiment.Result, io.Writer, int) {
	// Progress on a terminal only; it is erased before the summary.
	prog := newRunProgress(stderr)
	if prog != nil {
		eo.Progress = prog.update
	}
	defer prog.finish()
	// SIGINT or SIGTERM stops the run, not the process: the results so
	// far are printed, marked incomplete, as at --max-wall, and the status
	// is 128+signal.
	interrupt := make(chan struct{})
	var caught atomic.Value // os.Signal
	defer onInterruptKeepPlugins("stopping; the results so far are printed, marked INCOMPLETE", func(s os.Signal) {
		caught.Store(s)
		close(interrupt)
	})()
	eo.Interrupt = interrupt
	trace, err := openRunTrace(f.tf.file, &eo)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: --trace: %v\n", err)
		return nil, nil, 1
	}
	if f.tf.file == "-" {
		stdout = stderr // the trace owns standard output
	}
	stop, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return nil, nil, 2
	}
	res, err := experiment.Run(spec, eo)
	if perr := stop(); perr != nil { // the run's results still count
		fmt.Fprintf(stderr, "tickemu: %v\n", perr)
	}
	err = closeRunTrace(trace, err)
	prog.finish()
	s, _ := caught.Load().(os.Signal)
	return runStatus(res, err, s, stdout, stderr)
}

// openRunTrace opens --trace FILE (none: "") as the run's trace.
func openRunTrace(file string, eo *experiment.Options) (traceOutput, error) {
	if file == "" {
		return nil, nil
	}
	trace, err := openTrace(file)
	if err != nil {
		return nil, err
	}
	eo.Trace = trace
	return trace, nil
}

// closeRunTrace keeps the trace of a run that ended without error (runErr)
// and discards any other; it returns the run's error, or the trace's.
func closeRunTrace(trace traceOutput, runErr error) error {
	if trace == nil {
		return runErr
	}
	if runErr != nil {
		trace.Discard()
	} else if cerr := trace.Commit(); cerr != nil {
		return fmt.Errorf("trace: %w", cerr)
	}
	return runErr
}

// runStatus is runOnce's answer for the run's result and error and the
// signal s that stopped it (nil: none).
func runStatus(res *experiment.Result, err error, s os.Signal, stdout, stderr io.Writer) (*experiment.Result, io.Writer, int) {
	signalled := s != nil
	switch {
	case err != nil && signalled:
		// The run failed after the signal (a plugin that died with it, or
		// its own error): no result to print.
		fmt.Fprintf(stderr, "tickemu: %v: stopped: no results (%s)\n", s, oneLine(err))
		return nil, nil, signalStatus(s)
	case err != nil:
		return nil, nil, reportError(stderr, err)
	case signalled:
		return res, stdout, signalStatus(s)
	}
	return res, stdout, 0
}

// printCompareHint says, after a run of a file with variants, how to
// compare them: a first run of the default scenario shows one variant of
// three.
func printCompareHint(stderr io.Writer, file string, variants []string) {
	fmt.Fprintf(stderr, "tickemu: %s has %d variants (%s); this was the file as written. Next: tickemu compare %s --report report.html runs each over 10 seeds and writes an HTML report\n",
		file, len(variants), strings.Join(variants, ", "), file)
}

// printWallEstimate tells, early, how long a long run will take.
func printWallEstimate(stderr io.Writer, e experiment.WallEstimate) {
	bound := "run.max_wall or --max-wall bounds it"
	if e.MaxWall > 0 {
		bound = fmt.Sprintf("it stops at max_wall %v", e.MaxWall)
	}
	fmt.Fprintf(stderr, "tickemu: this run simulates %s; at its pace so far (%s in %v) it takes about %v of wall time; %s\n",
		experiment.FormatSpan(int64(e.End)), experiment.FormatSpan(int64(e.Reached)), e.Elapsed.Round(time.Millisecond),
		e.Total.Round(time.Second), bound)
}

// finishRun prints the result and writes the report, if asked. An incomplete
// run (stopped at max_wall) prints its results and exits 1.
func (a *App) finishRun(stdout, stderr io.Writer, f *runFlags, res *experiment.Result) int {
	code := writeRunResult(stdout, stderr, f.format, f.counters, res)
	if code == 0 && res.Incomplete != nil {
		fmt.Fprintf(stderr, "tickemu: run stopped at %s of %s simulated (%s): the results printed are incomplete\n",
			experiment.FormatSpan(res.Incomplete.ReachedNS), experiment.FormatSpan(res.Incomplete.EndNS), res.Incomplete.Reason)
		code = 1
	}
	if code != 0 || f.reportFile == "" {
		return code
	}
	cmp, err := runComparison(f.file, res)
	var src []byte
	if err == nil {
		if src, err = config.ReadFile(f.file); err != nil {
			err = fmt.Errorf("--report: %v", err)
		}
	}
	if err == nil {
		err = writeReport(f.reportFile, f.file, src, cmp)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	return 0
}

// writeRunResult prints a run's result in format.
func writeRunResult(stdout, stderr io.Writer, format string, counters bool, res *experiment.Result) int {
	var err error
	w := bufio.NewWriter(stdout)
	switch format {
	case "json":
		err = resultfmt.WriteJSON(w, res)
	case "bench":
		err = experiment.WriteBench(w, res, experiment.BenchOptions{VariantKey: res.Config.Variant != "", Header: true, Units: true})
	default:
		err = resultfmt.WriteTextWith(w, res, resultfmt.TextOptions{FoldCounters: !counters})
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: cannot write the results: %v\n", err)
		return 1
	}
	return 0
}

// runSweep runs every point of the file's sweeps, one after another, and
// prints each run: text summaries one after another, a JSON array, or one
// bench file (the configuration lines the points share as its header, the
// others as "# POINT: line" comments, as compare writes them). --report
// writes the sweep's HTML report, as compare's with one seed.
func (a *App) runSweep(stdout, stderr io.Writer, f *runFlags, opts config.Options, log zerolog.Logger, spec *config.Spec) int {
	c, file, format, reportFile := &f.c, f.file, f.format, f.reportFile
	op, closeOp, err := a.newOpener(c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	defer closeOp()
	src, err := config.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	co := experiment.CompareOptions{File: file, Variants: []string{opts.Variant}, Sweeps: spec.Sweeps(), Seeds: []uint64{spec.Run.Seed}, Jobs: 1,
		Run: c.runOptions(op, log)}
	loadWith := c.loader(file, src, opts)
	co.Load = func(cell experiment.Cell) (*config.Spec, error) {
		return loadWith(func(o *config.Options) { o.Point = cell.PointIndex })
	}
	co.Run.MaxWall = f.maxWall
	bar := newProgressBar(stderr, "sweep")
	if bar != nil {
		co.Progress = bar.update
		c.diags.setClear(bar.clear)
	}
	// SIGINT or SIGTERM stops the sweep as it stops compare: the points
	// that finished are printed, the one under way ends after its current
	// event and is printed marked INCOMPLETE, the others are marked.
	stop := make(chan struct{})
	var caught atomic.Value // os.Signal
	removeHandler := onInterruptKeepPlugins("stopping after the current event; the points that finished are printed, the one stopped marked INCOMPLETE", func(s os.Signal) {
		caught.Store(s)
		close(stop)
	})
	co.Run.Interrupt = stop
	cmp, err := experiment.Compare(co)
	removeHandler()
	bar.finish()
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	status := reportFailures(stderr, cmp)
	if s, ok := caught.Load().(os.Signal); ok {
		defer fmt.Fprintf(stderr, "tickemu: sweep interrupted by %v: %d of %d points finished and are printed; %d stopped early (printed, marked INCOMPLETE), %d not started\n",
			s, len(cmp.Runs)-len(cmp.Failures), len(cmp.Runs), len(cmp.IncompleteRuns), cmp.Interrupted-len(cmp.IncompleteRuns))
		status = signalStatus(s)
	}
	if err := writeSweep(stdout, format, f.counters, cmp); err != nil {
		fmt.Fprintf(stderr, "tickemu: cannot write the results: %v\n", err)
		return 1
	}
	if reportFile != "" {
		if err := writeReport(reportFile, file, src, cmp); err != nil {
			fmt.Fprintf(stderr, "tickemu: %v\n", err)
			return 1
		}
	}
	return status
}

// writeSweep prints a sweep's runs in format: one bench file, a JSON array
// of the results, or the text summaries one after another.
func writeSweep(stdout io.Writer, format string, counters bool, cmp *experiment.Comparison) error {
	var err error
	w := bufio.NewWriter(stdout)
	switch format {
	case "bench":
		err = resultfmt.WriteSweepBench(w, cmp)
	case "json":
		var results []*experiment.Result
		for _, r := range cmp.Runs {
			if r.Result != nil {
				results = append(results, r.Result)
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		err = enc.Encode(results)
	default:
		for i, r := range cmp.Runs {
			if r.Result == nil {
				continue
			}
			if i > 0 {
				w.WriteString("\n")
			}
			if err = resultfmt.WriteTextWith(w, r.Result, resultfmt.TextOptions{FoldCounters: !counters}); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = w.Flush()
	}
	return err
}

// startCPUProfile starts a CPU profile into file (none: ""); stop ends it and
// closes the file. The profile covers the run alone, not the start-up or the
// printing, so it is the engine's.
func startCPUProfile(file string) (stop func() error, err error) {
	if file == "" {
		return func() error { return nil }, nil
	}
	f, err := outfile.Create(file)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Discard()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Commit(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}
