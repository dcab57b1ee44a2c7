package wheel

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

// overridden configures the wheel with some attributes replaced, so that the
// conformance suite, which configures with the schema defaults, covers every
// layout and catch-up strategy.
type overridden struct {
	*Wheel
	over sdk.Config
}

func (o overridden) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	merged := sdk.Config{}
	for k, v := range c {
		merged[k] = v
	}
	for k, v := range o.over {
		merged[k] = v
	}
	return o.Wheel.Configure(s, merged)
}

func TestConformance(t *testing.T) {
	for _, c := range combos {
		t.Run(c.layout+"/"+c.catchup, func(t *testing.T) {
			sdktest.RunTimerBase(t, func(t *testing.T) sdk.TimerBase {
				return overridden{Wheel: New().(*Wheel), over: sdk.Config{"layout": c.layout, "catchup": c.catchup}}
			})
		})
	}
	t.Run("levels/next_expiry/pull", func(t *testing.T) {
		sdktest.RunTimerBase(t, func(t *testing.T) sdk.TimerBase {
			return overridden{Wheel: New().(*Wheel), over: sdk.Config{"migration": "pull"}}
		})
	})
	t.Run("defaults", func(t *testing.T) {
		sdktest.RunTimerBase(t, func(t *testing.T) sdk.TimerBase { return New().(*Wheel) })
	})
}
