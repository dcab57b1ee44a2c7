package resultfmt

import (
	"github.com/tickemu/tickemu/framework/experiment"

	"bytes"
	"fmt"
	"math"
	"strings"
)

// LKP comparison table widths (lkp-tests lib/compare.rb: ABS_WIDTH,
// REL_WIDTH, ERR_WIDTH).
const (
	lkpAbsWidth = 10
	lkpRelWidth = 10
	lkpErrWidth = 6
)

// writeLKP writes the kernel test robot's view of the comparison, laid out
// as lkp-tests lib/compare.rb (show_group_header(), show_perf_header(),
// show_perf_change()) prints it: per metric the base mean with its %stddev,
// then per variant the %change of the mean and the mean with its %stddev,
// then the stat name.
//
// Divergence: LKP lists only the stats its noise filter marks as changed
// (_get_changed_stats()); here every metric whose mean differs from the
// base in some variant is listed, since a deterministic emulator has no
// measurement noise to filter, and the benchstat tables above carry the
// significance tests.
func writeLKP(b *bytes.Buffer, c *experiment.Comparison) {
	b.WriteString(strings.Repeat("=", 89) + "\n")
	b.WriteString("file/seeds:\n")
	fmt.Fprintf(b, "  %s/%s\n\n", c.File, seedRange(c.Seeds))
	b.WriteString("variant: \n")
	for _, v := range c.Variants {
		fmt.Fprintf(b, "  %s\n", v)
	}
	b.WriteString("\n")
	first := lkpAbsWidth + lkpErrWidth
	width := first + lkpRelWidth + 1
	fmt.Fprintf(b, "%*s ", first, truncate(c.Variants[0], first))
	for _, v := range c.Variants[1:] {
		fmt.Fprintf(b, "%*s ", width, truncate(v, width))
	}
	b.WriteString("\n" + strings.Repeat("-", first) + " ")
	for range c.Variants[1:] {
		b.WriteString(strings.Repeat("-", width) + " ")
	}
	b.WriteString("\n")
	n := len(c.Variants) - 1
	b.WriteString("         %stddev" + strings.Repeat("     %change         %stddev", n) + "\n")
	b.WriteString("             \\  " + strings.Repeat("        |                \\  ", n) + "\n")
	shown := 0
	for i := range c.Metrics {
		m := &c.Metrics[i]
		if !lkpChanged(m) {
			continue
		}
		shown++
		for v, vs := range m.Variants {
			if vb := vs.VsBase; v > 0 {
				if vb == nil || vs.Summary.N == 0 || m.Variants[0].Summary.N == 0 {
					fmt.Fprintf(b, "%*s  ", lkpRelWidth, "")
				} else {
					p := vb.MeanChange
					num := fmt.Sprintf("%+*.1f", lkpRelWidth, p)
					if math.Abs(p) >= 100000 {
						num = fmt.Sprintf("%+*.2g", lkpRelWidth, p)
					}
					if vb.AbsChange {
						b.WriteString(num + "  ")
					} else {
						b.WriteString(num + "% ")
					}
				}
			}
			b.WriteString(lkpMean(vs.Summary.N, vs.Summary.Mean))
			if rel := vs.Summary.RelStdDev(); vs.Summary.N > 0 && rel > 2 {
				// Ruby's %d truncates a Float toward zero.
				fmt.Fprintf(b, " ±%*d%%", lkpErrWidth-3, int64(rel))
			} else {
				b.WriteString(strings.Repeat(" ", lkpErrWidth))
			}
		}
		fmt.Fprintf(b, "  %s\n", m.Key())
	}
	if shown == 0 {
		b.WriteString("  (no metric differs between the variants)\n")
	}
}

// lkpMean formats a mean as show_perf_change() does: two decimals below
// 1000, four significant digits above 1e8, a (truncated) integer between.
func lkpMean(n int, avg float64) string {
	switch {
	case n == 0:
		return fmt.Sprintf("%*s", lkpAbsWidth, "")
	case math.Abs(avg) < 1000:
		return fmt.Sprintf("%*.2f", lkpAbsWidth, avg)
	case math.Abs(avg) > 100_000_000:
		return fmt.Sprintf("%*.4g", lkpAbsWidth, avg)
	}
	return fmt.Sprintf("%*d", lkpAbsWidth, int64(avg))
}

// lkpChanged reports whether some variant's mean differs from the base's.
func lkpChanged(m *experiment.MetricComparison) bool {
	for _, vs := range m.Variants[1:] {
		if vs.VsBase != nil && vs.Summary.N > 0 && m.Variants[0].Summary.N > 0 && vs.Summary.Mean != m.Variants[0].Summary.Mean {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
