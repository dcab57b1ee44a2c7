package kernel_test

import (
	"fmt"
	"testing"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

var sigrt = kernel.SigMask(kernel.SIGRTMIN)

// createTimer is timer_create(clock, SIGEV_SIGNAL, SIGRTMIN) storing the id.
func createTimer(id *int, clock sdk.ClockID) []step {
	return []step{
		do(kernel.TimerCreate{Clock: clock, Notify: kernel.SigevSignal, Signo: kernel.SIGRTMIN}),
		func(r kernel.Result) kernel.Action { *id = int(r.Ret); return kernel.Compute{NS: 1} },
	}
}

// TestOverrunCounting checks si_overrun and timer_getoverrun() against
// kernel/time/posix-timers.c:common_hrtimer_rearm() (hrtimer_forward()
// counts the periods missed while the signal waited), v6.12 send_sigqueue()
// (an expiry while the signal is still queued adds to si_overrun) and 6.13+
// b06b0345fff3 "posix-timers: Make signal overrun accounting sensible" (it
// no longer does; timer_settime() resets the accounting). The program blocks
// SIGRTMIN, lets the timer expire, then unblocks it; it runs SCHED_FIFO so
// its sleeps have no slack.
func TestOverrunCounting(t *testing.T) {
	type want struct{ siOverrun, getoverrun int64 }
	tests := []struct {
		name  string
		setup func(id *int) []step // after the timer exists, SIGRTMIN blocked
		want  map[string]want
	}{
		{
			// Armed at t0 with 100 us; first expiry t0+100us queues the signal
			// and the timer stops; unblocked at t0+1050us: hrtimer_forward()
			// adds 10 periods, it_overrun = -1 + 10 = 9 missed expiries.
			name: "periodic timer blocked for 9.5 periods",
			setup: func(id *int) []step {
				return []step{
					func(kernel.Result) kernel.Action {
						return kernel.TimerSettime{ID: *id, Value: 100 * us, Interval: 100 * us}
					},
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 1050 * us}),
				}
			},
			want: map[string]want{"legacy": {9, 9}, "consistent": {9, 9}},
		},
		{
			// Same, with timer_gettime() while the signal waits: its forward
			// (common_timer_get()) adds to it_overrun, the re-arm adds the
			// rest, so the count is unchanged.
			name: "periodic timer blocked, timer_gettime while pending",
			setup: func(id *int) []step {
				return []step{
					func(kernel.Result) kernel.Action {
						return kernel.TimerSettime{ID: *id, Value: 100 * us, Interval: 100 * us}
					},
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 550 * us}),
					func(kernel.Result) kernel.Action { return kernel.TimerGettime{ID: *id} },
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 500 * us}),
				}
			},
			want: map[string]want{"legacy": {9, 9}, "consistent": {9, 9}},
		},
		{
			// A one-shot timer expires (signal queued), is set again and
			// expires again while the signal is still queued: v6.12 counts
			// that expiry in si_overrun; 6.13+ delivers the signal of the new
			// arming with si_overrun 0. No re-arm, so timer_getoverrun() is 0.
			name: "one-shot re-armed while its signal is queued",
			setup: func(id *int) []step {
				return []step{
					func(kernel.Result) kernel.Action { return kernel.TimerSettime{ID: *id, Value: 50 * us} },
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 100 * us}),
					func(kernel.Result) kernel.Action { return kernel.TimerSettime{ID: *id, Value: 50 * us} },
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 100 * us}),
				}
			},
			want: map[string]want{"legacy": {1, 0}, "consistent": {0, 0}},
		},
		{
			// A periodic timer expires, is set again while its signal is
			// queued and expires again; unblocked 150 us after that: the
			// re-arm forwards 2 periods (it_overrun_last 1). v6.12 adds the
			// queued expiry to si_overrun (1 + 1); 6.13+ does not.
			name: "periodic re-armed while its signal is queued",
			setup: func(id *int) []step {
				return []step{
					func(kernel.Result) kernel.Action {
						return kernel.TimerSettime{ID: *id, Value: 100 * us, Interval: 100 * us}
					},
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 150 * us}),
					func(kernel.Result) kernel.Action {
						return kernel.TimerSettime{ID: *id, Value: 100 * us, Interval: 100 * us}
					},
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 250 * us}),
				}
			},
			want: map[string]want{"legacy": {2, 1}, "consistent": {1, 1}},
		},
	}
	for _, tt := range tests {
		for _, era := range eras {
			t.Run(tt.name+"/"+era, func(t *testing.T) {
				r := newRig(t, era, 1)
				var log []handled
				id := -1
				steps := []step{
					do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: recorder(&log, true, 0)}),
					do(kernel.Sigprocmask{How: kernel.SigBlock, Set: sigrt}),
				}
				steps = append(steps, createTimer(&id, sdk.ClockMonotonic)...)
				steps = append(steps, tt.setup(&id)...)
				steps = append(steps,
					do(kernel.Sigprocmask{How: kernel.SigUnblock, Set: sigrt}),
					func(kernel.Result) kernel.Action { return kernel.TimerDelete{ID: id} })
				r.spawn("p", "overrun", 0, kernel.SchedFIFO, 10, &script{steps: steps})
				r.run(5 * ms)
				if len(log) != 1 {
					t.Fatalf("handler runs = %d, want 1", len(log))
				}
				w := tt.want[era]
				got := want{log[0].info.Overrun, log[0].overrun}
				if got != w {
					t.Errorf("(si_overrun, timer_getoverrun()) = %v, want %v", got, w)
				}
				if log[0].info.Code != -2 || log[0].info.TimerID != id {
					t.Errorf("siginfo = %+v, want SI_TIMER (-2) of timer %d", log[0].info, id)
				}
			})
		}
	}
}

// TestTimerDeletePendingSignal follows timer_delete() with the timer's
// signal queued and blocked. v6.12: sigqueue_free() leaves the queued signal
// alone (it only drops SIGQUEUE_PREALLOC) and it is delivered later, without a
// re-arm. 6.13+: posix_timer_delete() bumps it_signal_seq and invalidates the
// timer, and posixtimer_deliver_signal() drops the signal (513793bc6ab3).
func TestTimerDeletePendingSignal(t *testing.T) {
	tests := []struct {
		name     string
		interval int64
		want     map[string]int // handler runs
	}{
		{"one-shot", 0, map[string]int{"legacy": 1, "consistent": 0}},
		{"periodic", 30 * us, map[string]int{"legacy": 1, "consistent": 0}},
	}
	for _, tt := range tests {
		for _, era := range eras {
			t.Run(tt.name+"/"+era, func(t *testing.T) {
				r := newRig(t, era, 1)
				var log []handled
				id := -1
				steps := []step{
					do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: recorder(&log, false, 0)}),
					do(kernel.Sigprocmask{How: kernel.SigBlock, Set: sigrt}),
				}
				steps = append(steps, createTimer(&id, sdk.ClockRealtime)...)
				steps = append(steps,
					func(kernel.Result) kernel.Action {
						return kernel.TimerSettime{ID: id, Value: 50 * us, Interval: tt.interval}
					},
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 100 * us}),
					func(kernel.Result) kernel.Action { return kernel.TimerDelete{ID: id} },
					do(kernel.Sigprocmask{How: kernel.SigUnblock, Set: sigrt}),
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 500 * us}),
					func(kernel.Result) kernel.Action { return kernel.TimerGetoverrun{ID: id} })
				s := &script{steps: steps}
				r.spawn("p", "delete", 0, kernel.SchedFIFO, 10, s)
				r.run(5 * ms)
				if got, want := len(log), tt.want[era]; got != want {
					t.Errorf("handler runs = %d, want %d", got, want)
				}
				if got, want := r.total("posix_timer_fires"), int64(1); got != want {
					t.Errorf("posix_timer_fires = %d, want %d (no re-arm after delete)", got, want)
				}
				dropped, stale := r.total("signals_dropped"), r.total("signals_stale_delivered")
				if era == "legacy" && (dropped != 0 || stale != 1) || era == "consistent" && (dropped != 1 || stale != 0) {
					t.Errorf("(signals_dropped, signals_stale_delivered) = (%d, %d), want (%d, %d)", dropped, stale,
						map[string]int{"legacy": 0, "consistent": 1}[era], map[string]int{"legacy": 1, "consistent": 0}[era])
				}
				last := s.results[len(s.results)-1]
				if last.Err != kernel.EINVAL {
					t.Errorf("timer_getoverrun(deleted timer) = %+v, want EINVAL", last)
				}
			})
		}
	}
}

// TestTimerGettime checks common_timer_get(): the time left of an armed
// timer, 0 for an expired or disarmed one-shot, and for a periodic timer whose
// signal is pending the expiry forwarded past now (1..interval). The values
// are the same in both eras.
func TestTimerGettime(t *testing.T) {
	tests := []struct {
		name     string
		value    int64
		interval int64
		block    bool
		sleep    int64 // before timer_gettime
		lo, hi   int64 // want lo <= it_value <= hi
	}{
		{"armed one-shot", 1 * ms, 0, false, 300 * us, 699 * us, 700 * us},
		{"expired one-shot", 100 * us, 0, true, 300 * us, 0, 0},
		{"periodic, signal pending", 100 * us, 100 * us, true, 450 * us, 1, 100 * us},
		{"armed periodic", 100 * us, 100 * us, false, 30 * us, 69 * us, 70 * us},
	}
	for _, tt := range tests {
		for _, era := range eras {
			t.Run(tt.name+"/"+era, func(t *testing.T) {
				r := newRig(t, era, 1)
				var log []handled
				id := -1
				steps := []step{do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: recorder(&log, false, 0)})}
				if tt.block {
					steps = append(steps, do(kernel.Sigprocmask{How: kernel.SigBlock, Set: sigrt}))
				}
				steps = append(steps, createTimer(&id, sdk.ClockMonotonic)...)
				var armed, asked ktime.Time
				steps = append(steps,
					func(kernel.Result) kernel.Action {
						return kernel.TimerSettime{ID: id, Value: tt.value, Interval: tt.interval}
					},
					func(r kernel.Result) kernel.Action {
						armed = r.Now
						return kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: tt.sleep}
					},
					func(r kernel.Result) kernel.Action {
						asked = r.Now
						return kernel.TimerGettime{ID: id}
					})
				s := &script{steps: steps}
				r.spawn("p", "gettime", 0, kernel.SchedFIFO, 10, s)
				r.run(2 * ms)
				got := s.results[len(s.results)-1].Ret
				// The syscall entry costs shift the sampled instants by < 1 us.
				slop := int64(asked-armed) - tt.sleep
				if got < tt.lo-slop || got > tt.hi {
					t.Errorf("timer_gettime() = %d ns, want %d..%d (sleep overshoot %d ns)", got, tt.lo, tt.hi, slop)
				}
			})
		}
	}
}

// TestSigevThreadID checks the target of a timer signal
// (posixtimer_get_target(), complete_signal()): SIGEV_THREAD_ID queues it for
// the named thread, which runs the handler; a process-directed signal that
// expires while a thread of the process runs on the CPU goes to that thread.
func TestSigevThreadID(t *testing.T) {
	tests := []struct {
		name   string
		notify int
		want   string // which thread runs the handler
	}{
		{"SIGEV_THREAD_ID to the sleeping thread", kernel.SigevThreadID, "sleeper"},
		{"SIGEV_SIGNAL while the other thread runs", kernel.SigevSignal, "worker"},
	}
	for _, tt := range tests {
		for _, era := range eras {
			t.Run(tt.name+"/"+era, func(t *testing.T) {
				r := newRig(t, era, 1)
				var log []handled
				sleeper := r.spawn("p", "sleeper", 0, kernel.SchedOther, 0, &script{steps: []step{
					do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: recorder(&log, false, 0)}),
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 10 * ms}),
				}})
				worker := r.spawn("p", "worker", 0, kernel.SchedFIFO, 10, &script{steps: []step{
					do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 20 * us}),
					func(kernel.Result) kernel.Action {
						return kernel.TimerCreate{Clock: sdk.ClockMonotonic, Notify: tt.notify, Signo: kernel.SIGRTMIN, TID: sleeper.Pid}
					},
					func(r kernel.Result) kernel.Action { return kernel.TimerSettime{ID: int(r.Ret), Value: 50 * us} },
					do(kernel.Compute{NS: 200 * us}),
				}})
				r.run(1 * ms)
				want := map[string]int{"sleeper": sleeper.Pid, "worker": worker.Pid}[tt.want]
				if len(log) != 1 || log[0].pid != want {
					t.Fatalf("handler runs = %+v, want one in %s (pid %d)", log, tt.want, want)
				}
			})
		}
	}
}

// TestIgnoredPeriodicTimer runs a 100 us periodic timer whose signal is
// ignored (no handler: SIG_IGN), then installs a handler. v6.12
// posix_timer_fn(): the ignored signal is not queued and the timer re-arms
// itself, forwarded from now + 1 jiffy for sub-jiffy intervals, so it keeps
// expiring about once a tick. 6.13+ posixtimer_send_sigqueue(): the timer is
// parked on the ignored list and stops; sigaction() installing a handler
// (posixtimer_sig_unignore()) queues its signal, whose delivery re-arms it
// with the missed periods as overrun. Either way the handler learns of about
// 100 missed periods.
func TestIgnoredPeriodicTimer(t *testing.T) {
	tests := []struct {
		era            string
		firesLo        int64 // posix_timer_fires while ignored
		firesHi        int64
		overrunLo      int64 // si_overrun of the first handled signal
		overrunHi      int64
		firstHandlerLo int64 // ns
		firstHandlerHi int64
	}{
		// The forwards of the ignored expiries accumulate in it_overrun and
		// are reported with the first re-arm at dequeue: ~10 ms of 100 us
		// periods.
		{era: "legacy", firesLo: 9, firesHi: 11, overrunLo: 95, overrunHi: 115, firstHandlerLo: 10 * ms, firstHandlerHi: 12 * ms},
		{era: "consistent", firesLo: 1, firesHi: 1, overrunLo: 98, overrunHi: 100, firstHandlerLo: 10 * ms, firstHandlerHi: 10*ms + 50*us},
	}
	for _, tt := range tests {
		t.Run(tt.era, func(t *testing.T) {
			r := newRig(t, tt.era, 1)
			var log []handled
			id := -1
			var fires int64
			steps := createTimer(&id, sdk.ClockMonotonic)
			steps = append(steps,
				func(kernel.Result) kernel.Action {
					return kernel.TimerSettime{ID: id, Value: 100 * us, Interval: 100 * us}
				},
				do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, Abs: true, T: 10 * ms}),
				func(kernel.Result) kernel.Action {
					fires = r.total("posix_timer_fires")
					return kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: recorder(&log, false, 0)}
				},
				do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 3 * ms}))
			r.spawn("p", "ignored", 0, kernel.SchedFIFO, 10, &script{steps: steps})
			r.run(13 * ms)
			if fires < tt.firesLo || fires > tt.firesHi {
				t.Errorf("posix_timer_fires while ignored = %d, want %d..%d", fires, tt.firesLo, tt.firesHi)
			}
			if len(log) == 0 {
				t.Fatal("no handler run after sigaction()")
			}
			if o := log[0].info.Overrun; o < tt.overrunLo || o > tt.overrunHi {
				t.Errorf("first si_overrun = %d, want %d..%d", o, tt.overrunLo, tt.overrunHi)
			}
			if at := int64(log[0].at); at < tt.firstHandlerLo || at > tt.firstHandlerHi {
				t.Errorf("first handler at %d ns, want %d..%d", at, tt.firstHandlerLo, tt.firstHandlerHi)
			}
		})
	}
}

// TestCPUTimeTimer checks CPU-time POSIX timers
// (kernel/time/posix-cpu-timers.c): they are checked from the tick
// (run_posix_cpu_timers()), so a 100 us periodic timer on a CPU-bound task
// fires once per tick (HZ=1000), and the re-arm at dequeue
// (posix_cpu_timer_rearm() -> bump_cpu_timer()) counts the periods the tick
// granularity skipped as overruns: about 9 per signal.
func TestCPUTimeTimer(t *testing.T) {
	clocks := []struct {
		name  string
		clock sdk.ClockID
	}{{"CLOCK_PROCESS_CPUTIME_ID", kernel.ClockProcessCPUTime}, {"CLOCK_THREAD_CPUTIME_ID", kernel.ClockThreadCPUTime}}
	for _, c := range clocks {
		clock := c.clock
		for _, era := range eras {
			t.Run(c.name+"/"+era, func(t *testing.T) {
				r := newRig(t, era, 1)
				var log []handled
				id := -1
				steps := []step{do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: recorder(&log, true, 0)})}
				steps = append(steps, createTimer(&id, clock)...)
				steps = append(steps,
					func(kernel.Result) kernel.Action {
						return kernel.TimerSettime{ID: id, Value: 100 * us, Interval: 100 * us}
					},
					do(kernel.Compute{NS: 30 * ms}))
				r.spawn("p", "spin", 0, kernel.SchedOther, 0, &script{steps: steps})
				r.run(20 * ms)
				if n := len(log); n < 18 || n > 20 {
					t.Fatalf("handler runs in 20 ms = %d, want 18..20 (one per tick)", n)
				}
				for i, h := range log[1:] {
					if h.info.Overrun < 8 || h.info.Overrun > 10 || h.overrun != h.info.Overrun {
						t.Errorf("signal %d: si_overrun %d, timer_getoverrun() %d, want equal, 8..10", i+1, h.info.Overrun, h.overrun)
					}
				}
			})
		}
	}
}

// TestCPUTimeTimerAfterDelete checks that the tick keeps expiring a process's
// CPU-time timer whatever timers it created and deleted before
// (run_posix_cpu_timers() walks the timers still armed): with a deleted
// CPU-time timer, a deleted CLOCK_REALTIME timer and a live CPU-time timer,
// the live one fires once a tick; with the live one deleted too, nothing does.
func TestCPUTimeTimerAfterDelete(t *testing.T) {
	for _, keep := range []bool{true, false} {
		for _, era := range eras {
			t.Run(fmt.Sprintf("keep=%v/%s", keep, era), func(t *testing.T) {
				r := newRig(t, era, 1)
				var log []handled
				gone, live, real := -1, -1, -1
				steps := []step{do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: recorder(&log, false, 0)})}
				steps = append(steps, createTimer(&gone, kernel.ClockProcessCPUTime)...)
				steps = append(steps, func(kernel.Result) kernel.Action { return kernel.TimerDelete{ID: gone} })
				steps = append(steps, createTimer(&live, kernel.ClockProcessCPUTime)...)
				steps = append(steps, createTimer(&real, sdk.ClockRealtime)...)
				steps = append(steps,
					func(kernel.Result) kernel.Action { return kernel.TimerDelete{ID: real} },
					func(kernel.Result) kernel.Action {
						return kernel.TimerSettime{ID: live, Value: 100 * us, Interval: 100 * us}
					},
					func(kernel.Result) kernel.Action {
						if keep {
							return kernel.Compute{NS: 1}
						}
						return kernel.TimerDelete{ID: live}
					},
					do(kernel.Compute{NS: 30 * ms}))
				r.spawn("p", "spin", 0, kernel.SchedOther, 0, &script{steps: steps})
				r.run(20 * ms)
				n := len(log)
				if keep && (n < 18 || n > 20) {
					t.Fatalf("handler runs in 20 ms = %d, want 18..20 (one per tick)", n)
				}
				if !keep && n != 0 {
					t.Fatalf("handler runs with every timer deleted = %d, want 0", n)
				}
			})
		}
	}
}
