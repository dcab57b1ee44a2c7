package replay

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/traceimport"
)

// tl is one tracefs line with the record-tgid column at second s (us).
func tl(comm string, pid, tgid int, s float64, event string) string {
	tg := "-------"
	if tgid >= 0 {
		tg = fmt.Sprintf("%7d", tgid)
	}
	return fmt.Sprintf("%16s-%-7d (%s) [000] ..... %12.6f: %s\n", comm, pid, tg, s, event)
}

func fork(parent, child int) string {
	return fmt.Sprintf("sched_process_fork: comm=p pid=%d child_comm=c child_pid=%d", parent, child)
}

func exit(pid int) string {
	return fmt.Sprintf("sched_process_exit: comm=c pid=%d prio=120 group_dead=true", pid)
}

func switchOut(prev int, state string) string {
	return fmt.Sprintf("sched_switch: prev_comm=c prev_pid=%d prev_prio=120 prev_state=%s ==> next_comm=swapper/0 next_pid=0 next_prio=120", prev, state)
}

func switchIn(next int) string {
	return fmt.Sprintf("sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=c next_pid=%d next_prio=120", next)
}

const sleep = "hrtimer_start: hrtimer=00000000aaaa0001 function=hrtimer_wakeup expires=10000000000 softexpires=10000000000 mode=ABS"

// TestProcessTree: the tree of a root pid on small traces: fork chains,
// threads (forked, and first seen by their tgid), exits and pid reuse, a
// root whose own fork is in the capture, and one without fork events.
func TestProcessTree(t *testing.T) {
	type at struct {
		pid  int
		s    float64
		want bool
	}
	for _, tc := range []struct {
		name     string
		trace    []string
		roots    []int
		pids     []int
		member   []at
		entirely map[int]bool
	}{
		{
			name: "fork chain",
			trace: []string{
				tl("a", 100, 100, 1, sleep),
				tl("a", 100, 100, 2, fork(100, 101)),
				tl("b", 101, 101, 3, fork(101, 102)),
				tl("x", 200, 200, 4, fork(200, 201)),
				tl("c", 102, 102, 5, sleep),
			},
			roots:    []int{100},
			pids:     []int{100, 101, 102},
			member:   []at{{100, 0.5, true}, {101, 1.5, false}, {101, 2, true}, {102, 2.5, false}, {102, 5, true}, {200, 4, false}, {201, 5, false}},
			entirely: map[int]bool{100: true, 101: true, 102: true, 200: false, 201: false},
		},
		{
			name: "threads",
			trace: []string{
				tl("a", 100, 100, 1, fork(100, 110)), // a thread: tgid 100
				tl("t", 110, 100, 2, fork(110, 111)), // a thread's thread
				tl("t", 120, 100, 3, sleep),          // created before the capture
				tl("u", 130, 300, 4, sleep),          // another process's
				tl("u", 130, 100, 5, sleep),          // the column names its last process: not trusted
				tl("v", 140, 300, 6, fork(140, 141)), // outside
				tl("t", 111, 100, 7, switchOut(111, "S")),
			},
			roots:    []int{100},
			pids:     []int{100, 110, 111, 120},
			member:   []at{{110, 1, true}, {111, 7, true}, {120, 2.9, false}, {120, 3, true}, {130, 5, false}, {141, 7, false}},
			entirely: map[int]bool{110: true, 111: true, 120: true, 130: false},
		},
		{
			name: "exit then reuse",
			trace: []string{
				tl("a", 100, 100, 1, fork(100, 101)),
				tl("b", 101, 101, 2, exit(101)),
				tl("b", 101, 101, 3, "hrtimer_cancel: hrtimer=00000000aaaa0002"), // closing a timerfd in do_exit()
				tl("b", 101, 101, 4, switchOut(101, "R")),                        // the switch after the exit is its last
				tl("s", 400, 400, 5, fork(400, 101)),                             // pid 101 given to another process
				tl("n", 101, 101, 6, sleep),
			},
			roots:    []int{100},
			pids:     []int{100, 101},
			member:   []at{{101, 2, true}, {101, 3, true}, {101, 4, true}, {101, 4.5, false}, {101, 6, false}, {100, 6, true}},
			entirely: map[int]bool{100: true, 101: false},
		},
		{
			name: "reuse, exit event lost",
			trace: []string{
				tl("a", 100, 100, 1, fork(100, 101)),
				tl("b", 101, 101, 2, switchOut(101, "X")), // dead
				tl("s", 400, 400, 5, fork(400, 101)),
				tl("n", 101, 101, 6, sleep),
			},
			roots:    []int{100},
			pids:     []int{100, 101},
			member:   []at{{101, 2, true}, {101, 3, false}, {101, 6, false}},
			entirely: map[int]bool{101: false},
		},
		{
			name: "reuse, no exit at all",
			trace: []string{
				tl("a", 100, 100, 1, fork(100, 101)),
				tl("s", 400, 400, 5, fork(400, 101)),
			},
			roots:  []int{100},
			pids:   []int{100, 101},
			member: []at{{101, 4, true}, {101, 5, false}},
		},
		{
			name: "the tree takes a background pid",
			trace: []string{
				tl("k", 101, 101, 1, sleep),
				tl("k", 101, 101, 2, switchOut(101, "X")),
				tl("a", 100, 100, 3, fork(100, 101)),
				tl("b", 101, 101, 4, sleep),
			},
			roots:    []int{100},
			pids:     []int{100, 101},
			member:   []at{{101, 1, false}, {101, 3, true}, {101, 4, true}},
			entirely: map[int]bool{101: false},
		},
		{
			name: "the root's own fork",
			trace: []string{
				tl("old", 100, 100, 1, sleep),                 // another task with the pid
				tl("old", 100, 100, 1.5, switchOut(100, "X")), // it exits
				tl("tickemu", 50, 40, 2, fork(50, 100)),       // the capture starts the command
				tl("a", 100, 100, 3, switchIn(100)),
			},
			roots:    []int{100},
			pids:     []int{100},
			member:   []at{{100, 1, false}, {100, 1.9, false}, {100, 2, true}, {100, 3, true}, {50, 3, false}, {40, 3, false}},
			entirely: map[int]bool{100: false, 50: false},
		},
		{
			name: "no fork events",
			trace: []string{
				tl("a", 100, 100, 1, sleep),
				tl("t", 101, 100, 2, sleep), // a thread by its tgid
				tl("a", 100, 100, 3, switchOut(100, "S")),
			},
			roots:    []int{100},
			pids:     []int{100, 101},
			member:   []at{{100, 0, true}, {100, 9, true}, {101, 2, true}},
			entirely: map[int]bool{100: true, 101: true},
		},
		{
			name:  "two roots",
			trace: []string{tl("a", 100, 100, 1, fork(100, 101)), tl("b", 200, 200, 1, fork(200, 201)), tl("c", 300, 300, 1, fork(300, 301))},
			roots: []int{100, 200, 0, -1, 100},
			pids:  []int{100, 101, 200, 201},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := "# tracer: nop\n" + strings.Join(tc.trace, "")
			p, err := NewProcessTree(traceimport.NewFtrace(strings.NewReader(tr)), tc.roots)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.PIDs(); !reflect.DeepEqual(got, tc.pids) {
				t.Errorf("pids %v, want %v", got, tc.pids)
			}
			for _, c := range tc.member {
				if got := p.Member(c.pid, int64(c.s*1e9)); got != c.want {
					t.Errorf("Member(%d, %gs) = %v, want %v", c.pid, c.s, got, c.want)
				}
			}
			for pid, want := range tc.entirely {
				if got := p.Entirely(pid); got != want {
					t.Errorf("Entirely(%d) = %v, want %v", pid, got, want)
				}
			}
			// The same trace gives the same tree.
			again, err := NewProcessTree(traceimport.NewFtrace(strings.NewReader(tr)), tc.roots)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, again) {
				t.Errorf("a second read differs")
			}
		})
	}
}

// TestProcessTreeBundle: the committed suite bundle's workload is
// cyclictest's process and its measuring thread (bundle.json: pid 3945);
// the capturing tickemu (capture_pid 3937) and the helper it forked and
// reaped before the command (3944) are not.
func TestProcessTreeBundle(t *testing.T) {
	f, err := traceimport.Open("../../validation/captures/cyclictest-t1-i1000.tcap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := f.Manifest
	if m == nil || m.PID != 3945 || m.CapturePID != 3937 {
		t.Fatalf("manifest pids %+v", m)
	}
	p, err := NewProcessTree(f, []int{m.PID})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.PIDs(), []int{3945, 3946}; !reflect.DeepEqual(got, want) {
		t.Errorf("workload pids %v, want %v", got, want)
	}
	for _, pid := range []int{3937, 3938, 3943, 3944} {
		if len(p.spans[pid]) > 0 {
			t.Errorf("pid %d is in the workload's tree", pid)
		}
	}
}

// TestOwns: a timer a task asks for, started in task context by one of
// the tree's tasks, is the tree's; the kernel's own timers started while
// it runs are not; a start in an interrupt says nothing; Without drops a
// task but not what it forked.
func TestOwns(t *testing.T) {
	tr := "# tracer: nop\n" +
		tl("a", 100, 100, 1, fork(100, 101)) +
		tl("b", 200, 200, 2, "sched_switch: prev_comm=b prev_pid=200 prev_prio=120 prev_state=S ==> next_comm=a next_pid=101 next_prio=120")
	p, err := NewProcessTree(traceimport.NewFtrace(strings.NewReader(tr)), []int{100})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line         string
		owned, known bool
	}{
		{"      a-101 (100) [000] d..1. 3.000000: " + sleep, true, true},
		{"      a-101 (100) [000] d.h1. 3.000000: " + sleep, false, false}, // in an interrupt
		{"      b-200 (200) [000] d..1. 3.000000: " + sleep, false, true},
		{"      a-101 (100) [000] d..1. 3.000000: hrtimer_start: hrtimer=00000000aaaa0003 function=dl_task_timer expires=1 softexpires=1 mode=ABS|HARD", false, true},
		{"      a-101 (100) [000] ..... 3.000000: timer_start: timer=00000000aaaa0004 function=process_timeout expires=4295 [timeout=5] cpu=0 idx=5 flags=", true, true},
		{"      a-101 (100) [000] ..s1. 3.000000: timer_start: timer=00000000aaaa0005 function=process_timeout expires=4295 [timeout=5] cpu=0 idx=5 flags=", false, false},
		{"      a-101 (100) [000] d..1. 3.000000: hrtimer_cancel: hrtimer=00000000aaaa0001", false, false},
		{"      a-101 [000] 3.000000: " + sleep, true, true}, // no flags column: task context
	} {
		r := traceimport.NewFtrace(strings.NewReader(tc.line + "\n"))
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if owned, known := p.Owns(e); owned != tc.owned || known != tc.known {
			t.Errorf("%s: Owns = %v, %v; want %v, %v", tc.line, owned, known, tc.owned, tc.known)
		}
	}
	q := p.Without(100)
	if q.Member(100, 3e9) || !q.Member(101, 3e9) || !p.Member(100, 3e9) || q.Entirely(100) {
		t.Errorf("Without(100): members %v (the tree's %v)", q.PIDs(), p.PIDs())
	}
}
