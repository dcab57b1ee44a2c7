package traceimport

import (
	"io"
	"strings"
	"testing"
)

// Lines of a 6.18 x86 KVM guest's tracefs trace with record-tgid: a fork
// of the command by the capturing process's thread, a thread of the
// command, exits with and without group_dead, events in hard interrupt,
// softirq and task context, and a trace-cmd report line without flags.
const processTrace = `# tracer: nop
#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION
         tickemu-3943    (   3937) [000] .N...  3214.781236: sched_process_fork: comm=tickemu pid=3943 child_comm=tickemu child_pid=3945
      cyclictest-3945    (   3945) [001] .....  3214.783093: sched_process_fork: comm=cyclictest pid=3945 child_comm=cyclictest child_pid=3946
      cyclictest-3946    (   3945) [000] d.h..  3214.780811: hrtimer_expire_entry: hrtimer=00000000ddccb1e8 function=hrtimer_wakeup now=3214780810374
          <idle>-0       (-------) [001] ..s1.  3214.790000: timer_expire_entry: timer=00000000aa function=process_timeout now=4295 baseclk=4295
      cyclictest-3946    (   3945) [000] .....  3215.789310: sched_process_exit: comm=cyclictest pid=3946 prio=120 group_dead=false
         tickemu-3944    (   3944) [001] .....  3214.781020: sched_process_exit: comm=tickemu pid=3944 prio=120
      cyclictest-3946    (   3945) [000] dbh1.  3214.780811: hrtimer_cancel: hrtimer=00000000ddccb1e8
      cyclictest-3945    (   3945) [000] ...b.  3214.780812: hrtimer_cancel: hrtimer=00000000ddccb1e9
      cyclictest-3945  [000]  3214.780813: hrtimer_cancel:       hrtimer=0xffff8880
`

// TestProcessEvents: the tgid column, the context of the flags column,
// and sched_process_fork / sched_process_exit with DecodeProcesses.
func TestProcessEvents(t *testing.T) {
	type got struct {
		Kind                Kind
		PID, TGID           int
		Ctx                 Context
		WakePID, ChildPID   int
		ChildComm, WakeComm string
		GroupDead           bool
	}
	want := []got{
		{SchedProcessFork, 3943, 3937, ContextTask, 3943, 3945, "tickemu", "tickemu", false},
		{SchedProcessFork, 3945, 3945, ContextTask, 3945, 3946, "cyclictest", "cyclictest", false},
		{HRExpireEntry, 3946, 3945, ContextIRQ, 0, 0, "", "", false},
		{TimerExpireEntry, 0, -1, ContextIRQ, 0, 0, "", "", false},
		{SchedProcessExit, 3946, 3945, ContextTask, 3946, 0, "", "cyclictest", false},
		{SchedProcessExit, 3944, 3944, ContextTask, 3944, 0, "", "tickemu", false},
		{HRCancel, 3946, 3945, ContextIRQ, 0, 0, "", "", false},
		{HRCancel, 3945, 3945, ContextTask, 0, 0, "", "", false},
		{HRCancel, 3945, -1, ContextUnknown, 0, 0, "", "", false},
	}
	r := NewFtrace(strings.NewReader(processTrace))
	r.DecodeProcesses()
	for i, w := range want {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		g := got{e.Kind, e.PID, e.TGID, e.Context, e.WakePID, e.ChildPID, e.ChildComm, e.WakeComm, e.GroupDead}
		if g != w {
			t.Errorf("event %d = %+v, want %+v", i, g, w)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last event: %v, want EOF", err)
	}

	// group_dead=true.
	r = NewFtrace(strings.NewReader("cyclictest-3945 (3945) [001] ..... 3215.855937: sched_process_exit: comm=cyclictest pid=3945 prio=120 group_dead=true\n"))
	r.DecodeProcesses()
	if e, err := r.Next(); err != nil || !e.GroupDead || e.WakePID != 3945 {
		t.Errorf("group_dead=true: %+v, %v", e, err)
	}

	// Without DecodeProcesses (nor with DecodeExtra alone) they stay
	// unknown, as replay and calibrate count them.
	r = NewFtrace(strings.NewReader(processTrace))
	r.DecodeExtra()
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		n++
	}
	if u := r.Stats().Unknown; n != 5 || u["sched_process_fork"] != 2 || u["sched_process_exit"] != 2 {
		t.Errorf("plain reader: %d events, unknown %v", n, u)
	}

	// A fork without its child's pid is an error naming the field.
	r = NewFtrace(strings.NewReader("x-1 [000] .... 1.000001: sched_process_fork: comm=x pid=1 child_comm=x\n"))
	r.DecodeProcesses()
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "child_pid") {
		t.Errorf("fork without child_pid: %v", err)
	}
}
