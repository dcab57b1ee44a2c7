package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// MachineSchema is the machine block's schema (its idle_state blocks are
// described by IdleStateSchema).
var MachineSchema = sdk.Schema{Attributes: []sdk.Attribute{
	{Name: "cpus", Type: TypeInteger, Default: "1", Doc: "number of CPUs, 1..4096"},
	{Name: "hz", Type: TypeInteger, Default: "1000", Doc: "CONFIG_HZ: 100, 250, 300 or 1000"},
	{Name: "nohz", Type: sdk.TypeString, Default: NoHZModeIdle, OneOf: []string{NoHZModeOff, NoHZModeIdle, NoHZModeFull},
		Doc: "tick mode: off (periodic), idle (CONFIG_NO_HZ_IDLE), full (CONFIG_NO_HZ_FULL)"},
	{Name: "nohz_full", Type: TypeCPUList, Doc: "nohz_full= CPUs (needs nohz = \"full\")"},
	{Name: "isolcpus", Type: TypeCPUList, Doc: "isolcpus= CPUs (domain isolation)"},
	{Name: "highres", Type: sdk.TypeBool, Default: "true", Doc: "high-resolution timers (highres=on)"},
}}

// IdleStateSchema is the schema of an `idle_state "NAME"` block in machine.
var IdleStateSchema = sdk.Schema{Attributes: []sdk.Attribute{
	{Name: "exit_latency", Type: sdk.TypeDuration, Required: true, Doc: "cpuidle_state.exit_latency_ns"},
	{Name: "target_residency", Type: sdk.TypeDuration, Required: true, Doc: "cpuidle_state.target_residency_ns"},
	{Name: "stops_local_timer", Type: sdk.TypeBool, Default: "false", Doc: "CPUIDLE_FLAG_TIMER_STOP"},
}}

// maxIdleStates is CPUIDLE_STATE_MAX (include/linux/cpuidle.h, 10) less the
// polling state 0 every x86 driver installs (drivers/cpuidle/poll_state.c).
const maxIdleStates = 10 - 1

var idleStateHeader = hcl.BlockHeaderSchema{Type: "idle_state", LabelNames: []string{"name"}}

func (l *loader) decodeMachine(blocks hcl.Blocks) {
	const what = "machine block"
	m := &l.spec.Machine
	var body hcl.Body
	if b := l.only(blocks); b != nil {
		body, m.DefRange = b.Body, b.DefRange
	} else {
		m.DefRange = l.fileStart()
		body = emptyBody(m.DefRange)
	}
	content, rest, diags := body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{idleStateHeader}})
	l.diags = append(l.diags, diags...)

	// cpus first: the CPU lists are checked against it and may say "N".
	cpusAttr, _ := MachineSchema.Lookup("cpus")
	cc, rest, diags := rest.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "cpus"}, {Name: ProfileAttr}}})
	l.diags = append(l.diags, diags...)
	if a := cc.Attributes[ProfileAttr]; a != nil {
		l.loadProfile(a)
	}
	m.CPUs = 1
	nr := MaxCPUs
	if a := cc.Attributes["cpus"]; a != nil {
		m.CPUsSet = true
		v, ok, diags := decoder{ctx: l.ctx, budget: l.budget}.attribute(a, cpusAttr, what)
		l.diags = append(l.diags, diags...)
		if ok {
			if n, err := strconv.Atoi(v); err != nil || n < 1 || n > MaxCPUs {
				l.diags = append(l.diags, errorAt(a.Expr.Range(), `Invalid value for "cpus"`,
					`"cpus" in the %s: a machine has 1 to %d CPUs; got %s.`, what, MaxCPUs, v))
			} else {
				m.CPUs, nr = n, n
			}
		}
	}

	d := decoder{ctx: l.ctx, budget: l.budget, nrCPUs: nr, hostAttrs: []string{"cpus", ProfileAttr}, hostBlocks: []hcl.BlockHeaderSchema{idleStateHeader}}
	schema := sdk.Schema{Attributes: slices.DeleteFunc(slices.Clone(MachineSchema.Attributes),
		func(a sdk.Attribute) bool { return a.Name == "cpus" })}
	cfg, diags := d.decode(rest, schema, what)
	l.diags = append(l.diags, diags...)
	if !diags.HasErrors() {
		l.machineAttrs(m, cfg, rest, nr)
	}
	l.idleStates(m, content.Blocks)
}

func (l *loader) machineAttrs(m *Machine, cfg sdk.Config, body hcl.Body, nr int) {
	const what = "machine block"
	rd := cfg.Reader()
	m.NoHZ, m.HighRes = rd.String("nohz"), rd.Bool("highres")
	l.hostDiags(rd, body.MissingItemRange())
	hz, err := strconv.Atoi(cfg["hz"])
	if err != nil || !ktime.ValidHZ(hz) {
		l.diags = append(l.diags, errorAt(AttributeRange(body, "hz"), `Invalid value for "hz"`,
			`"hz" in the %s: CONFIG_HZ is 100, 250, 300 or 1000; got %s.`, what, cfg["hz"]))
	}
	m.HZ = hz
	_, m.HZSet = attributeRange(body, "hz")
	lists := make([]cpuMaskParam, 0, 2)
	for _, name := range []string{"nohz_full", "isolcpus"} {
		cpus, err := ParseCPUListFor(cfg[name], nr)
		if err != nil { // canonical text from the decoder always parses
			panic(fmt.Sprintf("config: canonical cpulist %q of %s does not parse: %v", cfg[name], name, err))
		}
		r, written := attributeRange(body, name)
		if written {
			lists = append(lists, cpuMaskParam{name: name, cpus: cpus, rng: r})
		}
	}
	if r, written := attributeRange(body, "nohz_full"); written && cfg["nohz_full"] != "" && m.NoHZ != NoHZModeFull {
		l.diags = append(l.diags, errorAt(r, `Invalid value for "nohz_full"`,
			`"nohz_full" in the %s: nohz_full CPUs need nohz = "full" (CONFIG_NO_HZ_FULL); nohz is %q.`, what, m.NoHZ))
		return
	}
	l.housekeeping(lists, nr)
	for _, p := range lists {
		switch p.name {
		case "nohz_full":
			m.NoHZFull = p.cpus
		case "isolcpus":
			m.IsolCPUs = p.cpus
		}
	}
}

// cpuMaskParam is one of the nohz_full= and isolcpus= boot parameters.
type cpuMaskParam struct {
	name string
	cpus []int
	rng  hcl.Range
}

// housekeeping applies kernel/sched/isolation.c:housekeeping_setup() (as of
// v6.15) to the nohz_full= and isolcpus= masks, in the order the machine block
// writes them, as the kernel runs __setup() handlers in command-line order:
//
//   - a mask that leaves no housekeeping CPU loses the boot CPU 0 (the kernel
//     warns "must include one present CPU, using boot CPU:0" on the first call);
//   - a second mask that leaves no CPU outside both masks is ignored ("must
//     include one present CPU neither in nohz_full= nor in isolcpus=domain").
//
// The masks of plain isolcpus= (domain) and nohz_full= use different
// housekeeping types, so the kernel does not require them to be equal. The
// kernel's warnings become warning diagnostics. Masks are replaced in place.
func (l *loader) housekeeping(params []cpuMaskParam, nr int) {
	slices.SortFunc(params, func(a, b cpuMaskParam) int { return cmp.Compare(a.rng.Start.Byte, b.rng.Start.Byte) })
	var housekeepers []bool // the first mask's housekeeping CPUs; nil before it
	for i := range params {
		p := &params[i]
		isolated := make([]bool, nr)
		for _, c := range p.cpus {
			isolated[c] = true
		}
		if !slices.Contains(isolated, false) {
			isolated[0] = false
			p.cpus = p.cpus[1:]
			if housekeepers == nil {
				l.diags = append(l.diags, warningAt(p.rng, fmt.Sprintf("%s covers every CPU", p.name),
					"Housekeeping must include one present CPU; as the kernel does, the boot CPU 0 is removed from %s.", p.name))
			}
		}
		if len(p.cpus) == 0 {
			continue // an empty mask sets nothing up
		}
		if housekeepers == nil {
			housekeepers = make([]bool, nr)
			for c := range nr {
				housekeepers[c] = !isolated[c]
			}
			continue
		}
		shared := false
		for c := range nr {
			shared = shared || housekeepers[c] && !isolated[c]
		}
		if !shared {
			l.diags = append(l.diags, warningAt(p.rng, fmt.Sprintf("%s ignored", p.name),
				"Housekeeping must include one present CPU neither in nohz_full nor in isolcpus; as the kernel does, %s is ignored.", p.name))
			p.cpus = nil
		}
	}
}

func (l *loader) idleStates(m *Machine, blocks hcl.Blocks) {
	seen := map[string]hcl.Range{}
	for _, b := range blocks {
		name := b.Labels[0]
		what := fmt.Sprintf("idle_state %q block", name)
		if name == "" {
			l.diags = append(l.diags, errorAt(b.LabelRanges[0], "Invalid idle state name", "An idle state needs a name, such as \"C1\"."))
			continue
		}
		if prev, ok := seen[name]; ok {
			l.diags = append(l.diags, errorAt(b.LabelRanges[0], "Duplicate idle state",
				"Idle state %q is already defined at %s.", name, prev))
			continue
		}
		seen[name] = b.DefRange
		if len(m.IdleStates) == maxIdleStates {
			l.diags = append(l.diags, errorAt(b.DefRange, "Too many idle states",
				"A cpuidle driver has at most CPUIDLE_STATE_MAX = 10 states, and state 0 is the polling state, so at most %d idle_state blocks fit.", maxIdleStates))
			continue
		}
		cfg, diags := decoder{ctx: l.ctx, budget: l.budget}.decode(b.Body, IdleStateSchema, what)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		rd := cfg.Reader()
		m.IdleStates = append(m.IdleStates, IdleState{
			Name:            name,
			ExitLatency:     rd.Duration("exit_latency"),
			TargetResidency: rd.Duration("target_residency"),
			StopsLocalTimer: rd.Bool("stops_local_timer"),
			DefRange:        b.DefRange,
		})
		l.hostDiags(rd, b.DefRange)
	}
}

func parseUint64(s string) (uint64, bool) {
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// hostDiags reports what a reader of a block the decoder produced could not
// decode: canonical values always decode, so this is a tickemu bug, but it is
// reported at the block rather than read as 0.
func (l *loader) hostDiags(rd *sdk.ConfigReader, at hcl.Range) {
	for _, d := range rd.Diagnostics() {
		l.diags = append(l.diags, errorAt(at, "Internal decoding error", "%s", d.Summary))
	}
}
