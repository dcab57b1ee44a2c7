package kernel_test

import (
	"strconv"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/internal/simtest"
)

// migrationSrc: cyclictest (clock_nanosleep every 2 ms) on nohz_full CPU 1,
// a busy task on housekeeping CPU 0, CPU 2 idle.
func migrationSrc(on bool) string {
	return `
machine {
  cpus      = 3
  nohz      = "full"
  nohz_full = "1"
}
kernel {
  timer_migration = ` + strconv.FormatBool(on) + `
}
workload "stress_ng_cpu" "busy" {
  cpus = "0"
}
workload "cyclictest" "rt" {
  cpus     = "1"
  interval = "2ms"
  priority = 80
}
run {
  duration = "200ms"
}`
}

func counterOn(r *experiment.Result, source, name string, cpu int) int64 {
	var s int64
	for _, c := range r.Kernel.Counters {
		if c.Source == source && c.Name == name && c.CPU == cpu {
			s += c.Value
		}
	}
	return s
}

// TestNanosleepTimerPushedFromNohzFull follows cyclictest's sleeper hrtimer
// through kernel/time/hrtimer.c:switch_hrtimer_base() with
// timer_migration on: CPU 1 is nohz_full, so get_nohz_timer_target()
// (kernel/sched/core.c) picks the busy housekeeping CPU 0, and the 2 ms
// sleep is after CPU 0's next tick (hrtimer_check_target() allows it). The
// timer expires in CPU 0's hrtimer_interrupt(), whose hrtimer_wakeup() wakes
// the task on CPU 1 with a reschedule IPI (try_to_wake_up() ->
// ttwu_queue()). With timer_migration off it stays on CPU 1.
func TestNanosleepTimerPushedFromNohzFull(t *testing.T) {
	on := simtest.Run(t, migrationSrc(true), config.Options{}, nil)
	off := simtest.Run(t, migrationSrc(false), config.Options{}, nil)
	if n := counterOn(on, "kernel", "timer_migrations", 1); n < 90 {
		t.Errorf("timer_migration on: %d timers of CPU 1 queued elsewhere in 200 ms, want ~100 (one per cycle)", n)
	}
	if n := counterOn(on, "hrtimer", "migrated", 0); n < 90 {
		t.Errorf("timer_migration on: the hrtimer plugin queued %d timers on CPU 0's base, want ~100", n)
	}
	if n := counterOn(on, "kernel", "ipi_resched", 1); n < 90 {
		t.Errorf("timer_migration on: CPU 1 took %d reschedule IPIs, want ~100 (one wakeup from CPU 0 per cycle)", n)
	}
	if n := off.Total("timer_migrations"); n != 0 {
		t.Errorf("timer_migration off: %d timers migrated, want 0", n)
	}
	if n := counterOn(off, "kernel", "ipi_resched", 1); n != 0 {
		t.Errorf("timer_migration off: CPU 1 took %d reschedule IPIs, want 0 (it wakes itself)", n)
	}
}

// pullSrc: 8 CPUs, NO_HZ idle, a busy task on CPU 0, a migratable 10 ms
// timer_list (re-armed by its callback) on each of the idle CPUs 1-7.
func pullSrc(migration string, on bool) string {
	return `
machine {
  cpus = 8
  nohz = "idle"
}
wheel {
  plugin    = "wheel"
  migration = "` + migration + `"
}
kernel {
  timer_migration = ` + strconv.FormatBool(on) + `
}
workload "stress_ng_cpu" "busy" {
  cpus = "0"
}
workload "kernel_timers" "writeback" {
  cpus   = "1-7"
  period = "10ms"
  pinned = false
}
run {
  duration = "500ms"
}`
}

// TestGlobalTimersPulledByMigrator follows the idle CPUs' global timers
// through the 6.9+ pull model: each CPU queues its timer locally in
// BASE_GLOBAL (get_timer_this_cpu_base()); stopping its tick it hands the
// timer to the hierarchy (timer_base_try_to_set_idle() ->
// tmigr_cpu_deactivate()) and sleeps; CPU 0, busy and the migrator, sees the
// event from its tick (tmigr_requires_handle_remote()), expires it in its
// timer softirq (tmigr_handle_remote() -> timer_expire_remote()), and the
// callback's mod_timer() queues it on CPU 0 from then on. The idle CPUs no
// longer wake for it, whatever kernel.timer_migration says (since 6.9 it
// gates only hrtimer placement). With the push model the timers are queued
// on busy CPU 0 from the start: mod_timer() from an idle CPU goes to
// get_nohz_timer_target(); with timer_migration off there every CPU wakes
// for its own timer.
func TestGlobalTimersPulledByMigrator(t *testing.T) {
	type want struct{ remoteMin, remoteMax, idleExpMax, idleExpMin int64 }
	for _, c := range []struct {
		name, model string
		on          bool
		w           want
	}{
		{"pull", "pull", true, want{7, 7, 0, 0}},
		// 6.9+ with timer_migration = 0: the sysctl only switches hrtimer
		// placement; the hierarchy still pulls (is_timers_nohz_active()).
		{"pull, sysctl 0", "pull", false, want{7, 7, 0, 0}},
		{"push", "push", true, want{0, 0, 0, 0}},
		// 10 jiffies re-armed from the callback: every 11 ms on the levels
		// wheel (bucket_expiry rounds up by one granule), ~45 in 500 ms.
		{"push, sysctl 0", "push", false, want{0, 0, 7 * 46, 7 * 44}},
	} {
		r := simtest.Run(t, pullSrc(c.model, c.on), config.Options{}, nil)
		remote := counterOn(r, "kernel", "remote_expiries", 0)
		var idleExp int64
		for cpu := 1; cpu < 8; cpu++ {
			idleExp += counterOn(r, "kernel", "timer_expire", cpu)
		}
		if remote < c.w.remoteMin || remote > c.w.remoteMax {
			t.Errorf("%s: CPU 0 expired %d timers remotely, want %d-%d", c.name, remote, c.w.remoteMin, c.w.remoteMax)
		}
		if idleExp < c.w.idleExpMin || idleExp > c.w.idleExpMax {
			t.Errorf("%s: the idle CPUs 1-7 expired %d timers themselves in 500 ms, want %d-%d", c.name, idleExp, c.w.idleExpMin, c.w.idleExpMax)
		}
		if c.w.idleExpMax == 0 && counterOn(r, "kernel", "timer_expire", 0) < 7*45 {
			t.Errorf("%s: CPU 0 expired %d timers, want ~350: every timer ends up on the busy CPU", c.name, counterOn(r, "kernel", "timer_expire", 0))
		}
	}
}

// TestTaskStartedHrtimersStayLocal: on a NO_HZ-idle machine (no nohz_full
// CPUs) timer_migration moves neither stress-ng --timer's POSIX timers nor
// stress-ng --nanosleep's sleepers, on 2 CPUs (this project's development
// machine) or 64 (the LKP server). Both are started by their task, in
// timer_settime() / clock_nanosleep(), on the CPU it runs on:
// get_nohz_timer_target() keeps a timer on a housekeeping CPU that is not
// idle_cpu() (docs/reference/migration.md P2, P6). tracefs on a 2-CPU 6.18
// guest showed the same: every expiry of posix_timer_fn and hrtimer_wakeup
// on the CPU that started it, with the sysctl 1 and 0. The runs must be
// identical, sysctl aside.
func TestTaskStartedHrtimersStayLocal(t *testing.T) {
	for _, tc := range []struct {
		cpus     int
		workload string
		dur      string
	}{
		{2, `workload "stress_ng_timer" "t" {
  instances = 2
}`, "20ms"},
		{2, `workload "stress_ng_nanosleep" "n" {
  instances = 2
}`, "20ms"},
		{64, `workload "stress_ng_timer" "t" {
  instances = 64
}`, "1ms"},
		{64, `workload "stress_ng_nanosleep" "n" {
  instances = 64
  threads   = 1
}`, "2ms"},
	} {
		var runs [2]*experiment.Result
		for i, on := range []bool{false, true} {
			runs[i] = simtest.Run(t, `
machine {
  cpus = `+strconv.Itoa(tc.cpus)+`
  nohz = "idle"
}
kernel {
  timer_migration = `+strconv.FormatBool(on)+`
}
`+tc.workload+`
run {
  duration = "`+tc.dur+`"
}`, config.Options{}, nil)
			if m := runs[i].Total("timer_migrations"); m != 0 {
				t.Errorf("%d CPUs, %s, timer_migration %v: %d timers queued away from the CPU that started them, want 0",
					tc.cpus, tc.workload[:30], on, m)
			}
		}
		for _, name := range []string{"hrtimer_start", "hrtimer_expire", "hrtimer_interrupts", "wakeups", "ipi_sent", "signals_delivered"} {
			if a, b := runs[0].Total(name), runs[1].Total(name); a != b {
				t.Errorf("%d CPUs, %s: %s %d with timer_migration 0, %d with 1; want the same", tc.cpus, tc.workload[:30], name, a, b)
			}
		}
		if runs[0].Total("hrtimer_expire") == 0 {
			t.Errorf("%d CPUs, %s: no hrtimer expired", tc.cpus, tc.workload[:30])
		}
	}
}
