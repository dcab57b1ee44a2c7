// Package workload holds tickemu's workloads: programs that run as tasks on the
// simulated kernel, modelled on the real tools (rt-tests cyclictest, stress-ng
// stressors, pktgen over the ncm gadget) and reporting in their formats.
package workload

import (
	"fmt"
	"slices"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Workload is one configured workload instance.
type Workload interface {
	// Setup creates the workload's processes, tasks and timers. Measurements
	// start at warmup.
	Setup(k *kernel.Kernel, warmup ktime.Time) error
	// Report summarises the run, which ended at end.
	Report(k *kernel.Kernel, end ktime.Time) Report
}

// Metric is one named result value.
type Metric struct {
	Name   string // benchstat unit, e.g. "bogo-ops/s", "max-latency-ns"
	Value  float64
	Better string // "higher" or "lower"
}

// BenchLine is one Go benchmark line: Benchmark<Name>/<Sub> 1 v unit ...
type BenchLine struct {
	Name    string // e.g. "Cyclictest"
	Sub     string // e.g. "thread=0"; empty for none
	Metrics []Metric
}

// Report is a workload's results.
type Report struct {
	Type, Name string
	// Text is the workload's own summary, in its tool's format.
	Text []string
	// Bench lines, also used by JSON output and comparisons.
	Bench []BenchLine
	// Extra holds named distributions or tables (JSON only).
	Extra map[string]any
}

// Type describes a workload type: its HCL schema and constructor.
type Type struct {
	Name   string
	Doc    string
	Schema sdk.Schema
	// New makes the workload from its decoded block; the caller reports
	// what c could not decode (c.Diagnostics) after New returns.
	New func(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error)
	// Machine, when set, says the CPU count and HZ the workload brings (a
	// replayed capture's; 0 = no opinion): the run uses them for a machine
	// block that does not set cpus or hz itself.
	Machine func(c *sdk.ConfigReader) (cpus, hz int, err error)
}

// types lists every workload type, sorted by name. It is the only place that
// knows them: a new workload is its Type in its own file and one line here.
var types = []Type{
	clockJumpType,
	cyclictestType,
	hrtimerLoadType,
	kernelTimersType,
	ncmType,
	replayType,
	stressNgCPUType,
	stressNgHrtimersType,
	stressNgNanosleepType,
	stressNgTimerType,
	timermixType,
}

// Lookup returns the workload type called name.
func Lookup(name string) (Type, bool) {
	for _, t := range types {
		if t.Name == name {
			return t, true
		}
	}
	return Type{}, false
}

// Types lists every workload type by name.
func Types() []Type { return slices.Clone(types) }

// Names lists the workload type names.
func Names() []string {
	var n []string
	for _, t := range Types() {
		n = append(n, t.Name)
	}
	return n
}

// FieldError is a workload constructor's complaint about one attribute; the
// host points the diagnostic at that attribute's value.
type FieldError struct {
	Attr string
	Msg  string
}

func (e *FieldError) Error() string { return e.Attr + ": " + e.Msg }

func fieldErr(attr, format string, args ...any) error {
	return &FieldError{Attr: attr, Msg: fmt.Sprintf(format, args...)}
}

func attr(name string, t sdk.AttrType, def, doc string, oneOf ...string) sdk.Attribute {
	return sdk.Attribute{Name: name, Type: t, Default: def, Doc: doc, OneOf: oneOf}
}

// Bounds of the count-like attributes. Every count has a Max in its schema,
// which validate checks, so a slip of the finger (threads = 100000) is an
// error naming the attribute instead of a run that exhausts memory.
const (
	// maxTasks bounds the tasks of one kind that one workload block starts
	// (threads, instances): as many as the largest machine has CPUs.
	maxTasks = "4096"
	// maxCPU is the highest CPU number of the largest machine.
	maxCPU = "4095"
	// maxTimersPerCPU bounds hrtimer_load's timers on each CPU.
	maxTimersPerCPU = "100000"
	// maxTimers bounds the timers (or histogram buckets) one block keeps in
	// all, across its CPUs or threads; checked by the constructors, which
	// know the product.
	maxTimers = 1 << 20
	// maxChildren bounds stress_ng_hrtimers' instances x children.
	maxChildren = 1 << 16
	// maxHistBuckets bounds cyclictest -h.
	maxHistBuckets = "1000000"
	// maxHistogramCells bounds threads x histogram buckets, the int64
	// counters cyclictest keeps (512 MiB).
	maxHistogramCells = 64 << 20
)

// count is a whole-number attribute from min to max.
func count(name, def, min, max, doc string) sdk.Attribute {
	return sdk.Attribute{Name: name, Type: config.TypeInteger, Default: def, Min: min, Max: max, Doc: doc}
}

func perSecond(n int64, elapsed int64) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(n) / (float64(elapsed) / float64(ktime.Second))
}
