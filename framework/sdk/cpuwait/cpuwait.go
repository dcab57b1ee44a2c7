// Package cpuwait tells a plugin call that hangs from one whose process is
// waiting for a CPU. A call deadline is wall time: on a machine with far
// more runnable threads than cores (a sweep beside a parallel build, CI
// under the race detector) a healthy call can sit in the run queue for
// seconds and look exactly like a hang. Linux counts that time per thread
// (/proc/PID/task/TID/schedstat, second field: time spent waiting on a run
// queue, CONFIG_SCHED_INFO; kernel/sched/stats.h sched_info_arrive() adds
// rq_clock - last_queued to run_delay, which proc_pid_schedstat() prints),
// so the deadline asks it, only when it is about to expire, never per call.
//
// A Judge is driven by its owner's timer: the owner calls Tick when it
// fires, with the time the call has been waiting, and arms the timer again
// for the duration Tick returns, until Tick says the call failed. Over the
// last half of the timeout (the probe) and over each extension, the judge
// measures how much of the wall time the watched processes spent waiting
// for a CPU: at most a third, and the call has had the CPU it needed (two
// thirds of a probe, seconds, where a call takes microseconds and the
// linked-in watchdog's beat a fraction of a second under the race detector)
// and failed; more, and the deadline moves on by another probe, up to
// MaxStretch times the timeout. A stopped process (state T or t: SIGSTOP,
// a debugger) fails at once, as does a process whose schedstat cannot be
// read (not Linux, no CONFIG_SCHED_INFO): the plain wall deadline.
package cpuwait

import "time"

// MaxStretch bounds how far starvation can push a deadline: a call fails
// after MaxStretch times its timeout however starved its process is (a
// plugin that spins on a loaded machine also waits for a CPU).
const MaxStretch = 12

// Sample is what the kernel says about a set of processes at one moment.
type Sample struct {
	// Wait is the run-queue wait of all their threads since they started.
	Wait time.Duration
	// Stopped is set when one of them is stopped (SIGSTOP, traced).
	Stopped bool
}

// Reader samples the watched processes; ok is false when the kernel does
// not say (the judge then keeps to the wall deadline).
type Reader func() (s Sample, ok bool)

// Judge decides, when a call's deadline comes, whether it failed. The zero
// value is not usable: see New. A Judge serves one call at a time; its
// owner serialises Tick.
type Judge struct {
	timeout, probe time.Duration
	read           Reader

	// call is the call judged; based is set once its baseline is taken.
	call  uint64
	based bool
	// The window being measured: its start and the wait at its start
	// (ok false: schedstat could not be read then).
	from     time.Time
	fromWait time.Duration
	ok       bool
	// starved is the wait counted in the extensions granted to this call.
	starved time.Duration
}

// New returns the judge of calls that must answer within timeout (> 0),
// whose processes read samples.
func New(timeout time.Duration, read Reader) *Judge {
	return &Judge{timeout: timeout, probe: max(timeout/2, time.Millisecond), read: read}
}

// First is when the owner's timer first fires after a call started: the
// start of the probe before the deadline.
func (j *Judge) First() time.Duration { return j.timeout - j.probe }

// Verdict is the judge's answer at one Tick.
type Verdict struct {
	// Next > 0: the call may go on; call Tick again after Next.
	Next time.Duration
	// Starved, when the call failed after extensions, says how long its
	// processes waited for a CPU meanwhile: context for a log line (the
	// timeout's message stays the wall deadline's, in and out of process).
	Starved time.Duration
	// Stopped: the call failed because a process was stopped.
	Stopped bool
}

// Failed reports whether the call failed.
func (v Verdict) Failed() bool { return v.Next <= 0 }

// Tick is called by the owner's timer at now, for the call numbered call
// (any number that differs from the previous call's), the call having
// waited elapsed since it started. The first Tick of a call takes the
// baseline of its probe: before the deadline, and also after it when the
// owner's timer itself came late (its process starved, or a stall found by
// a late poll): the deadline then waits one more probe to measure.
func (j *Judge) Tick(call uint64, now time.Time, elapsed time.Duration) Verdict {
	s, ok := j.read()
	if call != j.call || !j.based {
		j.call, j.based = call, true
		j.from, j.fromWait, j.ok, j.starved = now, s.Wait, ok, 0
		if elapsed < j.timeout {
			return Verdict{Next: j.timeout - elapsed}
		}
		if !ok || s.Stopped {
			return Verdict{Stopped: s.Stopped}
		}
		return Verdict{Next: j.probe}
	}
	fail := Verdict{Starved: j.starved}
	if !ok || !j.ok {
		return fail
	}
	if s.Stopped {
		fail.Stopped = true
		return fail
	}
	window := now.Sub(j.from)
	waited := min(s.Wait-j.fromWait, window)
	starved := window > 0 && 3*waited > window
	if !starved || elapsed >= MaxStretch*j.timeout {
		if starved {
			fail.Starved += waited
		}
		return fail
	}
	// Starved for more than a third of the window: another probe.
	j.starved += waited
	j.from, j.fromWait = now, s.Wait
	return Verdict{Next: min(j.probe, MaxStretch*j.timeout-elapsed)}
}
