package kernel_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// countingWheel counts the NextTimerInterrupt calls that reach the wheel;
// it keeps the wheel's in-place call and, when promise is set, its
// sdk.RepeatFreeNextTimer promise.
type countingWheel struct {
	sdk.TimerBase
	calls *int
}

func (w countingWheel) NextTimerInterrupt(cpu int, j uint64) sdk.NextTimerResult {
	*w.calls++
	return w.TimerBase.NextTimerInterrupt(cpu, j)
}

func (w countingWheel) NextTimerInterruptInto(cpu int, j uint64, r *sdk.NextTimerResult) {
	*w.calls++
	w.TimerBase.(sdk.InPlaceNextTimer).NextTimerInterruptInto(cpu, j, r)
}

type promisingWheel struct{ countingWheel }

func (w promisingWheel) NextTimerRepeatFree() bool {
	return w.TimerBase.(sdk.RepeatFreeNextTimer).NextTimerRepeatFree()
}

// TestWheelRepeatsSkipped: with the wheel's sdk.RepeatFreeNextTimer promise
// the kernel skips the NextTimerInterrupt repeats (the same CPU and jiffies,
// no wheel call since) and reports byte for byte what it reports asking the
// wheel every time: on CPUs waking several times per jiffy, with wheel
// timers armed, expiring and migrating, in high- and low-res mode, with the
// levels wheel (which promises) and the cascade wheel (which does not).
func TestWheelRepeatsSkipped(t *testing.T) {
	const src = `
machine {
  cpus     = 4
  hz       = 1000
  nohz     = "%NOHZ%"
  nohz_full = %FULL%
  highres  = %HIGHRES%
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "20us"
  }
}
wheel {
  plugin = "wheel"
  layout = "%LAYOUT%"
}
governor {
  plugin = "menu"
}
%KERNEL%
workload "cyclictest" "rt" {
  threads     = 4
  interval    = "300us"
  dma_latency = false
}
workload "kernel_timers" "a" {
  period = "3ms"
}
workload "kernel_timers" "b" {
  period     = "7ms"
  deferrable = true
}
run {
  duration = "30ms"
  seed     = 3
}
`
	v69 := `kernel {
  version = "6.9"
}`
	for _, tc := range []struct{ layout, highres, nohz, full, kernel string }{
		{"levels", "true", "idle", "null", v69},
		{"levels", "false", "idle", "null", v69},
		{"levels", "true", "full", `"1-3"`, v69},
		{"levels", "true", "idle", "null", ""},
		{"cascade", "true", "idle", "null", ""},
	} {
		s := strings.NewReplacer("%LAYOUT%", tc.layout, "%HIGHRES%", tc.highres, "%NOHZ%", tc.nohz, "%FULL%", tc.full,
			"%KERNEL%", tc.kernel).Replace(src)
		run := func(promise bool) (string, int) {
			calls := 0
			fs := builtin.Factories()
			for i, f := range fs {
				if f.Name == "wheel" {
					newReal := f.New
					fs[i].New = func() sdk.Plugin {
						w := countingWheel{newReal().(sdk.TimerBase), &calls}
						if promise {
							return promisingWheel{w}
						}
						return w
					}
				}
			}
			spec, diags := config.LoadBytes("repeat.hcl", []byte(s), config.Options{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			res, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(fs)})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			return string(b), calls
		}
		asked, all := run(false)
		skipped, fewer := run(true)
		if asked != skipped {
			t.Errorf("%s highres=%s nohz=%s: the report with repeats skipped differs from the one asking every time", tc.layout, tc.highres, tc.nohz)
		}
		// High-res CPUs wake several times per jiffy: repeats. Low-res ones
		// wake from the tick, once per jiffy.
		if tc.layout == "levels" && tc.highres == "true" && !(fewer < all) || fewer > all ||
			tc.layout == "cascade" && fewer != all || all == 0 {
			t.Errorf("%s highres=%s nohz=%s: %d NextTimerInterrupt calls with the promise, %d without", tc.layout, tc.highres, tc.nohz, fewer, all)
		}
		t.Logf("%s 6.9=%v highres=%s nohz=%s: %d of %d calls made", tc.layout, tc.kernel != "", tc.highres, tc.nohz, fewer, all)
	}
}
