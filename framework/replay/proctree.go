package replay

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/tickemu/tickemu/framework/traceimport"
)

// ProcessTree is the tasks of some processes in a capture: each root pid and
// every task forked from the tree (processes and threads alike, and what
// they fork in turn), each for the time the pid is the tree's. A capture
// bundle's workload is the tree of its command's pid (bundle.json's pid):
// the tasks whose timers and sleeps the bundle's own scenario models, where
// everything else the trace shows (the kernel's timers, other processes,
// the capturing tickemu's own threads) is the machine's background.
type ProcessTree struct {
	roots []int
	spans map[int][]span
	// outside marks the pids the capture shows while they are not the
	// tree's (before a root's fork, after an exit and a reuse).
	outside map[int]bool
}

// span is a time a pid is the tree's: [from, to) in trace-clock ns.
type span struct{ from, to int64 }

// Member reports whether pid is one of the tree's tasks at time t.
func (p *ProcessTree) Member(pid int, t int64) bool {
	if p == nil || pid <= 0 {
		return false
	}
	for _, s := range p.spans[pid] {
		if s.from <= t && t < s.to {
			return true
		}
	}
	return false
}

// Entirely reports whether pid is the tree's whenever the capture shows
// it: a task of the tree whose pid no other task had during the capture.
func (p *ProcessTree) Entirely(pid int) bool {
	return p != nil && len(p.spans[pid]) > 0 && !p.outside[pid]
}

// PIDs lists the pids that are the tree's at some time, in order.
func (p *ProcessTree) PIDs() []int {
	if p == nil {
		return nil
	}
	out := make([]int, 0, len(p.spans))
	for pid := range p.spans {
		out = append(out, pid)
	}
	sort.Ints(out)
	return out
}

// Roots are the pids the tree was built from.
func (p *ProcessTree) Roots() []int { return p.roots }

// String lists the tree's pids ("3945 3946").
func (p *ProcessTree) String() string {
	return fmt.Sprint(p.PIDs())
}

// TaskTimers are the callbacks of the timers a task asks for through
// system calls, on its own behalf: its sleeps and timeouts
// (hrtimer_wakeup: nanosleep(), futex and poll/select/epoll timeouts by
// schedule_hrtimeout(); process_timeout: schedule_timeout(), in
// kernel/time/sleep_timeout.c since 6.13, timer.c before), its POSIX timers
// (posix_timer_fn, kernel/time/posix-timers.c), setitimer()/alarm()
// (it_real_fn, kernel/time/itimer.c), timerfds (timerfd_tmrproc,
// fs/timerfd.c) and alarm clocks (alarmtimer_fired,
// kernel/time/alarmtimer.c). A timer the kernel starts for itself while a
// task runs (the deadline server's dl_task_timer on an enqueue,
// sched_rt_period_timer, a delayed work's delayed_work_timer_fn) is not the
// task's.
var TaskTimers = map[string]bool{
	"hrtimer_wakeup": true, "process_timeout": true, "posix_timer_fn": true, "it_real_fn": true,
	"timerfd_tmrproc": true, "alarmtimer_fired": true,
}

// Owns reports whether the timer start e (hrtimer_start, timer_start)
// makes the timer one of the tree's: a timer a task asks for (TaskTimers)
// started in task context by one of the tree's tasks. A start in task
// context is the running task's; in a hard or soft interrupt the task
// column is whatever task was interrupted, which says nothing of the
// timer's owner: known is false there, and for an event that is no start.
// A line without a flags column counts as task context.
func (p *ProcessTree) Owns(e *traceimport.Event) (owned, known bool) {
	if e.Kind != traceimport.HRStart && e.Kind != traceimport.TimerStart || e.Context == traceimport.ContextIRQ {
		return false, false
	}
	return TaskTimers[e.Function] && p.Member(e.PID, e.Time), true
}

// Without is the tree less the tasks pids themselves (what they fork stays
// the tree's): tasks the model runs no copy of, such as cyclictest's main
// thread, whose measuring threads the model runs.
func (p *ProcessTree) Without(pids ...int) *ProcessTree {
	if p == nil {
		return nil
	}
	q := &ProcessTree{roots: p.roots, spans: map[int][]span{}, outside: p.outside}
	for pid, s := range p.spans {
		q.spans[pid] = s
	}
	for _, pid := range pids {
		delete(q.spans, pid)
	}
	return q
}

// TaskDead reports whether a sched_switch prev_state is a task's final
// switch: X (EXIT_DEAD) or Z (EXIT_ZOMBIE), or the TASK_DEAD values 64 of
// 3.x and 128 of 4.14+ that LTTng prints as numbers.
func TaskDead(prevState string) bool {
	switch prevState {
	case "X", "Z", "x", "64", "128":
		return true
	}
	return false
}

// NewProcessTree reads a capture and returns the tree of the root pids.
// An ftrace reader is switched to decoding sched_process_fork and
// sched_process_exit (FtraceReader.DecodeProcesses); a capture without
// them (or babeltrace text) gives the roots, and the threads the tgid
// column shows, only.
//
// The rules, in capture order:
//   - a root is the tree's from the start of the capture, or from its own
//     fork when the capture has it (a task with that pid before it is
//     another one);
//   - sched_process_fork from one of the tree's tasks (kernel_clone(), for a
//     thread as for a process) makes the child the tree's; a fork of a pid
//     the tree holds from a task outside it is the pid's reuse, which ends
//     the tree's;
//   - a task of the tree that exits (sched_process_exit, in do_exit()) is
//     the tree's up to and including its last switch-out (do_task_dead()):
//     the events between (closing files cancels their timers) are its own;
//     a switch-out with a dead prev_state ends it too when the exit event
//     is missing;
//   - a task first seen with a tgid column naming one of the tree's
//     processes is a thread of it whose creation the capture lacks (one
//     made before the capture began, or a lost event). The column is looked
//     up when the trace is read out (trace_find_tgid() in
//     kernel/trace/trace.c), so it names a pid's last process: it is only
//     trusted for a pid never seen before.
func NewProcessTree(r traceimport.Reader, roots []int) (*ProcessTree, error) {
	if f, ok := r.(*traceimport.File); ok {
		r = f.Reader
	}
	if fr, ok := r.(*traceimport.FtraceReader); ok {
		fr.DecodeProcesses()
	}
	b := newTreeBuilder(roots)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		b.event(e)
	}
	return b.finish(), nil
}

type treeBuilder struct {
	t       *ProcessTree
	isRoot  map[int]bool
	born    map[int]bool  // a root whose own fork was seen
	open    map[int]int64 // the tree's pids now, since when
	exiting map[int]bool  // exited: the next switch-out is the last
	seen    map[int]bool  // every pid shown so far
}

func newTreeBuilder(roots []int) *treeBuilder {
	b := &treeBuilder{
		t:      &ProcessTree{spans: map[int][]span{}, outside: map[int]bool{}},
		isRoot: map[int]bool{}, born: map[int]bool{}, open: map[int]int64{}, exiting: map[int]bool{}, seen: map[int]bool{},
	}
	for _, r := range roots {
		if r > 0 && !b.isRoot[r] {
			b.isRoot[r] = true
			b.t.roots = append(b.t.roots, r)
			b.open[r] = math.MinInt64
		}
	}
	return b
}

func (b *treeBuilder) member(pid int) bool {
	_, ok := b.open[pid]
	return ok
}

func (b *treeBuilder) start(pid int, t int64) {
	if b.member(pid) {
		b.end(pid, t)
	}
	b.open[pid] = t
	delete(b.exiting, pid)
}

func (b *treeBuilder) end(pid int, t int64) {
	from, ok := b.open[pid]
	if !ok {
		return
	}
	delete(b.open, pid)
	delete(b.exiting, pid)
	if t > from {
		b.t.spans[pid] = append(b.t.spans[pid], span{from, t})
	}
}

// show notes that the capture shows pid now.
func (b *treeBuilder) show(pid int) {
	if pid <= 0 {
		return
	}
	if !b.member(pid) {
		b.t.outside[pid] = true
	}
	b.seen[pid] = true
}

func (b *treeBuilder) event(e *traceimport.Event) {
	t := e.Time
	// A thread the tgid column puts in one of the tree's processes.
	if e.PID > 0 && e.TGID > 0 && e.TGID != e.PID && !b.seen[e.PID] && b.member(e.TGID) {
		b.start(e.PID, t)
	}
	switch e.Kind {
	case traceimport.SchedProcessFork:
		parent, child := e.WakePID, e.ChildPID
		if parent <= 0 {
			parent = e.PID
		}
		switch {
		case child <= 0:
		case b.isRoot[child] && !b.born[child]:
			// The root's own fork: what showed its pid before was
			// another task.
			b.born[child] = true
			if b.seen[child] {
				b.t.outside[child] = true
			}
			delete(b.open, child)
			delete(b.t.spans, child)
			b.start(child, t)
		case b.member(parent):
			b.start(child, t)
		case b.member(child):
			b.end(child, t) // the pid given to another task
		}
		b.show(parent)
		b.seen[child] = true
		return
	case traceimport.SchedProcessExit:
		pid := e.WakePID
		if pid <= 0 {
			pid = e.PID
		}
		if b.member(pid) {
			b.exiting[pid] = true
		}
	case traceimport.SchedSwitch:
		b.show(e.PrevPID)
		if b.member(e.PrevPID) && (b.exiting[e.PrevPID] || TaskDead(e.PrevState)) {
			// Its last switch is its own.
			b.end(e.PrevPID, t+1)
		}
		b.show(e.NextPID)
		return
	case traceimport.SchedWakeup, traceimport.SchedWaking, traceimport.SchedWakeupNew:
		b.show(e.WakePID)
	}
	b.show(e.PID)
}

func (b *treeBuilder) finish() *ProcessTree {
	pids := make([]int, 0, len(b.open))
	for pid := range b.open {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	for _, pid := range pids {
		b.end(pid, math.MaxInt64)
	}
	return b.t
}
