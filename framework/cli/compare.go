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
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, false)
	variantsFlag := fs.String("variants", "", "comma-separated variants to compare; the first is the base (default: every variant, in file order)")
	noVariants := fs.Bool("no-variants", false, "run the file as written, without its variant blocks (with --sweep: the sweeps are the only axes)")
	kernelsFlag := fs.String("kernels", "", "compare kernel releases instead of variants: comma-separated versions (\"6.12,6.13\"), each run as --kernel-version V; the first is the base")
	seeds := fs.Int("seeds", 10, "number of seeds each variant runs")
	first := fs.String("seed", "", "first seed (default: the file's run.seed)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "runs simulated in parallel")
	format := fs.String("format", "text", "output format: text, json, bench or csv")
	alpha := fs.Float64("alpha", 0.05, "significance level of the tests (benchstat -alpha)")
	reportFile := fs.String("report", "", "also write an HTML report (latency plots, the table with confidence intervals, counters, worst cases; with sweeps every metric plotted against the first swept setting and a table per point) to FILE")
	maxWall := fs.Duration("max-wall", 0, "bound each run's wall-clock time (overrides run.max_wall; -1s: no bound); a run stopped there counts as failed")
	shardFlag := fs.String("shard", "", "run shard I of N (I/N) of the grid of runs and write their raw results as JSON to stdout, for tickemu merge")
	var em emitFlags
	em.register(fs)
	if wantsHelp(fs, "tickemu compare FILE [flags]", "run the file's variants across sweep points and seeds and compare them with benchstat's statistics", args, stdout) {
		return 0
	}
	file, ok := parseFile(fs, args, stderr)
	if !ok || !outputsAreNotInputs(stderr, []string{file}, [2]string{"--report", *reportFile}) {
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch *format {
	case "text", "json", "bench", "csv":
	default:
		fmt.Fprintf(stderr, "tickemu: --format %q: want text, json, bench or csv\n", *format)
		return 2
	}
	if *seeds < 1 {
		fmt.Fprintf(stderr, "tickemu: --seeds %d: want at least 1\n", *seeds)
		return 2
	}
	if *jobs < 1 {
		fmt.Fprintf(stderr, "tickemu: --jobs %d: want at least 1\n", *jobs)
		return 2
	}
	if *alpha <= 0 || *alpha >= 1 {
		fmt.Fprintf(stderr, "tickemu: --alpha %v: want a level between 0 and 1\n", *alpha)
		return 2
	}
	if *noVariants && *variantsFlag != "" {
		fmt.Fprintln(stderr, "tickemu: --no-variants and --variants: pick one")
		return 2
	}
	shardI, shardN := 0, 0
	if *shardFlag != "" {
		var err error
		if shardI, shardN, err = parseShard(*shardFlag); err != nil {
			fmt.Fprintf(stderr, "tickemu: --shard: %v\n", err)
			return 2
		}
		for _, f := range []string{"format", "report"} {
			if set[f] {
				fmt.Fprintf(stderr, "tickemu: --shard writes raw results (JSON); --%s belongs to tickemu merge\n", f)
				return 2
			}
		}
	}
	if err := em.check(set, *shardFlag != ""); err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
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
	// The file without a variant: its variants, sweeps, run.seed, and any
	// error every run would share.
	spec, ok := c.loadSpecBytes(file, src, opts)
	if !ok {
		return 2
	}
	sweeps := spec.Sweeps()
	var variants []string
	switch {
	case *kernelsFlag != "":
		if *variantsFlag != "" || *noVariants || c.kernelVersion != "" {
			fmt.Fprintf(stderr, "tickemu: --kernels compares releases: it takes neither --variants, --no-variants nor --kernel-version\n")
			return 2
		}
		if variants, err = pickKernels(*kernelsFlag); err != nil {
			fmt.Fprintf(stderr, "tickemu: %s: %v\n", file, err)
			return 2
		}
	case *noVariants, len(spec.Variants()) == 0 && len(sweeps) > 0:
		variants = []string{""} // the file as written
	default:
		if variants, err = pickVariants(spec.Variants(), *variantsFlag); err != nil {
			fmt.Fprintf(stderr, "tickemu: %s: %v\n", file, err)
			return 2
		}
	}
	start := spec.Run.Seed
	if *first != "" {
		start, err = strconv.ParseUint(*first, 10, 64)
		if err != nil {
			fmt.Fprintf(stderr, "tickemu: --seed %q: want a non-negative integer\n", *first)
			return 2
		}
	}
	if start > math.MaxUint64-uint64(*seeds-1) {
		fmt.Fprintf(stderr, "tickemu: seeds %d+%d overflow\n", start, *seeds)
		return 2
	}
	seedList := make([]uint64, *seeds)
	for i := range seedList {
		seedList[i] = start + uint64(i)
	}
	grid := experiment.NewGrid(variants, sweeps, seedList)
	loadWith := c.loader(file, src, opts)
	load := func(cell experiment.Cell) (*config.Spec, error) {
		s, err := loadWith(func(o *config.Options) {
			o.Variant, o.Seed, o.Point = cell.Variant, &cell.Seed, cell.PointIndex
			if *kernelsFlag != "" {
				// The variant is a release: the run --kernel-version V makes.
				o.Variant, o.KernelVersion = "", cell.Variant
			}
		})
		if err != nil {
			return nil, err
		}
		if *kernelsFlag != "" {
			s.Variant = cell.Variant // the bench lines' /variant= key
		}
		return s, nil
	}
	exp := experiment.Experiment{Tickemu: fullVersion(), File: file, Source: string(src), Variants: variants, Sweeps: experiment.SweepInfos(sweeps),
		Seeds: seedList, Alpha: *alpha}
	for v := range variants {
		h := ""
		if s, err := load(grid.Cell(grid.Index(v, 0, 0))); err == nil {
			h = s.Hash()
		}
		exp.ConfigHashes = append(exp.ConfigHashes, h)
	}
	if !loadsSomewhere(stderr, grid, load) {
		return 2
	}
	if em.target != "" {
		return em.write(stdout, stderr, fs, set, file, grid)
	}
	op, closeOp, err := a.newOpener(&c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2 // a bad plugin flag, lock file or reattach value
	}
	defer closeOp()
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
	co := experiment.CompareOptions{
		File:     file,
		Variants: variants,
		Sweeps:   sweeps,
		Seeds:    seedList,
		Jobs:     *jobs,
		Load:     load,
		Run:      c.runOptions(op, log),
		Alpha:    *alpha,
	}
	co.Run.MaxWall = *maxWall
	if shardN > 0 {
		if co.Cells, err = grid.Shard(shardI, shardN); err != nil {
			fmt.Fprintf(stderr, "tickemu: --shard: %v\n", err)
			return 2
		}
	}
	bar := newProgressBar(stderr, "compare")
	if bar != nil {
		co.Progress = bar.update
		c.diags.setClear(bar.clear)
	}
	// SIGINT or SIGTERM stops the comparison, not the process: the runs that
	// finished are written, the others marked, and the status is 128+signal.
	stop := make(chan struct{})
	var caught atomic.Value // os.Signal
	removeHandler := onInterrupt("stopping; the runs that finished are written, the others marked", func(s os.Signal) {
		caught.Store(s)
		close(stop)
	})
	co.Run.Stop = stop
	var cmp *experiment.Comparison
	var shard *experiment.ShardFile
	if shardN > 0 {
		runs := experiment.RunMatrix(co)
		shard = experiment.NewShardFile(exp, shardI, shardN, co.Cells, runs)
		sub := shardRuns(runs, co.Cells)
		cmp = &experiment.Comparison{File: file, Runs: sub, Failures: experiment.Failures(sub)}
		for _, r := range sub {
			if errors.Is(r.Err, experiment.ErrInterrupted) {
				cmp.Interrupted++
			}
		}
	} else {
		cmp, err = experiment.Compare(co)
	}
	removeHandler()
	bar.finish()
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	status := reportFailures(stderr, cmp)
	w := bufio.NewWriter(stdout)
	switch {
	case shard != nil:
		err = shard.Write(w)
	default:
		err = writeComparison(w, *format, cmp)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	if shard != nil {
		// The failed runs are in the file; the merge reports them. A shard
		// that wrote its file succeeded, so the cluster runs the merge.
		if s, ok := caught.Load().(os.Signal); ok {
			fmt.Fprintf(stderr, "tickemu: shard %d/%d interrupted by %v: its file marks the %d runs that did not finish\n", shardI, shardN, s, cmp.Interrupted)
			return signalStatus(s)
		}
		return 0
	}
	if *reportFile != "" {
		if err := writeReport(*reportFile, file, src, cmp); err != nil {
			fmt.Fprintf(stderr, "tickemu: %v\n", err)
			return 1
		}
	}
	if s, ok := caught.Load().(os.Signal); ok {
		fmt.Fprintf(stderr, "tickemu: compare interrupted by %v: %d of %d runs finished and are written above; %d interrupted (INCOMPLETE: not run to the end)\n",
			s, len(cmp.Runs)-len(cmp.Failures), len(cmp.Runs), cmp.Interrupted)
		return signalStatus(s)
	}
	return status
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
