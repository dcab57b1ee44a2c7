package sdktest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/model"
)

// tbCheckModel drives a configured plugin that declares sdk.NextTimerModel
// with random mod_timer (deferrable, periodic and already expired timers
// included), del_timer, run_timer_softirq and bursts of
// get_next_timer_interrupt calls, and checks each NextTimerInterrupt answer
// the declared model covers, repeated calls included, against the plugin's.
// It returns how many calls the model covered (0 for a plugin without one).
func tbCheckModel(t *testing.T, w sdk.TimerBase, j0 uint64, seed uint64) (modelled int) {
	t.Helper()
	md, ok := w.(sdk.NextTimerModeler)
	if !ok {
		return 0
	}
	const cpus, ids = tbCPUs, 30
	rng := rand.New(rand.NewPCG(seed, 11))
	j := j0
	repeat := make([]bool, cpus)
	for step := 0; step < 3000; step++ {
		j += uint64(rng.IntN(40))
		cpu := rng.IntN(cpus)
		if rng.IntN(3) > 0 {
			// A burst of idle entries: the model's repeated answers.
			m := md.NextTimerModel(cpu)
			for n := rng.IntN(3); n >= 0; n-- {
				want, ok := model.NextTimer(&m, j, repeat[cpu])
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
