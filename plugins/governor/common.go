package governor

import (
	"fmt"
	"slices"

	"github.com/tickemu/tickemu/framework/sdk"
)

// Version is the version of every governor in the package.
const Version = "1.0.0"

// base is what every governor shares: its name, the states of each CPU, the
// configured selection cost and the counters.
type base struct {
	kind       sdk.Kind
	name, desc string
	cost       int64
	// cpus are each CPU's base record: in own, or in the governor's
	// per-CPU record where it binds them (bind), next to the fields every
	// select reads.
	cpus []*baseCPU
	own  []baseCPU
	// tables are the distinct state tables Enable was given.
	tables []*[]sdk.CPUIdleState
}

// baseCPU is a CPU's part of base: its states (nil until Enable; CPUs of
// one driver share the table), its selections and those with stop_tick =
// false.
type baseCPU struct {
	states           *[]sdk.CPUIdleState
	selects, retains int64
}

// answer counts a selection and returns it with cost.
func (p *baseCPU) answer(cost int64, state int, stop bool) sdk.IdleChoice {
	p.selects++
	if !stop {
		p.retains++
	}
	return sdk.IdleChoice{State: state, StopTick: stop, Cost: cost}
}

func (b *base) Info() sdk.Info {
	return sdk.Info{Kind: b.kind, Name: b.name, Version: Version, Description: b.desc}
}

// factory declares a governor: the name `plugin = NAME` selects, its
// description, and how to make it around the base every governor shares.
func factory(name, desc string, make func(base) sdk.Plugin) sdk.Factory {
	f := sdk.Factory{Kind: sdk.KindGovernor, Name: name}
	f.New = func() sdk.Plugin { return make(base{kind: f.Kind, name: f.Name, desc: desc}) }
	return f
}

// maxCost bounds every governor's select_cost (the schema's Max, refused
// at decode with the file, line and attribute): a ->select() of a millisecond is a typing mistake, and an answer
// stays far within the plugin contract's 10 s (framework/contract's
// MaxCost). The builtin runs in process without the contract checker, so its
// config must not be able to break the contract.
const maxCost = "1ms"

func (b *base) Schema() sdk.Schema {
	return sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "select_cost", Type: sdk.TypeDuration, Default: "0ns", Max: maxCost,
			Doc: "simulated cost of one ->select() on the idle CPU (not charged by default: the kernel's nohz_stop_cost covers the idle entry bookkeeping)"},
	}}
}

func (b *base) configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	var d sdk.Diagnostics
	if s.CPUs <= 0 {
		return d.Errorf("", "machine has %d CPUs", s.CPUs)
	}
	r := c.Reader()
	b.cost = r.Duration("select_cost")
	d = append(d, r.Diagnostics()...)
	if b.cost < 0 {
		d = d.Errorf("select_cost", "must not be negative")
	}
	b.own = make([]baseCPU, s.CPUs)
	b.cpus = make([]*baseCPU, s.CPUs)
	for i := range b.own {
		b.cpus[i] = &b.own[i]
	}
	return d
}

// bind makes at(cpu) every CPU's base record (before Enable).
func (b *base) bind(at func(cpu int) *baseCPU) {
	b.own = nil
	for i := range b.cpus {
		b.cpus[i] = at(i)
	}
}

// enable records cpu's states; it panics on a call the host must never make
// (the sdktest conformance suite checks the host side of the contract).
func (b *base) enable(cpu int, states []sdk.CPUIdleState) {
	if cpu < 0 || cpu >= len(b.cpus) {
		panic(fmt.Sprintf("governor %s: Enable on cpu %d of %d", b.name, cpu, len(b.cpus)))
	}
	if len(states) == 0 {
		panic(fmt.Sprintf("governor %s: Enable on cpu %d with no states", b.name, cpu))
	}
	// CPUs of one driver get the same table (cpuidle_register_driver()):
	// they share one copy. Nothing writes into a copy once it is made.
	for _, t := range b.tables {
		if slices.Equal(*t, states) {
			b.cpus[cpu].states = t
			return
		}
	}
	t := new([]sdk.CPUIdleState)
	*t = append([]sdk.CPUIdleState(nil), states...)
	b.tables = append(b.tables, t)
	b.cpus[cpu].states = t
}

// cpuStates returns cpu's states, panicking if Enable was not called. It
// inlines into the callers (the panic value formats its message only when
// printed).
func (b *base) cpuStates(cpu int) []sdk.CPUIdleState {
	if uint(cpu) >= uint(len(b.cpus)) || b.cpus[cpu].states == nil {
		panic(notEnabledError{b.name, cpu})
	}
	return *b.cpus[cpu].states
}

// notEnabledError is a governor call on a CPU that was never enabled.
type notEnabledError struct {
	name string
	cpu  int
}

func (e notEnabledError) Error() string {
	return fmt.Sprintf("governor %s: Select on cpu %d before Enable", e.name, e.cpu)
}

// answer counts a selection on cpu and returns it with the configured cost.
func (b *base) answer(cpu, state int, stop bool) sdk.IdleChoice {
	return b.cpus[cpu].answer(b.cost, state, stop)
}

func (b *base) counters() []sdk.Counter {
	var out []sdk.Counter
	for cpu, n := range b.cpus {
		out = append(out, sdk.Counter{Name: "selects", CPU: cpu, Value: n.selects},
			sdk.Counter{Name: "tick_retained", CPU: cpu, Value: n.retains})
	}
	return out
}
