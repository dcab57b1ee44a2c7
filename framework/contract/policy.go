package contract

import "github.com/tickemu/tickemu/framework/sdk"

// hangPolicy checks a hang policy's answers: the delay is a time the CPU
// goes without hrtimer interrupts, bounded like a cost.
type hangPolicy struct {
	plugin
	h sdk.HangPolicy
}

// Hang implements sdk.HangPolicy.
func (c *hangPolicy) Hang(r sdk.HangRequest) sdk.HangDecision {
	d := c.h.Hang(r)
	if uint64(d.Delay) > uint64(MaxCost) {
		c.violation("Hang", "delay %d ns on cpu %d, not in [0, %d]", d.Delay, r.CPU, MaxCost)
	}
	return d
}

// catchupPolicy checks a catch-up policy's answers: one of the modes.
type catchupPolicy struct {
	plugin
	c sdk.CatchupPolicy
}

// Catchup implements sdk.CatchupPolicy.
func (c *catchupPolicy) Catchup(r sdk.CatchupRequest) sdk.CatchupDecision {
	d := c.c.Catchup(r)
	if d.Mode < sdk.CatchupWalk || d.Mode > sdk.CatchupNextExpiry {
		c.violation("Catchup", "mode %d on cpu %d, not an sdk.CatchupMode", d.Mode, r.CPU)
	}
	return d
}

// restartPolicy passes a restart policy's answers on: a bool is always valid.
type restartPolicy struct {
	plugin
	r sdk.RestartPolicy
}

// Restart implements sdk.RestartPolicy.
func (c *restartPolicy) Restart(r sdk.RestartRequest) sdk.RestartDecision { return c.r.Restart(r) }

// wrapPolicy returns p behind the checker of its policy kind, or nil.
func wrapPolicy(kind sdk.Kind, c checker, p sdk.Plugin) sdk.Plugin {
	switch kind {
	case sdk.KindHangPolicy:
		if h, ok := p.(sdk.HangPolicy); ok {
			return &hangPolicy{plugin: plugin{checker: c, p: p}, h: h}
		}
	case sdk.KindCatchupPolicy:
		if cp, ok := p.(sdk.CatchupPolicy); ok {
			return &catchupPolicy{plugin: plugin{checker: c, p: p}, c: cp}
		}
	case sdk.KindRestartPolicy:
		if r, ok := p.(sdk.RestartPolicy); ok {
			return &restartPolicy{plugin: plugin{checker: c, p: p}, r: r}
		}
	}
	return nil
}
