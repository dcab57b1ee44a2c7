package cli

import (
	"bufio"
	"flag"
	"fmt"
	"io"

	"github.com/tickemu/tickemu/framework/experiment"
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
	if wantsHelp(fs, "tickemu run FILE [flags]", "run a scenario once and print its summary (or JSON, or benchmark lines)", args, stdout) {
		return 0
	}
	file, ok := parseFile(fs, args, stderr)
	if !ok {
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
	op, closeOp, err := a.newOpener(&c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2 // a bad plugin flag, lock file or reattach value
	}
	defer closeOp()
	eo := eoTrace
	eo.Opener, eo.Isolation, eo.Log = op, c.isolation, log
	// Progress on a terminal only; it is erased before the summary.
	prog := newRunProgress(stderr)
	if prog != nil {
		eo.Progress = prog.update
	}
	run := func() (*experiment.Result, error) {
		res, err := experiment.Run(spec, eo)
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
		if cerr := f.Close(); cerr != nil && err == nil {
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

// finishRun prints the result and writes the report, if asked.
func (a *App) finishRun(stdout, stderr io.Writer, format, reportFile, file string, res *experiment.Result) int {
	if code := writeRunResult(stdout, stderr, format, res); code != 0 || reportFile == "" {
		return code
	}
	cmp, err := runComparison(file, res)
	if err == nil {
		err = writeReport(reportFile, file, cmp)
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
	defer w.Flush()
	switch format {
	case "json":
		err = experiment.WriteJSON(w, res)
	case "bench":
		err = experiment.WriteBench(w, res, experiment.BenchOptions{VariantKey: res.Config.Variant != "", Header: true, Units: true})
	default:
		err = experiment.WriteText(w, res)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	return 0
}
