package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk"
)

// Timer placement and migration (docs/reference/migration.md): the plugins
// place timers (sdk.NohzTimerTarget); the host tells them which CPUs are
// idle and applies where the timer went.

// TimerMigrationActive is whether timers may migrate on machine m with
// settings ks: timers_update_migration() enables timers_migration_enabled
// only with sysctl_timer_migration and NO_HZ active (tick_nohz_active).
func TimerMigrationActive(ks KernelSettings, m Machine) bool {
	return ks.TimerMigration && m.NoHZ != "off"
}

// TimerHousekeeping is housekeeping_cpumask(HK_TYPE_TIMER) of machine m:
// every CPU but the nohz_full= ones; nil when that is every CPU.
func TimerHousekeeping(m Machine) *sdk.CPUSet {
	if m.NoHZ != "full" || len(m.NoHZFull) == 0 {
		return nil
	}
	full := map[int]bool{}
	for _, c := range m.NoHZFull {
		full[c] = true
	}
	var hk sdk.CPUSet
	for c := 0; c < m.CPUs; c++ {
		if !full[c] {
			hk.Put(c, true)
		}
	}
	return &hk
}

// placement is the sdk.Placement passed with a timer start: the CPUs
// idle_cpu() reports idle (the idle task current, nothing runnable), nil
// when timers do not migrate. It is rebuilt in k.place per call; a plugin
// must not keep it.
func (k *Kernel) placement() *sdk.Placement {
	if !k.migrate {
		return nil
	}
	s := k.place.Idle[:0]
	for len(s) < (len(k.cpus)+63)/64 {
		s = append(s, 0)
	}
	for i := range s {
		s[i] = 0
	}
	for _, c := range k.cpus {
		if c.idleCPU() {
			s[c.id/64] |= 1 << uint(c.id%64)
		}
	}
	k.place.Idle = s
	return &k.place
}

// timerMoved accounts a timer a plugin queued on another CPU than the
// caller's (the counter timer_migrations, on the calling CPU).
func (k *Kernel) timerMoved(from int) {
	k.Counters.Inc(cntTimerMigrations, from, 1)
}

// idleCPU is idle_cpu() (kernel/sched/core.c): the idle task runs and
// nothing is runnable. (No wakeup is ever pending between events here.)
func (c *CPU) idleCPU() bool { return c.rq.curr == nil && c.rq.queue.peek() == nil }
