package workload_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/internal/simtest"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// twoSleepers writes a capture (tracefs text with record-tgid) of two
// processes sleeping 0.8 ms every 1 ms for n periods: app (pid 500, forked
// by the capturing process 50, and its thread 501, which sleeps on CPU 1)
// and bg (pid 600, on CPU 0). app also holds a PM QoS request, starts a
// timer_list timer in task context (its own, a schedule_timeout()), the
// kernel starts the deadline server's timer while app runs (not app's),
// and a softirq that interrupts app starts another (the kernel's).
func twoSleepers(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:2\n#\n")
	const offset = 2_002_500 // CLOCK_MONOTONIC - trace clock, ns
	line := func(task string, tgid, cpu int, flags string, ns int64, ev string, args ...any) {
		tg := "-------"
		if tgid >= 0 {
			tg = fmt.Sprintf("%7d", tgid)
		}
		fmt.Fprintf(&b, "%16s (%s) [%03d] %s %6d.%06d: %s\n", task, tg, cpu, flags, ns/1e9, ns%1e9/1e3, fmt.Sprintf(ev, args...))
	}
	base := int64(20e9) // stamps of one width: sorted as text
	line("tickemu-50", 40, 1, ".....", base-20_000, "sched_process_fork: comm=tickemu pid=50 child_comm=tickemu child_pid=500")
	line("app-500", 500, 1, ".....", base-10_000, "sched_process_fork: comm=app pid=500 child_comm=app child_pid=501")
	line("app-500", 500, 1, ".....", base-5_000, "pm_qos_add_request: CPU_DMA_LATENCY value=0")
	line("app-500", 500, 1, ".....", base-5_000, "pm_qos_update_target: action=ADD_REQ prev_value=2000000000 curr_value=0")
	line("app-501", 500, 1, ".....", base-4_000, "timer_start: timer=ffff888004b0d100 function=process_timeout expires=4294667306 [timeout=5] bucket_expiry=4294667307 cpu=1 idx=5 flags=")
	line("app-501", 500, 1, "d..1.", base-3_500, "hrtimer_start: hrtimer=ffff88807d41d000 function=dl_task_timer expires=%d softexpires=%d mode=ABS|HARD", base+5_000_000+offset, base+5_000_000+offset)
	line("app-501", 500, 1, "..s1.", base-3_000, "timer_start: timer=ffff888004b0d200 function=blk_stat_timer_fn expires=4294667310 [timeout=9] bucket_expiry=4294667310 cpu=1 idx=9 flags=")
	sleepers := []struct {
		task string
		pid  int
		tgid int
		cpu  int
		ptr  string
		at   int64
	}{{"app-501", 501, 500, 1, "ffffc90000a3fe70", 200_000}, {"bg-600", 600, 600, 0, "ffffc90000b4fe70", 300_000}}
	for i := 0; i < n; i++ {
		p := base + int64(i)*1_000_000
		for cpu, ptr := range []string{"ffff88807d41c418", "ffff88807d51c418"} {
			line("<idle>-0", -1, cpu, "d.h1.", p+int64(cpu)*3000, "hrtimer_expire_entry: hrtimer=%s function=tick_sched_timer now=%d", ptr, p+int64(cpu)*3000+offset)
		}
		for _, s := range sleepers {
			start := p + s.at
			exp := start + 800_000 + offset
			line(s.task, s.tgid, s.cpu, "d..1.", start, "hrtimer_start: hrtimer=%s function=hrtimer_wakeup expires=%d softexpires=%d mode=ABS", s.ptr, exp, exp)
			line(s.task, s.tgid, s.cpu, "d..2.", start+5_000, "sched_switch: prev_comm=%s prev_pid=%d prev_prio=120 prev_state=S ==> next_comm=swapper/%d next_pid=0 next_prio=120", s.task[:strings.IndexByte(s.task, '-')], s.pid, s.cpu)
		}
		for _, s := range sleepers {
			wake := p + s.at + 800_000 + 4_000
			line("<idle>-0", -1, s.cpu, "d.h1.", wake, "hrtimer_expire_entry: hrtimer=%s function=hrtimer_wakeup now=%d", s.ptr, wake+offset)
			line("<idle>-0", -1, s.cpu, "d..2.", wake+3_000, "sched_switch: prev_comm=swapper/%d prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=%s next_pid=%d next_prio=120", s.cpu, s.task[:strings.IndexByte(s.task, '-')], s.pid)
		}
	}
	// The trace is in time order (the two CPUs' events interleaved).
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var head, body []string
	for _, l := range lines {
		if strings.HasPrefix(l, "#") {
			head = append(head, l)
		} else {
			body = append(body, l)
		}
	}
	stamp := func(l string) string { return strings.Fields(l[strings.IndexByte(l, ']')+1:])[1] }
	for i := 1; i < len(body); i++ { // insertion sort, stable
		for j := i; j > 0 && stamp(body[j]) < stamp(body[j-1]); j-- {
			body[j], body[j-1] = body[j-1], body[j]
		}
	}
	path := filepath.Join(t.TempDir(), "two-sleepers.txt")
	if err := os.WriteFile(path, []byte(strings.Join(append(head, body...), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayExclude: with exclude naming app's pid, only bg's sleeper is
// replayed: app's sleeps, its own timer and its PM QoS request are left
// out, the kernel's timers started while app ran (in task context and in
// a softirq) are kept; without it all are. The same run twice gives the same output.
func TestReplayExclude(t *testing.T) {
	const n = 15
	path := twoSleepers(t, n)
	// c1 counts the idle entries that chose C1: none while app's PM QoS
	// request of 0 is held (C1's exit latency is 2 us).
	var c1 map[string]int64
	run := func(exclude string) (string, float64, float64, string) {
		src := fmt.Sprintf(`
machine {
  cpus = 2
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "4us"
  }
}
governor {
  plugin = "menu"
}
run {
  duration = "20ms"
}
workload "replay" "w" {
  capture = %q
  exclude = %q
}`, path, exclude)
		var tr bytes.Buffer
		r := simtest.Run(t, src, config.Options{}, &tr)
		wakeups := simtest.Metric(t, r, "Replay", "sleeper-wakeups")
		ops := simtest.Metric(t, r, "Replay", "timer-ops")
		for _, c := range r.Kernel.Counters {
			if c.Name == "idle_enter:C1" {
				c1[exclude] += c.Value
			}
		}
		return tr.String(), wakeups, ops, strings.Join(r.Workloads[0].Text, "\n")
	}
	c1 = map[string]int64{}
	all, wakeAll, opsAll, _ := run("")
	excl, wakeExcl, opsExcl, text := run("500")
	if wakeAll != 2*n || wakeExcl != n {
		t.Errorf("sleeper wakeups: %v without exclude, %v with; want %d and %d", wakeAll, wakeExcl, 2*n, n)
	}
	// Timer operations: each sleeper's n starts, the two timer_list starts,
	// the deadline server's timer (the kernel's own, started while app ran).
	if opsAll != 2*n+3 || opsExcl != n+2 {
		t.Errorf("timer operations: %v without exclude, %v with; want %d and %d", opsAll, opsExcl, 2*n+3, n+2)
	}
	if !strings.Contains(text, fmt.Sprintf(`left out (exclude = "500": pids [500 501]): %d timer operations, 1 tasks, 1 PM QoS requests`, n+1)) {
		t.Errorf("report:\n%s", text)
	}
	for _, c := range []struct {
		what      string
		all, excl bool
	}{
		{"function=process_timeout", true, false},
		{"function=blk_stat_timer_fn", true, true},
		{"function=dl_task_timer", true, true},
		{"app-", true, false},
		{"bg-", true, true},
	} {
		if got := strings.Contains(all, c.what); got != c.all {
			t.Errorf("without exclude, %q in the model's trace: %v, want %v", c.what, got, c.all)
		}
		if got := strings.Contains(excl, c.what); got != c.excl {
			t.Errorf("with exclude, %q in the model's trace: %v, want %v", c.what, got, c.excl)
		}
	}
	if c1[""] != 0 || c1["500"] == 0 {
		t.Errorf("C1 entries: %d with app's PM QoS request replayed, %d without; want 0 and some", c1[""], c1["500"])
	}
	if again, _, _, _ := run("500"); again != excl {
		t.Error("two runs of the same config give different traces")
	}
	// "workload" needs a bundle; a word that is not a pid is refused.
	for _, bad := range []string{"workload", "app", "0"} {
		src := fmt.Sprintf("machine {\n  cpus = 2\n}\nrun {\n  duration = \"1ms\"\n}\nworkload \"replay\" \"w\" {\n  capture = %q\n  exclude = %q\n}\n", path, bad)
		spec, diags := config.LoadBytes("x.hcl", []byte(src), config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		_, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
		if err == nil || !strings.Contains(err.Error(), "exclude") {
			t.Errorf("exclude = %q: %v (want an error naming the attribute)", bad, err)
		}
	}
}

// TestReplayEnd: the capture ends with both sleepers switched in (their
// last wakeup) and no switch-out; past its end they stop running, so a run
// longer than the capture (15 ms of a 5 ms capture) leaves the CPUs idle
// instead of computing for them to the end.
func TestReplayEnd(t *testing.T) {
	path := twoSleepers(t, 5)
	r := simtest.Run(t, fmt.Sprintf(`
machine {
  cpus = 2
}
run {
  duration = "20ms"
}
workload "replay" "w" {
  capture = %q
}`, path), config.Options{}, nil)
	var task int64
	for _, c := range r.Kernel.CPUs {
		task += c.TaskNS
	}
	if task > 2_000_000 {
		t.Errorf("tasks ran %d ns in 20 ms of a 5 ms capture whose tasks sleep 0.8 ms of each 1 ms; want under 2 ms", task)
	}
}
