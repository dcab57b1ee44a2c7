package workload_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// rcuGPCapture writes a capture (tracefs text, HZ 1000) of an idle 2-CPU
// machine whose RCU grace-period kthread (rcu_preempt, pid 15) waits for
// its force-quiescent-state scans on CPU 0 with schedule_timeout(3): one
// wait armed before the capture began (its first event is its expiry),
// then a wait that expires, one cancelled (the grace period ended first)
// and one more that expires. On CPU 1 kcompactd sleeps 25 jiffies
// (schedule_timeout(), another process_timeout timer), and RCU_SOFTIRQ is
// raised on CPU 1 a tick after the last grace period's wait (the CPU
// noticing its end) and on CPU 0 long after it (callbacks).
func rcuGPCapture(t *testing.T) string {
	type ev struct {
		ns   int64
		line string
	}
	var evs []ev
	const base = int64(30e9)
	const j0 = int64(4294967296 - 300_000) // jiffies at base (HZ 1000)
	jif := func(ns int64) int64 { return j0 + ns/1_000_000 }
	add := func(task string, tgid, cpu int, flags string, ns int64, f string, args ...any) {
		tg := "-------"
		if tgid >= 0 {
			tg = fmt.Sprintf("%7d", tgid)
		}
		t := base + ns
		evs = append(evs, ev{ns, fmt.Sprintf("%16s (%s) [%03d] %s %6d.%06d: %s", task, tg, cpu, flags, t/1e9, t%1e9/1e3, fmt.Sprintf(f, args...))})
	}
	const offset = 1_500_000 // CLOCK_MONOTONIC - trace clock
	for i := int64(0); i < 40; i++ {
		for cpu, ptr := range []string{"ffff88807d41c418", "ffff88807d51c418"} {
			at := i*1_000_000 + int64(cpu)*2_000
			add("<idle>-0", -1, cpu, "d.h1.", at, "hrtimer_expire_entry: hrtimer=%s function=tick_sched_timer now=%d", ptr, base+at+offset)
		}
	}
	const gp = "ffffc90000077d80" // rcu_preempt's on-stack timer
	start := func(task string, pid, cpu int, ptr string, at, timeout int64) {
		add(task, pid, cpu, "d..1.", at, "timer_start: timer=%s function=process_timeout expires=%d [timeout=%d] bucket_expiry=%d cpu=%d idx=%d flags=",
			ptr, jif(at)+timeout, timeout, jif(at)+timeout, cpu, timeout)
	}
	expire := func(cpu int, ptr string, at int64) {
		add("<idle>-0", -1, cpu, "..s1.", at+10_000, "timer_expire_entry: timer=%s function=process_timeout now=%d baseclk=%d", ptr, jif(at), jif(at))
	}
	expire(0, gp, 2_000_000) // armed before the capture
	start("rcu_preempt-15", 15, 0, gp, 2_050_000, 3)
	expire(0, gp, 5_000_000)
	start("rcu_preempt-15", 15, 0, gp, 5_050_000, 3)
	add("rcu_preempt-15", 15, 0, "d..1.", 6_500_000, "timer_cancel: timer=%s", gp)
	start("rcu_preempt-15", 15, 0, gp, 10_050_000, 3)
	expire(0, gp, 13_000_000)
	add("<idle>-0", -1, 1, "d.h1.", 14_000_000+2_500, "softirq_raise: vec=9 [action=RCU]")
	add("<idle>-0", -1, 0, "d.h1.", 30_000_000+2_500, "softirq_raise: vec=9 [action=RCU]")
	start("kcompactd0-37", 37, 1, "ffffc900001a7d80", 1_050_000, 25)
	expire(1, "ffffc900001a7d80", 26_000_000)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].ns < evs[j].ns })
	var b strings.Builder
	b.WriteString("# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:2\n#\n")
	for _, e := range evs {
		b.WriteString(e.line + "\n")
	}
	path := filepath.Join(t.TempDir(), "rcu-gp.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayRCUGPWaitsLeftToModel: the model's RCU arms its own
// force-quiescent-state wait for each grace period (framework/kernel/rcu.go),
// so with rcu on the capture's rcu_preempt waits are not replayed as well
// (each grace period had two of them, the capture's and the model's: 13
// process_timeout starts of a 6.18 capture replayed as 25); instead the
// model's RCU begins a grace period where the capture's kthread began one
// (its wait at 10 ms, after a cancel: the two before continue the
// grace period of the pre-armed wait); of the RCU softirqs only the one
// long after it (30 ms) is read as callbacks. kcompactd's sleep is replayed either way. With rcu
// off the model's RCU starts no grace period and the capture's waits are
// replayed.
func TestReplayRCUGPWaitsLeftToModel(t *testing.T) {
	path := rcuGPCapture(t)
	var kcompactd string
	run := func(rcu bool) (starts, expiries map[string]int, early int, gps, cbs int64, text string) {
		src := fmt.Sprintf(`
machine {
  cpus = 2
  hz   = 1000
}
run {
  duration = "45ms"
}
workload "replay" "w" {
  capture = %q
  rcu     = %v
}`, path, rcu)
		var tr bytes.Buffer
		r := simtest.Run(t, src, config.Options{}, &tr)
		starts, expiries = map[string]int{}, map[string]int{}
		for _, l := range strings.Split(tr.String(), "\n") {
			if !strings.Contains(l, "function=process_timeout") {
				continue
			}
			switch {
			case strings.Contains(l, "timer_start:"):
				to := l[strings.Index(l, "[timeout="):]
				starts[to[:strings.IndexByte(to, ']')+1]]++
				var sec float64
				fmt.Sscanf(strings.Fields(l[strings.IndexByte(l, ']')+1:])[1], "%f:", &sec)
				if sec < 0.010 && strings.Contains(l, "[timeout=3]") {
					early++
				}
				if strings.Contains(l, "[timeout=25]") {
					kcompactd = l
				}
			case strings.Contains(l, "timer_expire_entry:"):
				expiries["all"]++
			}
		}
		for _, c := range r.Kernel.Counters {
			switch c.Name {
			case "rcu_grace_periods":
				gps += c.Value
			case "rcu_callbacks":
				cbs += c.Value
			}
		}
		return starts, expiries, early, gps, cbs, strings.Join(r.Workloads[0].Text, "\n")
	}
	starts, _, early, gps, cbs, text := run(true)
	// The model's grace period arms its own waits (jiffies_till_first_fqs
	// is 3 at HZ 1000), all after 10 ms.
	if starts["[timeout=25]"] != 1 || starts["[timeout=3]"] < 1 || early != 0 || gps != 1 || cbs != 2 {
		t.Errorf("rcu on: process_timeout starts by timeout %v, %d of them before 10 ms, %d grace periods, %d RCU callbacks; want kcompactd's one ([timeout=25]), the model's own waits after 10 ms, 1 grace period, its callback and the one of the RCU softirq at 30 ms", starts, early, gps, cbs)
	}
	// Left to the model: the pre-armed wait's expiry, three starts, the
	// cancel and two expiries.
	if want := "left to the model's RCU: 7 timer operations"; !strings.Contains(text, want) {
		t.Errorf("rcu on: the report lacks %q:\n%s", want, text)
	}
	// kcompactd's schedule_timeout(25) at 1.05 ms of the capture (1.55 ms
	// simulated) counts from jiffy 1, where the real CPU that ran it had
	// jiffies (INITIAL_JIFFIES 4294667296 at HZ 1000), though every
	// model CPU sleeps with its tick stopped then.
	if !strings.Contains(kcompactd, "expires=4294667322 ") {
		t.Errorf("kcompactd's start does not count from jiffy 1 (expires=4294667322):\n%s", kcompactd)
	}
	starts, expiries, _, gps, _, text := run(false)
	if gps != 0 {
		t.Errorf("rcu off: %d grace periods, want 0", gps)
	}
	// The model's wheel expires each wait at its own jiffy: a start the
	// capture makes while the model's copy is still queued waits for it
	// (replayLoad.rearm), so not every wait is the capture's.
	if starts["[timeout=3]"] < 1 || starts["[timeout=25]"] != 1 || expiries["all"] < 3 {
		t.Errorf("rcu off: process_timeout starts by timeout %v, expiries %d; want rcu_preempt's ([timeout=3]) replayed beside kcompactd's one, 3 or more expiries", starts, expiries["all"])
	}
	if strings.Contains(text, "left to the model's RCU") {
		t.Errorf("rcu off: nothing is left to the model's RCU, the report says:\n%s", text)
	}
}
