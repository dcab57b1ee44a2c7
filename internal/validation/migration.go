package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tickemu/tickemu/framework/traceimport"
)

// moved counts, per hrtimer callback, the expiries of a capture and those
// on another CPU than the hrtimer_start that armed them: the timer was
// queued on another CPU's base (switch_hrtimer_base()).
type moved struct {
	expiries, elsewhere map[string]int64
}

// migrationCounts reads the capture at path: for each hrtimer expiry
// whose start is in the capture, whether it expired on the CPU the start
// ran on. tm is the host's kernel.timer_migration (-1: not recorded).
func migrationCounts(path string) (m moved, tm int, err error) {
	f, err := traceimport.Open(path)
	if err != nil {
		return m, -1, err
	}
	defer f.Close()
	tm = -1
	if f.Manifest != nil && f.Manifest.Host.TimerMigration != nil {
		tm = *f.Manifest.Host.TimerMigration
	}
	m = moved{expiries: map[string]int64{}, elsewhere: map[string]int64{}}
	startCPU := map[uint64]int{}
	for {
		e, err := f.Next()
		if err == io.EOF {
			return m, tm, nil
		}
		if err != nil {
			return m, tm, fmt.Errorf("%s: %w", path, err)
		}
		switch e.Kind {
		case traceimport.HRStart:
			startCPU[e.Timer] = e.CPU
		case traceimport.HRExpireEntry:
			cpu, ok := startCPU[e.Timer]
			if !ok {
				continue
			}
			delete(startCPU, e.Timer)
			m.expiries[e.Function]++
			if cpu != e.CPU {
				m.elsewhere[e.Function]++
			}
		}
	}
}

// migrationFns are the callbacks of the timers stress-ng --timer makes: its
// POSIX timer and its sleeps.
var migrationFns = []string{"posix_timer_fn", "hrtimer_wakeup"}

// migration writes the timer_migration section: for each bundle recorded
// with the sysctl set, how many of its POSIX timer and sleep expiries
// moved CPUs, the model's and the real bogo ops/s of the pair, and why the
// sysctl does not move them on this machine (the kernel's source).
func migration(b *strings.Builder, all []checked) error {
	type rowT struct {
		name string
		tm   int
		m    moved
		c    checked
	}
	var rows []rowT
	for _, c := range all {
		if !strings.Contains(c.name, "migration") {
			continue
		}
		m, tm, err := migrationCounts(c.path)
		if err != nil {
			return err
		}
		rows = append(rows, rowT{c.name, tm, m, c})
	}
	if len(rows) == 0 {
		return nil
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	b.WriteString("## timer_migration\n\n")
	b.WriteString("The bundles recorded with `kernel.timer_migration` 0 and 1: per callback, the expiries whose\n" +
		"start is in the capture and how many of them expired on another CPU than the `hrtimer_start`\n" +
		"that armed them (the timer was queued on another CPU's base), and stress-ng's bogo ops/s,\n" +
		"real and model.\n\n")
	b.WriteString("| bundle | timer_migration |")
	for _, fn := range migrationFns {
		fmt.Fprintf(b, " %s expiries on another CPU |", fn)
	}
	b.WriteString(" bogo ops/s real | recapture's | bogo ops/s model |\n|---|---|")
	for range migrationFns {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|\n")
	for _, r := range rows {
		tm := "not recorded"
		if r.tm >= 0 {
			tm = fmt.Sprint(r.tm)
		}
		fmt.Fprintf(b, "| %s | %s |", r.name, tm)
		for _, fn := range migrationFns {
			fmt.Fprintf(b, " %d of %d |", r.m.elsewhere[fn], r.m.expiries[fn])
		}
		real, again, model := "n/a", "n/a", "n/a"
		for _, row := range r.c.t.Rows {
			if strings.HasPrefix(row.Name, "bogo ops/s") {
				real, model = fmt.Sprintf("%.0f/s", row.Real), fmt.Sprintf("%.0f/s", row.Model)
			}
		}
		if r.c.again != nil {
			for _, row := range r.c.again.Rows {
				if strings.HasPrefix(row.Name, "bogo ops/s") {
					again = fmt.Sprintf("%.0f/s", row.Real)
				}
			}
		}
		fmt.Fprintf(b, " %s | %s | %s |\n", real, again, model)
	}
	b.WriteString(`
Why the sysctl moves none of these timers, from the kernel's source (6.18):
timer_migration is the static key timers_migration_enabled. An hrtimer is
queued by switch_hrtimer_base() on get_target_base()'s base
(kernel/time/hrtimer.c): with the key on and the timer not PINNED, the base of
get_nohz_timer_target() (kernel/sched/core.c), which returns the calling CPU
itself whenever that CPU is a housekeeping CPU and not idle (idle_cpu() is
false while a task runs); only a start on an idle CPU looks further, for a busy
CPU in its scheduling domains. Even then switch_hrtimer_base() keeps the timer
local when it would expire before the other CPU's next event
(hrtimer_check_target()). Every hrtimer stress-ng --timer makes is started by
the running task itself: timer_settime() (common_timer_set() ->
common_hrtimer_arm()), the re-arm of its interval on signal delivery
(posixtimer_rearm() -> common_hrtimer_rearm(), in the task's dequeue_signal()),
and its sleeps (hrtimer_nanosleep() -> do_nanosleep()); a POSIX timer whose
signal is ignored is restarted by its own callback (HRTIMER_RESTART), which
never changes base. So on any machine size these timers stay on the CPU of
the task that arms them, with timer_migration 0 or 1. The hierarchical timer
pull model of 6.9 (kernel/time/timer_migration.c, tmigr) concerns timer_list
timers only (the global, non-pinned wheel timers of an idle CPU, expired by
the last active CPU of its group), not hrtimers. What the sysctl can change
for this stressor is the kernel's own timer_list timers while it runs (on an
idle CPU, now handed to tmigr) and, through them, how often idle CPUs wake;
it cannot move the stressor's signals. A published many-CPU difference between
the two settings, if it is stress-ng --timer's, then comes from that idle
wakeup traffic or from run-to-run noise (compare each recording with its
recapture above), not from where its POSIX timers expire. The model agrees:
its timers stay on their task's CPU with either setting (framework/kernel's
hrtimer base selection, plugins/hrtimer/start.go targetBase(), follows get_target_base()).

`)
	return nil
}
