package bundlescenario

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/tickemu/tickemu/framework/bundle"
	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/sdk/eras"
)

// Scenario is a bundle's run as a tickemu scenario.
type Scenario struct {
	// HCL is the scenario file: machine, plugin blocks, kernel block,
	// workloads and run.
	HCL []byte
	// Command is the translated argv.
	Command *Command
	// DurationNS is the run's length: the command's own flags, else the
	// capture's wall time.
	DurationNS int64
	// Notes say what the model approximates, machine and command.
	Notes []string
}

// Options are the choices a bundle does not make.
type Options struct {
	// Profile is a machine profile file (`machine { profile }`); empty:
	// the model's default costs.
	Profile string
	// Seed is the run's seed (0: 1).
	Seed uint64
	// Background is the capture whose background the scenario replays
	// beside the command: a replay workload of it with exclude =
	// "workload" (docs/replay.md), so that the model runs what the real
	// machine ran besides the command too (the kernel's own timers, other
	// processes, the capturing tickemu's threads). Empty: the command
	// alone. BackgroundNS is how long the replay lasts (the capture's span
	// from the model's start): a command that stops on its own
	// (Command.StopsItself) runs that long if it is longer.
	Background   string
	BackgroundNS int64
}

// BackgroundName is the name of the replay workload that holds a bundle's
// background (Options.Background).
const BackgroundName = "background"

// noConstraint is the PM QoS CPU latency value that means none
// (PM_QOS_CPU_LATENCY_DEFAULT_VALUE, 2000 s in us).
const noConstraint = 2000000000

// FromManifest builds the scenario of a bundle's manifest.
func FromManifest(m *bundle.Manifest, o Options) (*Scenario, error) {
	h := m.Host
	if h.CPUs < 1 {
		return nil, fmt.Errorf("host: %d CPUs online", h.CPUs)
	}
	cmd, err := Translate(m.Command, h.CPUs)
	if err != nil {
		return nil, err
	}
	sc := &Scenario{Command: cmd, DurationNS: cmd.DurationNS}
	note := func(format string, args ...any) { sc.Notes = append(sc.Notes, fmt.Sprintf(format, args...)) }
	if sc.DurationNS == 0 {
		if m.WallNS <= 0 {
			return nil, fmt.Errorf("command %s sets no length and the bundle has no wall time", strings.Join(m.Command, " "))
		}
		sc.DurationNS = m.WallNS
		note("run length: the capture's wall time, %s (the command's flags set none)", durText(m.WallNS))
	}

	f := hclwrite.NewEmptyFile()
	root := f.Body()
	machineBlocks(root, m.Host, o, note)
	if h.PMQoSLatencyUS >= 0 && h.PMQoSLatencyUS < noConstraint {
		note("a PM QoS CPU latency request of %d us was in force before the run: not modelled", h.PMQoSLatencyUS)
	}

	for _, w := range cmd.Workloads {
		b := root.AppendNewBlock("workload", []string{w.Type, w.Name}).Body()
		for _, a := range w.Attrs {
			b.SetAttributeValue(a.Name, a.Value)
		}
	}
	if o.Background != "" {
		if m.PID <= 0 {
			note("the bundle records no command pid (it predates them): the command runs alone, without the machine's background")
		} else {
			b := root.AppendNewBlock("workload", []string{"replay", BackgroundName}).Body()
			b.SetAttributeValue("capture", cty.StringVal(o.Background))
			b.SetAttributeValue("exclude", cty.StringVal("workload"))
			note("the machine's background is replayed beside the command: the capture's timers and tasks outside the command's process tree (pid %d and what it forked), the capturing tickemu's threads among them, and the timers the kernel starts for itself while the command runs (workload \"replay\" %q, exclude = \"workload\")", m.PID, BackgroundName)
			if cmd.MainUnmodelled {
				b.SetAttributeValue("keep", cty.StringVal("workload"))
				note("the command's main task (pid %d), which the model does not run, is replayed from the capture too (keep = \"workload\")", m.PID)
			}
			if cmd.StopsItself && o.BackgroundNS > sc.DurationNS {
				note("run length: the capture's span, %s, so that its background is replayed whole (the command stops on its own after %s)", durText(o.BackgroundNS), durText(sc.DurationNS))
				sc.DurationNS = o.BackgroundNS
			}
		}
	}
	run := root.AppendNewBlock("run", nil).Body()
	run.SetAttributeValue("duration", cty.StringVal(durText(sc.DurationNS)))
	seed := o.Seed
	if seed == 0 {
		seed = 1
	}
	run.SetAttributeValue("seed", cty.NumberUIntVal(seed))

	var head strings.Builder
	fmt.Fprintf(&head, "# The scenario of capture bundle %s: %s\n", nameOf(m), strings.Join(m.Command, " "))
	fmt.Fprintf(&head, "# on %s %s, %d CPUs, HZ %d, NO_HZ %s (written by tickemu's bundle translation).\n", h.Release, h.Machine, h.CPUs, h.HZ, h.NoHZ)
	sc.Notes = append(sc.Notes, cmd.Notes...)
	for _, n := range sc.Notes {
		fmt.Fprintf(&head, "# note: %s\n", n)
	}
	sc.HCL = append([]byte(head.String()), hclwrite.Format(f.Bytes())...)
	return sc, nil
}

// Machine is the machine, plugin and kernel blocks of a bundle's host (what
// FromManifest writes before the workloads), for a run of something other
// than the bundle's command on it: `tickemu replay BUNDLE` replays the
// bundle's trace there. notes say what the model approximates.
func Machine(m *bundle.Manifest, o Options) (hcl []byte, notes []string, err error) {
	if m.Host.CPUs < 1 {
		return nil, nil, fmt.Errorf("host: %d CPUs online", m.Host.CPUs)
	}
	f := hclwrite.NewEmptyFile()
	machineBlocks(f.Body(), m.Host, o, func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) })
	return hclwrite.Format(f.Bytes()), notes, nil
}

// machineBlocks appends the machine, plugin and kernel blocks of host h to
// root, noting what the model approximates.
func machineBlocks(root *hclwrite.Body, h bundle.Host, o Options, note func(format string, args ...any)) {
	mach := root.AppendNewBlock("machine", nil).Body()
	mach.SetAttributeValue("cpus", cty.NumberIntVal(int64(h.CPUs)))
	if want := fmt.Sprintf("0-%d", h.CPUs-1); h.Online != "" && h.Online != want && !(h.CPUs == 1 && h.Online == "0") {
		note("online CPUs %s are numbered 0-%d in the model", h.Online, h.CPUs-1)
	}
	switch h.HZ {
	case 100, 250, 300, 1000:
		mach.SetAttributeValue("hz", cty.NumberIntVal(int64(h.HZ)))
	case 0:
		note("HZ unknown (no kernel configuration in the bundle): the model's default")
	default:
		// CONFIG_HZ outside the x86 choices (some ARM boards' 24, 48,
		// 128, 200, 500): the model's wheel and tick run at 100, 250,
		// 300 or 1000.
		note("HZ %d is not one the model runs (100, 250, 300, 1000): the model's default", h.HZ)
	}
	switch h.NoHZ {
	case "off", "idle", "full":
		mach.SetAttributeValue("nohz", cty.StringVal(h.NoHZ))
	default:
		note("NO_HZ mode %q unknown: the model's default (idle)", h.NoHZ)
	}
	if h.NoHZ == "full" {
		full := h.NohzFull
		if full == "" {
			// A kernel without /sys/devices/system/cpu/nohz_full
			// (before 3.13) states the mask only on its command line.
			full = cmdlineParam(h.CmdLine, "nohz_full")
			if full != "" {
				note("nohz_full CPUs %s from the kernel command line (the bundle has no sysfs list)", full)
			}
		}
		if full != "" {
			if _, err := config.ParseCPUListFor(full, h.CPUs); err != nil {
				note("nohz_full=%s does not name CPUs of the %d online (%v): no nohz_full CPU", full, h.CPUs, err)
			} else {
				mach.SetAttributeValue("nohz_full", cty.StringVal(full))
			}
		} else {
			// CONFIG_NO_HZ_FULL without nohz_full= stops the tick only
			// in idle (tick_nohz_full_running is false).
			note("NO_HZ_FULL kernel booted without nohz_full=: every CPU stops its tick only in idle")
		}
	}
	if h.Isolated != "" {
		mach.SetAttributeValue("isolcpus", cty.StringVal(h.Isolated))
	}
	mach.SetAttributeValue("highres", cty.BoolVal(h.HighRes))
	if o.Profile != "" {
		mach.SetAttributeValue("profile", cty.StringVal(o.Profile))
	}
	for _, s := range h.CPUIdle.States {
		if s.Disabled || strings.EqualFold(s.Name, "POLL") {
			// The model's idle loop polls without a state; a disabled
			// state is never chosen.
			continue
		}
		st := mach.AppendNewBlock("idle_state", []string{labelOf(s.Name)}).Body()
		st.SetAttributeValue("exit_latency", cty.StringVal(fmt.Sprintf("%dus", s.LatencyUS)))
		st.SetAttributeValue("target_residency", cty.StringVal(fmt.Sprintf("%dus", s.ResidencyUS)))
	}
	if h.CPUIdle.Driver != "" {
		note("cpuidle driver %s: its states' latencies and residencies are the model's; the driver's own behaviour is not modelled", h.CPUIdle.Driver)
	}

	if len(h.Clockevents) > 0 {
		ce := h.Clockevents[0]
		switch ce {
		case "lapic-deadline":
			b := root.AppendNewBlock("clockevent", []string{"local"}).Body()
			b.SetAttributeValue("plugin", cty.StringVal("lapic"))
			b.SetAttributeValue("mode", cty.StringVal("tsc_deadline"))
		case "lapic":
			b := root.AppendNewBlock("clockevent", []string{"local"}).Body()
			b.SetAttributeValue("plugin", cty.StringVal("lapic"))
			b.SetAttributeValue("mode", cty.StringVal("oneshot"))
		case "arch_sys_timer", "arch_mem_timer":
			b := root.AppendNewBlock("clockevent", []string{"local"}).Body()
			b.SetAttributeValue("plugin", cty.StringVal("archtimer"))
		default:
			note("clockevent device %s is not modelled: the model's default", ce)
		}
		if h.Hypervisor != "" {
			note("a %s guest: programming the clockevent traps to the hypervisor, which the default device costs do not include", h.Hypervisor)
		}
	}
	if h.Broadcast != "" {
		note("broadcast device %s: not set up (no idle state here stops the local timer)", h.Broadcast)
	}
	switch g := h.CPUIdle.Governor; g {
	case "menu", "teo", "haltpoll":
		gb := root.AppendNewBlock("governor", nil).Body()
		gb.SetAttributeValue("plugin", cty.StringVal(g))
		if g == "haltpoll" {
			// The haltpoll governor's module parameters, where the
			// kernel command line sets them (haltpoll.guest_halt_poll_ns=0).
			for _, p := range haltpollParams(h.CmdLine) {
				gb.SetAttributeValue(p.Name, p.Value)
			}
		}
	case "":
	default:
		note("cpuidle governor %s is not modelled: the kernel version's default (menu)", g)
	}

	kb := root.AppendNewBlock("kernel", nil).Body()
	if r, ok := release(h.Release); ok {
		kb.SetAttributeValue("version", cty.StringVal(r))
	} else if h.Release != "" {
		note("kernel %s is outside the modelled releases (%s): the latest behaviour", h.Release, kernelversion.Covered())
	}
	if h.TimerMigration != nil {
		kb.SetAttributeValue("timer_migration", cty.BoolVal(*h.TimerMigration != 0))
	}
	// CPU time accounting, as the kernel was built: /proc/stat's columns
	// depend on it.
	switch {
	case h.Config["VIRT_CPU_ACCOUNTING_GEN"] == "y":
		kb.SetAttributeValue("cputime_accounting", cty.StringVal("vtime"))
	case h.Config["TICK_CPU_ACCOUNTING"] == "y":
		kb.SetAttributeValue("cputime_accounting", cty.StringVal("tick"))
	}
	if v := h.Config["IRQ_TIME_ACCOUNTING"]; v == "y" || v == "n" {
		kb.SetAttributeValue("irq_time_accounting", cty.BoolVal(v == "y"))
	}

}

// release is the release of a uname -r ("6.18.44-fc-v1272" is 6.18.44, its
// stable backports included: sdk.Era.Backports), if the table covers it.
func release(uname string) (string, bool) {
	r, err := eras.ParseUname(uname)
	if err != nil {
		return "", false
	}
	if _, err := kernelversion.ParseCovered(r.String()); err != nil {
		return "", false
	}
	return r.String(), true
}

// labelOf makes a cpuidle state's name ("haltpoll idle") a block label the
// configuration accepts: letters, digits, '_', '-' and '.' kept, the rest
// '_'.
func labelOf(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "state"
	}
	return b.String()
}

// nameOf is the bundle's name, or its command's program.
func nameOf(m *bundle.Manifest) string {
	if m.Name != "" {
		return m.Name
	}
	if len(m.Command) > 0 {
		return m.Command[0]
	}
	return "(unnamed)"
}

// durText writes ns as a duration the configuration reads: whole
// milliseconds when exact, else nanoseconds.
func durText(ns int64) string {
	if ns%1_000_000 == 0 {
		return strconv.FormatInt(ns/1_000_000, 10) + "ms"
	}
	return strconv.FormatInt(ns, 10) + "ns"
}

// cmdlineParam is the value of the kernel command line's parameter name
// (its last occurrence, as __setup() handlers see them), "" when absent;
// what follows "--" is init's.
func cmdlineParam(cmdline, name string) string {
	v := ""
	for _, w := range strings.Fields(cmdline) {
		if w == "--" {
			break
		}
		if k, val, ok := strings.Cut(w, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// haltpollParams reads the haltpoll governor's parameters from a kernel
// command line ("haltpoll.guest_halt_poll_ns=0"); a value that is not a
// number (or Y/N for allow_shrink) is left to the plugin's default.
func haltpollParams(cmdline string) []Attr {
	var out []Attr
	for _, w := range strings.Fields(cmdline) {
		if w == "--" {
			break // what follows is init's
		}
		k, v, ok := strings.Cut(w, "=")
		name, isHaltpoll := strings.CutPrefix(k, "haltpoll.")
		if !ok || !isHaltpoll {
			continue
		}
		switch name {
		case "guest_halt_poll_ns", "guest_halt_poll_grow_start", "guest_halt_poll_grow", "guest_halt_poll_shrink":
			if n, err := strconv.ParseUint(v, 10, 32); err == nil {
				out = append(out, Attr{name, cty.NumberUIntVal(n)})
			}
		case "guest_halt_poll_allow_shrink":
			switch strings.ToLower(v) {
			case "y", "1", "true":
				out = append(out, Attr{name, cty.True})
			case "n", "0", "false":
				out = append(out, Attr{name, cty.False})
			}
		}
	}
	return out
}
