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
func (a *App) cmdBisect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bisect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, false)
	good := fs.String("good", "", "the good kernel: a release (\"6.12\") or a modelled change's commit id")
	bad := fs.String("bad", "", "the bad kernel: a release or a modelled change's commit id")
	metric := fs.String("metric", "", "the metric: a unit (\"bogo-ops/s\") or BENCH.UNIT (\"Timermix.bogo-ops/s\")")
	seeds := fs.Int("seeds", 5, "seeds every state runs")
	first := fs.String("seed", "", "first seed (default: the file's run.seed)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "runs simulated in parallel")
	format := fs.String("format", "text", "output format: text or json")
	alpha := fs.Float64("alpha", 0.05, "significance level of the tests")
	few := fs.Int("each", bisect.DefaultFew, "with at most this many changes, measure each alone and left out; with more, binary-search")
	if wantsHelp(fs, "tickemu bisect FILE --good A --bad B --metric NAME [flags]", "find which modelled kernel change between two releases moves a metric", args, stdout) {
		return 0
	}
	file, ok := parseFile(fs, args, stderr)
	if !ok {
		return 2
	}
	switch {
	case *good == "" || *bad == "" || *metric == "":
		fmt.Fprintf(stderr, "tickemu: bisect needs --good, --bad and --metric\n")
		return 2
	case *format != "text" && *format != "json":
		fmt.Fprintf(stderr, "tickemu: --format %q: want text or json\n", *format)
		return 2
	case *seeds < 1 || *jobs < 1 || *few < 1:
		fmt.Fprintf(stderr, "tickemu: --seeds, --jobs and --each want at least 1\n")
		return 2
	case *alpha <= 0 || *alpha >= 1:
		fmt.Fprintf(stderr, "tickemu: --alpha %v: want a level between 0 and 1\n", *alpha)
		return 2
	case c.kernelVersion != "":
		fmt.Fprintf(stderr, "tickemu: bisect sets the kernel version itself: use --good and --bad, not --kernel-version\n")
		return 2
	}
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
	start := spec.Run.Seed
	if *first != "" {
		if start, err = strconv.ParseUint(*first, 10, 64); err != nil {
			fmt.Fprintf(stderr, "tickemu: --seed %q: want a non-negative integer\n", *first)
			return 2
		}
	}
	seedList := make([]uint64, *seeds)
	for i := range seedList {
		seedList[i] = start + uint64(i)
	}
	op, closeOp, err := a.newOpener(&c, log)
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
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400) // many short runs, as compare
	}
	loadWith := c.loader(file, src, opts)
	load := func(presets map[kernelversion.Key]string, seed uint64) (*config.Spec, error) {
		return loadWith(func(o *config.Options) { o.Seed, o.Presets = &seed, presets })
	}
	bo := bisect.Options{File: file, Table: table, Good: *good, Bad: *bad, Metric: *metric, Seeds: seedList,
		Jobs: *jobs, Alpha: *alpha, Few: *few, Load: load,
		Overrides: func(s *config.Spec) ([]config.Override, error) { return experiment.Overrides(s, op) },
		Run:       c.runOptions(op, log)}
	bar := newProgressBar(stderr, "bisect")
	if bar != nil {
		bo.Progress = bar.update
		c.diags.setClear(bar.clear)
	}
	rep, err := bisect.Run(bo)
	bar.finish()
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
	if *format == "json" {
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
