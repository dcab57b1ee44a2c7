package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
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

// The 6.9+ timer-migration hierarchy (framework/tmigr) at the kernel's hook
// points: tick stop (tmigr_cpu_deactivate()), tick restart
// (tmigr_cpu_activate()), the tick (tmigr_requires_handle_remote()) and the
// timer softirq (tmigr_handle_remote()). Only while the wheel has split
// bases (migration = "pull"), on SMP with NO_HZ active; kernel.timer_migration
// does not switch it (run_timer_softirq() tests is_timers_nohz_active()).

// tmigrOn reports whether the hierarchy is in use.
func (c *CPU) tmigrOn() bool {
	k := c.k
	if c.wheel.Split && !k.split {
		k.split = true // a property of the wheel plugin: seen once, true for all
		k.wheelGen++   // the time of a cached wheel answer may change (CPU.ntiNext)
	}
	return k.tm != nil && k.split
}

// tmigrGlobal is tevt.global of fetch_next_timer_interrupt() from c's cached
// wheel state, in CLOCK_MONOTONIC on the jiffies grid: the first BASE_GLOBAL
// expiry when it comes before the first BASE_LOCAL one and the CPU may idle
// (the first of both more than a jiffy away), else ktime.Max.
func (c *CPU) tmigrGlobal() ktime.Time {
	k, st := c.k, c.wheel
	g, l := st.GlobalNext, st.LocalNext
	if g == sdk.NoExpiry || l != sdk.NoExpiry && int64(l-g) <= 0 {
		return ktime.Max // no global timer, or local_first
	}
	if int64(g-(k.tk.jiffies+1)) <= 0 {
		return ktime.Max // within a jiffy: the CPU keeps it (tevt.local)
	}
	return k.jiffyTime(g)
}

// tmigrNextEvent is the next event tick_nohz_next_event() gets from
// get_next_timer_interrupt(): with the hierarchy in use, the first
// BASE_LOCAL timer (tevt.local), unless the first timer of both bases is at
// most a jiffy away; the global timer is the hierarchy's. next and local are
// the wheel's answer (NextTimerResult.Next and State.LocalNext).
func (c *CPU) tmigrNextEvent(next, local uint64) ktime.Time {
	k := c.k
	if !c.tmigrOn() || next == sdk.NoExpiry || int64(next-(k.tk.jiffies+1)) <= 0 {
		return k.jiffyTime(next)
	}
	return k.jiffyTime(local)
}

// tmigrStopTick is timer_base_try_to_set_idle() -> tmigr_cpu_deactivate()
// (tmigr_cpu_new_timer() when already idle) from tick_nohz_stop_tick(): the
// CPU's global timer goes to the hierarchy; when it is the last active CPU
// the hierarchy's first event comes back and the stopped tick is programmed
// for it if that is earlier (timer_use_tmigr()). It returns the walk's cost.
func (c *CPU) tmigrStopTick(expires *ktime.Time) int64 {
	if !c.tmigrOn() {
		return 0
	}
	k := c.k
	w := k.tm.Walks
	first := k.tm.Deactivate(c.id, c.tmigrGlobal())
	if first < *expires {
		*expires = max(first, k.tk.lastJiffiesUpdate) // a missed event: at once
	}
	return (k.tm.Walks - w) * k.costs.TmigrWalk
}

// tmigrRestartTick is timer_clear_idle() -> tmigr_cpu_activate() from
// tick_nohz_restart_sched_tick(); it returns the walk's cost.
func (c *CPU) tmigrRestartTick() int64 {
	k := c.k
	if k.tm == nil || !k.tm.Idle(c.id) {
		return 0
	}
	w := k.tm.Walks
	k.tm.Activate(c.id)
	return (k.tm.Walks - w) * k.costs.TmigrWalk
}

// tmigrRequiresRemote is run_local_timers()'s tmigr_requires_handle_remote():
// raise TIMER_SOFTIRQ for an event of an idle CPU that c must expire.
func (c *CPU) tmigrRequiresRemote() bool {
	return c.tmigrOn() && c.k.tm.RequiresHandleRemote(c.id, c.k.tk.lastJiffiesUpdate)
}

// tmigrHandleRemote is tmigr_handle_remote() at the end of c's timer
// softirq, from now: for each due event, timer_expire_remote() of that
// CPU's BASE_GLOBAL (the wheel's ExpireRemote); the callbacks run here, on
// c, which wakes their tasks on their own CPUs (IPIs). Counted as
// remote_expiries (timers) and tmigr_remote_cpus on c. It returns when the
// softirq ends.
func (c *CPU) tmigrHandleRemote(now ktime.Time) ktime.Time {
	if !c.tmigrOn() {
		return now
	}
	k := c.k
	rb, ok := k.wheel.(sdk.RemoteTimerBase)
	if !ok {
		return now
	}
	w := k.tm.Walks
	at := now
	k.tm.HandleRemote(c.id, k.tk.lastJiffiesUpdate, func(rc int) ktime.Time {
		if rc == c.id {
			return c.tmigrGlobal() // its own timers ran in this softirq
		}
		k.wheelGen++
		r := rb.ExpireRemote(rc, k.tk.jiffies)
		remote := k.cpus[rc]
		remote.wheel = r.State
		start := at + ktime.Time(k.costs.TmigrRemote)
		k.Counters.Inc(cntTmigrRemoteCPUs, c.id, 1)
		c.runWheelExpiries(start, r.Expired, true)
		at = start + ktime.Time(r.Cost)
		return remote.tmigrGlobal()
	})
	return at + ktime.Time((k.tm.Walks-w)*k.costs.TmigrWalk)
}
