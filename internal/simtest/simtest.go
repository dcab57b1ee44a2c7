// Package simtest runs small scenarios written inline in HCL with the builtin
// plugins, for tests across the framework.
package simtest

import (
	"bytes"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// Run loads src (HCL) with opts and runs it in process; it fails the test on
// any error. trace, when non-nil, receives the ftrace-format trace.
func Run(t testing.TB, src string, opts config.Options, trace *bytes.Buffer) *experiment.Result {
	t.Helper()
	spec, diags := config.LoadBytes("test.hcl", []byte(src), opts)
	if diags.HasErrors() {
		t.Fatalf("config: %v", diags)
	}
	eo := experiment.Options{Opener: experiment.InProcess(builtin.Factories())}
	if trace != nil {
		eo.Trace = trace
	}
	res, err := experiment.Run(spec, eo)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

// Metric returns the named metric of the only benchmark line called bench
// (a workload's Go benchmark name, e.g. "Cyclictest"); it fails the test when
// there is no such line, more than one, or no such metric, so tests never
// depend on the order of workloads, lines or metrics.
func Metric(t testing.TB, r *experiment.Result, bench, metric string) float64 {
	t.Helper()
	var found []float64
	lines := 0
	for _, w := range r.Workloads {
		for _, b := range w.Bench {
			if b.Name != bench {
				continue
			}
			lines++
			for _, m := range b.Metrics {
				if m.Name == metric {
					found = append(found, m.Value)
				}
			}
		}
	}
	if lines != 1 || len(found) != 1 {
		t.Fatalf("metric %s of benchmark %s: %d lines, %d values; want exactly one", metric, bench, lines, len(found))
	}
	return found[0]
}
