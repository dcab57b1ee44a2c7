package report

import (
	"bytes"
	"io"
	"testing"

	"github.com/tickemu/tickemu/framework/experiment"
)

// FuzzMergeReport reads arbitrary bytes as a shard file, merges it and
// writes the merge's report, as `tickemu merge --report` does: an edited or
// damaged shard file may be refused, never crash the merge.
func FuzzMergeReport(f *testing.F) {
	c := sweepComparison(sweep("hz", "hz", "100", "1000"))
	e := experiment.Experiment{Tickemu: "t", File: "s.hcl", Source: "machine {}\n", Variants: c.Variants,
		Sweeps: c.Sweeps, Seeds: c.Seeds}
	var cells []int
	for i := range c.Runs {
		cells = append(cells, i)
	}
	var b bytes.Buffer
	if err := experiment.NewShardFile(e, 1, 1, cells, c.Runs, "").Write(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := experiment.ReadShardFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		mc, err := experiment.Merge([]string{"f"}, []*experiment.ShardFile{sf})
		if err != nil {
			return
		}
		_ = Write(io.Discard, Input{File: sf.Experiment.File, Source: []byte(sf.Experiment.Source), Comparison: mc, Version: "t"})
	})
}
