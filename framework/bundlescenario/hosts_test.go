package bundlescenario

import (
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/bundle"
	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// TestHosts: bundles of hosts unlike the suite's guest (their host facts
// edited from it) map to the machine the facts describe, or say what the
// model does instead, and the scenario runs. Each case changes the guest's
// facts and lists lines the scenario has, lines it must not have, and
// notes.
func TestHosts(t *testing.T) {
	idle := func(names ...string) []bundle.IdleState {
		out := []bundle.IdleState{{Name: "POLL", Desc: "CPUIDLE CORE POLL IDLE"}}
		for i, n := range names {
			out = append(out, bundle.IdleState{Name: n, LatencyUS: int64(1 + 30*i), ResidencyUS: int64(2 + 100*i)})
		}
		return out
	}
	for _, c := range []struct {
		name   string
		edit   func(h *bundle.Host)
		has    []string
		hasNot []string
		notes  []string
	}{
		{"bare metal, HZ 1000, intel_idle and menu", func(h *bundle.Host) {
			h.Hypervisor, h.HZ, h.CPUs, h.Online = "", 1000, 4, "0-3"
			h.Clockevents = []string{"lapic-deadline", "lapic-deadline", "lapic-deadline", "lapic-deadline"}
			h.CPUIdle = bundle.CPUIdle{Driver: "intel_idle", Governor: "menu", States: idle("C1", "C1E", "C6")}
		}, []string{"cpus    = 4", "hz      = 1000", `idle_state "C1"`, `idle_state "C1E"`, `idle_state "C6"`, `plugin = "menu"`, `mode   = "tsc_deadline"`},
			[]string{"POLL", "haltpoll"}, []string{"cpuidle driver intel_idle"}},
		{"periodic tick, HZ 100, acpi_idle and ladder", func(h *bundle.Host) {
			h.HZ, h.NoHZ = 100, "off"
			h.CPUIdle = bundle.CPUIdle{Driver: "acpi_idle", Governor: "ladder", States: idle("C1", "C2")}
		}, []string{"hz      = 100", `nohz    = "off"`, `idle_state "C2"`}, []string{"governor {"},
			[]string{"cpuidle governor ladder is not modelled"}},
		{"NO_HZ_FULL with nohz_full=, teo", func(h *bundle.Host) {
			h.CPUs, h.Online, h.NoHZ, h.NohzFull, h.Isolated = 4, "0-3", "full", "1-3", "1-3"
			h.CPUIdle.Governor = "teo"
		}, []string{`nohz      = "full"`, `nohz_full = "1-3"`, `isolcpus  = "1-3"`, `plugin = "teo"`}, nil, nil},
		{"NO_HZ_FULL, the mask only on the command line", func(h *bundle.Host) {
			h.CPUs, h.Online, h.NoHZ, h.NohzFull = 4, "0-3", "full", ""
			h.CmdLine = "console=ttyS0 nohz_full=2-3 rcu_nocbs=2-3"
		}, []string{`nohz_full = "2-3"`}, nil, []string{"nohz_full CPUs 2-3 from the kernel command line"}},
		{"NO_HZ_FULL built, booted without nohz_full=", func(h *bundle.Host) {
			h.NoHZ, h.NohzFull = "full", ""
		}, []string{`nohz    = "full"`}, []string{"nohz_full ="}, []string{"booted without nohz_full="}},
		{"nohz_full= naming CPUs the host lacks", func(h *bundle.Host) {
			h.NoHZ, h.NohzFull, h.CmdLine = "full", "", "nohz_full=4-7"
		}, nil, []string{"nohz_full ="}, []string{"nohz_full=4-7 does not name CPUs of the 2 online"}},
		{"HZ 300, hpet", func(h *bundle.Host) {
			h.HZ, h.Clockevents, h.Broadcast = 300, []string{"hpet", "hpet"}, "hpet"
		}, []string{"hz      = 300"}, []string{"clockevent "}, []string{"clockevent device hpet is not modelled", "broadcast device hpet"}},
		{"HZ 24 of an ARM board", func(h *bundle.Host) { h.HZ = 24 }, nil, []string{"\n  hz "}, []string{"HZ 24 is not one the model runs"}},
		{"arm64, arch_sys_timer, 5.10", func(h *bundle.Host) {
			h.Machine, h.Release, h.Hypervisor = "aarch64", "5.10.0-23-arm64", ""
			h.Clockevents = []string{"arch_sys_timer", "arch_sys_timer"}
			h.CPUIdle = bundle.CPUIdle{Driver: "psci_idle", Governor: "menu", States: []bundle.IdleState{{Name: "WFI", LatencyUS: 1, ResidencyUS: 1}, {Name: "cpu-sleep-0", LatencyUS: 400, ResidencyUS: 800}}}
		}, []string{`plugin = "archtimer"`, `version             = "5.10"`, `idle_state "WFI"`, `idle_state "cpu-sleep-0"`}, nil, nil},
		{"3.10, lapic one-shot, no timer_migration file", func(h *bundle.Host) {
			h.Release, h.Clockevents, h.TimerMigration = "3.10.0-1160.el7.x86_64", []string{"lapic", "lapic"}, nil
			h.Config = map[string]string{"HZ": "1000", "NO_HZ_IDLE": "y"}
			h.HZ = 1000
		}, []string{`mode   = "oneshot"`, `version = "3.10"`}, []string{"timer_migration", "cputime_accounting"}, nil},
		{"no kernel configuration", func(h *bundle.Host) {
			h.HZ, h.NoHZ, h.Config = 0, "", nil
		}, nil, []string{"\n  hz ", "nohz "}, []string{"HZ unknown", `NO_HZ mode "" unknown`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := guest("cyclictest", "-t1", "-i", "1000", "-l", "10", "-m", "-q")
			c.edit(&m.Host)
			sc, err := FromManifest(m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			src := string(sc.HCL)
			var body []string
			for _, l := range strings.Split(src, "\n") {
				if !strings.HasPrefix(strings.TrimSpace(l), "#") {
					body = append(body, l)
				}
			}
			b := strings.Join(body, "\n")
			for _, w := range c.has {
				if !strings.Contains(b, w) {
					t.Errorf("the scenario lacks %q:\n%s", w, b)
				}
			}
			for _, w := range c.hasNot {
				if strings.Contains(b, w) {
					t.Errorf("the scenario has %q:\n%s", w, b)
				}
			}
			notes := strings.Join(sc.Notes, "\n")
			for _, w := range c.notes {
				if !strings.Contains(notes, w) {
					t.Errorf("the notes lack %q:\n%s", w, notes)
				}
			}
			simtest.Run(t, strings.Replace(src, `duration = "`, `duration = "15ms" # `, 1), config.Options{}, nil)
		})
	}
}
