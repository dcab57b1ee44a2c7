// Package scenariotest runs a whole scenario under go test: the host (config
// loading, the simulated kernel, the result formats) with the plugins linked
// into the test process. It is host-side, not part of the SDK: a plugin's
// conformance suites and its gRPC pair are in framework/sdk/sdktest and pull
// in no host package; a plugin author's test imports scenariotest only to run
// the plugin inside a simulated kernel, e.g. to A/B it against a builtin.
package scenariotest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/resultfmt"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

// ScenarioOptions are the `tickemu run` flags a scenario test may set.
type ScenarioOptions struct {
	// Variant applies the variant block of that name (--variant).
	Variant string
	// Vars override variables (--var NAME=VALUE).
	Vars map[string]string
	// Seed overrides run.seed (--seed) when non-nil.
	Seed *uint64
	// Isolation overrides every block's isolation (--isolation).
	// sdk.IsolationProcess sends every plugin through sdktest.GRPCPair, tickemu's
	// real gRPC transport inside the test process; without it only blocks
	// that say isolation = "process" go through it.
	Isolation sdk.Isolation
	// Trace receives the ftrace-format trace (--trace).
	Trace io.Writer
}

// Result is one scenario run.
type Result struct {
	// JSON is what `tickemu run --format json` writes for the run.
	JSON []byte
	// Text is what `tickemu run` writes.
	Text []byte
	res  *experiment.Result
}

// RunScenario runs the HCL scenario file (a shipped configs/*.hcl or your
// own) with variant ("" for none) under go test, every plugin linked in
// process and made by factories: pass the builtins (plugins/builtin) and
// your own, e.g.
//
//	res := scenariotest.RunScenario(t, "scenario.hcl", "fixed",
//		slices.Concat(builtin.Factories(), fixed.Factories())...)
//
// Because everything runs in the test process, `dlv test` stops at
// breakpoints in your plugin. A configuration or run error fails the test
// with tickemu's diagnostics.
func RunScenario(t testing.TB, file, variant string, factories ...sdk.Factory) *Result {
	t.Helper()
	return RunScenarioWith(t, file, ScenarioOptions{Variant: variant}, factories...)
}

// RunScenarioWith is RunScenario with more of `tickemu run`'s options.
func RunScenarioWith(t testing.TB, file string, o ScenarioOptions, factories ...sdk.Factory) *Result {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range factories {
		k := string(f.Kind) + "/" + f.Name
		if seen[k] {
			t.Fatalf("RunScenario: two factories for the %s plugin %q", f.Kind, f.Name)
		}
		seen[k] = true
	}
	spec, diags := config.Load(file, config.Options{Variant: o.Variant, Vars: o.Vars, Seed: o.Seed})
	if diags.HasErrors() {
		var b bytes.Buffer
		var files map[string]*hcl.File
		if spec != nil {
			files = spec.Files()
		}
		config.WriteDiagnostics(&b, diags, files, false)
		t.Fatalf("RunScenario(%s): configuration errors:\n%s", file, b.String())
	}
	op := scenarioOpener{t: t, InProcess: experiment.InProcess(factories), grpc: o.Isolation == sdk.IsolationProcess}
	res, err := experiment.Run(spec, experiment.Options{Opener: op, Trace: o.Trace})
	if err != nil {
		var b bytes.Buffer
		var de *experiment.DiagError
		if errors.As(err, &de) {
			config.WriteDiagnostics(&b, de.Diags, de.Files, false)
		} else {
			b.WriteString(err.Error())
		}
		t.Fatalf("RunScenario(%s, variant %q): %s", file, o.Variant, b.String())
	}
	r := &Result{res: res}
	var j, txt bytes.Buffer
	if err := resultfmt.WriteJSON(&j, res); err != nil {
		t.Fatal(err)
	}
	if err := resultfmt.WriteText(&txt, res); err != nil {
		t.Fatal(err)
	}
	r.JSON, r.Text = j.Bytes(), txt.Bytes()
	return r
}

// Counter sums a counter over CPUs. source is "kernel" for the kernel
// model's counters (e.g. "hrtimer_interrupts", "device_writes") or a plugin
// block as KIND or KIND/ROLE (e.g. "clockevent/local"), for the counters that
// plugin's Counters reports.
func (r *Result) Counter(source, name string) int64 {
	var s int64
	for _, c := range r.res.Kernel.Counters {
		if (c.Source == source || strings.HasPrefix(c.Source, source+"/")) && c.Name == name {
			s += c.Value
		}
	}
	return s
}

// Metric is a workload's result value as its bench line reports it: name is
// the bench name ("Cyclictest"), sub the sub-benchmark ("thread=0", "" for
// none) and unit the metric ("max-latency-ns"). ok is false when there is no
// such value.
func (r *Result) Metric(name, sub, unit string) (v float64, ok bool) {
	for _, w := range r.res.Workloads {
		for _, b := range w.Bench {
			if b.Name != name || b.Sub != sub {
				continue
			}
			for _, m := range b.Metrics {
				if m.Name == unit {
					return m.Value, true
				}
			}
		}
	}
	return 0, false
}

// Plugin names the plugin and version that served a block (KIND or
// KIND/ROLE), e.g. "fixed 0.1.0".
func (r *Result) Plugin(block string) string {
	for _, p := range r.res.Plugins {
		k := string(p.Kind)
		if p.Role != "" {
			k += "/" + p.Role
		}
		if k == block {
			return p.Name + " " + p.Version
		}
	}
	return ""
}

// scenarioOpener opens plugins in process, or through sdktest.GRPCPair for blocks
// with isolation = "process" (every block with grpc).
type scenarioOpener struct {
	experiment.InProcess
	t    testing.TB
	grpc bool
}

func (o scenarioOpener) Open(kind sdk.Kind, name, isolation string) (experiment.Instance, error) {
	if !o.grpc && sdk.Isolation(isolation) != sdk.IsolationProcess {
		return o.InProcess.Open(kind, name, string(sdk.IsolationInProcess))
	}
	for _, f := range o.InProcess {
		if f.Kind == kind && f.Name == name {
			return grpcInstance{p: sdktest.GRPCPair(o.t, f), name: name}, nil
		}
	}
	return nil, fmt.Errorf("no %s plugin named %q among the test's factories", kind, name)
}

type grpcInstance struct {
	p    sdk.Plugin
	name string
}

func (i grpcInstance) Plugin() sdk.Plugin { return i.p }
func (i grpcInstance) Describe() string   { return i.name + " (gRPC pair)" }
func (i grpcInstance) Kill()              {}
