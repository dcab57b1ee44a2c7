package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime/pprof"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/internal/outfile"
	"github.com/tickemu/tickemu/framework/resultfmt"
)

func (a *App) cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, true)
	format := fs.String("format", "text", "output format: text, json or bench")
	var tf traceFlags
	tf.register(fs)
	reportFile := fs.String("report", "", "also write an HTML report (plots, counters, worst cases) to FILE")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the run (pprof format, for go tool pprof) to FILE")
	maxWall := fs.Duration("max-wall", 0, "stop the run after this much wall-clock time, printing the results so far marked incomplete (overrides run.max_wall; -1s: no bound)")
	if wantsHelp(fs, "tickemu run FILE [flags]", "run a scenario once and print its summary (or JSON, or benchmark lines)", args, stdout) {
		return 0
	}
	file, ok := parseFile(fs, args, stderr)
	if !ok || !outputsAreNotInputs(stderr, []string{file}, [2]string{"--trace", tf.file}, [2]string{"--report", *reportFile},
		[2]string{"--cpuprofile", *cpuProfile}) {
		return 2
	}
	switch *format {
	case "text", "json", "bench":
	default:
		fmt.Fprintf(stderr, "tickemu: --format %q: want text, json or bench\n", *format)
		return 2
	}
	opts, log, ok := c.setup(stderr)
	if !ok {
		return 2
	}
	var eoTrace experiment.Options
	if err := tf.options(&eoTrace, log); err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	spec, ok := loadSpec(file, opts, stderr)
	if !ok {
		return 2
	}
	if sweeps := spec.Sweeps(); len(sweeps) > 0 {
		if len(config.Points(sweeps)) > 1 {
			if tf.file != "" || tf.breakUS != 0 || *cpuProfile != "" {
				fmt.Fprintln(stderr, "tickemu: --trace, --breaktrace and --cpuprofile take one run: pick one sweep point (--sweep NAME=VALUE for each swept setting)")
				return 2
			}
			return a.runSweep(stdout, stderr, &c, opts, log, file, spec, *format, *reportFile, *maxWall)
		}
		// One point: the run is that point's.
		o := opts
		o.Point = config.PointIndex(sweeps, 0)
		if spec, ok = loadSpec(file, o, stderr); !ok {
			return 2
		}
	}
	op, closeOp, err := a.newOpener(&c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2 // a bad plugin flag, lock file or reattach value
	}
	defer closeOp()
	eo := eoTrace
	eo.Opener, eo.Isolation, eo.Log = op, c.isolation, log
	eo.MaxWall = *maxWall
	eo.OnWallEstimate = func(e experiment.WallEstimate) { printWallEstimate(stderr, e) }
	// Progress on a terminal only; it is erased before the summary.
	prog := newRunProgress(stderr)
	if prog != nil {
		eo.Progress = prog.update
	}
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	run := func() (*experiment.Result, error) {
		res, err := experiment.Run(spec, eo)
		if perr := stop(); perr != nil { // the run's results still count
			fmt.Fprintf(stderr, "tickemu: %v\n", perr)
		}
		prog.finish()
		return res, err
	}
	if tf.file != "" {
		f, err := openTrace(tf.file)
		if err != nil {
			fmt.Fprintf(stderr, "tickemu: --trace: %v\n", err)
			return 1
		}
		eo.Trace = f
		if tf.file == "-" {
			stdout = stderr // the trace owns standard output
		}
		res, err := run()
		if err != nil {
			f.Discard()
		} else if cerr := f.Commit(); cerr != nil {
			err = fmt.Errorf("trace: %w", cerr)
		}
		if err != nil {
			return reportError(stderr, err)
		}
		return a.finishRun(stdout, stderr, *format, *reportFile, file, res)
	}
	res, err := run()
	if err != nil {
		return reportError(stderr, err)
	}
	return a.finishRun(stdout, stderr, *format, *reportFile, file, res)
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
func (a *App) finishRun(stdout, stderr io.Writer, format, reportFile, file string, res *experiment.Result) int {
	code := writeRunResult(stdout, stderr, format, res)
	if code == 0 && res.Incomplete != nil {
		fmt.Fprintf(stderr, "tickemu: run stopped at %s of %s simulated (%s): the results printed are incomplete\n",
			experiment.FormatSpan(res.Incomplete.ReachedNS), experiment.FormatSpan(res.Incomplete.EndNS), res.Incomplete.Reason)
		code = 1
	}
	if code != 0 || reportFile == "" {
		return code
	}
	cmp, err := runComparison(file, res)
	var src []byte
	if err == nil {
		if src, err = config.ReadFile(file); err != nil {
			err = fmt.Errorf("--report: %v", err)
		}
	}
	if err == nil {
		err = writeReport(reportFile, file, src, cmp)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	return 0
}

// writeRunResult prints a run's result in format.
func writeRunResult(stdout, stderr io.Writer, format string, res *experiment.Result) int {
	var err error
	w := bufio.NewWriter(stdout)
	switch format {
	case "json":
		err = resultfmt.WriteJSON(w, res)
	case "bench":
		err = experiment.WriteBench(w, res, experiment.BenchOptions{VariantKey: res.Config.Variant != "", Header: true, Units: true})
	default:
		err = resultfmt.WriteText(w, res)
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
func (a *App) runSweep(stdout, stderr io.Writer, c *common, opts config.Options, log zerolog.Logger, file string, spec *config.Spec, format, reportFile string, maxWall time.Duration) int {
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
		Load: func(cell experiment.Cell) (*config.Spec, error) {
			o := opts
			o.Point = cell.PointIndex
			s, diags := config.LoadBytes(file, src, o)
			if diags.HasErrors() {
				return nil, &experiment.DiagError{Diags: diags, Files: s.Files()}
			}
			return s, nil
		},
		Run: experiment.Options{Opener: op, Isolation: c.isolation, Log: log, MaxWall: maxWall}}
	cmp, err := experiment.Compare(co)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	status := reportFailures(stderr, cmp)
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
			if err = resultfmt.WriteText(w, r.Result); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
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
