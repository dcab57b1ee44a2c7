package workload_test

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// TestStressNgHrtimersChildren: stress-ng --hrtimers' children, forked by
// the SCHED_OTHER instance, make themselves SCHED_RR 49 (kernel prio 50, as
// a 6.18 capture shows them) and are not pinned, so one instance's 8 children run on every CPU of the
// machine; pinned instances keep theirs on their CPU.
func TestStressNgHrtimersChildren(t *testing.T) {
	re := regexp.MustCompile(`\[(\d+)\] .*sched_switch: .*next_comm=stress-ng-hrtimers next_pid=\d+ next_prio=(\d+)`)
	for _, c := range []struct {
		name, cpus string
		want       map[string]bool
	}{
		{"unpinned", "", map[string]bool{"000": true, "001": true}},
		{"pinned", `cpus = "1"`, map[string]bool{"001": true}},
	} {
		src := `
machine {
  cpus = 2
}
run {
  duration = "5ms"
}
workload "stress_ng_hrtimers" "h" {
  ` + c.cpus + `
}`
		var tr bytes.Buffer
		simtest.Run(t, src, config.Options{}, &tr)
		got := map[string]bool{}
		instance := false
		for _, m := range re.FindAllStringSubmatch(tr.String(), -1) {
			switch m[2] {
			case "50":
				got[m[1]] = true
			case "120":
				instance = true // the instance that forks them, SCHED_OTHER
			default:
				t.Fatalf("%s: a task runs at prio %s, want 50 (a child: SCHED_RR 49) or 120 (the instance)", c.name, m[2])
			}
		}
		if !instance {
			t.Errorf("%s: the instance (prio 120) never ran", c.name)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: children ran on CPUs %v, want %v", c.name, got, c.want)
		}
		for cpu := range c.want {
			if !got[cpu] {
				t.Errorf("%s: children ran on CPUs %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// TestStressNgHrtimersOps: with ops (--hrtimers-ops 8000: 1000 a child), the
// first child to reach its 1000 handler runs disarms its timer and sends
// itself SIGALRM, then its instance; the instance sends SIGALRM to every
// child it forked and the children and the instance exit
// (stress_hrtimers() of V0.15.06). The counters sum to at least the first
// child's 50 and stay under 400, and the run stops long before its end.
func TestStressNgHrtimersOps(t *testing.T) {
	src := `
machine {
  cpus = 2
}
run {
  duration = "200ms"
}
workload "stress_ng_hrtimers" "h" {
  ops = 8000
}`
	var tr bytes.Buffer
	r := simtest.Run(t, src, config.Options{}, &tr)
	ops := simtest.Metric(t, r, "StressNgHrtimers", "bogo-ops")
	if ops < 1000 || ops >= 8000 {
		t.Errorf("bogo ops = %v, want the first child's 1000 and the others' counts at the stop, under 8000", ops)
	}
	if per := simtest.Metric(t, r, "StressNgHrtimers", "bogo-ops/s"); per <= ops/0.2 {
		t.Errorf("bogo ops/s = %v with %v ops: the instance's time should end at its stop, well before the 200 ms run", per, ops)
	}
	kills := regexp.MustCompile(`signal_generate: sig=14 errno=0 code=0 comm=stress-ng-hrtimers`).FindAllString(tr.String(), -1)
	forks := regexp.MustCompile(`sched_wakeup_new: comm=stress-ng-hrtimers`).FindAllString(tr.String(), -1)
	exits := regexp.MustCompile(`sched_switch: prev_comm=stress-ng-hrtimers prev_pid=\d+ prev_prio=\d+ prev_state=X`).FindAllString(tr.String(), -1)
	if len(forks) == 0 || len(kills) < 2+len(forks) {
		t.Errorf("%d forks and %d kill() SIGALRMs, want a child's two and the instance's one per child", len(forks), len(kills))
	}
	if len(exits) != len(forks)+1 {
		t.Errorf("%d tasks exited, want the %d children and the instance", len(exits), len(forks))
	}
}
