package shim

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/cpuwait"
)

// DefaultCallTimeout is how long the host waits for the answer to one call
// before it gives up on the plugin. A call is one interrupt's or softirq's
// work and answers in well under a millisecond even on a loaded 2-core
// machine, so only a hung or stopped (SIGSTOP, debugger) plugin reaches it; a
// few seconds keeps a hang from looking like a slow run. Time the host or the
// plugin's process spent waiting for a CPU does not count, up to
// cpuwait.MaxStretch times the timeout (callDeadline).
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
//
// Its timer first fires shortly before the deadline, where a cpuwait.Judge
// takes the run-queue wait of the host and of the plugin's process group;
// at the deadline the judge says whether they were starved of CPU meanwhile
// (a loaded machine: the deadline moves on) or not (a hang: it expires). A
// stopped plugin expires at the deadline. The timer is re-armed by every
// call (no allocation, and no /proc read: the judge reads only when a call
// has been waiting that long).
type callDeadline struct {
	timeout time.Duration
	cancel  context.CancelCauseFunc
	p       Process
	judge   *cpuwait.Judge
	// timer is nil with NoTimeout.
	timer *time.Timer

	// judging serialises the judge's ticks.
	judging sync.Mutex

	mu sync.Mutex
	// gen counts the calls armed; a timer that fires for an earlier call
	// (its answer came as it fired) does nothing.
	gen   uint64
	armed bool
	start time.Time // the armed call's start
}

// newCallDeadline returns the deadline of a connection whose context cancel
// cancels, and whose process p (nil for an in-process pair) is killed on
// expiry. A timeout of 0 means DefaultCallTimeout, a negative one none.
func newCallDeadline(timeout time.Duration, cancel context.CancelCauseFunc, p Process) *callDeadline {
	if timeout == 0 {
		timeout = DefaultCallTimeout
	}
	d := &callDeadline{timeout: timeout, cancel: cancel, p: p}
	if timeout < 0 {
		return d
	}
	pids := []int{os.Getpid()}
	if p != nil {
		pids = append(pids, p.Pid())
	}
	// With a plugin process, its whole group: a wrapper's interpreter, its
	// children (the host is not in it).
	d.judge = cpuwait.New(timeout, cpuwait.Procs(p != nil, pids...))
	d.timer = time.AfterFunc(time.Hour, d.fire)
	d.timer.Stop()
	return d
}

// fire is the timer's: ask the judge, then re-arm or expire.
func (d *callDeadline) fire() {
	d.mu.Lock()
	gen, armed, start := d.gen, d.armed, d.start
	d.mu.Unlock()
	if !armed {
		return
	}
	now := time.Now()
	d.judging.Lock()
	v := d.judge.Tick(gen, now, now.Sub(start))
	d.judging.Unlock()
	d.mu.Lock()
	if d.gen != gen || !d.armed {
		// Answered meanwhile.
		d.mu.Unlock()
		return
	}
	if !v.Failed() {
		d.timer.Reset(v.Next)
		d.mu.Unlock()
		return
	}
	d.armed = false
	d.mu.Unlock()
	d.cancel(causeError{sdk.ErrPluginTimeout, fmt.Errorf("no answer within %v", d.timeout)})
	if d.p != nil {
		d.p.Kill()
	}
}

// arm starts the deadline of a call. Calls on one connection are
// serialised, so arm and disarm alternate.
func (d *callDeadline) arm() {
	if d.timer == nil {
		return
	}
	d.mu.Lock()
	d.gen++
	d.armed = true
	d.start = time.Now()
	d.timer.Reset(d.judge.First())
	d.mu.Unlock()
}

// disarm stops the deadline: the answer arrived (or the call failed).
func (d *callDeadline) disarm() {
	if d.timer == nil {
		return
	}
	d.mu.Lock()
	d.armed = false
	d.timer.Stop()
	d.mu.Unlock()
}
