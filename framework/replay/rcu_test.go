package replay

import (
	"testing"

	"github.com/tickemu/tickemu/framework/traceimport"
)

// TestRCUGPWait: a timer_list start is the RCU grace-period kthread's wait
// when the kthread (by its own comm, or the task its CPU last switched to
// when the event names none, as babeltrace without procname) starts a
// process_timeout timer, or a timer whose callback is only an address.
func TestRCUGPWait(t *testing.T) {
	run := Running{}
	run.Update(&traceimport.Event{Kind: traceimport.SchedSwitch, CPU: 2, NextComm: "rcu_sched"})
	run.Update(&traceimport.Event{Kind: traceimport.SchedSwitch, CPU: 3, NextComm: "kworker/3:1"})
	for _, c := range []struct {
		name string
		e    traceimport.Event
		want bool
	}{
		{"rcu_preempt, 6.x", traceimport.Event{Kind: traceimport.TimerStart, Comm: "rcu_preempt", Function: "process_timeout"}, true},
		{"rcu_bh, 4.x", traceimport.Event{Kind: traceimport.TimerStart, Comm: "rcu_bh", Function: "process_timeout"}, true},
		{"another kthread", traceimport.Event{Kind: traceimport.TimerStart, Comm: "kcompactd0", Function: "process_timeout"}, false},
		{"another callback", traceimport.Event{Kind: traceimport.TimerStart, Comm: "rcu_preempt", Function: "delayed_work_timer_fn"}, false},
		{"an hrtimer", traceimport.Event{Kind: traceimport.HRStart, Comm: "rcu_preempt", Function: "process_timeout"}, false},
		{"no comm, address, kthread running", traceimport.Event{Kind: traceimport.TimerStart, CPU: 2, Function: "0xc00335d0"}, true},
		{"no comm, address, another task running", traceimport.Event{Kind: traceimport.TimerStart, CPU: 3, Function: "0xc00335d0"}, false},
		{"no comm, nothing known of the CPU", traceimport.Event{Kind: traceimport.TimerStart, CPU: 0, Function: "process_timeout"}, false},
	} {
		if got := RCUGPWait(&c.e, run); got != c.want {
			t.Errorf("%s: RCUGPWait = %v, want %v", c.name, got, c.want)
		}
	}
}
