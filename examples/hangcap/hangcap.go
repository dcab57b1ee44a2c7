// Package hangcap is the hang-cap strategy as a hang_policy plugin: after
// hrtimer_interrupt() gives up, the next event is delayed by
// min(cap, min(100 ms, max_hang_time)), the builtin max_hang_time's delay
// capped again, with hang_detected kept until the next interrupt as the
// builtin keeps it. The default cap, 1 us, is below the hangs of
// configs/hang-timermix.hcl (up to 1.9 us); with cap = "100ms" it is the
// builtin, byte for byte.
//
// The same strategy is written in Python (examples/hangcap-python) and
// TypeScript (examples/hangcap-node); examples/hangcap/ab_test.go compares
// all four with the builtin.
package hangcap

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Factories is how `tickemu build --with` (or cli.New) links it in.
func Factories() []sdk.Factory {
	return []sdk.Factory{{Kind: sdk.KindHangPolicy, Name: "hang_cap", New: New}}
}

// New returns an unconfigured policy.
func New() sdk.Plugin { return &Cap{} }

// Cap is the policy value.
type Cap struct {
	cap       int64
	decisions int64
}

// Info implements sdk.Plugin.
func (c *Cap) Info() sdk.Info {
	return sdk.Info{Kind: sdk.KindHangPolicy, Name: "hang_cap", Version: "1.0.0",
		Description: "hang delay = min(cap, min(100 ms, max_hang_time)), hang_detected kept"}
}

// Schema implements sdk.Plugin.
func (c *Cap) Schema() sdk.Schema {
	return sdk.Schema{Attributes: []sdk.Attribute{{Name: "cap", Type: sdk.TypeDuration, Default: "1us",
		Min: "0ns", Max: "10s", Doc: "the longest hang delay"}}}
}

// Configure implements sdk.Plugin.
func (c *Cap) Configure(_ sdk.Setup, cfg sdk.Config) sdk.Diagnostics {
	r := cfg.Reader()
	c.cap, c.decisions = r.Duration("cap"), 0
	return r.Diagnostics()
}

// Counters implements sdk.Plugin.
func (c *Cap) Counters() []sdk.Counter {
	return []sdk.Counter{{Name: "decisions", CPU: -1, Value: c.decisions}}
}

// Hang implements sdk.HangPolicy: the strategy itself.
func (c *Cap) Hang(r sdk.HangRequest) sdk.HangDecision {
	c.decisions++
	return sdk.HangDecision{Delay: min(c.cap, 100*ktime.Millisecond, r.MaxHangTime), KeepDetected: true}
}
