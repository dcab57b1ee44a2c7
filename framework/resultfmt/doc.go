// Package resultfmt writes what package experiment computes for people and
// tools: a run's text summary and JSON (WriteText, WriteJSON), and a
// comparison as benchstat-style text with the LKP %change view, JSON, CSV
// and Go benchmark lines (WriteCompareText, WriteCompareJSON,
// WriteCompareCSV, WriteCompareBench). The HTML report (framework/report)
// formats its table cells with Cells, so both outputs agree.
//
// A run's benchmark-format writer, experiment.WriteBench, stays in package
// experiment: a comparison reads every run's metrics back from that output
// with benchstat's own parser (experiment.BenchMetrics), so it is part of
// what a comparison computes, not only a way of printing it.
package resultfmt
