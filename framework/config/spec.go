package config

import (
	"maps"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/sdk"
)

// Options are the command-line inputs that change how a file evaluates.
type Options struct {
	// Vars are --var NAME=VALUE overrides. A value is read as an HCL literal
	// when it is one (8, true, [4, 5], "quoted") and as a plain string otherwise.
	Vars map[string]string
	// Variant selects a variant block by name; empty selects none.
	Variant string
	// Seed, when set, overrides run.seed (--seed).
	Seed *uint64
	// Sweeps are --sweep flags (ParseSweepFlags); each replaces the file's
	// sweep of the same setting or adds one.
	Sweeps []Sweep
	// Point, when set, applies one point of the sweeps: the index of its
	// value in each of Spec.Sweeps() (PointIndex). Without it the file loads
	// as written.
	Point []int
	// PluginSlots lists the plugin blocks a file may hold; nil means
	// DefaultPluginSlots(). A new plugin kind is a new slot, not a code change here.
	PluginSlots []PluginSlot
	// KernelVersion, when set, overrides kernel.version (--kernel-version):
	// every versioned attribute the file leaves unset takes that release's
	// value (framework/kernelversion).
	KernelVersion string
	// Presets, when set, give versioned attributes the file leaves unset a
	// value of their own, ahead of the kernel version: the states between
	// two releases that tickemu bisect runs.
	Presets map[kernelversion.Key]string
}

// PluginSlot describes one plugin block: its kind (also the block type), its
// role label, and the builtin loaded when `plugin` is not set.
type PluginSlot struct {
	Kind sdk.Kind
	// Role is the block label ("local", "broadcast"); empty for kinds whose
	// blocks take no label. A kind is labelled if any of its slots has a role.
	Role string
	// Default names the builtin plugin used when the block omits `plugin`.
	Default string
	// Required slots are always in Spec.Plugins: a missing block means the
	// default plugin with its default settings. Optional slots appear only when
	// written.
	Required bool
	// DefaultEras, when set, make the default plugin follow the kernel
	// version (Default applies without one): the governor's, whose choice
	// is the idle tick-retain rule.
	DefaultEras []sdk.Era
}

// DefaultPluginSlots returns the slots of tickemu's plugin kinds, in the order
// Spec.Plugins lists them: the timer wheel, the hrtimer base, the per-CPU
// clockevent device, the optional broadcast device, the cpuidle governor and
// the optional policies (sdk.PolicyKinds).
func DefaultPluginSlots() []PluginSlot {
	return []PluginSlot{
		{Kind: sdk.KindTimerBase, Default: "wheel", Required: true},
		{Kind: sdk.KindHRTimer, Default: "hrtimer", Required: true},
		{Kind: sdk.KindClockEvent, Role: "local", Default: "lapic", Required: true},
		{Kind: sdk.KindClockEvent, Role: "broadcast", Default: "hpet"},
		{Kind: sdk.KindGovernor, Default: "menu", Required: true, DefaultEras: governorEras},
		// The policy blocks are optional: without one the base plugin asks
		// the builtin policy its strategy attribute names (hrtimer
		// hang_delay and restart, wheel catchup), which the eras select.
		{Kind: sdk.KindHangPolicy, Default: "max_hang_time"},
		{Kind: sdk.KindCatchupPolicy, Default: "next_expiry"},
		{Kind: sdk.KindRestartPolicy, Default: "deferred"},
	}
}

// governorEras: before 4.17 the idle loop stopped the tick before the
// governor ran (tick_nohz_idle_enter()), which always_stop models; since
// 554c8aa8ecad cpuidle_idle_call() asks the governor first and menu (the
// default governor of a tickless kernel) keeps the tick for a short sleep.
var governorEras = []sdk.Era{
	{Since: "3.10", Value: "always_stop"},
	{Since: "4.17", Value: "menu", Commit: "554c8aa8ecad", Title: "sched: idle: Select idle state before stopping the tick",
		Note: "with 45f1ff59e27c (cpuidle: Return nohz hint from cpuidle_select()) and the rest of the idle loop series; teo came in 5.1 and is never the default"},
}

// Isolation modes of a plugin block. A block without the attribute has
// IsolationDefault: the plugin loader then runs a builtin or linked-in plugin
// in process and a plugin binary in its own process (which one a name
// resolves to is only known to the loader, not to the configuration).
const (
	IsolationDefault   = ""          // no isolation attribute: the loader decides
	IsolationInProcess = "inprocess" // linked into the binary, called directly
	IsolationProcess   = "process"   // served over go-plugin gRPC by a child process
)

// NO_HZ modes of machine.nohz.
const (
	NoHZModeOff  = "off"  // nohz=off: the periodic tick always runs
	NoHZModeIdle = "idle" // CONFIG_NO_HZ_IDLE: the tick stops on idle CPUs
	NoHZModeFull = "full" // CONFIG_NO_HZ_FULL: also on busy nohz_full CPUs
)

// Spec is an evaluated configuration file: variables resolved, the variant
// applied, host blocks decoded and plugin, kernel and workload bodies kept for
// decoding with the schemas their owners declare.
//
// A Spec is immutable once loaded; it is safe to read from several goroutines.
type Spec struct {
	Machine Machine
	// Plugins holds one block per slot present (every required slot is), in
	// slot order: wheel, hrtimer, clockevent "local", clockevent "broadcast".
	Plugins []PluginBlock
	// Kernel is the body of the kernel block, decoded later with the engine's
	// schema; an empty body when the block is absent.
	Kernel      hcl.Body
	KernelRange hcl.Range
	// KernelVersion is kernel.version or --kernel-version, zero when
	// neither is set; KernelVersionRange is where the file sets it.
	KernelVersion      kernelversion.Release
	KernelVersionRange hcl.Range
	// Workloads in file order.
	Workloads []WorkloadBlock
	Run       Run
	// Variant is the selected variant's name, empty if none.
	Variant string
	// Vars holds every declared variable's final value, in declaration order.
	Vars []Var

	presets  map[kernelversion.Key]string
	files    map[string]*hcl.File
	ctx      *hcl.EvalContext
	variants []string
	hash     string
	sweeps   []Sweep
	point    Point
}

// Machine is the decoded machine block.
type Machine struct {
	CPUs int    // 1..MaxCPUs; default 1
	HZ   int    // CONFIG_HZ: 100, 250, 300 or 1000; default 1000
	NoHZ string // NoHZModeOff, NoHZModeIdle (default) or NoHZModeFull
	// NoHZFull and IsolCPUs are the nohz_full= and isolcpus= masks, sorted and
	// distinct, after kernel/sched/isolation.c:housekeeping_setup() has run on
	// them (see machine.go): a mask covering every CPU loses the boot CPU 0.
	NoHZFull []int
	IsolCPUs []int
	HighRes  bool // high-resolution timers (hrtimer_switch_to_hres()); default true
	// IdleStates are the cpuidle states beyond C0 polling, in file order,
	// which is the driver's state order (shallow first by convention).
	IdleStates []IdleState
	// CPUsSet and HZSet record that the file wrote cpus and hz: a workload
	// that brings its own machine size (a replayed capture) fills the others.
	CPUsSet, HZSet bool
	DefRange       hcl.Range
}

// IdleState models the parts of struct cpuidle_state (include/linux/cpuidle.h)
// the tick path depends on.
type IdleState struct {
	Name            string
	ExitLatency     int64 // exit_latency_ns
	TargetResidency int64 // target_residency_ns
	// StopsLocalTimer is CPUIDLE_FLAG_TIMER_STOP: the local clockevent device
	// stops in this state, so the broadcast device must wake the CPU.
	StopsLocalTimer bool
	DefRange        hcl.Range
}

// PluginBlock is one plugin block: the host's attributes decoded, the rest kept
// for the plugin's schema.
type PluginBlock struct {
	Kind      sdk.Kind
	Role      string // the block label; empty for unlabelled kinds
	Plugin    string // builtin or tickemu-plugin-NAME binary
	Isolation string // IsolationDefault, IsolationInProcess or IsolationProcess
	// Body holds the block's attributes other than plugin and isolation.
	Body hcl.Body
	// DefRange is the block header, or the start of the file for a block the
	// file omits. PluginRange is the plugin attribute's value, or DefRange.
	DefRange, PluginRange hcl.Range
}

// WorkloadBlock is one `workload "TYPE" "NAME"` block, kept for the engine to
// decode with the schema of TYPE.
type WorkloadBlock struct {
	Type, Name string
	Body       hcl.Body
	DefRange   hcl.Range
	TypeRange  hcl.Range // the TYPE label, for "unknown workload type" errors
}

// Run is the decoded run block.
type Run struct {
	// Duration is the measured span (> 0); the engine simulates Warmup first
	// and discards its metrics, so a run lasts Warmup+Duration of simulated time.
	Duration int64
	Warmup   int64
	// Seed seeds every random stream of the run (default 1); Options.Seed
	// overrides it.
	Seed uint64
	// MaxWall bounds the run's wall-clock time in nanoseconds (0: none): the
	// run stops there, its results marked incomplete. It is not an input of
	// the simulation, so it is not hashed.
	MaxWall  int64
	DefRange hcl.Range
}

// VarSource says where a variable's value came from.
type VarSource string

// Variable value sources, in increasing precedence.
const (
	VarFromDefault VarSource = "default"
	VarFromVariant VarSource = "variant"
	VarFromSweep   VarSource = "sweep"
	VarFromCLI     VarSource = "cli"
)

// Var is a variable's final value.
type Var struct {
	Name   string
	Value  cty.Value
	Source VarSource
}

// Files returns the parsed source files by name, for WriteDiagnostics. It is
// usable even when loading failed.
func (s *Spec) Files() map[string]*hcl.File { return maps.Clone(s.files) }

// Variants returns the names of the file's variant blocks, in file order.
func (s *Spec) Variants() []string { return append([]string(nil), s.variants...) }

// EvalContext returns a context holding var.* and the functions config files
// may call, for decoding bodies the way the loader did. It is a fresh child
// context: the caller may add to it without affecting the Spec.
func (s *Spec) EvalContext() *hcl.EvalContext {
	if s.ctx == nil {
		return nil
	}
	return s.ctx.NewChild()
}

// Hash returns the SHA-256 (hex) of the evaluated configuration; see hash.go.
func (s *Spec) Hash() string { return s.hash }

// Plugin returns the block of the given kind and role, if present.
func (s *Spec) Plugin(kind sdk.Kind, role string) (PluginBlock, bool) {
	for _, p := range s.Plugins {
		if p.Kind == kind && p.Role == role {
			return p, true
		}
	}
	return PluginBlock{}, false
}
