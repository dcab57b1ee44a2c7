package timermodel_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/timermodel"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// TestNextTimerModelMatchesPlugin drives the builtin wheel, every layout and
// catch-up, with random mod_timer, del_timer, run_timer_softirq and
// get_next_timer_interrupt calls, and checks each NextTimerInterrupt answer
// the declared model covers (repeated calls included) against the plugin's.
func TestNextTimerModelMatchesPlugin(t *testing.T) {
	for _, layout := range []string{"levels", "cascade"} {
		for _, catchup := range []string{"per_jiffy", "skip_empty", "next_expiry"} {
			for _, raise := range []string{"every_tick", "next_expiry"} {
				name := layout + "/" + catchup + "/" + raise
				t.Run(name, func(t *testing.T) {
					modelled := 0
					for seed := uint64(1); seed <= 10; seed++ {
						modelled += runWheelModelCheck(t, seed, sdk.Config{"layout": layout, "catchup": catchup, "softirq_raise": raise, "scan_cost_ns": "1.7"})
					}
					// The levels wheel declares nothing under the 4.8-5.8
					// raise rule (NextTimerInterrupt moves clk, which it reads).
					if none := layout == "levels" && raise == "every_tick"; none != (modelled == 0) {
						t.Fatalf("%d calls modelled", modelled)
					}
				})
			}
		}
	}
}

func runWheelModelCheck(t *testing.T, seed uint64, cfg sdk.Config) (modelled int) {
	const cpus, ids = 2, 30
	w := wheel.New().(*wheel.Wheel)
	full := sdk.Config{}
	for _, a := range w.Schema().Attributes {
		full[a.Name] = a.Default
	}
	for k, v := range cfg {
		full[k] = v
	}
	if d := w.Configure(sdk.Setup{CPUs: cpus, HZ: 1000, Seed: 1}, full); d.HasErrors() {
		t.Fatal(d)
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	j := uint64(1000)
	repeat := make([]bool, cpus)
	for step := 0; step < 3000; step++ {
		j += uint64(rng.IntN(40))
		cpu := rng.IntN(cpus)
		if rng.IntN(3) > 0 {
			// A burst of idle entries: the model's repeated answers.
			m := w.NextTimerModel(cpu)
			for n := rng.IntN(3); n >= 0; n-- {
				want, ok := timermodel.NextTimer(&m, j, repeat[cpu])
				got := w.NextTimerInterrupt(cpu, j)
				if !ok {
					continue
				}
				modelled++
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("seed %d step %d: NextTimerInterrupt(%d, %d) = %+v, model %+v (%+v, repeat %v)", seed, step, cpu, j, got, want, m, repeat[cpu])
				}
				repeat[cpu] = true
				j += uint64(rng.IntN(3))
			}
			repeat[cpu] = false
			continue
		}
		id := sdk.TimerID(1 + rng.IntN(ids))
		switch rng.IntN(4) {
		case 0:
			w.DelTimer(cpu, j, id)
		case 1:
			w.RunTimers(cpu, j)
		default:
			var flags sdk.TimerFlags
			if rng.IntN(4) == 0 {
				flags = sdk.TimerDeferrable
			}
			exp := j + uint64(rng.IntN(3000))
			if rng.IntN(8) == 0 {
				exp = j - uint64(rng.IntN(5))
			}
			w.ModTimer(cpu, j, sdk.WheelTimer{ID: id, Expires: exp, Flags: flags, Period: uint64(rng.IntN(2) * 50)})
		}
	}
	return modelled
}
