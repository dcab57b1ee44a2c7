package workload

import (
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// stressNgHrtimers is stress-ng --hrtimers as V0.15.06 runs it
// (stress-hrtimers.c, stress-ng.c, core-shim.c, core-helper.c):
//
//   - each instance (stress_hrtimers()) forks PROCS_MAX (8) children one
//     after another, checking keep_stressing(args) before each fork, then
//     blocks SIGRTMIN and sleeps in shim_usleep(100000) while
//     keep_stressing(args) (its flag, and the bogo counter under max_ops);
//   - each child (stress_hrtimer_process()) masks SIGINT, makes itself
//     SCHED_RR at the middle priority, installs stress_hrtimers_handler()
//     for SIGRTMIN and arms a CLOCK_REALTIME POSIX timer of a random
//     period of 1..65536 ns (stress_mwc16() + 1) signalling itself, and
//     sleeps in shim_usleep(100000) while stress_hrtimers_keep_stressing();
//     shim_nanosleep_uint64() goes back to sleep for the time left after
//     every EINTR while keep_stressing_flag();
//   - one bogo op is one handler run (timer_counter++ in the child); when
//     the child's counter reaches its max_ops (the instance's / 8) or its
//     flag is down, the handler disarms the timer (timer_settime() of 0)
//     and sends itself SIGALRM (kill(getpid(), SIGALRM)); every 4096 ops it
//     re-arms the timer with a new random period;
//   - SIGALRM's handler, inherited from stress_run()'s stress_set_handler()
//     (stress_sigalrm_handler() -> stress_handle_stop_stressing()), lowers
//     the flag and calls alarm(1);
//   - a child whose loop ends adds its counter to the instance's
//     (add_counter_lock()), deletes its timer, sends the instance SIGALRM
//     (kill(parent, SIGALRM)) and exits; the instance, its flag down,
//     sends every child SIGALRM (the reap: loop) and waits for them
//     (shim_waitpid()); the instance's run ends there.
//
// So --hrtimers-ops N stops the instance when its first child has done
// N / 8 ops, with the others' counts at that moment: the 6.18 capture
// stress-hrtimers1 (N = 5000) has three children reaching 625 while the
// instance, SCHED_OTHER under 8 SCHED_RR children, had not yet forked the
// last one, and 2779 ops in all.
type stressNgHrtimers struct {
	name      string
	instances int
	children  int
	cpus      []int
	pinned    bool
	// maxOps is an instance's max_ops (ceil(N / instances), stress-ng.c),
	// 0 for no limit; a child's is maxOps / PROCS_MAX.
	maxOps uint64
	b      bogo
	warmup ktime.Time
	inst   []*hrtimersInstance
}

// Costs the model's syscalls do not make up, from the capture
// stress-hrtimers1 (6.18, KVM guest, validation/captures/stress-hrtimers1.tcap).
const (
	// hrtimersForkCost is the instance's time per fork() while it runs
	// uninterrupted: its sched_process_fork events at 3222.167041,
	// .167426 and .167810 (385 and 384 us; it ran from .166556 to .168101
	// without a switch).
	hrtimersForkCost = 385 * ktime.Microsecond
	// hrtimersChildStart is a child's start-up before its first sleep, in the
	// kernel (its user time in the capture is 0)
	// (stress_parent_died_alarm()'s prctl(), the oom_score_adj write,
	// sched_settings_apply(), the sched_setscheduler() to SCHED_RR): child
	// 4047 ran from 3222.167089 (first switch-in) to .167286 (asleep at
	// prio 50), 197 us, of which the model's own syscalls (sigprocmask,
	// two sigactions, timer_create, timer_settime, nanosleep) are a few us.
	hrtimersChildStart = 190 * ktime.Microsecond
)

// hrtimersSleep is shim_usleep(100000)'s request.
const hrtimersSleep = 100 * ktime.Millisecond

// stressNgHrtimersType is the stress_ng_hrtimers workload type (listed in workload.go).
var stressNgHrtimersType = Type{
	Name: "stress_ng_hrtimers",
	Doc:  "stress-ng --hrtimers (V0.15.06): 8 children per instance, each a POSIX timer of random 1..65536 ns period",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		count("instances", "1", "1", maxTasks, "instances"),
		count("children", "8", "1", "1024", "children per instance (PROCS_MAX)"),
		attr("cpus", sdk.TypeString, "", "cpulist the instances and their children are pinned to (default: none; child j of instance i runs on CPU (i + 1 + j) mod CPUs, as RT placement spreads them)"),
		count("ops", "0", "0", "1000000000000", "bogo ops of all instances (--hrtimers-ops N): an instance stops when one of its children has done ceil(N / instances) / children; 0: no limit"),
	}},
	New: func(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
		w := &stressNgHrtimers{name: name, instances: int(c.Int("instances")), children: int(c.Int("children")), pinned: c.String("cpus") != ""}
		cpus, err := instanceCPUs(c, w.instances, m.CPUs)
		w.cpus = cpus
		if w.children < 1 {
			return nil, fieldErr("children", "must be at least 1")
		}
		if n := w.instances * (w.children + 1); n > maxChildren {
			return nil, fieldErr("children", "%d instances of %d children make %d processes, more than the %d one block may start", w.instances, w.children, n, maxChildren)
		}
		if ops := c.Int("ops"); ops > 0 {
			w.maxOps = uint64((ops + int64(w.instances) - 1) / int64(w.instances))
		}
		return w, err
	},
}

// hrtimersInstance is one instance: the stress_hrtimers() process.
type hrtimersInstance struct {
	w        *stressNgHrtimers
	cpu      int
	task     *kernel.Task
	kids     []*hrtimersChild
	keep     bool   // its keep_stressing_flag()
	counter  uint64 // its bogo counter (get_counter(args))
	alive    int
	waiting  bool // in shim_waitpid()
	forking  bool // the fork's cost is paid, the child not yet woken
	finished bool
	finish   ktime.Time
	st       int // the program's position
	sleepEnd ktime.Time
	killed   int
}

// hrtimersChild is one stress_hrtimer_process() child.
type hrtimersChild struct {
	in       *hrtimersInstance
	j        int // its index among the instance's children
	period   int64
	task     *kernel.Task
	timer    int
	keep     bool
	counter  uint64 // timer_counter
	st       int
	sleepEnd ktime.Time
	rand     func(int64) int64
}

func (w *stressNgHrtimers) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	if w.maxOps > 0 && warmup > 0 {
		return fieldErr("ops", "stress-ng counts an instance's bogo ops from its start: ops and a run warmup do not go together")
	}
	w.b.warmup, w.warmup = warmup, warmup
	rng := k.Rand("stress_ng_hrtimers/" + w.name)
	for i := 0; i < w.instances; i++ {
		in := &hrtimersInstance{w: w, cpu: w.cpus[i], keep: true}
		for j := 0; j < w.children; j++ {
			in.kids = append(in.kids, &hrtimersChild{in: in, j: j, period: rng.Int63n(65536) + 1, keep: true, rand: rng.Int63n})
		}
		w.inst = append(w.inst, in)
		t, err := k.Spawn(k.NewProcess("stress-ng-hrtimers"), "stress-ng-hrtimers", in.cpu, kernel.SchedOther, 0, in)
		if err != nil {
			return err
		}
		in.task = t
	}
	return nil
}

// stopHandler is stress_sigalrm_handler() in a stressor process:
// stress_handle_stop_stressing() lowers the flag and calls alarm(1).
func stopHandler(keep *bool) kernel.Handler {
	return func(t *kernel.Task, _ kernel.SigInfo) kernel.Program {
		return sequence([]step{
			func(kernel.Result) kernel.Action {
				*keep = false
				return kernel.Alarm{Seconds: 1}
			},
		}, []step{do(kernel.Return{})})
	}
}

// keepStressing is keep_stressing(args) of the instance.
func (in *hrtimersInstance) keepStressing() bool {
	return in.keep && (in.w.maxOps == 0 || in.counter < in.w.maxOps)
}

// Next is stress_hrtimers() of V0.15.06.
func (in *hrtimersInstance) Next(t *kernel.Task, r kernel.Result) kernel.Action {
	k := t.Kernel()
	for {
		switch {
		case in.st == 0:
			in.st++
			return kernel.Sigaction{Signo: kernel.SIGALRM, Handler: stopHandler(&in.keep)}
		case in.st <= len(in.kids):
			// for (i = 0; i < PROCS_MAX; i++) { if (!keep_stressing(args)) goto reap; fork(); }
			if !in.keepStressing() {
				in.st = len(in.kids) + 3
				continue
			}
			// fork(): its cost, then wake_up_new_task() of the child at
			// its end.
			c := in.kids[in.st-1]
			if !in.forking {
				in.forking = true
				return kernel.KernelWork{Name: "fork", Fn: func(*kernel.CPU, ktime.Time) int64 { return hrtimersForkCost }}
			}
			in.forking = false
			in.st++
			return kernel.KernelWork{Name: "fork", Fn: func(cpu *kernel.CPU, now ktime.Time) int64 { return in.fork(k, cpu, now, c) }}
		case in.st == len(in.kids)+1:
			in.st++
			return kernel.Sigprocmask{How: kernel.SigBlock, Set: kernel.SigMask(kernel.SIGRTMIN)}
		case in.st == len(in.kids)+2:
			// do { shim_usleep(100000); } while (keep_stressing(args));
			if a, ok := usleep(&in.sleepEnd, r, in.keep, in.keepStressing); ok {
				return a
			}
			in.st++
		case in.st == len(in.kids)+3:
			// reap: kill(pids[i], SIGALRM) for each child forked.
			if in.killed < len(in.kids) && in.kids[in.killed].task != nil {
				c := in.kids[in.killed]
				in.killed++
				return kernel.Kill{Pid: c.task.Proc.Tgid, Signo: kernel.SIGALRM}
			}
			in.st++
		case in.st == len(in.kids)+4:
			// shim_waitpid() of each child, again after an EINTR.
			if in.alive > 0 {
				in.waiting = true
				return kernel.Wait{Name: "wait4"}
			}
			in.st++
		default:
			if !in.finished {
				in.finished, in.finish = true, r.Now
			}
			return kernel.Exit{}
		}
	}
}

// usleep is shim_usleep(100000) as a loop step: a first call (or one after
// the sleep ended) starts a 100 ms nanosleep(); an EINTR goes back to sleep
// for the time left while flag (shim_nanosleep_uint64()). When the sleep
// is over, again() says whether the caller's do-while sleeps once more.
// It reports false when the caller's loop ends.
func usleep(end *ktime.Time, r kernel.Result, flag bool, again func() bool) (kernel.Action, bool) {
	if *end != 0 && r.Err == kernel.EINTR && flag {
		return kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: max(int64(*end-r.Now), 0), Rem: true}, true
	}
	if *end != 0 && !again() {
		*end = 0
		return nil, false
	}
	*end = r.Now + ktime.Time(hrtimersSleep)
	return kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: hrtimersSleep, Rem: true}, true
}

// fork is the instance's fork() of child c: a process of its own, SCHED_RR
// 49 (stress_set_sched(getpid(), SCHED_RR, UNDEFINED): (max - min) / 2 =
// 49, kernel prio 50 in the trace). A child blocks after every signal, so
// its round-robin slice never ends: SCHED_FIFO 49 runs it alike. Children
// are not pinned: an RT task forked or woken goes to the CPU running the
// lowest priority (select_task_rq_rt() -> find_lowest_rq(), where an idle
// CPU, CPUPRI_IDLE, ranks below one running the forking SCHED_OTHER
// instance, CPUPRI_NORMAL), so the model places child j of instance i on
// CPU (cpu of i + 1 + j) mod CPUs, the first one away from the instance,
// unless the instances are pinned. The capture's first child went to the
// other CPU (sched_wakeup_new target_cpu=001 from CPU 0).
//
// Divergences: the child starts at SCHED_RR (the real one is SCHED_OTHER
// until its sched_setscheduler(), within its start-up time), and installs
// its SIGALRM handler itself where fork() copies the parent's.
func (in *hrtimersInstance) fork(k *kernel.Kernel, cpu *kernel.CPU, now ktime.Time, c *hrtimersChild) int64 {
	to := in.cpu
	if !in.w.pinned {
		to = (to + 1 + c.j) % k.CPUs()
	}
	t, err := k.Spawn(k.NewProcess("stress-ng-hrtimers"), "stress-ng-hrtimers", to, kernel.SchedFIFO, 49, c)
	if err != nil {
		panic("stress_ng_hrtimers: " + err.Error()) // the CPU was checked by New
	}
	c.task = t
	in.alive++
	return k.WakeUpNew(now, t, cpu)
}

// keepStressing is stress_hrtimers_keep_stressing() of the child.
func (c *hrtimersChild) keepStressing() bool {
	max := c.in.w.maxOps / 8 // max_ops = args->max_ops / PROCS_MAX
	return c.keep && (max == 0 || c.counter < max)
}

// handler is stress_hrtimers_handler().
func (c *hrtimersChild) handler(t *kernel.Task, _ kernel.SigInfo) kernel.Program {
	w := c.in.w
	return sequence([]step{func(r kernel.Result) kernel.Action {
		c.counter++
		w.b.inc(r.Now)
		if !c.keepStressing() {
			// cancel: keep_stressing_set_flag(false), timer_settime() of 0,
			// kill(getpid(), SIGALRM).
			c.keep = false
			return kernel.TimerSettime{ID: c.timer}
		}
		if c.counter&4095 == 0 {
			// ns_delay < 0 (no --hrtimers-adjust): stress_hrtimers_set()
			// draws a new period.
			c.period = c.rand(65536) + 1
			return kernel.TimerSettime{ID: c.timer, Value: c.period, Interval: c.period}
		}
		return kernel.Compute{NS: 100}
	}, func(r kernel.Result) kernel.Action {
		if !c.keep {
			return kernel.Kill{Pid: t.Proc.Tgid, Signo: kernel.SIGALRM}
		}
		return kernel.Return{}
	}}, []step{do(kernel.Return{})})
}

// Next is the forked child: stress_hrtimer_process(), then
// kill(parent, SIGALRM) and _exit().
func (c *hrtimersChild) Next(t *kernel.Task, r kernel.Result) kernel.Action {
	for {
		c.st++
		switch c.st {
		case 1:
			return kernel.KernelWork{Name: "child start-up", Fn: func(*kernel.CPU, ktime.Time) int64 { return hrtimersChildStart }}
		case 2:
			return kernel.Sigaction{Signo: kernel.SIGALRM, Handler: stopHandler(&c.keep)}
		case 3:
			return kernel.Sigprocmask{How: kernel.SigSetmask, Set: kernel.SigMask(kernel.SIGINT)}
		case 4:
			return kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: c.handler}
		case 5:
			return kernel.TimerCreate{Clock: sdk.ClockRealtime, Notify: kernel.SigevSignal, Signo: kernel.SIGRTMIN}
		case 6:
			c.timer = int(r.Ret)
			return kernel.TimerSettime{ID: c.timer, Value: c.period, Interval: c.period}
		case 7:
			// do { shim_usleep(100000); } while (stress_hrtimers_keep_stressing());
			if a, ok := usleep(&c.sleepEnd, r, c.keep, c.keepStressing); ok {
				c.st--
				return a
			}
		case 8:
			// add_counter_lock(args, lock, timer_counter)
			c.in.counter += c.counter
			return kernel.TimerDelete{ID: c.timer}
		case 9:
			return kernel.Kill{Pid: c.in.task.Proc.Tgid, Signo: kernel.SIGALRM}
		case 10:
			in := c.in
			return kernel.KernelWork{Name: "exit_notify", Fn: func(cpu *kernel.CPU, now ktime.Time) int64 {
				if in.alive--; in.alive == 0 && in.waiting {
					// The last child's exit ends the instance's waits
					// (exit_notify() -> do_notify_parent() ->
					// __wake_up_parent()).
					in.waiting = false
					return t.Kernel().Wake(now, in.task, cpu)
				}
				return 0
			}}
		default:
			return kernel.Exit{}
		}
	}
}

func (w *stressNgHrtimers) Report(k *kernel.Kernel, end ktime.Time) Report {
	rep := Report{Type: "stress_ng_hrtimers", Name: w.name}
	ops, elapsed := w.b.ops, int64(end-w.warmup)
	if w.maxOps > 0 {
		// stress_metrics_dump(): the instances' counters (the children's
		// add_counter_lock()) over the mean finish - start.
		ops, elapsed = 0, 0
		for _, in := range w.inst {
			ops += int64(in.counter)
			f := end
			if in.finished {
				f = in.finish
			}
			elapsed += int64(f)
		}
		elapsed /= int64(max(len(w.inst), 1))
	}
	stressMetrics(&rep, "hrtimers", w.instances, ops, elapsed, "StressNgHrtimers")
	return rep
}
