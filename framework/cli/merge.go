package cli

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tickemu/tickemu/framework/experiment"
)

// cmdMerge puts the shard files of one comparison back together:
//
//	tickemu merge [--format text|json|bench|csv] [--report FILE] SHARD.json...
//
// It checks that the files come from one experiment (configuration hashes,
// grid, tickemu version) and hold every cell once, then prints exactly what
// the unsharded `tickemu compare` prints; --report writes the HTML report
// `compare --report` writes. A shard that was interrupted (Ctrl-C, a
// scheduler's SIGTERM) is merged as the unsharded comparison interrupted
// alike would print: its finished runs in the statistics, the runs it
// stopped early shown with their partial results marked INCOMPLETE, those
// it did not start listed; stderr names each such file and what it lacks.
// Exit status as compare's: 1 when a run failed or a shard is incomplete,
// 2 when the files do not make one experiment.
func (a *App) cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text, json, bench or csv")
	reportFile := fs.String("report", "", "also write the comparison's HTML report (as compare --report) to FILE")
	if wantsHelp(fs, "tickemu merge SHARD.json... [flags]", "merge the shard files of `tickemu compare --shard I/N` into the comparison's report", args, stdout) {
		return 0
	}
	files, err := parseInterspersed(fs, args)
	if err != nil || !outputsAreNotInputs(stderr, files, [2]string{"--report", *reportFile}) {
		return 2
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "usage: tickemu merge SHARD.json... [--format text|json|bench|csv] [--report FILE]")
		return 2
	}
	switch *format {
	case "text", "json", "bench", "csv":
	default:
		fmt.Fprintf(stderr, "tickemu: --format %q: want text, json, bench or csv\n", *format)
		return 2
	}
	var shards []*experiment.ShardFile
	for _, name := range files {
		sf, err := experiment.LoadShardFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "tickemu: %v\n", err)
			return 2
		}
		shards = append(shards, sf)
	}
	cmp, err := experiment.Merge(files, shards)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: merge: %v\n", err)
		return 2
	}
	status := reportFailures(stderr, cmp)
	if incompleteShards(stderr, files, shards) {
		status = 1
	}
	w := bufio.NewWriter(stdout)
	err = writeComparison(w, *format, cmp)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	if *reportFile != "" {
		e := shards[0].Experiment
		if err := writeReport(*reportFile, e.File, []byte(e.Source), cmp); err != nil {
			fmt.Fprintf(stderr, "tickemu: %v\n", err)
			return 1
		}
	}
	return status
}

// incompleteShards says which shard files were interrupted before all their
// runs finished, and what each lacks; it reports whether any was.
func incompleteShards(stderr io.Writer, names []string, shards []*experiment.ShardFile) bool {
	var which []string
	for k, sf := range shards {
		stopped, notStarted := sf.Unfinished()
		if stopped+notStarted == 0 {
			continue
		}
		which = append(which, fmt.Sprint(sf.Shard))
		fmt.Fprintf(stderr, "tickemu: merge: %s (shard %d of %d) is incomplete: interrupted by %s, %d of its %d runs finished; %d stopped early (partial results, marked INCOMPLETE, out of the statistics), %d not started\n",
			names[k], sf.Shard, sf.Shards, sf.Interrupted, len(sf.Cells)-stopped-notStarted, len(sf.Cells), stopped, notStarted)
	}
	if len(which) == 0 {
		return false
	}
	fmt.Fprintf(stderr, "tickemu: merge: the comparison is INCOMPLETE: for the whole of it run shard %s again (the same tickemu compare ... --shard I/%d) and merge the new file with the others\n",
		strings.Join(which, ", "), shards[0].Shards)
	return true
}
