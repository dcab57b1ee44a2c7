package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/resultfmt"
)

// hangPolicyConfig is a hang policy in process or in its own process
// (var.isolation), asked by the in-process hrtimer base: the scenario of
// cmd/tickemu's plugin_stats.txtar, but re-tuning the timers' periods every
// 512 signals rather than 8192, which gives 19 hangs in 100 ms (that
// scenario's first hang comes after about 350 ms; its 400 ms took 70 s of
// this test's 119 under the race detector).
const hangPolicyConfig = `
variable "isolation" {
  default = "inprocess"
}
machine {
  cpus = 2
  hz   = 1000
  nohz = "idle"
}
hang_policy {
  plugin    = "max_hang_time"
  isolation = var.isolation
}
clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}
kernel {
  syscall_cost = "500ns"
}
workload "timermix" "timermix" {
  instances    = 2
  adjust_every = 512
  starve_limit = "10ms"
}
run {
  duration = "100ms"
  seed     = 1
}
`

// TestPluginStatsDeterministic: --plugin-stats's calls and round trips are
// the same in two runs of the same configuration and seed, and its calls the
// same in and out of process; metering changes no result. The wall times
// differ from run to run and are left out of every comparison.
//
// One call may differ between isolations, and the test says which: a wheel
// that promises sdk.RepeatFreeNextTimer (the levels layout) is asked fewer
// NextTimerInterrupts in process, where the kernel skips the repeats the
// promise answers (kernel: CPU.wheelNextEvent); the transport does not carry
// the promise, so out of process every repeat is asked. With the cascade
// layout, which makes no promise, every count is equal.
func TestPluginStatsDeterministic(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		// isolation sets experiment.Options.Isolation ("" and the
		// variable's value otherwise).
		byVar bool
		// repeatFree: the wheel promises sdk.RepeatFreeNextTimer.
		repeatFree bool
	}{
		{name: "levels", src: strings.ReplaceAll(processConfig, "%DUR%", "20ms"), repeatFree: true},
		{name: "cascade", src: strings.Replace(strings.ReplaceAll(processConfig, "%DUR%", "20ms"), "governor {",
			"wheel {\n  layout = \"cascade\"\n}\ngovernor {", 1)},
		{name: "hang_policy", src: hangPolicyConfig, byVar: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c common
			op, closeOp, err := New().newOpener(&c, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			defer closeOp()
			run := func(iso string, stats bool) *experiment.Result {
				t.Helper()
				o := config.Options{}
				eo := experiment.Options{Opener: op, PluginStats: stats}
				if tc.byVar {
					o.Vars = map[string]string{"isolation": iso}
				} else {
					eo.Isolation = iso
				}
				spec, diags := config.LoadBytes("inline.hcl", []byte(tc.src), o)
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				res, err := experiment.Run(spec, eo)
				if err != nil {
					t.Fatalf("Run(isolation=%s): %v", iso, err)
				}
				return res
			}
			var calls [2]map[string]uint64
			for i, iso := range []string{"inprocess", "process"} {
				a, b := run(iso, true), run(iso, true)
				if len(a.PluginStats) == 0 || len(a.PluginWall) != len(a.PluginStats) {
					t.Fatalf("isolation=%s: %d plugin stats and %d wall entries, want the same number, more than 0", iso, len(a.PluginStats), len(a.PluginWall))
				}
				if sa, sb := statsText(a), statsText(b); sa != sb {
					t.Errorf("isolation=%s: calls or round trips differ between two runs:\n%s\nagainst\n%s", iso, sa, sb)
				}
				// Metering changes nothing else: the result without its
				// two fields is the result of a run without the flag.
				plain := run(iso, false)
				if plain.PluginStats != nil || plain.PluginWall != nil {
					t.Errorf("isolation=%s: a run without PluginStats has plugin_stats or plugin_wall", iso)
				}
				a.PluginStats, a.PluginWall = nil, nil
				if ja, jp := resultJSON(t, a), resultJSON(t, plain); ja != jp {
					t.Errorf("isolation=%s: the result with --plugin-stats, its two fields left out, differs from the result without it", iso)
				}
				calls[i] = map[string]uint64{}
				for _, p := range b.PluginStats {
					wantIso := iso
					if tc.byVar && p.Kind != "hang_policy" {
						wantIso = "inprocess"
					}
					if p.Isolation != wantIso {
						t.Errorf("isolation=%s: %s plugin %q reports isolation %q, want %q", iso, p.Kind, p.Name, p.Isolation, wantIso)
					}
					for _, c := range p.Calls {
						calls[i][string(p.Kind)+"/"+p.Role+" "+c.Call] = c.Calls
						if wantIso == "inprocess" && c.RoundTrips != 0 {
							t.Errorf("in process, %s %s made %d round trips, want 0", p.Kind, c.Call, c.RoundTrips)
						}
						if wantIso == "process" && c.RoundTrips > c.Calls {
							t.Errorf("out of process, %s %s made %d round trips for %d calls, want at most one a call", p.Kind, c.Call, c.RoundTrips, c.Calls)
						}
					}
				}
			}
			for k, in := range calls[0] {
				out := calls[1][k]
				if k == "wheel/ NextTimerInterrupt" && tc.repeatFree {
					if in > out || in == 0 {
						t.Errorf("%s: %d calls in process, %d out of process: want at most as many, not 0, in process (repeats skipped)", k, in, out)
					}
					continue
				}
				if in != out {
					t.Errorf("%s: %d calls in process, %d out of process", k, in, out)
				}
			}
			for k := range calls[1] {
				if _, ok := calls[0][k]; !ok {
					t.Errorf("%s: called out of process only", k)
				}
			}
			if tc.byVar && calls[0]["hang_policy/ Hang"] == 0 {
				t.Errorf("the hang policy was never asked: the scenario does not test a policy's calls")
			}
		})
	}
}

// statsText is a result's calls and round trips, one line a call.
func statsText(r *experiment.Result) string {
	var b strings.Builder
	for _, p := range r.PluginStats {
		for _, c := range p.Calls {
			fmt.Fprintf(&b, "%s/%s %s %s: %d calls, %d round trips\n", p.Kind, p.Role, p.Name, c.Call, c.Calls, c.RoundTrips)
		}
	}
	return b.String()
}

func resultJSON(t *testing.T, r *experiment.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := resultfmt.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
