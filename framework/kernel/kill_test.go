package kernel_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
)

// TestKill: kill(pid, SIGALRM) from one process to another
// (sys_kill() -> kill_proc_info() -> group_send_sig_info()) wakes the
// target from its nanosleep, which returns EINTR after its handler ran with
// si_code SI_USER (0); the signal_generate event names the target. A kill
// of an exited process is dropped (prepare_signal(): SIGNAL_GROUP_EXIT,
// res=1) and returns 0; of a tgid that never existed, ESRCH.
func TestKill(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			r := newRig(t, era, 2)
			var log []handled
			target := &script{steps: []step{
				do(kernel.Sigaction{Signo: kernel.SIGALRM, Handler: recorder(&log, false, 0)}),
				do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 10 * ms}),
			}}
			tt := r.spawn("target", "target", 1, kernel.SchedOther, 0, target)
			gone := r.spawn("gone", "gone", 1, kernel.SchedOther, 0, &script{})
			sender := &script{steps: []step{
				do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 1 * ms}),
				do(kernel.Kill{Pid: tt.Pid, Signo: kernel.SIGALRM}),
				do(kernel.Kill{Pid: gone.Pid, Signo: kernel.SIGALRM}),
				do(kernel.Kill{Pid: 99999, Signo: kernel.SIGALRM}),
			}}
			r.spawn("sender", "sender", 0, kernel.SchedOther, 0, sender)
			r.run(5 * ms)
			if len(log) != 1 || log[0].info.Signo != kernel.SIGALRM || log[0].info.Code != 0 {
				t.Fatalf("handler runs %+v, want one SIGALRM with si_code SI_USER (0)", log)
			}
			if at := int64(log[0].at); at < 1*ms || at > 2*ms {
				t.Errorf("handler ran at %d ns, want soon after the kill at 1 ms", log[0].at)
			}
			if len(target.results) < 2 || target.results[1].Err != kernel.EINTR {
				t.Errorf("target's nanosleep returned %+v, want EINTR", target.results)
			}
			if len(sender.results) != 4 || sender.results[1].Err != 0 || sender.results[2].Err != 0 || sender.results[3].Err != kernel.ESRCH {
				t.Errorf("kill results %+v, want 0, 0 (exited) and ESRCH", sender.results)
			}
			if n := r.grepCount(`signal_generate: sig=14 errno=0 code=0 comm=target pid=\d+ grp=1 res=0`); n != 1 {
				t.Errorf("%d signal_generate events for the target, want 1", n)
			}
			if n := r.grepCount(`signal_generate: sig=14 errno=0 code=0 comm=gone pid=\d+ grp=1 res=1`); n != 1 {
				t.Errorf("%d ignored signal_generate events for the exited process, want 1", n)
			}
		})
	}
}
