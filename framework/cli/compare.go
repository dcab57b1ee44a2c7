package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/resultfmt"
	"github.com/tickemu/tickemu/framework/sdk"
)

// cmdCompare runs variants of a scenario across sweep points and seeds and
// compares them:
//
//	tickemu compare FILE [--variants a,b | --no-variants] [--sweep NAME=V1,V2]...
//	                     [--seeds N] [--seed FIRST] [--jobs N]
//	                     [--format text|json|bench|csv] [--alpha A] [--var k=v]
//	                     [--isolation inprocess|process]
//	                     [--shard I/N | --emit slurm|k8s --shards N ...]
//
// Every listed variant (default: all, in file order; the first is the base)
// runs at every sweep point for the seeds FIRST..FIRST+N-1, FIRST defaulting
// to the file's run.seed. Each run is the run `tickemu run FILE --variant V
// --seed S --sweep NAME=VALUE...` makes. --shard runs one share of these runs
// and writes their raw results for `tickemu merge`; --emit writes a cluster
// job that runs every shard and merges them. Exit status: 0 when every run
// succeeded, 1 when some run failed (the others' results are still
// written), 2 for bad usage or a configuration error that affects every run.
func (a *App) cmdCompare(args []string, stdout, stderr io.Writer) int {
	f, status, ok := parseCompareFlags(args, stdout, stderr)
	if !ok {
		return status
	}
	opts, log, ok := f.c.setup(stderr)
	if !ok {
		return 2
	}
	pl, ok := f.plan(opts, stderr)
	if !ok {
		return 2
	}
	if f.em.target != "" {
		return f.em.write(stdout, stderr, f.fs, f.set, f.file, pl.grid)
	}
	op, closeOp, err := a.newOpener(&f.c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2 // a bad plugin flag, lock file or reattach value
	}
	defer closeOp()
	co := pl.options(f)
	co.Run = f.c.runOptions(op, log)
	co.Run.MaxWall = f.maxWall
	if f.shardN > 0 {
		if co.Cells, err = pl.grid.Shard(f.shardI, f.shardN); err != nil {
			fmt.Fprintf(stderr, "tickemu: --shard: %v\n", err)
			return 2
		}
	}
	r, err := f.run(co, pl, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	return f.output(stdout, stderr, pl, r)
}

// compareFlags are compare's flags.
type compareFlags struct {
	c   common
	em  emitFlags
	fs  *flag.FlagSet
	set map[string]bool // the flags given

	file, variants, kernels, first, format, reportFile, shard string
	noVariants                                                bool
	seeds, jobs                                               int
	alpha                                                     float64
	maxWall                                                   time.Duration
	shardI, shardN                                            int // --shard I/N; N 0 without
}

// parseCompareFlags parses compare's command line and checks what it can
// without the file; ok is false with the status to exit with (0 after
// --help).
func parseCompareFlags(args []string, stdout, stderr io.Writer) (f *compareFlags, status int, ok bool) {
	f = &compareFlags{fs: flag.NewFlagSet("compare", flag.ContinueOnError), set: map[string]bool{}}
	fs := f.fs
	fs.SetOutput(stderr)
	f.c.register(fs, false)
	f.c.registerPluginStats(fs)
	fs.StringVar(&f.variants, "variants", "", "comma-separated variants to compare; the first is the base (default: every variant, in file order)")
	fs.BoolVar(&f.noVariants, "no-variants", false, "run the file as written, without its variant blocks (with --sweep: the sweeps are the only axes)")
	fs.StringVar(&f.kernels, "kernels", "", "compare kernel releases instead of variants: comma-separated versions (\"6.12,6.13\"), each run as --kernel-version V; the first is the base")
	fs.IntVar(&f.seeds, "seeds", 10, "number of seeds each variant runs")
	fs.StringVar(&f.first, "seed", "", "first seed (default: the file's run.seed)")
	fs.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "runs simulated in parallel")
	fs.StringVar(&f.format, "format", "text", "output format: text, json, bench or csv")
	fs.Float64Var(&f.alpha, "alpha", 0.05, "significance level of the tests (benchstat -alpha)")
	fs.StringVar(&f.reportFile, "report", "", "also write an HTML report (latency plots, the table with confidence intervals, counters, worst cases; with sweeps every metric plotted against the first swept setting and a table per point) to FILE")
	fs.DurationVar(&f.maxWall, "max-wall", 0, "bound each run's wall-clock time (overrides run.max_wall; -1s: no bound); a run stopped there counts as failed")
	fs.StringVar(&f.shard, "shard", "", "run shard I of N (I/N) of the grid of runs and write their raw results as JSON to stdout, for tickemu merge")
	f.em.register(fs)
	if wantsHelp(fs, "tickemu compare FILE [flags]", "run the file's variants across sweep points and seeds and compare them with benchstat's statistics", args, stdout) {
		return nil, 0, false
	}
	if f.file, ok = parseFile(fs, args, stderr); !ok || !outputsAreNotInputs(stderr, []string{f.file}, [2]string{"--report", f.reportFile}) {
		return nil, 2, false
	}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if err := f.check(); err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return nil, 2, false
	}
	return f, 0, true
}

// check rejects flag values and combinations that cannot work.
func (f *compareFlags) check() error {
	switch {
	case f.format != "text" && f.format != "json" && f.format != "bench" && f.format != "csv":
		return fmt.Errorf("--format %q: want text, json, bench or csv", f.format)
	case f.seeds < 1:
		return fmt.Errorf("--seeds %d: want at least 1", f.seeds)
	case f.jobs < 1:
		return fmt.Errorf("--jobs %d: want at least 1", f.jobs)
	case f.alpha <= 0 || f.alpha >= 1:
		return fmt.Errorf("--alpha %v: want a level between 0 and 1", f.alpha)
	case f.noVariants && f.variants != "":
		return errors.New("--no-variants and --variants: pick one")
	case f.kernels != "" && (f.variants != "" || f.noVariants || f.c.kernelVersion != ""):
		return errors.New("--kernels compares releases: it takes neither --variants, --no-variants nor --kernel-version")
	case f.c.pluginStats && (f.shard != "" || f.em.target != ""):
		return errors.New("--plugin-stats: shard files (--shard, --emit) do not carry plugin statistics; run the comparison unsharded")
	}
	if f.shard != "" {
		var err error
		if f.shardI, f.shardN, err = parseShard(f.shard); err != nil {
			return fmt.Errorf("--shard: %v", err)
		}
		for _, fl := range []string{"format", "report"} {
			if f.set[fl] {
				return fmt.Errorf("--shard writes raw results (JSON); --%s belongs to tickemu merge", fl)
			}
		}
	}
	return f.em.check(f.set, f.shard != "")
}

// comparePlan is the grid of runs a comparison makes and how each run
// loads its configuration.
type comparePlan struct {
	src      []byte
	variants []string
	sweeps   []config.Sweep
	seeds    []uint64
	grid     experiment.Grid
	load     func(experiment.Cell) (*config.Spec, error)
	// exp identifies the experiment in shard files.
	exp experiment.Experiment
}

// plan reads the file (without a variant: its variants, sweeps, run.seed,
// and any error every run would share) and lays out the grid; ok is false
// after printing why nothing can run.
func (f *compareFlags) plan(opts config.Options, stderr io.Writer) (*comparePlan, bool) {
	src, err := config.ReadFile(f.file)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return nil, false
	}
	spec, ok := f.c.loadSpecBytes(f.file, src, opts)
	if !ok {
		return nil, false
	}
	pl := &comparePlan{src: src, sweeps: spec.Sweeps()}
	if pl.variants, err = f.pickAxes(spec); err == nil {
		pl.seeds, err = f.seedList(spec.Run.Seed)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return nil, false
	}
	pl.grid = experiment.NewGrid(pl.variants, pl.sweeps, pl.seeds)
	pl.load = f.cellLoader(src, opts)
	pl.exp = experiment.Experiment{Tickemu: fullVersion(), File: f.file, Source: string(src), Variants: pl.variants,
		Sweeps: experiment.SweepInfos(pl.sweeps), Seeds: pl.seeds, Alpha: f.alpha}
	for v := range pl.variants {
		h := ""
		if s, err := pl.load(pl.grid.Cell(pl.grid.Index(v, 0, 0))); err == nil {
			h = s.Hash()
		}
		pl.exp.ConfigHashes = append(pl.exp.ConfigHashes, h)
	}
	return pl, loadsSomewhere(stderr, pl.grid, pl.load)
}

// pickAxes returns the comparison's variants: releases with --kernels, the
// file as written with --no-variants (or a file of sweeps alone), else the
// file's variants or those --variants names.
func (f *compareFlags) pickAxes(spec *config.Spec) ([]string, error) {
	var vs []string
	var err error
	switch {
	case f.kernels != "":
		vs, err = pickKernels(f.kernels)
	case f.noVariants, len(spec.Variants()) == 0 && len(spec.Sweeps()) > 0:
		return []string{""}, nil
	default:
		vs, err = pickVariants(spec.Variants(), f.variants)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", f.file, err)
	}
	return vs, nil
}

// seedList is --seeds seeds from --seed (default the file's run.seed).
func (f *compareFlags) seedList(fileSeed uint64) ([]uint64, error) {
	start := fileSeed
	if f.first != "" {
		var err error
		if start, err = strconv.ParseUint(f.first, 10, 64); err != nil {
			return nil, fmt.Errorf("--seed %q: want a non-negative integer", f.first)
		}
	}
	if start > math.MaxUint64-uint64(f.seeds-1) {
		return nil, fmt.Errorf("seeds %d+%d overflow", start, f.seeds)
	}
	seeds := make([]uint64, f.seeds)
	for i := range seeds {
		seeds[i] = start + uint64(i)
	}
	return seeds, nil
}

// cellLoader loads the configuration of one run: the file with the cell's
// variant (or kernel release), seed and sweep point.
func (f *compareFlags) cellLoader(src []byte, opts config.Options) func(experiment.Cell) (*config.Spec, error) {
	loadWith := f.c.loader(f.file, src, opts)
	return func(cell experiment.Cell) (*config.Spec, error) {
		s, err := loadWith(func(o *config.Options) {
			o.Variant, o.Seed, o.Point = cell.Variant, &cell.Seed, cell.PointIndex
			if f.kernels != "" {
				// The variant is a release: the run --kernel-version V makes.
				o.Variant, o.KernelVersion = "", cell.Variant
			}
		})
		if err == nil && f.kernels != "" {
			s.Variant = cell.Variant // the bench lines' /variant= key
		}
		return s, err
	}
}

// options are the experiment's compare options, without the run options.
func (pl *comparePlan) options(f *compareFlags) experiment.CompareOptions {
	return experiment.CompareOptions{File: f.file, Variants: pl.variants, Sweeps: pl.sweeps, Seeds: pl.seeds,
		Jobs: f.jobs, Load: pl.load, Alpha: f.alpha}
}

// compareResult is what a comparison (or one shard of it) produced, and the
// signal that stopped it, if one did.
type compareResult struct {
	cmp    *experiment.Comparison
	shard  *experiment.ShardFile // --shard: the file to write
	signal os.Signal
}

// run runs the comparison's runs (a shard's with --shard) with a progress
// bar and the interrupt: SIGINT or SIGTERM stops the comparison, not the
// process. Each run under way ends after its current event with its
// partial results (kept, marked INCOMPLETE, out of the statistics), the
// runs that finished are kept and those not started marked. The plugin
// processes stay up until their runs end (onInterruptKeepPlugins).
func (f *compareFlags) run(co experiment.CompareOptions, pl *comparePlan, stderr io.Writer) (*compareResult, error) {
	// A comparison is many short simulations, each with a live heap well
	// under 1 MB, that allocate quickly; at the default GOGC=100 the
	// collector then runs every 4 MB and, on two cores, takes a large part
	// of the second job's CPU. Unless the user chose GOGC, let the heap grow
	// 4x further between collections (tens of MB at most): on the 2-core
	// development machine this cut a 16-run comparison's wall time by ~20%
	// and brought the --jobs 2 speed-up from ~1.5 to ~1.8.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	bar := newProgressBar(stderr, "compare")
	if bar != nil {
		co.Progress = bar.update
		f.c.diags.setClear(bar.clear)
	}
	defer bar.finish()
	stop := make(chan struct{})
	var caught atomic.Value // os.Signal
	defer onInterruptKeepPlugins("stopping after each run's current event; the runs that finished are written, those stopped marked INCOMPLETE", func(s os.Signal) {
		caught.Store(s)
		close(stop)
	})()
	co.Run.Interrupt = stop
	r := &compareResult{}
	var err error
	if f.shardN > 0 {
		runs := experiment.RunMatrix(co)
		r.signal, _ = caught.Load().(os.Signal)
		sig := ""
		if r.signal != nil {
			sig = r.signal.String()
		}
		r.shard = experiment.NewShardFile(pl.exp, f.shardI, f.shardN, co.Cells, runs, sig)
		sub := shardRuns(runs, co.Cells)
		r.cmp = &experiment.Comparison{File: f.file, Runs: sub, Failures: experiment.Failures(sub)}
		for _, run := range sub {
			if errors.Is(run.Err, experiment.ErrInterrupted) {
				r.cmp.Interrupted++
			}
		}
		return r, nil
	}
	r.cmp, err = experiment.Compare(co)
	r.signal, _ = caught.Load().(os.Signal)
	return r, err
}

// output prints the comparison (or writes the shard file) and the report,
// and returns the exit status: the signal's when one stopped the runs.
func (f *compareFlags) output(stdout, stderr io.Writer, pl *comparePlan, r *compareResult) int {
	status := reportFailures(stderr, r.cmp)
	w := bufio.NewWriter(stdout)
	var err error
	if r.shard != nil {
		err = r.shard.Write(w)
	} else {
		err = writeComparison(w, f.format, r.cmp)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil && r.shard == nil && f.reportFile != "" {
		err = writeReport(f.reportFile, f.file, pl.src, r.cmp)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	switch {
	case r.signal != nil && r.shard != nil && r.shard.Interrupted == "":
		fmt.Fprintf(stderr, "tickemu: shard %d/%d: %v came after its last run: the file written is whole\n", f.shardI, f.shardN, r.signal)
	case r.signal != nil && r.shard != nil:
		stopped, notStarted := r.shard.Unfinished()
		fmt.Fprintf(stderr, "tickemu: shard %d/%d interrupted by %v: %d of %d runs finished; %d stopped early (their partial results kept, marked INCOMPLETE), %d not started; the file written is marked incomplete (\"interrupted\"), and tickemu merge says so\n",
			f.shardI, f.shardN, r.signal, len(r.cmp.Runs)-len(r.cmp.Failures), len(r.cmp.Runs), stopped, notStarted)
	case r.signal != nil:
		fmt.Fprintf(stderr, "tickemu: compare interrupted by %v: %d of %d runs finished and are written above; %d stopped early (their partial results written, marked INCOMPLETE), %d not started\n",
			r.signal, len(r.cmp.Runs)-len(r.cmp.Failures), len(r.cmp.Runs), len(r.cmp.IncompleteRuns), r.cmp.Interrupted-len(r.cmp.IncompleteRuns))
	case r.shard != nil:
		// The failed runs are in the file; the merge reports them. A shard
		// that wrote its file succeeded, so the cluster runs the merge.
		return 0
	default:
		return status
	}
	return signalStatus(r.signal)
}

// loadsSomewhere loads every variant at every sweep point (the first seed)
// before anything runs or a cluster job is written. When none loads, every
// run would fail on a configuration error: it prints each distinct error
// once and reports false. Otherwise the runs go ahead; those that fail are
// reported with the others' results.
func loadsSomewhere(stderr io.Writer, g experiment.Grid, load func(experiment.Cell) (*config.Spec, error)) bool {
	var errs []*experiment.DiagError
	for v := range g.Variants {
		for p := range g.Points() {
			_, err := load(g.Cell(g.Index(v, p, 0)))
			var de *experiment.DiagError
			if !errors.As(err, &de) {
				return true // it loads (or fails later, in the run)
			}
			errs = append(errs, de)
		}
	}
	shown := map[string]bool{}
	for _, de := range errs {
		if !shown[de.Error()] {
			shown[de.Error()] = true
			config.WriteDiagnostics(stderr, de.Diags, de.Files, false)
		}
	}
	fmt.Fprintf(stderr, "tickemu: no variant loads at any sweep point (%d variants × %d points): nothing was run\n", len(g.Variants), len(g.Points()))
	return false
}

// writeComparison writes a comparison in one of compare's formats.
func writeComparison(w io.Writer, format string, cmp *experiment.Comparison) error {
	switch format {
	case "json":
		return resultfmt.WriteCompareJSON(w, cmp)
	case "bench":
		return resultfmt.WriteCompareBench(w, cmp)
	case "csv":
		return resultfmt.WriteCompareCSV(w, cmp)
	}
	return resultfmt.WriteCompareText(w, cmp)
}

// shardRuns keeps the runs of a shard's cells (for its failure report).
func shardRuns(runs []experiment.RunOutcome, cells []int) []experiment.RunOutcome {
	var out []experiment.RunOutcome
	for _, c := range cells {
		out = append(out, runs[c])
	}
	return out
}

// parseShard reads --shard I/N.
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("%q: want I/N with 1 <= I <= N, such as 2/8", s)
	}
	return i, n, nil
}

// pickVariants returns the variants to compare: the --variants list, checked
// against the file's, or all of the file's.
func pickVariants(inFile []string, list string) ([]string, error) {
	if len(inFile) == 0 {
		return nil, errors.New("no variant blocks: compare runs the file's variants against each other (add `variant \"NAME\" { vars = { ... } }` blocks)")
	}
	if list == "" {
		return inFile, nil
	}
	var out []string
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			return nil, fmt.Errorf("--variants %q: empty name", list)
		case !slices.Contains(inFile, v):
			return nil, fmt.Errorf("--variants: no variant %q (the file has %s)", v, strings.Join(inFile, ", "))
		case slices.Contains(out, v):
			return nil, fmt.Errorf("--variants: %q listed twice", v)
		}
		out = append(out, v)
	}
	return out, nil
}

// pickKernels reads --kernels: releases the version table covers, each
// once, in the order given.
func pickKernels(list string) ([]string, error) {
	var out []string
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		r, err := kernelversion.ParseCovered(v)
		if err != nil {
			return nil, fmt.Errorf("--kernels: %v", err)
		}
		if slices.Contains(out, r.String()) {
			return nil, fmt.Errorf("--kernels: %s listed twice", r)
		}
		out = append(out, r.String())
	}
	return out, nil
}

// reportFailures prints each failed run with its variant and seed, and the
// full diagnostics of each distinct configuration error once. It returns
// the exit status: 1 if a run failed, 2 if every run failed on a
// configuration error (nothing was simulated: the file or its plugins are
// wrong, as for `tickemu run`).
func reportFailures(stderr io.Writer, cmp *experiment.Comparison) int {
	status := 0
	configOnly := len(cmp.Runs) > 0
	shown := map[string]bool{}
	failed := 0
	for _, r := range cmp.Runs {
		if r.Err == nil {
			configOnly = false
			continue
		}
		if errors.Is(r.Err, experiment.ErrInterrupted) {
			// Not failed: never finished. The command says how many
			// once (its status is the signal's).
			configOnly = false
			continue
		}
		status = 1
		failed++
		fmt.Fprintf(stderr, "tickemu: %s failed: %s\n", cmp.Grid.Label(experiment.Cell{Variant: r.Variant, Point: r.Point, Seed: r.Seed}), oneLine(r.Err))
		var te *sdk.TransportError
		if errors.As(r.Err, &te) && len(te.Stack) > 0 && !shown[te.Error()] {
			shown[te.Error()] = true // one stack per distinct panic
			writeStack(stderr, te.Stack)
		}
		var de *experiment.DiagError
		if !errors.As(r.Err, &de) {
			configOnly = false
			continue
		}
		if !shown[de.Error()] {
			shown[de.Error()] = true
			config.WriteDiagnostics(stderr, de.Diags, de.Files, false)
		}
	}
	if status != 0 && configOnly {
		fmt.Fprintf(stderr, "tickemu: all %d runs failed on a configuration error\n", len(cmp.Runs))
		return 2
	}
	if status != 0 {
		fmt.Fprintf(stderr, "tickemu: %d of %d runs failed; the results of the others follow\n", failed, len(cmp.Runs))
	}
	return status
}

func oneLine(err error) string {
	var te *sdk.TransportError
	if errors.As(err, &te) {
		return "run aborted: " + te.Error()
	}
	s := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}
