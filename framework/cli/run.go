package cli

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tickemu/tickemu/framework/experiment"
)

func (a *App) cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, true)
	format := fs.String("format", "text", "output format: text, json or bench")
	traceFile := fs.String("trace", "", "write an ftrace-format trace to FILE")
	traceEvents := fs.String("trace-events", "", "comma-separated events or globs to trace (default all)")
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
	eo := experiment.Options{Opener: op, Isolation: c.isolation, Log: log, TraceEvents: *traceEvents}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			fmt.Fprintf(stderr, "tickemu: %v\n", err)
			return 1
		}
		defer f.Close()
		eo.Trace = f
	}
	res, err := experiment.Run(spec, eo)
	if err != nil {
		return reportError(stderr, err)
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	switch *format {
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
