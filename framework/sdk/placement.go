package sdk

// Timer placement: which CPU's base a timer is queued on. Since 2.6.x a
// non-pinned timer started on an idle CPU may be queued on a busy one
// (get_nohz_timer_target(), kernel/sched/core.c), and a CPU outside the
// timer housekeeping mask (nohz_full=) never keeps one; since 6.9 the wheel
// queues every timer locally and idle CPUs hand their global timers to the
// timer-migration hierarchy (kernel/time/timer_migration.c), which the host
// models. docs/reference/migration.md has the facts.

// CPUSet is a set of CPU numbers, a struct cpumask: bit i%64 of word i/64 is
// CPU i. A nil or short set holds no CPU beyond its words.
type CPUSet []uint64

// Has reports whether cpu is in the set.
func (s CPUSet) Has(cpu int) bool {
	w := cpu / 64
	return cpu >= 0 && w < len(s) && s[w]&(1<<uint(cpu%64)) != 0
}

// Put adds cpu to the set (on) or removes it, growing the set as needed.
func (s *CPUSet) Put(cpu int, on bool) {
	w := cpu / 64
	if !on && w >= len(*s) {
		return
	}
	for len(*s) <= w {
		*s = append(*s, 0)
	}
	if on {
		(*s)[w] |= 1 << uint(cpu%64)
	} else {
		(*s)[w] &^= 1 << uint(cpu%64)
	}
}

// Placement is what a timer base needs to place a timer the way the kernel
// does: passed with every ModTimer and Start (WheelTimer.Placement,
// HRTimer.Placement) while Setup.TimerMigration is on, nil otherwise. It is
// valid only during the call.
type Placement struct {
	// Idle holds the CPUs idle_cpu() reports idle at the call (no task
	// running or runnable): get_nohz_timer_target() skips them.
	Idle CPUSet
}

// NohzTimerTarget is get_nohz_timer_target() (kernel/sched/core.c) called on
// cpu of a machine with cpus CPUs, for a timer that is not pinned. With
// housekeeping (4.x+: HK_TYPE_TIMER, nohz_full= CPUs excluded; nil = every
// CPU is one), a busy housekeeping cpu keeps the timer; otherwise the first
// busy housekeeping CPU in the scheduling domains' order takes it, else cpu
// itself if it is a housekeeping CPU, else the first housekeeping CPU
// (housekeeping_any_cpu()). legacy is the 3.10 form: only an idle cpu looks
// for a target (__mod_timer() tests idle_cpu() first), the housekeeping mask
// does not exist, and cpu keeps the timer when every CPU is idle.
//
// Divergence: the machine has one scheduling domain spanning every CPU (no
// SMT siblings, LLCs or NUMA nodes), so "nearest busy CPU" is the lowest
// numbered one.
func NohzTimerTarget(cpu, cpus int, pl *Placement, housekeeping CPUSet, legacy bool) int {
	var p Placement
	if pl != nil {
		p = *pl
	}
	hk := func(i int) bool { return legacy || housekeeping == nil || housekeeping.Has(i) }
	def := -1
	if hk(cpu) {
		if !p.Idle.Has(cpu) {
			return cpu
		}
		def = cpu
	}
	for i := 0; i < cpus; i++ {
		if i != cpu && hk(i) && !p.Idle.Has(i) {
			return i
		}
	}
	if def < 0 {
		for i := 0; i < cpus; i++ {
			if hk(i) {
				return i
			}
		}
		return cpu
	}
	return def
}

// HousekeepingSet returns Setup.TimerHousekeeping, nil when every CPU is a
// housekeeping CPU.
func (s Setup) HousekeepingSet() CPUSet {
	if s.TimerHousekeeping == nil || len(*s.TimerHousekeeping) == 0 {
		return nil
	}
	return *s.TimerHousekeeping
}
