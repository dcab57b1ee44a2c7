package kernel_test

import (
	"strconv"
	"testing"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestNanosleepInterrupted checks do_nanosleep() and the syscall restart
// rules of arch/x86/kernel/signal.c:arch_do_signal_or_restart() and
// handle_signal(). A SCHED_OTHER thread sleeps 1 ms (50 us slack); a
// SCHED_FIFO thread of the same process arms a one-shot timer that sends
// SIGRTMIN to the sleeper (SIGEV_THREAD_ID) at +50 us while the FIFO thread
// computes, so the sleeper is woken but cannot run; the FIFO thread then
// changes the timer or the signal's action, and sleeps.
//
//   - A handler runs: -ERESTART_RESTARTBLOCK and -ERESTARTNOHAND become
//     -EINTR, even with SA_RESTART.
//   - No handler runs (the pending signal was flushed by sigaction(SIG_IGN),
//     or, in 6.13+, dropped as stale by posixtimer_deliver_signal()): a
//     relative sleep continues through restart_syscall() ->
//     hrtimer_nanosleep_restart(): a new ABS sleeper to the old hard expiry
//     with no slack, so the sleep ends when the original one would have;
//     an absolute sleep (-ERESTARTNOHAND) re-executes clock_nanosleep().
func TestNanosleepInterrupted(t *testing.T) {
	type want struct {
		err      kernel.Errno
		handlers int
		restarts int // sys_restart_syscall() lines
		sleeps   int // sys_clock_nanosleep(which_clock: 1 ...) lines of the sleeper
	}
	eintr := want{kernel.EINTR, 1, 0, 1}
	restarted := want{kernel.EOK, 0, 1, 1}
	reexecuted := want{kernel.EOK, 0, 0, 2}
	tests := []struct {
		name   string
		abs    bool
		action func(id int) kernel.Action // what the FIFO thread does while the signal is pending
		want   map[string]want
	}{
		{"signal left alone", false, nil, map[string]want{"legacy": eintr, "consistent": eintr}},
		{"timer_delete while pending", false, func(id int) kernel.Action { return kernel.TimerDelete{ID: id} },
			map[string]want{"legacy": eintr, "consistent": restarted}},
		{"timer_settime while pending", false, func(id int) kernel.Action { return kernel.TimerSettime{ID: id, Value: 50 * ms} },
			map[string]want{"legacy": eintr, "consistent": restarted}},
		{"sigaction(SIG_IGN) while pending", false, func(int) kernel.Action { return kernel.Sigaction{Signo: kernel.SIGRTMIN} },
			map[string]want{"legacy": restarted, "consistent": restarted}},
		{"absolute sleep, timer_delete while pending", true, func(id int) kernel.Action { return kernel.TimerDelete{ID: id} },
			map[string]want{"legacy": eintr, "consistent": reexecuted}},
	}
	for _, tt := range tests {
		for _, era := range eras {
			t.Run(tt.name+"/"+era, func(t *testing.T) {
				r := newRig(t, era, 1)
				var log []handled
				sleep := kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 1 * ms}
				var start ktime.Time
				sl := &script{steps: []step{
					do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: recorder(&log, false, 0), Flags: kernel.SaRestart}),
					func(r kernel.Result) kernel.Action {
						start = r.Now
						if tt.abs {
							return kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, Abs: true, T: int64(r.Now) + 1*ms}
						}
						return sleep
					},
					do(kernel.Compute{NS: 1}),
				}}
				sleeper := r.spawn("p", "sleeper", 0, kernel.SchedOther, 0, sl)
				id := -1
				fifo := []step{
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 20 * us}),
					func(kernel.Result) kernel.Action {
						return kernel.TimerCreate{Clock: sdk.ClockMonotonic, Notify: kernel.SigevThreadID, Signo: kernel.SIGRTMIN, TID: sleeper.Pid}
					},
					func(r kernel.Result) kernel.Action {
						id = int(r.Ret)
						return kernel.TimerSettime{ID: id, Value: 50 * us}
					},
					do(kernel.Compute{NS: 100 * us}),
				}
				if tt.action != nil {
					fifo = append(fifo, func(kernel.Result) kernel.Action { return tt.action(id) })
				}
				fifo = append(fifo, do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 10 * ms}))
				r.spawn("p", "fifo", 0, kernel.SchedFIFO, 50, &script{steps: fifo})
				r.run(3 * ms)

				w := tt.want[era]
				if len(sl.results) < 2 {
					t.Fatalf("the sleeper did not return from its sleep (results %+v)", sl.results)
				}
				res := sl.results[1]
				if res.Err != w.err {
					t.Errorf("clock_nanosleep() error = %d, want %d", res.Err, w.err)
				}
				if len(log) != w.handlers {
					t.Errorf("handler runs = %d, want %d", len(log), w.handlers)
				}
				if got := r.grepCount(`sys_restart_syscall\(\)`); got != w.restarts {
					t.Errorf("restart_syscall entries = %d, want %d", got, w.restarts)
				}
				if got := r.grepCount(`sleeper-\d+ .*sys_clock_nanosleep\(which_clock: 1`); got != w.sleeps {
					t.Errorf("clock_nanosleep entries of the sleeper = %d, want %d", got, w.sleeps)
				}
				// Where the sleep ends: interrupted at the signal (~+150 us,
				// after the FIFO thread's compute), or when the original
				// sleep would have (1 ms + 50 us slack for the relative sleep;
				// the ABS re-execution gets its slack again from its own start).
				end := int64(res.Now - start)
				lo, hi := int64(1*ms), int64(1*ms+60*us)
				if w.err == kernel.EINTR {
					lo, hi = 100*us, 200*us
				}
				if end < lo || end > hi {
					t.Errorf("sleep returned after %d ns, want %d..%d", end, lo, hi)
				}
				if tt.abs && w.sleeps == 2 {
					// -ERESTARTNOHAND re-executes the request as it was: the
					// second sleeper is started for the same absolute time.
					want := `function=hrtimer_wakeup expires=\d+ softexpires=` + strconv.FormatInt(int64(start)+1*ms, 10) + ` mode=ABS was_armed=0$`
					if got := r.grepCount(want); got != 2 {
						t.Errorf("sleeper starts for the requested time = %d, want 2 (the sleep and its re-execution):\n%s", got, r.buf.String())
					}
				}
				if w.restarts > 0 {
					// hrtimer_nanosleep_restart(): ABS, soft == hard expiry.
					if got := r.grepCount(`function=hrtimer_wakeup expires=(\d+) softexpires=(\d+) mode=ABS was_armed=0$`); got < 1 {
						t.Errorf("no ABS sleeper start for the restart:\n%s", r.buf.String())
					}
				}
			})
		}
	}
}

// TestNanosleepEINTR checks the plain case in both eras: a process-directed
// timer signal with a handler ends a relative nanosleep() with EINTR
// (do_nanosleep() -> -ERESTART_RESTARTBLOCK -> handle_signal()), and the
// sleeper's hrtimer shows as started and cancelled, never expired. With a
// remaining-time buffer the result is the same (nanosleep_copyout()).
func TestNanosleepEINTR(t *testing.T) {
	for _, rem := range []bool{false, true} {
		for _, era := range eras {
			name := era
			if rem {
				name += "/rmtp"
			}
			t.Run(name, func(t *testing.T) {
				r := newRig(t, era, 1)
				var log []handled
				id := -1
				steps := []step{do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: recorder(&log, false, 0)})}
				steps = append(steps, createTimer(&id, sdk.ClockRealtime)...)
				steps = append(steps,
					func(kernel.Result) kernel.Action { return kernel.TimerSettime{ID: id, Value: 100 * us} },
					do(kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: 10 * ms, Rem: rem}),
					do(kernel.Compute{NS: 1}))
				s := &script{steps: steps}
				r.spawn("p", "sleeper", 0, kernel.SchedOther, 0, s)
				r.run(2 * ms)
				res := s.results[len(s.results)-2]
				if res.Err != kernel.EINTR || len(log) != 1 {
					t.Fatalf("nanosleep() = %+v with %d handler runs, want EINTR and 1", res, len(log))
				}
				starts := r.grepCount(`hrtimer_start: .* function=hrtimer_wakeup .* mode=REL was_armed=0$`)
				expiries := r.grepCount(`hrtimer_expire_entry: .* function=hrtimer_wakeup`)
				cancels := r.total("hrtimer_cancel")
				if starts != 1 || expiries != 0 || cancels < 1 {
					t.Errorf("sleeper hrtimer: %d starts, %d expiries, %d cancels; want 1, 0, >= 1", starts, expiries, cancels)
				}
			})
		}
	}
}

// TestNanosleepInvalid: an invalid timespec is EINVAL at once
// (timespec64_valid()), as stress-ng's deliberately bad nanosleeps get.
func TestNanosleepInvalid(t *testing.T) {
	r := newRig(t, "consistent", 1)
	s := &script{steps: []step{do(kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: -1}), do(kernel.Compute{NS: 1})}}
	r.spawn("p", "bad", 0, kernel.SchedOther, 0, s)
	r.run(100 * us)
	if got := s.results[0]; got.Err != kernel.EINVAL {
		t.Errorf("nanosleep(tv_sec = -1) = %+v, want EINVAL", got)
	}
	if got := r.grepCount(`function=hrtimer_wakeup`); got != 0 {
		t.Errorf("%d sleeper events for an invalid sleep, want 0", got)
	}
}
