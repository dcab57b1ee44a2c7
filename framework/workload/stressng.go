package workload

import (
	"fmt"
	"math"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// bogo counts stress-ng bogo ops after warmup.
type bogo struct {
	warmup ktime.Time
	ops    int64
}

func (b *bogo) inc(now ktime.Time) {
	if now >= b.warmup {
		b.ops++
	}
}

// stressMetrics prints the stress-ng --metrics line and bench metrics: bogo
// ops/s (real time) = ops / the measured time (stress-ng divides by the mean
// wall time of the instances, here all equal).
func stressMetrics(rep *Report, stressor string, instances int, ops int64, elapsed int64, bench string) {
	secs := float64(elapsed) / float64(ktime.Second)
	rate := perSecond(ops, elapsed)
	rep.Text = append(rep.Text,
		"stress-ng: info:  [1] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s",
		"stress-ng: info:  [1]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)",
		fmt.Sprintf("stress-ng: metrc: [1] %-13s %9d %9.2f %9.2f %9.2f %12.2f %14.2f", stressor, ops, secs, 0.0, secs*float64(instances), rate, rate/float64(max(instances, 1))))
	rep.Bench = append(rep.Bench, BenchLine{Name: bench, Metrics: []Metric{
		{"bogo-ops/s", rate, "higher"},
		{"bogo-ops", float64(ops), "higher"},
	}})
}

// stressNgTimer is stress-ng --timer (stress-timer.c), one process per
// instance:
//
//   - setup: sigprocmask(SIG_SETMASK, {SIGINT}); a SIGRTMIN handler
//     (stress_sighandler(): SA_NOCLDSTOP|SA_ONSTACK); timer_create(
//     CLOCK_REALTIME, SIGEV_SIGNAL, SIGRTMIN); timer_settime() relative with
//     it_value = it_interval = 1e9/freq ns (default --timer-freq 1 MHz).
//   - handler (stress_timer_handler()): sigpending(); one bogo op; every
//     65536 ops a read of /proc/self/timers; timer_getoverrun() (positive
//     values summed as overruns); up to V0.19.03 re-arm with timer_settime()
//     (removed by 048b4cb1b "stress-timer: don't set timer in timer signal
//     handler", Aug 2025, after the 6.13 report).
//   - main loop: nanosleep(10 ms) (glibc: clock_nanosleep(CLOCK_REALTIME,
//     0, req, NULL)), and before every 1025th sleep two invalid nanosleeps
//     (tv_sec = -1, tv_nsec = 1e9), both EINVAL; it ends when the bogo
//     counter reaches the instance's max_ops (keep_stressing()), then
//     timer_delete() twice (the second EINVAL).
//   - with --timer-ops N, max_ops is ceil(N / instances) (stress-ng.c,
//     V0.15.06: "ss->bogo_ops = (ss->bogo_ops + (ss->num_instances - 1)) /
//     ss->num_instances"); the handler's stress_timer_keep_stressing()
//     fails once the counter has reached it, and that run disarms the timer
//     (timer_settime() of zero) instead of counting.
//   - around the stressor, the instance's process (stress_run() in
//     stress-ng.c): alarm(g_opt_timeout) (86400 s without -t: setitimer
//     ITIMER_REAL), stats->start, shim_usleep(backoff * started_instances)
//     (DEFAULT_BACKOFF is 0: a nanosleep of 0, which still sleeps out its
//     timer slack), the stressor, alarm(0), stats->finish, exit. bogo ops/s
//     (real time) is the instances' ops over their mean finish - start
//     (stress_metrics_dump()).
//
// One bogo op is one handler run; the /proc read follows each instance's
// own count. Checked against V0.15.06 (the agreement suite's captures ran
// it), V0.19.03 and 291fc434.
type stressNgTimer struct {
	name      string
	instances int
	cpus      []int
	period    int64
	rearm     bool
	sleep     int64
	handler   int64
	b         bogo
	overruns  int64
	warmup    ktime.Time
	// maxOps is each instance's max_ops (0: no limit) and alarm the
	// instance's alarm(g_opt_timeout).
	maxOps uint64
	alarm  uint32
	inst   []*stressTimerMain
}

// procTimersReadNS is the cost of stress_proc_self_timer_read() (open, read
// and close of /proc/self/timers), done once every 65536 bogo ops.
const procTimersReadNS = 6000

// stressNgTimerType is the stress_ng_timer workload type (listed in workload.go).
var stressNgTimerType = Type{
	Name: "stress_ng_timer",
	Doc:  "stress-ng --timer: a POSIX timer at --timer-freq per instance, handler re-arms (<= V0.19.03) or not",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		count("instances", "1", "1", maxTasks, "instances (--timer N), one process each"),
		attr("cpus", sdk.TypeString, "", "cpulist the instances are pinned to, round robin; empty: instance i on CPU i"),
		attr("freq", sdk.TypeFrequency, "1MHz", "timer frequency (--timer-freq; default 1 MHz, range 1 Hz..100 MHz)"),
		attr("rearm_in_handler", sdk.TypeBool, "true", "the handler re-arms with timer_settime() (stress-ng <= V0.19.03; removed by 048b4cb1b)"),
		attr("sleep", sdk.TypeDuration, "10ms", "main loop nanosleep"),
		attr("handler_work", sdk.TypeDuration, "200ns", "user work in the handler besides its syscalls"),
		count("ops", "0", "0", "1000000000000", "bogo ops of all instances (--timer-ops N): each instance stops after ceil(N / instances); 0: no limit"),
		attr("alarm", sdk.TypeDuration, "86400s", "the instance's alarm(g_opt_timeout): -t, or stress-ng's default of a day"),
	}},
	New: func(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
		w := &stressNgTimer{name: name, instances: int(c.Int("instances")), rearm: c.Bool("rearm_in_handler"),
			sleep: c.Duration("sleep"), handler: c.Duration("handler_work")}
		if ops := c.Int("ops"); ops > 0 && w.instances > 0 {
			w.maxOps = uint64((ops + int64(w.instances) - 1) / int64(w.instances))
		}
		var err error
		if w.alarm, err = alarmSeconds(c); err != nil {
			return nil, err
		}
		f := c.Float("freq")
		if f < 1 || f > 100e6 {
			return nil, fieldErr("freq", "must be in [1Hz, 100MHz] (MIN_TIMER_FREQ..MAX_TIMER_FREQ)")
		}
		if w.sleep <= 0 || w.handler < 0 {
			return nil, fmt.Errorf("sleep must be positive and handler_work not negative")
		}
		// stress_timer_set(): the period in ns, never below 1.
		w.period = max(int64(math.Round(1e9/f)), 1)
		cpus, err := instanceCPUs(c, w.instances, m.CPUs)
		w.cpus = cpus
		return w, err
	},
}

// instanceCPUs is the CPU of each of n instances: round robin over the
// cpus attribute's list, or instance i on CPU i mod ncpu when it is empty.
func instanceCPUs(c *sdk.ConfigReader, n, ncpu int) ([]int, error) {
	if n < 1 {
		return nil, fieldErr("instances", "must be at least 1")
	}
	if c.String("cpus") == "" {
		out := make([]int, n)
		for i := range out {
			out[i] = i % ncpu
		}
		return out, nil
	}
	cpus := c.CPUList("cpus", ncpu)
	if cpus == nil {
		return nil, nil // c has the error
	}
	out := make([]int, n)
	for i := range out {
		out[i] = cpus[i%len(cpus)]
	}
	return out, nil
}

func (w *stressNgTimer) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	if w.maxOps > 0 && warmup > 0 {
		return fieldErr("ops", "stress-ng counts an instance's bogo ops from its start: ops and a run warmup do not go together")
	}
	w.b.warmup, w.warmup = warmup, warmup
	for i := 0; i < w.instances; i++ {
		p := k.NewProcess("stress-ng-timer")
		m := w.program()
		w.inst = append(w.inst, m)
		if _, err := k.Spawn(p, "stress-ng-timer", w.cpus[i], kernel.SchedOther, 0, m); err != nil {
			return err
		}
	}
	return nil
}

// alarmSeconds is the "alarm" attribute as alarm()'s argument: stress-ng
// calls alarm(g_opt_timeout), which on x86_64 is the alarm system call
// (alarm_setitimer() in kernel/time/itimer.c), not setitimer(): whole
// seconds, 1 to 2^32-1.
func alarmSeconds(c *sdk.ConfigReader) (uint32, error) {
	d := c.Duration("alarm")
	if d <= 0 || d%ktime.Second != 0 || d/ktime.Second > math.MaxUint32 {
		return 0, fieldErr("alarm", "must be a whole number of seconds from 1s to %ds (alarm(seconds); alarm(0) arms nothing), got %s", uint32(math.MaxUint32), ktime.FormatDuration(d))
	}
	return uint32(d / ktime.Second), nil
}

// program is one instance's process: stress_run()'s alarm and usleep, the
// stressor's setup and its nanosleep loop, then timer_delete(), alarm(0)
// and exit. The actions are boxed once per instance, so the loop
// allocates nothing.
func (w *stressNgTimer) program() *stressTimerMain {
	h := &stressTimerHandler{w: w}
	return &stressTimerMain{
		h: h,
		pro: [2]kernel.Action{
			kernel.Alarm{Seconds: w.alarm},
			// shim_usleep(backoff * started_instances): nanosleep of 0.
			kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: 0},
		},
		setup: [3]kernel.Action{
			kernel.Sigprocmask{How: kernel.SigSetmask, Set: kernel.SigMask(kernel.SIGINT)},
			// The handler program is reused: SIGRTMIN is blocked while its
			// handler runs, so it never nests with itself.
			kernel.Sigaction{Signo: kernel.SIGRTMIN, Flags: kernel.SaNocldstop | kernel.SaOnstack,
				Handler: func(*kernel.Task, kernel.SigInfo) kernel.Program { h.step = 0; return h }},
			kernel.TimerCreate{Clock: sdk.ClockRealtime, Notify: kernel.SigevSignal, Signo: kernel.SIGRTMIN},
		},
		sleep:   kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: w.sleep},
		invalid: kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: -1},
	}
}

// stressTimerMain is one instance's main() (stress_timer()): a Program of
// its own rather than a sequence of closures, so that the loop step reads
// one object.
type stressTimerMain struct {
	h     *stressTimerHandler
	pro   [2]kernel.Action // alarm(g_opt_timeout), usleep(0)
	npro  int
	setup [3]kernel.Action // sigprocmask, sigaction, timer_create
	done  int              // setup steps done; the 4th arms the timer
	n     int              // sleeps of the current round of 1026
	// The loop's two actions: nanosleep(sleep) and the invalid one.
	sleep, invalid kernel.Action
	// slept: the last action was the loop's nanosleep(), after which the
	// do-while tests keep_stressing(). end counts the steps after the
	// loop: timer_delete() twice, alarm(0), exit.
	slept bool
	end   int
	// start and finish are stats->start and stats->finish.
	start, finish ktime.Time
	finished      bool
}

func (m *stressTimerMain) Next(_ *kernel.Task, r kernel.Result) kernel.Action {
	if m.npro < len(m.pro) {
		if m.npro == 1 {
			m.start = r.Now // stats->start, before shim_usleep()
		}
		m.npro++
		return m.pro[m.npro-1]
	}
	if m.end > 0 || (m.slept && m.h.stopped()) {
		// keep_stressing() failed: timer_delete() twice (the second
		// EINVAL), the stressor returns, alarm(0), stats->finish, exit.
		m.end++
		switch m.end {
		case 1, 2:
			return m.h.delete
		case 3:
			return kernel.Alarm{} // alarm(0)
		}
		if !m.finished {
			m.finish, m.finished = r.Now, true
		}
		return kernel.Exit{}
	}
	if m.done < len(m.setup) {
		m.done++
		return m.setup[m.done-1]
	}
	if m.done == len(m.setup) {
		m.done++
		m.h.arm(int(r.Ret)) // timer_create()'s id
		return m.h.settime
	}
	m.n++
	switch {
	case m.n <= 1024:
	case m.n == 1025 || m.n == 1026:
		// The two invalid nanosleeps (tv_sec = -1; tv_nsec = 1e9).
		m.slept = false
		return m.invalid
	default:
		m.n = 0
	}
	m.slept = true
	return m.sleep
}

// stressTimerHandler is stress_timer_handler() of one instance.
type stressTimerHandler struct {
	w    *stressNgTimer
	step int
	// ops is this instance's own bogo counter: each instance is its own
	// process, and the handler tests stress_bogo_get(s_args) (timer_counter
	// up to V0.19.03), never the sum over instances.
	ops        uint64
	getoverrun kernel.Action
	settime    kernel.Action
	disarm     kernel.Action
	delete     kernel.Action
	work       kernel.Action
	read       kernel.Action
	// cancelled is keep_stressing_set_flag(false) in the handler's cancel.
	cancelled bool
}

// stopped is !keep_stressing(): the counter has reached max_ops, or the
// handler cancelled.
func (h *stressTimerHandler) stopped() bool {
	return h.cancelled || (h.w.maxOps > 0 && h.ops >= h.w.maxOps)
}

// arm records the timer id and boxes the handler's actions.
func (h *stressTimerHandler) arm(tid int) {
	w := h.w
	h.getoverrun = kernel.TimerGetoverrun{ID: tid}
	h.settime = kernel.TimerSettime{ID: tid, Value: w.period, Interval: w.period}
	h.disarm = kernel.TimerSettime{ID: tid}
	h.delete = kernel.TimerDelete{ID: tid}
	h.work = kernel.Compute{NS: w.handler}
	h.read = kernel.Syscall{Name: "read", Cost: procTimersReadNS}
}

func (h *stressTimerHandler) Next(t *kernel.Task, r kernel.Result) kernel.Action {
	w := h.w
	h.step++
	switch h.step {
	case 1:
		if h.stopped() {
			// stress_timer_keep_stressing() failed: the cancel path
			// disarms the timer and counts nothing.
			h.cancelled = true
			h.step = 5
			return h.disarm
		}
		return kernel.Sigpending{}
	case 2:
		w.b.inc(r.Now)
		h.ops++
		if h.ops&65535 == 0 {
			return h.read // stress_proc_self_timer_read()
		}
		h.step++
		return h.work
	case 3:
		return h.work
	case 4:
		return h.getoverrun
	case 5:
		if r.Err == 0 && r.Ret > 0 && r.Now >= w.warmup {
			w.overruns += r.Ret
		}
		if w.rearm {
			return h.settime
		}
	}
	return kernel.Return{}
}

func (w *stressNgTimer) Report(k *kernel.Kernel, end ktime.Time) Report {
	rep := Report{Type: "stress_ng_timer", Name: w.name}
	ops, elapsed := w.b.ops, int64(end-w.warmup)
	if w.maxOps > 0 {
		// stress_metrics_dump(): the instances' ops over their mean
		// finish - start; an instance still running ends at the run's end.
		ops, elapsed = 0, 0
		for _, m := range w.inst {
			ops += int64(m.h.ops)
			f := end
			if m.finished {
				f = m.finish
			}
			elapsed += int64(f - m.start)
		}
		elapsed /= int64(max(len(w.inst), 1))
	}
	stressMetrics(&rep, "timer", w.instances, ops, elapsed, "StressNgTimer")
	rep.Text = append(rep.Text, fmt.Sprintf("stress-ng: debug: [1] timer: %d timer overruns (all instances)", w.overruns))
	rep.Bench[0].Metrics = append(rep.Bench[0].Metrics, Metric{"overruns", float64(w.overruns), "lower"})
	return rep
}
