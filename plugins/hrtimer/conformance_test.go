package hrtimer

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

// TestConformance runs the kind's conformance suite for every combination of
// the hang, softirq and restart strategies, and for both clock_was_set modes
// with the defaults.
func TestConformance(t *testing.T) {
	var combos []sdk.Config
	for _, h := range hangDelayNames {
		for _, s := range softirqNextNames {
			for _, r := range restartNames {
				combos = append(combos, sdk.Config{"hang_delay": h, "softirq_next": s, "restart": r})
			}
		}
	}
	combos = append(combos, sdk.Config{"clock_was_set_ipi": "all"})
	for _, c := range combos {
		name := ""
		for _, k := range c.Keys() {
			name += k + "=" + c[k] + ","
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sdktest.RunHRTimerBase(t, func(t *testing.T) sdk.HRTimerBase {
				return sdktest.HRTimerWithConfig(New().(sdk.HRTimerBase), c)
			})
		})
	}
}
