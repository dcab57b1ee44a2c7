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
