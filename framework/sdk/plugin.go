package sdk

import (
	"fmt"
	"sort"
	"strings"
)

// Kind names a plugin kind; it is also the HCL block type that configures it.
type Kind string

// The plugin kinds.
const (
	KindTimerBase  Kind = "wheel"      // TimerBase
	KindHRTimer    Kind = "hrtimer"    // HRTimerBase
	KindClockEvent Kind = "clockevent" // ClockEventDevice
	KindGovernor   Kind = "governor"   // Governor (cpuidle)
)

// Kinds lists every kind in a stable order, the policy kinds (policy.go)
// last.
var Kinds = []Kind{KindTimerBase, KindHRTimer, KindClockEvent, KindGovernor,
	KindHangPolicy, KindCatchupPolicy, KindRestartPolicy}

// ProtocolVersion is the go-plugin application protocol version of this SDK:
// the version of the whole contract, wire and Go API (doc.go). It is not the
// .proto package's version (tickemu.plugin.v2), which changes only when the
// messages do. 3: the wire of 2; sdktest's host-side scenario harness moved
// out of the SDK (framework/scenariotest), so the Go API changed. 4: a wheel
// or hrtimer base in its own process takes policies (UsePolicyRequest, and
// the policy_call / policy_answer exchange inside a call: docs/protocol.md),
// which a base binary of protocol 3 would refuse as an unknown call. 5: a
// DeadlineModel may declare a past-deadline latency and spreads drawn from
// the device's named stream (DeadlineModel fields 10-16), which a host of
// protocol 4 would ignore and then find the device's answers wrong.
const ProtocolVersion = 5

// Info describes a plugin.
type Info struct {
	Kind        Kind
	Name        string // what `plugin = "NAME"` in HCL selects
	Version     string // the plugin's own semantic version
	Description string
}

// Plugin is embedded in every kind.
type Plugin interface {
	// Info describes the plugin; it may be called before Configure.
	Info() Info
	// Schema declares the plugin's HCL attributes; the host decodes the
	// plugin's block with it. It may be called before Configure.
	Schema() Schema
	// Configure is called once, before any simulation call, with the machine
	// and the decoded, validated attributes. Errors in the result end the run
	// with the block's source position.
	Configure(s Setup, c Config) Diagnostics
	// Counters reports the plugin's own counters (Varghese & Lauck style:
	// starts, stops, per-tick bookkeeping, expiries; plus model-specific ones),
	// in a stable order. Called at the end of a run.
	Counters() []Counter
}

// Setup is what a plugin knows of the machine.
type Setup struct {
	CPUs    int
	HZ      int
	HighRes bool   // high-resolution (oneshot) mode is active; false = low-res, periodic tick
	Seed    uint64 // run seed; derive any randomness from it (and Role) only
	// Role is the label of the block that loaded the plugin (RoleLocal,
	// RoleBroadcast for clockevent blocks; empty for other kinds).
	Role Role
	// TimerMigration is /proc/sys/kernel/timer_migration (the host's
	// `kernel { timer_migration }`): timers that are not pinned may be
	// queued on another CPU (get_nohz_timer_target()) or, from 6.9, expired
	// by another CPU (the timer-migration hierarchy). False keeps every
	// timer on the CPU that starts it.
	TimerMigration bool
	// TimerHousekeeping is housekeeping_cpumask(HK_TYPE_TIMER), the CPUs
	// that may hold migrated timers (every CPU but the nohz_full= ones); nil
	// means every CPU. (A pointer keeps Setup comparable.)
	TimerHousekeeping *CPUSet
}

// Role is the label of a plugin block: which of a kind's blocks loaded the
// plugin. Only clockevent has several blocks; other kinds' role is empty.
type Role string

// The clockevent blocks.
const (
	// RoleLocal is clockevent "local": the per-CPU tick device.
	RoleLocal Role = "local"
	// RoleBroadcast is clockevent "broadcast": the device that wakes CPUs
	// whose local device stops in deep idle (kernel/time/tick-broadcast.c).
	RoleBroadcast Role = "broadcast"
)

// Isolation is where a plugin runs, the `isolation` attribute of its block.
type Isolation string

// Isolations. A block without the attribute runs a plugin linked into the
// binary (builtin or custom build) in process and a tickemu-plugin-NAME
// binary in its own process.
const (
	// IsolationInProcess calls the plugin's value directly, linked into tickemu.
	IsolationInProcess Isolation = "inprocess"
	// IsolationProcess serves the plugin from its own process over go-plugin
	// gRPC; results are byte-identical to in process.
	IsolationProcess Isolation = "process"
)

// Counter is one named count, per CPU (CPU >= 0) or machine-wide (CPU == -1).
type Counter struct {
	Name  string
	CPU   int
	Value int64
}

// Severity of a Diagnostic.
type Severity int

// Severities.
const (
	SeverityError Severity = iota + 1
	SeverityWarning
)

// Diagnostic is a problem a plugin reports to the user. Attribute, when set, names
// the HCL attribute at fault so the host can point at its source range.
type Diagnostic struct {
	Severity  Severity
	Summary   string
	Detail    string
	Attribute string
}

// Diagnostics is a list of Diagnostic.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (d Diagnostics) HasErrors() bool {
	for _, x := range d {
		if x.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errorf appends an error diagnostic about attribute attr.
func (d Diagnostics) Errorf(attr, summary string, args ...any) Diagnostics {
	return append(d, Diagnostic{Severity: SeverityError, Summary: fmt.Sprintf(summary, args...), Attribute: attr})
}

// Error implements error so diagnostics can travel as one.
func (d Diagnostics) Error() string {
	var b strings.Builder
	for i, x := range d {
		if i > 0 {
			b.WriteString("; ")
		}
		if x.Attribute != "" {
			b.WriteString(x.Attribute + ": ")
		}
		b.WriteString(x.Summary)
		if x.Detail != "" {
			b.WriteString(" (" + x.Detail + ")")
		}
	}
	return b.String()
}

// AttrType is the type of a schema attribute.
type AttrType string

// Attribute types. Durations and frequencies are strings with units in HCL
// ("250us", "14.318180MHz") and arrive in Config as integer nanoseconds and Hz.
const (
	TypeString    AttrType = "string"
	TypeNumber    AttrType = "number"
	TypeBool      AttrType = "bool"
	TypeDuration  AttrType = "duration"
	TypeFrequency AttrType = "frequency"
)

// Attribute declares one HCL attribute of a plugin block.
type Attribute struct {
	Name     string
	Type     AttrType
	Required bool
	// Default, in HCL source form without quotes ("250us", "true", "3",
	// "per_jiffy"); used when the attribute is absent.
	Default string
	// OneOf lists the allowed values of a string attribute (a strategy).
	OneOf []string
	// Min and Max bound a number, integer, duration or frequency attribute,
	// in the same form as Default ("1", "4096", "10s"); empty is unbounded.
	// The host refuses a value outside them, naming the bound. Every count
	// (threads, instances, timers) has a Max, so a typo cannot ask for more
	// than the machine could hold.
	Min, Max string
	Doc      string
	// Eras is the attribute's value per kernel release, oldest first, for a
	// strategy whose kernel behaviour changed between releases (see Era).
	Eras []Era
	// Unversioned says why a strategy attribute does not follow the kernel
	// release: a property of the hardware, a kernel build option, a choice
	// the user makes on every release ("the TSC-deadline mode is the CPU's
	// feature, not a kernel change"). A strategy attribute has Eras or
	// Unversioned; tickemu's own tests hold the builtins to it.
	Unversioned string
}

// Schema is a plugin's config schema. The attribute "plugin" (which plugin to
// load) and "isolation" are the host's and must not be declared.
type Schema struct {
	Attributes []Attribute
}

// Lookup returns the attribute called name.
func (s Schema) Lookup(name string) (Attribute, bool) {
	for _, a := range s.Attributes {
		if a.Name == name {
			return a, true
		}
	}
	return Attribute{}, false
}

// Keys returns the attribute names in sorted order.
func (c Config) Keys() []string {
	k := make([]string, 0, len(c))
	for n := range c {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}
