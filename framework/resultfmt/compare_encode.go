package resultfmt

import (
	"github.com/tickemu/tickemu/framework/experiment"

	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// WriteCompareJSON writes the comparison as indented JSON: the variants,
// seeds and failed runs, and per metric each variant's per-seed values,
// summary and tests against the base. Non-finite numbers are null.
func WriteCompareJSON(w io.Writer, c *experiment.Comparison) error {
	common, own := configLines(c)
	doc := struct {
		*experiment.Comparison
		Config        []string            `json:"config"`
		VariantConfig map[string][]string `json:"variant_config"`
	}{c, common, map[string][]string{}}
	for i := range own {
		doc.VariantConfig[columnLabel(c, i, "")] = append([]string{}, own[i]...)
	}
	if doc.Failures == nil {
		doc.Failures = []experiment.Failure{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// WriteCompareCSV writes one row per metric and variant: the summary, the
// unpaired and paired comparisons with the base, LKP's mean, %stddev and
// %change, then the value of each seed. Empty cells stand for values that
// do not exist (the base's comparisons, an infinite interval).
func WriteCompareCSV(w io.Writer, c *experiment.Comparison) error {
	cw := csv.NewWriter(w)
	head := []string{"bench", "unit", "better", "variant", "n", "median", "ci_lo", "ci_hi", "ci", "mean", "stddev", "stddev_pct",
		"delta", "p", "paired_n", "paired_median_diff", "paired_delta", "paired_p", "mean_change"}
	for _, s := range c.Seeds {
		head = append(head, "seed="+strconv.FormatUint(s, 10))
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for i := range c.Metrics {
		m := &c.Metrics[i]
		for _, vs := range m.Variants {
			s := vs.Summary
			row := []string{m.Bench, m.Unit, m.Better, vs.Variant, strconv.Itoa(s.N), num(s.Median), num(s.Lo), num(s.Hi), "",
				num(s.Mean), num(s.StdDev), ""}
			if s.N > 0 {
				row[8] = s.RangePct()
				row[11] = num(s.RelStdDev())
			}
			if vb := vs.VsBase; vb != nil {
				row = append(row, vb.Delta, num(vb.UTest.P), strconv.Itoa(vb.Paired.Pairs), num(vb.Paired.MedianDiff),
					vb.PairedDelta, num(vb.Paired.P), num(vb.MeanChange))
			} else {
				row = append(row, "", "", "", "", "", "", "")
			}
			for _, x := range vs.Values {
				row = append(row, num(x))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	if err := writeIncompleteCSV(cw, c, len(head)); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// writeIncompleteCSV writes a row per metric of each run the interrupt
// stopped: its variant cell marked "INCOMPLETE" with where it stopped, n 1,
// its partial value as the median and in its seed's column, and no
// statistics (they leave these runs out).
func writeIncompleteCSV(cw *csv.Writer, c *experiment.Comparison, width int) error {
	for _, ir := range c.IncompleteRuns {
		variant := fmt.Sprintf("%s (INCOMPLETE: %s)", ir.Variant, experiment.IncompleteText(ir.Incomplete))
		for _, m := range ir.Metrics {
			row := make([]string, width)
			copy(row, []string{m.Bench, m.Unit, m.Better, variant, "1", num(m.Value)})
			for j, s := range c.Seeds {
				if s == ir.Seed {
					row[width-len(c.Seeds)+j] = num(m.Value)
				}
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeIncompleteBench writes the bench lines of the runs the interrupt
// stopped after the others, each under an "incomplete:" configuration
// line, as `tickemu run --format bench` marks an incomplete run: benchstat
// keeps them apart from the complete runs.
func writeIncompleteBench(b *bytes.Buffer, partial []experiment.RunOutcome) {
	for _, r := range partial {
		var ie *experiment.IncompleteError
		errors.As(r.Err, &ie)
		fmt.Fprintf(b, "# INCOMPLETE: %s\nincomplete: %s\n", runLabel(r.Variant, r.Point.Key(), r.Seed), experiment.IncompleteText(ie.Incomplete))
		for _, l := range r.Bench {
			b.WriteString(l + "\n")
		}
	}
}

// num formats a CSV number; NaN and infinities are empty.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// WriteCompareBench writes every run in Go benchmark format
// (golang.org/design/14313) with the variant as a sub-benchmark key, so that
// `benchstat -col /variant` on it prints the comparison's tables:
//
//   - configuration lines every variant shares (cpus, hz, plugins...), and a
//     `seeds:` line; configuration that differs between variants is written
//     as "# variant NAME: key: value" comments, because benchstat starts a
//     new table for every distinct configuration;
//   - the result lines of each run, seed by seed and within a seed variant
//     by variant, exactly as `tickemu run --format bench --variant V --seed
//     S` writes them;
//   - a "# failed:" comment per failed run;
//   - Unit lines with better=higher|lower and assume=nothing: across seeds
//     the values vary, so benchstat must use its non-parametric statistics
//     (a single run's output says assume=exact instead).
func WriteCompareBench(w io.Writer, c *experiment.Comparison) error {
	return writeBenchRuns(w, c, true, "nothing")
}

// WriteSweepBench writes the runs of `tickemu run --sweep`, one per sweep
// point, as WriteCompareBench does but as single runs: without a seeds line
// and with assume=exact, as `tickemu run --format bench` writes units.
func WriteSweepBench(w io.Writer, c *experiment.Comparison) error {
	return writeBenchRuns(w, c, false, "exact")
}

func writeBenchRuns(w io.Writer, c *experiment.Comparison, seeds bool, assume string) error {
	var b bytes.Buffer
	common, own := configLines(c)
	for _, l := range common {
		b.WriteString(l + "\n")
	}
	if seeds {
		fmt.Fprintf(&b, "seeds: %s\n", seedRange(c.Seeds))
	}
	for i := range own {
		for _, l := range own[i] {
			fmt.Fprintf(&b, "# %s: %s\n", columnLabel(c, i, "variant "), l)
		}
	}
	var partial []experiment.RunOutcome
	for _, i := range c.Grid.Order() {
		r := c.Runs[i]
		var ie *experiment.IncompleteError
		switch {
		case errors.As(r.Err, &ie):
			partial = append(partial, r)
			continue
		case r.Err != nil:
			fmt.Fprintf(&b, "# failed: %s: %s\n", runLabel(r.Variant, r.Point.Key(), r.Seed), r.ErrorLine())
			continue
		}
		for _, l := range r.Bench {
			b.WriteString(l + "\n")
		}
	}
	writeIncompleteBench(&b, partial)
	seen := map[string]bool{}
	for i := range c.Metrics {
		m := &c.Metrics[i]
		if seen[m.Unit] {
			continue
		}
		seen[m.Unit] = true
		better := ""
		if m.Better != "" {
			better = " better=" + m.Better
		}
		fmt.Fprintf(&b, "Unit %s%s assume=%s\n", m.Unit, better, assume)
	}
	_, err := w.Write(b.Bytes())
	return err
}
