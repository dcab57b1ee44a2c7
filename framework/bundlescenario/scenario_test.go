package bundlescenario

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/bundle"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/internal/simtest"

	"github.com/tickemu/tickemu/framework/config"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// guest is the manifest of a capture on a 2-CPU KVM guest like the one the
// suite is recorded on: lapic-deadline, haltpoll cpuidle (POLL and
// "haltpoll idle"), HZ 250, NO_HZ idle, timer_migration 1.
func guest(argv ...string) *bundle.Manifest {
	tm := 1
	return &bundle.Manifest{
		Name: "test", Command: argv, Start: time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC), WallNS: 1_234_000_000,
		Host: bundle.Host{Release: "6.18.44-fc-v1272", Machine: "x86_64", Hypervisor: "KVM", CPUs: 2, Online: "0-1",
			CmdLine: "console=ttyS0 cpuidle_haltpoll.force=1 haltpoll.guest_halt_poll_ns=0 haltpoll.guest_halt_poll_allow_shrink=N -- --init-arg haltpoll.guest_halt_poll_grow=9",
			Config:  map[string]string{"HZ": "250", "NO_HZ_IDLE": "y", "TICK_CPU_ACCOUNTING": "y", "IRQ_TIME_ACCOUNTING": "n", "VIRT_CPU_ACCOUNTING_GEN": "n"},
			HZ:      250, NoHZ: "idle", HighRes: true, TimerMigration: &tm, Clocksource: "kvm-clock",
			Clockevents: []string{"lapic-deadline", "lapic-deadline"},
			CPUIdle: bundle.CPUIdle{Driver: "haltpoll", Governor: "haltpoll", States: []bundle.IdleState{
				{Name: "POLL", Desc: "CPUIDLE CORE POLL IDLE"}, {Name: "haltpoll idle", Desc: "default architecture idle", LatencyUS: 1, ResidencyUS: 1}}},
			PMQoSLatencyUS: 2000000000},
	}
}

// TestScenarioGolden: the scenario of a cyclictest and a stress-ng capture
// on the guest (testdata/*.hcl; go test -update rewrites them), and each
// loads and runs.
func TestScenarioGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"cyclictest", strings.Fields("cyclictest -t2 -a -i 1000 -l 50 -m -q -p 80")},
		{"stress-ng-nanosleep", strings.Fields("stress-ng --nanosleep 1 --timer 1 --timer-freq 1000")},
	} {
		sc, err := FromManifest(guest(tc.argv...), Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		path := filepath.Join("testdata", tc.name+".hcl")
		if *update {
			if err := os.WriteFile(path, sc.HCL, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(sc.HCL) != string(want) {
			t.Errorf("%s: scenario differs from %s (go test -update rewrites it):\n%s", tc.name, path, sc.HCL)
		}
		// It loads and runs (shortened: the golden's length is the
		// capture's).
		src := strings.Replace(string(sc.HCL), `duration = "`, `duration = "20ms" # `, 1)
		r := simtest.Run(t, src, config.Options{}, nil)
		if !strings.Contains(src, "guest_halt_poll_ns           = 0") || !strings.Contains(src, "guest_halt_poll_allow_shrink = false") || strings.Contains(src, "guest_halt_poll_grow ") {
			t.Errorf("%s: the haltpoll governor's command line parameters (and only the kernel's) are not in the scenario", tc.name)
		}
		if r.Config.CPUs != 2 || r.Config.HZ != 250 || len(r.Config.IdleStates) != 1 {
			t.Errorf("%s: ran on %d CPUs, HZ %d, idle states %v; want the guest's 2, 250, [haltpoll_idle]", tc.name, r.Config.CPUs, r.Config.HZ, r.Config.IdleStates)
		}
	}
}

// TestScenarioFacts: the machine facts each become their block or a note.
func TestScenarioFacts(t *testing.T) {
	m := guest("cyclictest", "-l", "10")
	m.Host.Release = "2.6.32"
	m.Host.Clockevents = []string{"hpet"}
	m.Host.HZ = 0
	m.Host.CPUIdle.States[1].Disabled = true
	m.Host.PMQoSLatencyUS = 10
	m.Host.CPUIdle.Governor = "ladder"
	sc, err := FromManifest(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var body []string // the blocks, without the notes
	for _, l := range strings.Split(string(sc.HCL), "\n") {
		if !strings.HasPrefix(l, "#") {
			body = append(body, l)
		}
	}
	s := strings.Join(body, "\n")
	for _, want := range []string{"outside the modelled releases", "clockevent device hpet is not modelled", "HZ unknown", "PM QoS CPU latency request of 10 us", "governor ladder is not modelled"} {
		if !strings.Contains(strings.Join(sc.Notes, "\n"), want) {
			t.Errorf("notes %q lack %q", sc.Notes, want)
		}
	}
	for _, absent := range []string{"idle_state", "version", "clockevent", " hz "} {
		if strings.Contains(s, absent) {
			t.Errorf("scenario has %q:\n%s", absent, s)
		}
	}
	for uname, want := range map[string]string{"6.18.44-fc-v1272": "6.18.44", "6.1.0-28-amd64": "6.1", "5.10": "5.10", "3.10.0-1160.el7": "3.10", "6.18-rc1": "6.18", "8.0": "", "7.1.2": "7.1.2", "6.20.1": "", "linux": ""} {
		if got, _ := release(uname); got != want {
			t.Errorf("release(%q) = %q, want %q", uname, got, want)
		}
	}
	// No length from the flags: the capture's wall time.
	sc, err = FromManifest(guest("cyclictest", "-t2"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.DurationNS != 1_234_000_000 || !strings.Contains(string(sc.HCL), `duration = "1234ms"`) {
		t.Errorf("duration %d, want the wall time 1234 ms:\n%s", sc.DurationNS, sc.HCL)
	}
}

// TestPointRelease: a bundle names its kernel's point release, and the
// version table gives it the stable backports it carries (sdk.Era.Backports):
// 6.18.44 restarts the tick with one hrtimer_start (kernel.tick_restart
// "start", adcec6a7f566) and traces was_armed (f2e388a019e4), as the
// capture in framework/trace/testdata/formats/linux-6.18.44 shows; 6.18.2
// is 6.18: cancel_start, and no was_armed.
func TestPointRelease(t *testing.T) {
	for _, tc := range []struct {
		uname, version, restart string
		wasArmed                bool
	}{
		{"6.18.44-fc-v1272", "6.18.44", kernel.TickRestartStart, true},
		{"6.18.2", "6.18.2", kernel.TickRestartCancel, false},
	} {
		m := guest("cyclictest", "-t1", "-i", "10000", "-l", "2")
		m.Host.Release = tc.uname
		sc, err := FromManifest(m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`version\s+= "`+regexp.QuoteMeta(tc.version)+`"`).Match(sc.HCL) || strings.Contains(string(sc.HCL), "tick_restart") {
			t.Errorf("%s: want version %s and no tick_restart of its own:\n%s", tc.uname, tc.version, sc.HCL)
		}
		spec, diags := config.LoadBytes("bundle.hcl", sc.HCL, config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		cfg, diags := spec.DecodeKernel(kernel.KernelSchema())
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		if cfg["tick_restart"] != tc.restart {
			t.Errorf("%s: tick_restart %q, want %q", tc.uname, cfg["tick_restart"], tc.restart)
		}
		var trace bytes.Buffer
		r := simtest.Run(t, strings.Replace(string(sc.HCL), `duration = "`, `duration = "10ms" # `, 1), config.Options{}, &trace)
		if r.Config.KernelVersion != tc.version {
			t.Errorf("%s: ran as kernel %q, want %s", tc.uname, r.Config.KernelVersion, tc.version)
		}
		if got := regexp.MustCompile(`(?m)hrtimer_start: .* mode=[A-Z|]+ was_armed=[01]$`).Match(trace.Bytes()); got != tc.wasArmed {
			t.Errorf("%s: trace prints was_armed %v, want %v", tc.uname, got, tc.wasArmed)
		}
	}
}
