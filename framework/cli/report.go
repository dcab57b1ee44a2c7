package cli

import (
	"bufio"
	"fmt"
	"io"

	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/internal/outfile"
	"github.com/tickemu/tickemu/framework/report"
)

// writeReport writes the HTML report of a comparison (or of one run, as a
// comparison of one variant and seed) of file, whose text is src, to path.
func writeReport(path, file string, src []byte, cmp *experiment.Comparison) error {
	// Written beside path and renamed into place when complete: a full disk
	// leaves the previous report, not a truncated one.
	err := outfile.WriteWith(path, func(f io.Writer) error {
		w := bufio.NewWriter(f)
		if err := report.Write(w, report.Input{File: file, Source: src, Comparison: cmp, Version: version}); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return fmt.Errorf("--report %s: %v", path, err)
	}
	return nil
}

// runComparison wraps one run as a comparison of one variant and one seed.
func runComparison(file string, res *experiment.Result) (*experiment.Comparison, error) {
	ms, err := experiment.BenchMetrics(res)
	if err != nil {
		return nil, err
	}
	header, lines, err := experiment.BenchRecord(res)
	if err != nil {
		return nil, err
	}
	out := experiment.RunOutcome{Variant: res.Config.Variant, Seed: res.Config.Seed, Result: res, Metrics: ms, Header: header, Bench: lines,
		Detail: experiment.DetailOf(res)}
	return experiment.Analyze(file, []string{res.Config.Variant}, []uint64{res.Config.Seed}, []experiment.RunOutcome{out}, 0, 0), nil
}
