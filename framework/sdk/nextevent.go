package sdk

import "github.com/tickemu/tickemu/framework/sdk/ktime"

// NextEventStarter is an optional HRTimerBase method for a plugin whose
// answers take a round trip (one in its own process): StartNextEvent sends
// NextEvent's question and returns wait, which reads the answer. Where one
// kernel event asks the hrtimer's and the wheel's next event together (the
// idle entry's tick_nohz_next_event(), the low-res tick stop), the host
// starts the hrtimer's, makes the wheel's call, then calls wait, so the two
// round trips overlap. The answer must be NextEvent's; the host makes no
// other call on the plugin before wait. A plugin in the host's process has
// no reason to implement it.
type NextEventStarter interface {
	StartNextEvent(cpu int, now ktime.Time, exclude TimerID) (wait func() ktime.Time)
}
