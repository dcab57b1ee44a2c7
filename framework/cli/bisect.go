package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/bisect"
	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/kernelversion"
)

// cmdBisect finds the modelled kernel change that moves a metric:
//
//	tickemu bisect FILE --good A --bad B --metric NAME [--seeds N] [--seed FIRST]
//	                    [--jobs N] [--format text|json] [--var k=v] [--isolation ...]
//
// A and B are releases ("6.12") or the commit ids of modelled changes. The
// changes between them (docs/kernel-changes.md) are applied one by one to
// the file, each state run over the same seeds and compared as `tickemu
// compare` does. Exit status: 0 when the bisection ran (whether or not a
// change explains the metric), 1 when runs failed, 2 for bad usage or
// configuration.
// bisectFlags are bisect's flags.
type bisectFlags struct {
	c                              common
	file, good, bad, metric, first string
	format                         string
	seeds, jobs, few               int
	alpha                          float64
}

// parseBisectFlags parses bisect's command line and checks it; ok is false
// with the status to exit with (0 after --help).
func parseBisectFlags(args []string, stdout, stderr io.Writer) (f *bisectFlags, status int, ok bool) {
	f = &bisectFlags{}
	fs := flag.NewFlagSet("bisect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.c.register(fs, false)
	fs.StringVar(&f.good, "good", "", "the good kernel: a release (\"6.12\") or a modelled change's commit id")
	fs.StringVar(&f.bad, "bad", "", "the bad kernel: a release or a modelled change's commit id")
	fs.StringVar(&f.metric, "metric", "", "the metric: a unit (\"bogo-ops/s\") or BENCH.UNIT (\"Timermix.bogo-ops/s\")")
	fs.IntVar(&f.seeds, "seeds", 5, "seeds every state runs")
	fs.StringVar(&f.first, "seed", "", "first seed (default: the file's run.seed)")
	fs.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "runs simulated in parallel")
	fs.StringVar(&f.format, "format", "text", "output format: text or json")
	fs.Float64Var(&f.alpha, "alpha", 0.05, "significance level of the tests")
	fs.IntVar(&f.few, "each", bisect.DefaultFew, "with at most this many changes, measure each alone and left out; with more, binary-search")
	if wantsHelp(fs, "tickemu bisect FILE --good A --bad B --metric NAME [flags]", "find which modelled kernel change between two releases moves a metric", args, stdout) {
		return nil, 0, false
	}
	if f.file, ok = parseFile(fs, args, stderr); !ok {
		return nil, 2, false
	}
	var err error
	switch {
	case f.good == "" || f.bad == "" || f.metric == "":
		err = errors.New("bisect needs --good, --bad and --metric")
	case f.format != "text" && f.format != "json":
		err = fmt.Errorf("--format %q: want text or json", f.format)
	case f.seeds < 1 || f.jobs < 1 || f.few < 1:
		err = errors.New("--seeds, --jobs and --each want at least 1")
	case f.alpha <= 0 || f.alpha >= 1:
		err = fmt.Errorf("--alpha %v: want a level between 0 and 1", f.alpha)
	case f.c.kernelVersion != "":
		err = errors.New("bisect sets the kernel version itself: use --good and --bad, not --kernel-version")
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return nil, 2, false
	}
	return f, 0, true
}

func (a *App) cmdBisect(args []string, stdout, stderr io.Writer) int {
	f, status, ok := parseBisectFlags(args, stdout, stderr)
	if !ok {
		return status
	}
	c, file := &f.c, f.file
	opts, log, ok := c.setup(stderr)
	if !ok {
		return 2
	}
	src, err := config.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	spec, ok := c.loadSpecBytes(file, src, opts)
	if !ok {
		return 2
	}
	if sweeps := spec.Sweeps(); len(sweeps) > 0 {
		// Bisect compares states of one scenario: a sweep (the file's or
		// --sweep) must name one point, which every state runs at, as run
		// does with a single point.
		if len(config.Points(sweeps)) > 1 {
			fmt.Fprintf(stderr, "tickemu: bisect runs one point of %s's sweeps (%s): pick one value for each swept setting (--sweep NAME=VALUE)\n", file, sweepNames(sweeps))
			return 2
		}
		opts.Point = config.PointIndex(sweeps, 0)
		if spec, ok = c.loadSpecBytes(file, src, opts); !ok {
			return 2
		}
	}
	seedList, ok := f.seedList(spec.Run.Seed, stderr)
	if !ok {
		return 2
	}
	op, closeOp, err := a.newOpener(c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	defer closeOp()
	table, err := experiment.ScenarioTable(spec, op)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %s: %v\n", file, err)
		return 2
	}
	bo := f.options(src, opts, op, log, table, seedList)
	return f.run(bo, stdout, stderr)
}

// sweepNames lists the swept settings, as written.
func sweepNames(sweeps []config.Sweep) string {
	names := make([]string, len(sweeps))
	for i, s := range sweeps {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// seedList is --seeds seeds from --seed (default the file's run.seed); ok
// is false after saying why --seed is wrong.
func (f *bisectFlags) seedList(fileSeed uint64, stderr io.Writer) ([]uint64, bool) {
	start := fileSeed
	if f.first != "" {
		var err error
		if start, err = strconv.ParseUint(f.first, 10, 64); err != nil {
			fmt.Fprintf(stderr, "tickemu: --seed %q: want a non-negative integer\n", f.first)
			return nil, false
		}
	}
	seedList := make([]uint64, f.seeds)
	for i := range seedList {
		seedList[i] = start + uint64(i)
	}
	return seedList, true
}

// options are the bisection's options: each step loads the file with the
// step's presets and a seed, and runs as compare's runs do.
func (f *bisectFlags) options(src []byte, opts config.Options, op experiment.Opener, log zerolog.Logger, table *kernelversion.Table, seedList []uint64) bisect.Options {
	c, file := &f.c, f.file
	loadWith := c.loader(file, src, opts)
	load := func(presets map[kernelversion.Key]string, seed uint64) (*config.Spec, error) {
		return loadWith(func(o *config.Options) { o.Seed, o.Presets = &seed, presets })
	}
	return bisect.Options{File: file, Table: table, Good: f.good, Bad: f.bad, Metric: f.metric, Seeds: seedList,
		Jobs: f.jobs, Alpha: f.alpha, Few: f.few, Load: load,
		Overrides: func(s *config.Spec) ([]config.Override, error) { return experiment.Overrides(s, op) },
		Run:       c.runOptions(op, log)}
}

// run bisects with a progress bar and writes the report.
func (f *bisectFlags) run(bo bisect.Options, stdout, stderr io.Writer) int {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400) // many short runs, as compare
	}
	bar := newProgressBar(stderr, "bisect")
	if bar != nil {
		bo.Progress = bar.update
		f.c.diags.setClear(bar.clear)
	}
	rep, err := bisect.Run(bo)
	bar.finish()
	return writeBisect(stdout, stderr, f.file, f.format, rep, err)
}

func writeBisect(stdout, stderr io.Writer, file, format string, rep *bisect.Report, err error) int {
	if err != nil {
		var de *experiment.DiagError
		if errors.As(err, &de) {
			return reportError(stderr, err)
		}
		fmt.Fprintf(stderr, "tickemu: bisect %s: %v\n", file, err)
		if rep != nil && len(rep.Failures) > 0 {
			for _, f := range rep.Failures {
				fmt.Fprintf(stderr, "tickemu: %s seed %d failed: %s\n", f.Variant, f.Seed, f.Error)
			}
			return 1
		}
		return 2
	}
	w := bufio.NewWriter(stdout)
	if format == "json" {
		err = bisect.WriteJSON(w, rep)
	} else {
		err = bisect.WriteText(w, rep)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	if len(rep.Failures) > 0 {
		return 1
	}
	return 0
}
