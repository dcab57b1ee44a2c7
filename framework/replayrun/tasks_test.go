package replayrun_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/replay"
	"github.com/tickemu/tickemu/framework/replayrun"
	"github.com/tickemu/tickemu/framework/workload"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// lineAs adds event ev at us microseconds in the context of task comm-pid.
func (c *oneCPUCapture) lineAs(us int64, comm string, pid int, ev, fields string) {
	c.lines = append(c.lines, fmt.Sprintf("%16s-%-7d [000] d..2.   %d.%06d: %s: %s\n", comm, pid, us/1e6, us%1e6, ev, fields))
}

// sleeperCapture is a one-CPU capture of a SCHED_OTHER task (prio 120,
// 50 us of slack) sleeping 1.5 ms periods from 2 ms on, each expiry 10 us
// late; before it, at 1 ms, a task "hog" is switched in whose switch-out
// the capture lacks (its own events were filtered out or lost): the CPU
// enters idle 20 us later. With qos, cyclictest's PM QoS request of 0
// opens the capture.
func sleeperCapture(t *testing.T, qos bool) string {
	var c oneCPUCapture
	if qos {
		c.lineAs(500, "cyclictest", 300, "pm_qos_add_request", "CPU_DMA_LATENCY value=0")
		c.lineAs(500, "cyclictest", 300, "pm_qos_update_target", "action=ADD_REQ prev_value=2000000000 curr_value=0")
	}
	c.lineAs(1000, "<idle>", 0, "sched_switch", "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hog next_pid=200 next_prio=120")
	c.lineAs(1020, "<idle>", 0, "cpu_idle", "state=1 cpu_id=0")
	for i := int64(0); i < 200; i++ {
		at := 2000 + 1500*i
		if i > 0 {
			c.lineAs(at, "<idle>", 0, "hrtimer_expire_entry", fmt.Sprintf("hrtimer=00000000aaaa0001 function=hrtimer_wakeup now=%d", at*1000))
			c.lineAs(at+1, "<idle>", 0, "sched_waking", "comm=cyclictest pid=300 prio=120 target_cpu=000")
			c.lineAs(at+2, "<idle>", 0, "sched_wakeup", "comm=cyclictest pid=300 prio=120 target_cpu=000")
		}
		c.lineAs(at+3, "<idle>", 0, "sched_switch", "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid=300 next_prio=120")
		exp := (at + 1500 - 10) * 1000
		c.lineAs(at+5, "cyclictest", 300, "hrtimer_start", fmt.Sprintf("hrtimer=00000000aaaa0001 function=hrtimer_wakeup expires=%d softexpires=%d mode=ABS was_armed=0", exp, exp-50_000))
		c.lineAs(at+6, "cyclictest", 300, "sched_switch", "prev_comm=cyclictest prev_pid=300 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120")
	}
	return c.write(t, "sleeper.txt")
}

// replayWith replays path on the machine of cfg (HCL, "" for the defaults).
func replayWith(t *testing.T, path, cfg string) *replayrun.Outcome {
	t.Helper()
	cfgFile := ""
	if cfg != "" {
		cfgFile = filepath.Join(t.TempDir(), "machine.hcl")
		if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := workload.ScanCapture(path)
	if err != nil {
		t.Fatal(err)
	}
	src, name, err := replayrun.Config(cfgFile, path, cp)
	if err != nil {
		t.Fatal(err)
	}
	spec, diags := config.LoadBytes(name, src, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	out, err := replayrun.Run(path, cp, spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func benchMetric(o *replayrun.Outcome, name string) float64 {
	for _, w := range o.Result.Workloads {
		for _, b := range w.Bench {
			for _, m := range b.Metrics {
				if b.Name == "Replay" && m.Name == name {
					return m.Value
				}
			}
		}
	}
	return -1
}

func row(o *replayrun.Outcome, name string) replay.Row {
	for _, r := range replayTable(o) {
		if r.Name == name {
			return r
		}
	}
	return replay.Row{Name: name, Capture: -1, Model: -1}
}

// TestMissingSwitchOut replays a capture whose task "hog" is switched in
// and never out (its switch-out is not in the capture) before the CPU goes
// idle: the task column of every later event and the idle entry say it
// is not running, so the model does not run it for the rest of the
// capture, and the SCHED_OTHER sleeper, which fair tasks do not preempt on
// wakeup, wakes at its own expiry every time instead of at the next tick
// the hog yields at (before: 60% of the wakeups lost, latency in ms).
func TestMissingSwitchOut(t *testing.T) {
	out := replayWith(t, sleeperCapture(t, false), "")
	// The last sleep the model starts may fall just past the scored span.
	starts := row(out, "hrtimer_wakeup starts")
	if starts.Capture != 200 || starts.Model < starts.Capture-1 {
		t.Errorf("hrtimer_wakeup starts: capture %d, model %d, want 200 and 199 or 200", starts.Capture, starts.Model)
	}
	if p99 := benchMetric(out, "wake-latency-p99-ns"); p99 < 0 || p99 > 20_000 {
		t.Errorf("sleeper wakeup latency p99 %v ns, want at most 20 us", p99)
	}
}

// haltpoll is a machine with the polling state and one 1 us idle state.
const haltpoll = `
machine {
  nohz    = "idle"
  highres = true
  idle_state "haltpoll" {
    exit_latency     = "1us"
    target_residency = "1us"
  }
}
governor {
  plugin = "menu"
}
`

// TestCapturedPMQoS replays the sleeper capture with and without
// cyclictest's PM QoS request traced (pm_qos_add_request and
// pm_qos_update_target, curr_value=0): with it the model holds the
// constraint from that point, every idle entry polls with the tick kept,
// and no tick is stopped; without it the CPU idles in the 1 us state with
// the tick stopped.
func TestCapturedPMQoS(t *testing.T) {
	with := replayWith(t, sleeperCapture(t, true), haltpoll)
	if st := row(with, "tick stops"); st.Model != 0 {
		t.Errorf("with the PM QoS request: model tick stops %d, want 0", st.Model)
	}
	without := replayWith(t, sleeperCapture(t, false), haltpoll)
	if st := row(without, "tick stops"); st.Model < 100 {
		t.Errorf("without a PM QoS request: model tick stops %d, want one per sleep (about 200)", st.Model)
	}
}

// TestEarlyWake replays a task whose sleeps end early: each 1 ms
// hrtimer_wakeup sleep is cancelled 200 us in (a futex wait woken by
// another task) and the next one starts 10 us later. The model's task
// waits on a timer of the replay's own, which the capture's cancel ends,
// so every sleep is made and cancelled as in the capture; a
// clock_nanosleep() would sleep on to its expiry and lose four of every
// five starts.
func TestEarlyWake(t *testing.T) {
	var c oneCPUCapture
	const n = 100
	for i := int64(0); i < n; i++ {
		at := 2000 + 210*i
		exp := (at + 1000) * 1000
		c.lineAs(at, "worker", 400, "hrtimer_start", fmt.Sprintf("hrtimer=00000000bbbb0001 function=hrtimer_wakeup expires=%d softexpires=%d mode=ABS was_armed=0", exp, exp-50_000))
		c.lineAs(at+1, "worker", 400, "sched_switch", "prev_comm=worker prev_pid=400 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120")
		c.lineAs(at+199, "<idle>", 0, "sched_waking", "comm=worker pid=400 prio=120 target_cpu=000")
		c.lineAs(at+200, "<idle>", 0, "sched_switch", "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=worker next_pid=400 next_prio=120")
		c.lineAs(at+202, "worker", 400, "hrtimer_cancel", "hrtimer=00000000bbbb0001")
	}
	out := replayWith(t, c.write(t, "early.txt"), "")
	starts, cancels := row(out, "hrtimer_wakeup starts"), row(out, "hrtimer_wakeup cancels")
	if starts.Capture != n || starts.Model < n-1 {
		t.Errorf("hrtimer_wakeup starts: capture %d, model %d, want %d and %d or %d", starts.Capture, starts.Model, n, n-1, n)
	}
	if cancels.Capture != n || cancels.Model < n-1 {
		t.Errorf("hrtimer_wakeup cancels: capture %d, model %d, want %d and %d or %d", cancels.Capture, cancels.Model, n, n-1, n)
	}
}
