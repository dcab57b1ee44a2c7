package shim

import (
	"context"
	"fmt"
	"time"

	"github.com/tickemu/tickemu/framework/sdk"
)

// DefaultCallTimeout is how long the host waits for the answer to one call
// before it gives up on the plugin. A call is one interrupt's or softirq's
// work and answers in well under a millisecond even on a loaded 2-core
// machine, so only a hung or stopped (SIGSTOP, debugger) plugin reaches it; a
// few seconds keeps a hang from looking like a slow run.
const DefaultCallTimeout = 5 * time.Second

// NoTimeout as a CallTimeout turns the deadline off (for a plugin under a
// debugger).
const NoTimeout time.Duration = -1

// callDeadline is the per-call deadline of one plugin connection: armed before
// a request is sent, disarmed when its answer arrived. Every call to a plugin
// process passes through one, whatever the message shape, so this is the one
// place the deadline lives. On expiry it cancels the connection's context
// with an ErrPluginTimeout cause (the blocked send or receive returns at
// once, and transportError reports the timeout) and kills the plugin's
// process (its whole process group): a stopped plugin would otherwise also
// block the graceful shutdown that follows.
type callDeadline struct {
	timeout time.Duration
	// timer is re-armed by every call (no allocation); nil with NoTimeout.
	timer *time.Timer
}

// newCallDeadline returns the deadline of a connection whose context cancel
// cancels, and whose process p (nil for an in-process pair) is killed on
// expiry. A timeout of 0 means DefaultCallTimeout, a negative one none.
func newCallDeadline(timeout time.Duration, cancel context.CancelCauseFunc, p Process) *callDeadline {
	if timeout == 0 {
		timeout = DefaultCallTimeout
	}
	d := &callDeadline{timeout: timeout}
	if timeout < 0 {
		return d
	}
	d.timer = time.AfterFunc(time.Hour, func() {
		cancel(causeError{sdk.ErrPluginTimeout, fmt.Errorf("no answer within %v", timeout)})
		if p != nil {
			p.Kill()
		}
	})
	d.timer.Stop()
	return d
}

// arm starts the deadline of a call. Calls on one connection are
// serialised, so arm and disarm alternate.
func (d *callDeadline) arm() {
	if d.timer != nil {
		d.timer.Reset(d.timeout)
	}
}

// disarm stops the deadline: the answer arrived (or the call failed).
func (d *callDeadline) disarm() {
	if d.timer != nil {
		d.timer.Stop()
	}
}
