package workload

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/replay"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/traceimport"
)

// replayLoad replays a kernel capture (docs/replay.md): every traced timer
// (by pointer and callback) becomes a simulated timer armed, re-armed and
// cancelled at the capture's times, with its expiry, slack, mode (pinning,
// soft/hard), flags and restart period; tasks that sleep in hrtimer_wakeup
// sleep the same sleeps and run while sched_switch shows them running. The
// tick, NO_HZ, the devices and every expiry are the model's own. The capture
// is streamed during the run (one event ahead), never held in memory.
type replayLoad struct {
	name, path string
	cap        *replay.Capture
	tasksOn    bool
	rcuOn      bool
	irqsOn     bool
	dmaLat     bool
	qos        int64
	hrCost     int64
	wheelCost  int64

	k     *kernel.Kernel
	lead  int64 // simulated time of the capture's first event
	f     *traceimport.File
	cls   *replay.Classifier
	queue []item
	qi    int
	eof   bool

	hr    map[tkey]*kernel.HRTimer
	hrExp map[*kernel.HRTimer]ktime.Time // each replayed hrtimer's hard expiry
	wt    map[tkey]*kernel.WheelTimer
	tasks map[[2]int]*replayTask
	// expiredWheel marks the timer_list timers whose last operation in the
	// capture is their expiry; a start of one of them that comes while the
	// model's copy is still pending (it expires later in the model) waits
	// in rearm for that expiry, so a callback's or work function's re-arm
	// follows the expiry that caused it instead of re-arming a queued timer.
	expiredWheel map[tkey]bool
	rearm        map[*kernel.WheelTimer]wheelRearm
	// For the callbacks that re-arm their own timer (Capture.SelfRearm):
	// when the model expires one before the capture does, its callback
	// re-arms it at once with the timeout of its last start (wheelTimeout),
	// as the real callback did, and selfArmed marks it so the capture's own
	// re-arm, replayed later, is not applied a second time (wheelExp is the
	// expiry last asked for).
	selfArmed    map[*kernel.WheelTimer]bool
	wheelTimeout map[*kernel.WheelTimer]uint64
	wheelExp     map[*kernel.WheelTimer]uint64

	// cur is, per CPU, the pid the capture shows running there (-1 not
	// known yet): every event's task column is the CPU's current task, so
	// a task whose switch-out the capture lacks (its own events filtered
	// out, a lost event) stops running when another task's event shows up
	// on its CPU, or the CPU enters idle.
	cur map[int]int
	// sleeperOf maps a capture's hrtimer_wakeup timer to the timed-wait
	// task sleeping on it (replayTask.timed).
	sleeperOf map[uint64]*replayTask
	// waking holds, per pid, the time of a sched_waking not yet followed
	// by its sched_wakeup (which names the CPU the task was put on).
	waking map[int]int64
	// qosReq is set, per CPU, after a CPU latency request whose
	// pm_qos_update_target (the aggregate) may follow.
	qosReq map[int]bool

	// excl is the process tree the exclude attribute leaves out (nil:
	// none); owned marks the timers its tasks started (by pointer and
	// kind: a start in task context by one of them makes a timer theirs,
	// one by another task makes it not), whose operations are left out.
	excl          *replay.ProcessTree
	owned         map[okey]bool
	left, leftQoS int64
	excludeSpec   string
	leftTasks     int
	// kthreads counts the replayed tasks the bundle names kernel threads.
	kthreads int

	applied, skipped int64
	// rcuGP holds, with rcu on, the timer_list timers (by pointer) whose
	// last start was an RCU grace-period kthread's force-quiescent-state
	// wait (replay.RCUGPKthreads): the model's RCU runs its own grace
	// periods and arms its own wait (rcuGPStart(), rcuFQS()), so the
	// capture's are left to it, counted in rcuLeft; replaying both would
	// arm two of them for one grace period.
	rcuGP   map[uint64]bool
	rcuLeft int64
	// rcuWaitDone marks the RCU grace-period kthread timers whose last
	// event in the capture is their expiry: the kthread's next start of
	// one continues the same grace period (rcu_gp_fqs_loop() waits again
	// after a scan); any other start begins a grace period.
	rcuWaitDone map[uint64]bool
	running     replay.Running // for captures whose timer events name no task
	// rcuGPQueued holds the kthread's waits queued in the capture (a grace
	// period runs), rcuGPWoke the time one last expired or was cancelled.
	rcuGPQueued map[uint64]bool
	rcuGPWoke   int64
	// inIRQ is each CPU's device interrupt handler in progress in the
	// capture; irqs counts those delivered.
	inIRQ    []deviceIRQ
	irqs     int64
	lateness replay.Hist // model expiry lateness of replayed hrtimers (ns)
	wakeLat  replay.Hist // model sleeper wakeup latency (ns), hard expiry to user space
}

type tkey struct {
	ptr uint64
	fn  string
}

// okey is a timer as the exclusion tracks its owner: pointer and kind.
type okey struct {
	ptr   uint64
	wheel bool
}

// excludedPID stands for a task of the excluded process tree in the
// per-CPU current task and in switch items: no replayed task is it.
const excludedPID = -2

// wheelRearm is a start held until the model's copy of the timer expires:
// mod_timer(jiffies + timeout) on cpu, as the capture made it.
type wheelRearm struct {
	cpu     int
	timeout uint64
}

// item is one thing to do at a capture time: a classified timer operation,
// a change of the task a CPU runs, a task woken, or a new PM QoS
// constraint.
type item struct {
	op   replay.Op
	kind itemKind
	// itemSwitch: prevPID stops running on op.CPU, nextPID runs there.
	// itemWake: nextPID on op.CPU is woken.
	prevPID, nextPID int
	// itemQoS: the constraint in ns, -1 for none.
	qos int64
	// rcu: a call_rcu() the capture implies on op.CPU (rcuWork).
	rcu rcuWork
	// itemIRQ: the interrupt, its handler's run time and softirqs.
	irq     deviceIRQ
	irqCost int64
}

// rcuWork is what a capture shows of RCU's work that it does not trace
// itself (call_rcu() has no trace event outside CONFIG_RCU_TRACE).
type rcuWork uint8

const (
	rcuNone rcuWork = iota
	// rcuExit: a task's last switch (prev_state X, Z or the TASK_DEAD
	// values 64 of 3.x and 128 of 4.14+ that LTTng prints as numbers):
	// release_task() queues its task_struct with call_rcu().
	rcuExit
	// rcuSoftirq: RCU_SOFTIRQ raised on the CPU. rcu_pending() was true
	// there; if the model's RCU has nothing to do on that CPU, the
	// capture's kernel had callbacks the replay did not queue (file
	// closes, frees: the syscalls a capture of timer events leaves out),
	// and one call_rcu() stands for them.
	rcuSoftirq
	// rcuGPBegin: the capture's RCU grace-period kthread began a grace
	// period on the CPU (its first force-quiescent-state wait,
	// Capture.RCUGPTimers): callbacks needed one. If the model runs no
	// grace period and has nothing to do there, one call_rcu() stands for
	// them. A capture that shows the kthread's waits shows when its grace
	// periods ran, and an RCU softirq raised during one or right after it
	// (rcuNoticeTicks) is the grace period's own work (a CPU noticing its
	// start or end, reporting a quiescent state), not read as callbacks.
	rcuGPBegin
)

// rcuNoticeTicks is how long after the capture's grace-period kthread last
// woke (its wait's expiry or cancel) an RCU_SOFTIRQ is still taken for the
// grace period's own work: each CPU notices a grace period's end from its
// next tick (rcu_pending(): gp_seq changed) and raises RCU_SOFTIRQ for it,
// which says nothing of new callbacks.
const rcuNoticeTicks = 2

// deadState reports whether a sched_switch prev_state is a task's final
// switch.
func deadState(s string) bool {
	switch s {
	case "X", "Z", "x", "64", "128":
		return true
	}
	return false
}

type itemKind uint8

const (
	itemOp itemKind = iota
	itemSwitch
	itemWake
	itemQoS
	// itemIRQ: a device interrupt on op.CPU (irq, deviceIRQ).
	itemIRQ
)

// deviceIRQ is a capture's device interrupt handler on one CPU, from
// irq_handler_entry to irq_handler_exit: the softirqs it raised, and
// whether an hrtimer expired inside it (then it is the clockevent's
// interrupt, arch_timer on ARM, which the model raises itself).
type deviceIRQ struct {
	entry    int64
	irq      int
	name     string
	softirqs uint32
	timer    bool
}

type replayTask struct {
	w       *replayLoad
	t       *kernel.Task
	waiting bool  // parked in Wait
	running bool  // the capture shows it running
	sleep   bool  // a sleep is due
	sleepAt int64 // the time it asks to sleep until (simulated CLOCK_MONOTONIC): the capture's softexpires
	hardAt  int64 // the capture's hard expiry (softexpires + the task's slack), whence its wakeup latency counts
	slept   bool
	lastExp ktime.Time
	// graceUntil: after a wakeup the task runs until then unless the
	// capture says what it does.
	graceUntil ktime.Time
	// A task some of whose sleeps the capture ends early (timed is set;
	// replay.TaskInfo.EarlyWakes) sleeps a timed wait: timer, an
	// hrtimer_wakeup of the replay's own, wakes it at its expiry unless
	// the capture cancels the sleep first (a futex or poll wait woken by
	// another task, a sleep a signal ends), which clock_nanosleep() cannot
	// show: it sleeps again after a wakeup that is not its timer's or a
	// signal's (do_nanosleep()'s loop). woken: the timer fired before the
	// task parked.
	timed bool
	timer *kernel.HRTimer
	woken bool
	// kwork, for a kernel thread (the bundle's kernel_threads), is its run
	// time as kernel work: the kernel charges a kernel thread's time to
	// system (account_process_tick(), kernel/sched/cputime.c: it is never
	// in user mode); kwNS is the slice it runs.
	kwork *kernel.KernelWork
	kwNS  int64
}

// compute is a slice of the task's run time: user computation, or kernel
// work for a kernel thread.
func (rt *replayTask) compute(ns int64) kernel.Action {
	if rt.kwork == nil {
		return kernel.Compute{NS: ns}
	}
	rt.kwNS = ns
	return *rt.kwork
}

// wakeGrace is how long a woken task runs waiting for the capture to show
// its next step.
const wakeGrace = 50_000

// replayType is the replay workload type (listed in workload.go).
var replayType = Type{
	Name: "replay",
	Doc:  "a kernel capture (ftrace text or babeltrace text) replayed: its timers and sleeping tasks (docs/replay.md)",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "capture", Type: sdk.TypeString, Doc: "capture file: tracefs trace, trace-cmd report or babeltrace text; relative to the working directory"},
		attr("tasks", sdk.TypeBool, "true", "run the capture's hrtimer_wakeup sleepers as tasks (else only its timers)"),
		attr("hrtimer_cost", sdk.TypeDuration, "200ns", "callback run time of a replayed hrtimer"),
		attr("timer_cost", sdk.TypeDuration, "500ns", "callback run time of a replayed timer_list timer"),
		attr("irqs", sdk.TypeBool, "true", "deliver the capture's device interrupts (irq_handler_entry/exit but the clockevent's) with their run time and the softirqs they raise (docs/replay.md)"),
		attr("rcu", sdk.TypeBool, "true", "queue RCU callbacks where the capture shows RCU work: a task's exit (call_rcu() in release_task()) and an RCU_SOFTIRQ raised on a CPU where the model's RCU has nothing to do (docs/replay.md)"),
		attr("dma_latency", sdk.TypeBool, "false", "hold a /dev/cpu_dma_latency request of latency for the whole run, as cyclictest does by default (a trace cannot show it)"),
		attr("latency", sdk.TypeDuration, "0s", "the PM QoS CPU latency requested with dma_latency"),
		attr("keep", sdk.TypeString, "", "tasks replayed though an excluded tree holds them, comma-separated: \"workload\" (a bundle's command's own task, the first thread of its process: cyclictest's main thread) or pids; the task itself, not what it forks"),
		attr("exclude", sdk.TypeString, "", "process trees left out, comma-separated: \"workload\" (a capture bundle's command: bundle.json's pid) or pids; each root with every task it forks, threads included, for as long as the pid is theirs: their timers, sleeps, running time and PM QoS requests are not replayed (tickemu check replays a bundle's background beside its modelled command so)"),
	}},
	Machine: func(c *sdk.ConfigReader) (int, int, error) {
		cp, err := scanCapture(c.String("capture"))
		if err != nil {
			return 0, 0, &FieldError{Attr: "capture", Msg: err.Error()}
		}
		return cp.CPUs, cp.HZ, nil
	},
	New: func(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
		w := &replayLoad{name: name, path: c.String("capture"), tasksOn: c.Bool("tasks"), rcuOn: c.Bool("rcu"), irqsOn: c.Bool("irqs"),
			hrCost: c.Duration("hrtimer_cost"), wheelCost: c.Duration("timer_cost"), dmaLat: c.Bool("dma_latency"), qos: c.Duration("latency")}
		cp, err := scanCapture(w.path)
		if err != nil {
			return nil, &FieldError{Attr: "capture", Msg: err.Error()}
		}
		if cp.CPUs > m.CPUs {
			return nil, fieldErr("capture", "the capture has %d CPUs, the machine %d: give machine.cpus = %d or more", cp.CPUs, m.CPUs, cp.CPUs)
		}
		w.cap = cp
		if spec := strings.TrimSpace(c.String("exclude")); spec != "" {
			tree, err := processTree(w.path, spec)
			if err != nil {
				return nil, &FieldError{Attr: "exclude", Msg: err.Error()}
			}
			w.excl, w.excludeSpec = tree, spec
			if keep := strings.TrimSpace(c.String("keep")); keep != "" {
				pids, f, err := capturePIDs(w.path, keep)
				if err != nil {
					return nil, &FieldError{Attr: "keep", Msg: err.Error()}
				}
				f.Close()
				w.excl = tree.Without(pids...)
			}
		}
		return w, nil
	},
}

// scans caches Scan results by path, size and modification time: compare
// builds every run's workloads from the same file.
var scans sync.Map

type scanKey struct {
	path  string
	size  int64
	mtime int64
}

func scanCapture(path string) (*replay.Capture, error) {
	if path == "" {
		return nil, fmt.Errorf("the capture file is required")
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	k := scanKey{path, st.Size(), st.ModTime().UnixNano()}
	if v, ok := scans.Load(k); ok {
		return v.(*replay.Capture), nil
	}
	f, err := traceimport.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cp, err := replay.Scan(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cp.Events == 0 {
		return nil, fmt.Errorf("%s: no timer, irq, sched or power event in the capture", path)
	}
	if m := f.Manifest; m != nil {
		// A capture bundle states what the first pass guesses: the
		// kernel's CONFIG_HZ and the online CPUs (docs/capture.md).
		if m.Host.HZ > 0 {
			cp.HZ, cp.HZStated = m.Host.HZ, true
		}
		if m.Host.CPUs > cp.CPUs {
			cp.CPUs = m.Host.CPUs
		}
		if m.Host.CPUs > 0 {
			cp.CPUsStated = true
		}
	}
	scans.Store(k, cp)
	return cp, nil
}

// trees caches processTree results by capture (as scans) and attribute.
var trees sync.Map

type treeKey struct {
	scanKey
	spec string
}

// processTree reads the process tree an exclude attribute names: pids, and
// "workload" for a bundle's command (its manifest's pid).
func processTree(path, spec string) (*replay.ProcessTree, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	k := treeKey{scanKey{path, st.Size(), st.ModTime().UnixNano()}, spec}
	if v, ok := trees.Load(k); ok {
		return v.(*replay.ProcessTree), nil
	}
	roots, f, err := capturePIDs(path, spec)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tree, err := replay.NewProcessTree(f, roots)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	trees.Store(k, tree)
	return tree, nil
}

// capturePIDs reads a list of pids and "workload" (a bundle's command's
// pid) against the capture at path, returned open.
func capturePIDs(path, spec string) ([]int, *traceimport.File, error) {
	f, err := traceimport.Open(path)
	if err != nil {
		return nil, nil, err
	}
	roots, err := pidList(f, path, spec)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return roots, f, nil
}

func pidList(f *traceimport.File, path, spec string) ([]int, error) {
	var roots []int
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		switch {
		case p == "workload":
			if f.Manifest == nil {
				return nil, fmt.Errorf("\"workload\" needs a capture bundle (its bundle.json names the command's pid); %s is a plain trace: give the pids", path)
			}
			if f.Manifest.PID <= 0 {
				return nil, fmt.Errorf("%s records no command pid (a bundle from before tickemu capture recorded it): give the pid", path)
			}
			roots = append(roots, f.Manifest.PID)
		default:
			pid, err := strconv.Atoi(p)
			if err != nil || pid <= 0 {
				return nil, fmt.Errorf("%q is neither \"workload\" nor a pid", p)
			}
			roots = append(roots, pid)
		}
	}
	return roots, nil
}

// ScanCapture is the first pass over a capture (cached), for the CLI.
func ScanCapture(path string) (*replay.Capture, error) { return scanCapture(path) }

// sim maps a capture time to simulated time: the first event at Lead, so
// that the model's tick grid is the capture's.
func (w *replayLoad) sim(t int64) ktime.Time { return ktime.Time(t - w.cap.First + w.lead) }

func (w *replayLoad) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	w.k = k
	w.lead = w.cap.Lead(k.TickNsec())
	if w.dmaLat {
		k.SetPMQoS(w.qos) // cpu_latency_qos_add_request(), as cyclictest's set_latency_target()
	}
	f, err := traceimport.Open(w.path)
	if err != nil {
		return err
	}
	w.f = f
	w.cls = replay.NewClassifier(replay.Options{})
	w.hr, w.wt, w.tasks = map[tkey]*kernel.HRTimer{}, map[tkey]*kernel.WheelTimer{}, map[[2]int]*replayTask{}
	w.expiredWheel, w.rearm = map[tkey]bool{}, map[*kernel.WheelTimer]wheelRearm{}
	w.selfArmed, w.wheelTimeout, w.wheelExp = map[*kernel.WheelTimer]bool{}, map[*kernel.WheelTimer]uint64{}, map[*kernel.WheelTimer]uint64{}
	w.hrExp = map[*kernel.HRTimer]ktime.Time{}
	w.cur, w.waking, w.qosReq = map[int]int{}, map[int]int64{}, map[int]bool{}
	w.sleeperOf = map[uint64]*replayTask{}
	w.owned = map[okey]bool{}
	w.inIRQ = make([]deviceIRQ, k.CPUs())
	if w.rcuOn {
		w.rcuGP, w.rcuWaitDone, w.running = make(map[uint64]bool, len(w.cap.RCUGPTimers)), map[uint64]bool{}, replay.Running{}
		w.rcuGPQueued, w.rcuGPWoke = map[uint64]bool{}, -1<<62
		for p := range w.cap.RCUGPTimers {
			w.rcuGP[p] = true
		}
	}
	if w.tasksOn {
		kthread := map[int]bool{}
		if f.Manifest != nil {
			for _, pid := range f.Manifest.KernelThreads {
				kthread[pid] = true
			}
		}
		for _, ti := range w.cap.Tasks {
			if ti.CPU >= k.CPUs() {
				continue
			}
			if w.excl.Entirely(ti.PID) {
				w.leftTasks++
				continue
			}
			rt := &replayTask{w: w}
			pol, prio := taskPolicy(ti)
			comm := ti.Comm
			if len(comm) > 15 {
				comm = comm[:15]
			}
			t, err := k.Spawn(k.NewProcess(comm), comm, ti.CPU, pol, prio, kernel.ProgramFunc(rt.next))
			if err != nil {
				return err
			}
			rt.t = t
			rt.timed = ti.EarlyWakes > 0
			if kthread[ti.PID] {
				rt.kwork = &kernel.KernelWork{Name: "kthread", Fn: func(*kernel.CPU, ktime.Time) int64 { return rt.kwNS }}
				w.kthreads++
			}
			w.tasks[[2]int{ti.PID, ti.CPU}] = rt
		}
	}
	// Timers armed before the capture began expire when it first shows them.
	for _, pa := range w.cap.PreArmed {
		if pa.CPU >= k.CPUs() || w.cap.IsTick(pa.Function) || pa.Function == "hrtimer_wakeup" || pa.Wheel && w.rcuGP[pa.Timer] {
			continue
		}
		at := w.sim(pa.Time)
		if pa.Wheel {
			t := w.wheelTimer(pa.Timer, pa.Function, "")
			// The jiffy of the tick the capture shows it expiring in.
			k.ModTimer(pa.CPU, 0, t, k.Jiffies()+uint64(int64(at)/k.TickNsec()))
		} else {
			t := w.hrTimer(pa.Timer, pa.Function, sdk.HRModeAbs|sdk.HRModeHard)
			w.hrExp[t] = at
			k.StartHRTimer(pa.CPU, 0, t, at, 0, sdk.HRModeAbs|sdk.HRModeHard)
		}
	}
	k.At(0, "replay", w.pump)
	return nil
}

func (w *replayLoad) hrTimer(ptr uint64, fn string, mode sdk.HRMode) *kernel.HRTimer {
	key := tkey{ptr, fn}
	if t := w.hr[key]; t != nil {
		return t
	}
	var t *kernel.HRTimer
	t = w.k.NewHRTimer(fn, sdk.ClockMonotonic, mode, w.hrCost, func(c *kernel.CPU, now ktime.Time, e *sdk.HRExpiry) {
		w.lateness.Add(int64(e.BaseNow) - int64(w.hrExp[t]))
		if e.Restarted {
			w.hrExp[t] = e.NewExpires
		}
	})
	t.Period = w.cap.Periods[fn]
	w.hr[key] = t
	return t
}

func (w *replayLoad) wheelTimer(ptr uint64, fn, flags string) *kernel.WheelTimer {
	key := tkey{ptr, fn}
	if t := w.wt[key]; t != nil {
		return t
	}
	var fl sdk.TimerFlags
	if strings.Contains(flags, "D") || w.cap.Deferrable[fn] {
		fl |= sdk.TimerDeferrable
	}
	if strings.Contains(flags, "P") {
		fl |= sdk.TimerPinned
	}
	// A period only tickemu's own trace shows (Capture.WheelPeriods).
	t := w.k.NewWheelTimer(fn, fl, w.wheelCost, uint64(w.cap.WheelPeriods[fn]), nil)
	t.Callback = func(c *kernel.CPU, now ktime.Time) {
		if r, ok := w.rearm[t]; ok {
			delete(w.rearm, t)
			w.modTimer(r.cpu, now, t, r.timeout)
			return
		}
		if to, ok := w.wheelTimeout[t]; ok && w.cap.SelfRearm[fn] && !w.expiredWheel[key] {
			w.modTimer(c.ID(), now, t, to)
			w.selfArmed[t] = true
		}
	}
	w.wt[key] = t
	return t
}

// fill reads capture events until an item is queued; false at the end.
func (w *replayLoad) fill() bool {
	w.queue, w.qi = w.queue[:0], 0
	for len(w.queue) == 0 {
		if w.eof {
			return false
		}
		e, err := w.f.Next()
		if err == io.EOF {
			w.eof = true
			for _, op := range w.cls.Finish() {
				w.queue = append(w.queue, item{op: op})
			}
			w.endTasks()
			w.f.Close()
			continue
		}
		if err != nil {
			w.k.Stop(fmt.Errorf("replay %q: %s: %w", w.name, w.path, err))
			w.eof = true
			return false
		}
		if w.excl != nil {
			w.own(e)
		}
		if w.rcuGP != nil {
			w.rcuGPEvent(e)
		}
		for _, op := range w.cls.Feed(e) {
			if op.Wheel && w.rcuGP[op.Timer] {
				w.rcuLeft++
				continue
			}
			if w.excl != nil && w.owned[okey{op.Timer, op.Wheel}] {
				if op.Kind != replay.OpExpire {
					w.left++
				}
				continue
			}
			w.queue = append(w.queue, item{op: op})
		}
		if w.rcuOn {
			w.rcuWork(e)
		}
		if w.irqsOn {
			w.deviceIRQ(e)
		}
		w.pmQoS(e)
		if w.tasksOn {
			w.sched(e)
		}
	}
	return true
}

// own notes who owns the timer e starts (ProcessTree.Owns): a timer a task
// asks for (replay.TaskTimers: its sleeps, POSIX timers, itimers,
// timerfds) started in task context is the running task's; the task
// column of an interrupt's event is the task it interrupted, so a start
// there leaves the owner as it was. A timer the kernel starts for itself
// while one of the tree's tasks runs (dl_task_timer, a delayed work) is
// replayed: the model of the tree's command does not make it.
func (w *replayLoad) own(e *traceimport.Event) {
	owned, known := w.excl.Owns(e)
	if !known {
		return
	}
	k := okey{e.Timer, e.Kind == traceimport.TimerStart}
	if owned {
		w.owned[k] = true
	} else {
		delete(w.owned, k)
	}
}

// rcuGPEvent follows the RCU grace-period kthread's timers (rcuGP) through
// e: a start by the kthread makes a timer its (another task's start of the
// pointer makes it not), and a start that does not follow the timer's
// expiry right away (within rcuNoticeTicks: the kthread scanned and waits
// again) begins a grace period (rcu_gp_init(), then rcu_gp_fqs_loop()'s
// first wait), queued as rcuGPBegin.
func (w *replayLoad) rcuGPEvent(e *traceimport.Event) {
	switch e.Kind {
	case traceimport.SchedSwitch:
		w.running.Update(e)
	case traceimport.TimerStart:
		if !replay.RCUGPWait(e, w.running) {
			delete(w.rcuGP, e.Timer) // the pointer is another task's timer now
			delete(w.rcuGPQueued, e.Timer)
			return
		}
		w.rcuGP[e.Timer], w.rcuGPQueued[e.Timer] = true, true
		if !w.rcuWaitDone[e.Timer] || e.Time-w.rcuGPWoke > rcuNoticeTicks*w.cap.TickNsec() {
			w.queue = append(w.queue, item{op: replay.Op{Time: e.Time, CPU: e.CPU}, rcu: rcuGPBegin})
		}
		delete(w.rcuWaitDone, e.Timer)
	case traceimport.TimerExpireEntry:
		if w.rcuGP[e.Timer] {
			w.rcuWaitDone[e.Timer] = true
			delete(w.rcuGPQueued, e.Timer)
			w.rcuGPWoke = e.Time
		}
	case traceimport.TimerCancel:
		delete(w.rcuWaitDone, e.Timer)
		if w.rcuGPQueued[e.Timer] {
			delete(w.rcuGPQueued, e.Timer)
			w.rcuGPWoke = e.Time
		}
	}
}

// rcuWork queues the RCU work e shows (rcuExit, rcuSoftirq).
func (w *replayLoad) rcuWork(e *traceimport.Event) {
	switch {
	case e.Kind == traceimport.SchedSwitch && deadState(e.PrevState):
		w.queue = append(w.queue, item{op: replay.Op{Time: e.Time, CPU: e.CPU}, rcu: rcuExit})
	case e.Kind == traceimport.SoftirqRaise && e.Vec == kernel.RCUSoftirq && !w.rcuGPWork(e.Time):
		w.queue = append(w.queue, item{op: replay.Op{Time: e.Time, CPU: e.CPU}, rcu: rcuSoftirq})
	}
}

// rcuGPWork reports whether an RCU_SOFTIRQ raised at t (capture time) is
// the capture's grace period's own work: one runs (a kthread wait is
// queued), or the kthread woke less than rcuNoticeTicks ago. A capture
// without the kthread's waits shows no grace period: none is.
func (w *replayLoad) rcuGPWork(t int64) bool {
	if len(w.cap.RCUGPTimers) == 0 {
		return false
	}
	return len(w.rcuGPQueued) > 0 || t-w.rcuGPWoke <= rcuNoticeTicks*w.cap.TickNsec()
}

// live is the pid a replayed task would have: excludedPID for a task of the
// excluded tree at time t.
func (w *replayLoad) live(pid int, t int64) int {
	if w.excl != nil && w.excl.Member(pid, t) {
		return excludedPID
	}
	return pid
}

// deviceIRQ follows e's CPU's device interrupt handlers and queues each at
// its irq_handler_exit, stamped with its entry: its run time is the
// capture's, and the softirqs raised inside it are raised by the model's
// too (NET_RX from eth0). A handler inside which an hrtimer expired, or
// named as a clockevent device's (clockeventIRQ), is the model's own, and a
// handler whose exit the capture lacks is dropped.
func (w *replayLoad) deviceIRQ(e *traceimport.Event) {
	if e.CPU < 0 || e.CPU >= len(w.inIRQ) {
		return
	}
	d := &w.inIRQ[e.CPU]
	switch e.Kind {
	case traceimport.IRQEntry:
		*d = deviceIRQ{entry: e.Time, irq: e.IRQ, name: e.Name}
		if d.name == "" {
			d.name = "irq" + strconv.Itoa(e.IRQ)
		}
	case traceimport.SoftirqRaise:
		if d.entry > 0 && e.Vec >= 0 && e.Vec < 32 {
			d.softirqs |= 1 << e.Vec
		}
	case traceimport.HRExpireEntry, traceimport.LocalTimerEntry:
		d.timer = true
	case traceimport.IRQExit:
		if d.entry > 0 && e.IRQ == d.irq && !d.timer && !clockeventIRQ(d.name) {
			w.queue = append(w.queue, item{op: replay.Op{Time: d.entry, CPU: e.CPU}, kind: itemIRQ,
				irq: *d, irqCost: e.Time - d.entry})
		}
		*d = deviceIRQ{}
	}
}

// clockeventIRQ reports whether an interrupt's name is a clockevent
// device's, which the model raises itself: ARM's arch_timer, x86's irq 0
// "timer" (the PIT or HPET broadcast, tickemu's own trace's too) and the
// HPET's per-channel "hpet2".. interrupts.
func clockeventIRQ(name string) bool {
	return strings.Contains(name, "timer") || strings.HasPrefix(name, "hpet")
}

// endTasks stops, at the capture's last event, the tasks it shows running
// there: past its end the capture says nothing of them, and a task left
// running would compute for the rest of the run (a run longer than the
// capture: the command's model beside a replayed background).
func (w *replayLoad) endTasks() {
	if !w.tasksOn {
		return
	}
	cpus := make([]int, 0, len(w.cur))
	for cpu, pid := range w.cur {
		if pid > 0 {
			cpus = append(cpus, cpu)
		}
	}
	sort.Ints(cpus)
	for _, cpu := range cpus {
		w.queue = append(w.queue, item{op: replay.Op{Time: w.cap.Last, CPU: cpu}, kind: itemSwitch, prevPID: w.cur[cpu], nextPID: -1})
		w.cur[cpu] = -1
	}
}

// sched queues what e shows of the tasks: who runs on its CPU, and which
// task is woken.
func (w *replayLoad) sched(e *traceimport.Event) {
	at := replay.Op{Time: e.Time, CPU: e.CPU}
	cur, known := w.cur[e.CPU]
	if !known {
		cur = -1
	}
	switchTo := func(next int) {
		if next != cur {
			w.queue = append(w.queue, item{op: at, kind: itemSwitch, prevPID: cur, nextPID: next})
		}
		w.cur[e.CPU] = next
	}
	switch e.Kind {
	case traceimport.SchedSwitch:
		prev, next := w.live(e.PrevPID, e.Time), w.live(e.NextPID, e.Time)
		if cur >= 0 && cur != prev {
			// The switch-in of prev is missing: cur has not run since
			// an event of prev's showed up (see cur).
			w.queue = append(w.queue, item{op: at, kind: itemSwitch, prevPID: cur, nextPID: -1})
		}
		w.queue = append(w.queue, item{op: at, kind: itemSwitch, prevPID: prev, nextPID: next})
		w.cur[e.CPU] = next
		return
	case traceimport.CPUIdle:
		if e.State != 4294967295 { // entering idle: the idle task runs
			switchTo(0)
		}
		return
	case traceimport.SchedWaking:
		if len(w.waking) < 1<<16 {
			w.waking[e.WakePID] = e.Time
		}
	case traceimport.SchedWakeup, traceimport.SchedWakeupNew:
		// Woken at its sched_waking (try_to_wake_up()'s start) when the
		// capture has one, on the CPU the wakeup names.
		t := e.Time
		if wt, ok := w.waking[e.WakePID]; ok && wt <= t && t-wt < replay.RestartWindow {
			t = wt
		}
		delete(w.waking, e.WakePID)
		if pid := w.live(e.WakePID, e.Time); pid != excludedPID {
			w.queue = append(w.queue, item{op: replay.Op{Time: t, CPU: e.TargetCPU}, kind: itemWake, nextPID: pid})
		}
	}
	if e.PID >= 0 {
		switchTo(w.live(e.PID, e.Time)) // the task column: the CPU's current task
	}
}

// pmQoSNone is PM_QOS_CPU_LATENCY_DEFAULT_VALUE (include/linux/pm_qos.h):
// the constraint with no request, in us.
const pmQoSNone = 2_000_000_000

// pmQoS queues the CPU latency constraint the capture's PM QoS events set:
// cpu_latency_qos_add_request() and its update and removal trace the
// request (pm_qos_add_request, value in us), then pm_qos_update_target the
// constraint all requests make (curr_value), which corrects the first when
// another request is held too. A pm_qos_update_target that follows no CPU
// latency request on its CPU is another constraint's (a frequency QoS).
func (w *replayLoad) pmQoS(e *traceimport.Event) {
	ns := func(us int64) int64 {
		if us < 0 || us >= pmQoSNone {
			return -1
		}
		return us * 1000
	}
	if w.excl != nil && e.Context != traceimport.ContextIRQ && w.excl.Member(e.PID, e.Time) {
		switch e.Kind {
		case traceimport.PMQoSAddRequest, traceimport.PMQoSUpdateRequest, traceimport.PMQoSRemoveRequest:
			// The excluded tree's own request (cyclictest's
			// /dev/cpu_dma_latency): the pm_qos_update_target after it is
			// then ignored too (qosReq is not set).
			w.leftQoS++
			return
		}
	}
	var v int64
	switch e.Kind {
	case traceimport.PMQoSAddRequest, traceimport.PMQoSUpdateRequest:
		v = ns(e.QoSValue)
		w.qosReq[e.CPU] = true
	case traceimport.PMQoSRemoveRequest:
		v = -1
		w.qosReq[e.CPU] = true
	case traceimport.PMQoSUpdateTarget:
		if !w.qosReq[e.CPU] {
			return
		}
		delete(w.qosReq, e.CPU)
		v = ns(e.QoSValue)
	default:
		return
	}
	w.queue = append(w.queue, item{op: replay.Op{Time: e.Time, CPU: e.CPU}, kind: itemQoS, qos: v})
}

// taskPolicy is the scheduling class and RT priority of a replayed task:
// the capture's kernel priority when an event showed it (0-99:
// SCHED_FIFO at MAX_RT_PRIO-1 - prio, include/linux/sched/prio.h; 100-139:
// SCHED_OTHER), else SCHED_FIFO for a task whose sleeps had no slack
// (hrtimer_nanosleep() gives RT tasks none), else SCHED_OTHER.
func taskPolicy(ti replay.TaskInfo) (kernel.Policy, int) {
	switch {
	case ti.Prio >= 0 && ti.Prio < 100:
		return kernel.SchedFIFO, min(max(99-ti.Prio, 1), 99)
	case ti.Prio >= 100:
		return kernel.SchedOther, 0
	case ti.Sleeps > 0 && ti.ZeroSlack:
		return kernel.SchedFIFO, 50
	}
	return kernel.SchedOther, 0
}

// pump runs every item due at now and schedules itself for the next one.
func (w *replayLoad) pump(now ktime.Time) {
	for {
		if w.qi >= len(w.queue) && !w.fill() {
			return
		}
		it := &w.queue[w.qi]
		if at := w.sim(it.op.Time); at > now {
			w.k.At(at, "replay", w.pump)
			return
		}
		w.qi++
		w.exec(now, it)
	}
}

func (w *replayLoad) exec(now ktime.Time, it *item) {
	k := w.k
	op := &it.op
	if op.CPU < 0 || op.CPU >= k.CPUs() {
		w.skipped++
		return
	}
	if it.rcu != rcuNone {
		c := k.CPU(op.CPU)
		switch {
		case it.rcu == rcuGPBegin:
			if k.RCUGracePeriod() || c.RCUHasWork() {
				break // the model's RCU has its own reason for one
			}
			// The callbacks that asked for it, and rcu_core() giving
			// them the grace period (rcu_accelerate_cbs() ->
			// rcu_start_this_gp()) now, as the capture shows it begun.
			k.UpdateJiffies(now) // the kthread's CPU was awake
			c.CallRCU(now)
			c.RaiseSoftirq(now, kernel.RCUSoftirq)
		case it.rcu == rcuExit || !c.RCUHasWork() && !k.RCUGracePeriod():
			c.CallRCU(now)
		}
		return
	}
	switch it.kind {
	case itemSwitch:
		if rt := w.tasks[[2]int{it.prevPID, op.CPU}]; rt != nil {
			rt.running = false
		}
		if rt := w.tasks[[2]int{it.nextPID, op.CPU}]; rt != nil {
			rt.running = true
			rt.kick(now)
		}
		return
	case itemWake:
		// A task parked in Wait is woken (a sleeper in clock_nanosleep is
		// the model's to wake); it runs while the capture catches up
		// with its switch-in.
		if rt := w.tasks[[2]int{it.nextPID, op.CPU}]; rt != nil && rt.waiting {
			rt.graceUntil = now + wakeGrace
			rt.kick(now)
		}
		return
	case itemQoS:
		k.SetPMQoSLimit(it.qos)
		return
	case itemIRQ:
		w.irqs++
		k.DeviceInterrupt(op.CPU, now, it.irq.irq, it.irq.name, it.irqCost, it.irq.softirqs)
		return
	}
	if op.Kind == replay.OpExpire && op.Wheel {
		w.expiredWheel[tkey{op.Timer, op.Function}] = true
	}
	if op.Kind == replay.OpTickStop || op.Kind == replay.OpExpire || (!op.Wheel && w.cap.IsTick(op.Function)) {
		return // the model's own tick and expiries
	}
	w.applied++
	if op.Wheel {
		key := tkey{op.Timer, op.Function}
		t := w.wt[key]
		expired := w.expiredWheel[key]
		delete(w.expiredWheel, key)
		if t != nil {
			delete(w.rearm, t) // this operation supersedes a held one
		}
		switch op.Kind {
		case replay.OpStart:
			t = w.wheelTimer(op.Timer, op.Function, op.Flags)
			cpu := op.CPU
			if op.TimerCPU >= 0 && op.TimerCPU < k.CPUs() {
				cpu = op.TimerCPU
			}
			timeout := int64(1)
			if op.HasTimeout {
				timeout = max(op.Timeout, 0)
			}
			if w.selfArmed[t] {
				delete(w.selfArmed, t)
				if t.Pending() && w.wheelExp[t] == k.Jiffies()+uint64(timeout) {
					return // the model's callback made this re-arm already
				}
			} else if expired && t.Pending() {
				w.rearm[t] = wheelRearm{cpu, uint64(timeout)}
				return
			}
			w.modTimer(cpu, now, t, uint64(timeout))
		case replay.OpCancel:
			if t != nil {
				delete(w.selfArmed, t)
				k.DelTimer(op.CPU, now, t)
			}
		}
		return
	}
	// hrtimers: expiries are mapped through the capture's clock offset.
	if op.Kind == replay.OpStart {
		delta := op.Expires - (op.Time + w.cap.Offset)
		if delta > 1<<50 || delta < -(1<<40) {
			w.skipped++ // a CLOCK_REALTIME/TAI expiry, whose offset the capture does not give
			w.applied--
			return
		}
		exp := int64(w.sim(op.Time)) + delta
		if op.Function == "hrtimer_wakeup" && w.tasksOn {
			if rt := w.tasks[[2]int{op.PID, op.CPU}]; rt != nil && rt.timed {
				w.timedSleep(now, rt, op, exp)
				return
			}
			if rt := w.tasks[[2]int{op.PID, op.CPU}]; rt != nil {
				// clock_nanosleep() asks for the soft expiry and the
				// kernel adds the task's slack (hrtimer_nanosleep():
				// current->timer_slack_ns, 0 for RT tasks), as the
				// model does for the replayed task's policy.
				rt.sleep, rt.sleepAt, rt.hardAt = true, exp-max(op.Expires-op.SoftExpires, 0), exp
				rt.kick(now)
				return
			}
		}
		mode := parseMode(op.Mode)
		t := w.hrTimer(op.Timer, op.Function, mode)
		slack := max(op.Expires-op.SoftExpires, 0)
		w.hrExp[t] = ktime.Time(exp)
		k.StartHRTimer(op.CPU, now, t, ktime.Time(exp-slack), slack, mode)
		return
	}
	if op.Kind == replay.OpCancel && op.Function == "hrtimer_wakeup" {
		if rt := w.sleeperOf[op.Timer]; rt != nil {
			delete(w.sleeperOf, op.Timer)
			w.endSleep(now, rt, op.CPU)
		}
		return
	}
	if op.Kind == replay.OpCancel {
		if t := w.hr[tkey{op.Timer, op.Function}]; t != nil {
			k.CancelHRTimer(op.CPU, now, t)
		}
	}
}

// timedSleep starts a timed wait of rt (replayTask.timed) until the
// capture's start op, hard expiry exp (simulated): its timer at the soft
// expiry with the capture's slack; the task parks when it next asks what
// to do.
func (w *replayLoad) timedSleep(now ktime.Time, rt *replayTask, op *replay.Op, exp int64) {
	if rt.timer == nil {
		rt.timer = w.k.NewHRTimer("hrtimer_wakeup", sdk.ClockMonotonic, sdk.HRModeAbs|sdk.HRModeHard, w.hrCost,
			func(c *kernel.CPU, now ktime.Time, _ *sdk.HRExpiry) { rt.timerFired(c, now) })
	}
	slack := max(op.Expires-op.SoftExpires, 0)
	rt.sleep, rt.woken, rt.hardAt = true, false, exp
	if len(w.sleeperOf) < 1<<16 {
		w.sleeperOf[op.Timer] = rt
	}
	w.k.StartHRTimer(op.CPU, now, rt.timer, ktime.Time(exp-slack), slack, sdk.HRModeAbs|sdk.HRModeHard)
}

// endSleep is the capture's early end of rt's sleep (its hrtimer_wakeup
// cancelled while queued): the model's timer is cancelled and the task
// woken, as a futex_wake() or a signal would.
func (w *replayLoad) endSleep(now ktime.Time, rt *replayTask, cpu int) {
	if !rt.timed || rt.timer == nil || !rt.timer.Queued() {
		return
	}
	w.k.CancelHRTimer(cpu, now, rt.timer)
	rt.sleep = false
	rt.graceUntil = now + wakeGrace
	rt.kick(now)
}

// timerFired is the timed wait's hrtimer_wakeup(): it wakes the parked
// task from c (or, if it has not parked yet, lets it run on).
func (rt *replayTask) timerFired(c *kernel.CPU, now ktime.Time) {
	rt.slept, rt.lastExp = true, ktime.Time(rt.hardAt)
	if rt.waiting {
		rt.waiting = false
		rt.w.k.Wake(now, rt.t, c)
		return
	}
	rt.woken = true
}

// modTimer is mod_timer(t, jiffies + timeout) on cpu, remembered for the
// callback's own re-arm.
func (w *replayLoad) modTimer(cpu int, now ktime.Time, t *kernel.WheelTimer, timeout uint64) {
	w.wheelTimeout[t] = timeout
	w.k.UpdateJiffies(now) // the capture's CPU was awake: its jiffies were current
	w.wheelExp[t] = w.k.Jiffies() + timeout
	w.k.ModTimer(cpu, now, t, w.wheelExp[t])
}

// parseMode reads hrtimer_start's mode ("ABS|PINNED|HARD") as an absolute
// mode with its flags; the expiry is passed absolute whatever the capture's.
func parseMode(s string) sdk.HRMode {
	m := sdk.HRModeAbs
	for _, p := range strings.Split(s, "|") {
		switch p {
		case "PINNED":
			m |= sdk.HRModePinned
		case "SOFT":
			m |= sdk.HRModeSoft
		case "HARD":
			m |= sdk.HRModeHard
		}
	}
	if m&(sdk.HRModeSoft|sdk.HRModeHard) == 0 {
		m |= sdk.HRModeHard
	}
	return m
}

// kick wakes a parked task; a task still entering its Wait is retried 1 us
// later.
func (rt *replayTask) kick(now ktime.Time) {
	if !rt.waiting {
		return
	}
	if !rt.t.Sleeping() {
		rt.w.k.At(now+1000, "replay-kick", rt.kick)
		return
	}
	rt.waiting = false
	rt.w.k.Wake(now, rt.t, nil)
}

// next is the task's program: a due sleep first, a slice of computation
// while the capture shows it running, else park until kicked.
func (rt *replayTask) next(t *kernel.Task, r kernel.Result) kernel.Action {
	if rt.slept {
		rt.slept = false
		rt.w.wakeLat.Add(int64(r.Now - rt.lastExp))
		// A woken task runs: it keeps the CPU while the capture catches up
		// with the wakeup (its switch-in, its next sleep), so the model does
		// not idle in between and decide on the tick with no timer queued.
		rt.graceUntil = r.Now + wakeGrace
	}
	if rt.sleep && rt.timed {
		rt.sleep = false
		if !rt.woken {
			rt.waiting = true
			return kernel.Wait{Name: "futex"}
		}
		rt.woken = false
	} else if rt.sleep {
		rt.sleep, rt.slept, rt.lastExp = false, true, ktime.Time(rt.hardAt)
		return kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, Abs: true, T: rt.sleepAt}
	}
	if rt.running {
		return rt.compute(20_000)
	}
	if r.Now < rt.graceUntil {
		return rt.compute(min(int64(rt.graceUntil-r.Now), 20_000))
	}
	rt.waiting = true
	return kernel.Wait{Name: "futex"}
}

func hzText(hz int) string {
	if hz == 0 {
		return "HZ not inferable"
	}
	return fmt.Sprintf("HZ %d", hz)
}

func (w *replayLoad) Report(k *kernel.Kernel, end ktime.Time) Report {
	rep := Report{Type: "replay", Name: w.name}
	reached := "the whole capture"
	if !w.eof {
		reached = fmt.Sprintf("%.1f%% of the capture (run.duration ends before it)", 100*float64(int64(end)-w.lead)/float64(max(w.cap.Span(), 1)))
	}
	rep.Text = append(rep.Text,
		fmt.Sprintf("replay %s: %s, %d CPUs, %s, %.6f s; replayed %s: %d timer operations, %d skipped; %d hrtimers, %d timer_list timers, %d tasks",
			filepath.Base(w.path), w.cap.Format, w.cap.CPUs, hzText(w.cap.HZ), float64(w.cap.Span())/1e9, reached, w.applied, w.skipped, len(w.hr), len(w.wt), len(w.tasks)))
	if w.rcuLeft > 0 {
		rep.Text = append(rep.Text, fmt.Sprintf("  left to the model's RCU: %d timer operations of the grace-period kthread's force-quiescent-state waits (process_timeout)", w.rcuLeft))
	}
	if w.excl != nil {
		rep.Text = append(rep.Text, fmt.Sprintf("  left out (exclude = %q: pids %s): %d timer operations, %d tasks, %d PM QoS requests",
			w.excludeSpec, w.excl, w.left, w.leftTasks, w.leftQoS))
	}
	if w.kthreads > 0 {
		rep.Text = append(rep.Text, fmt.Sprintf("  kernel threads (bundle.json's kernel_threads) %d: their run time is kernel work, system time", w.kthreads))
	}
	if w.irqs > 0 {
		rep.Text = append(rep.Text, fmt.Sprintf("  device interrupts delivered %d", w.irqs))
	}
	if w.wakeLat.Count() > 0 {
		rep.Text = append(rep.Text, fmt.Sprintf("  sleeper wakeups %d: latency p50 %d ns, p99 %d ns, max %d ns",
			w.wakeLat.Count(), w.wakeLat.Quantile(0.5), w.wakeLat.Quantile(0.99), w.wakeLat.Quantile(1)))
	}
	if w.lateness.Count() > 0 {
		rep.Text = append(rep.Text, fmt.Sprintf("  replayed hrtimer expiries %d: lateness p50 %d ns, p99 %d ns",
			w.lateness.Count(), w.lateness.Quantile(0.5), w.lateness.Quantile(0.99)))
	}
	ms := []Metric{
		{"timer-ops", float64(w.applied), "higher"},
		{"sleeper-wakeups", float64(w.wakeLat.Count()), "higher"},
		{"wake-latency-p50-ns", float64(w.wakeLat.Quantile(0.5)), "lower"},
		{"wake-latency-p99-ns", float64(w.wakeLat.Quantile(0.99)), "lower"},
		{"max-wake-latency-ns", float64(w.wakeLat.Quantile(1)), "lower"},
		{"hrtimer-lateness-p99-ns", float64(w.lateness.Quantile(0.99)), "lower"},
	}
	rep.Bench = append(rep.Bench, BenchLine{Name: "Replay", Metrics: ms})
	names := make([]string, 0, len(w.cap.Periods))
	for fn := range w.cap.Periods {
		names = append(names, fn)
	}
	sort.Strings(names)
	if len(names) > 0 {
		var b strings.Builder
		for _, fn := range names {
			fmt.Fprintf(&b, " %s=%dns", fn, w.cap.Periods[fn])
		}
		rep.Text = append(rep.Text, "  restart periods:"+b.String())
	}
	return rep
}
