// SPDX-License-Identifier: GPL-2.0
/*
 * shim.c: stand-ins for the kernel functions and data kernel/time/timer.c
 * uses, so that it runs as user code in one single-threaded process that
 * plays every CPU in turn. Each stand-in names the kernel function it
 * replaces and says what it keeps of it. Those that the oracle's entry
 * points can never reach (sleeping, the scheduler, sysctl registration)
 * stop the process with a message if they are reached after all.
 *
 * Written for tickemu; no kernel code is copied here. Compiled with the
 * kernel's own flags and headers (and prelude.h), minus the kernel code
 * model.
 */
#include <linux/kernel.h>
#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/interrupt.h>
#include <linux/hrtimer.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/printk.h>
#include <linux/smp.h>
#include <linux/tick.h>
#include <linux/sysctl.h>
#include <linux/posix-timers.h>
#include <linux/sched/nohz.h>
#include "tick-internal.h"
#include "timer_migration.h"
#include <linux/irq_work.h>
#include <linux/kernel_stat.h>
#include <linux/timekeeping.h>
#include <linux/rcupdate.h>
#include <linux/jump_label.h>
#include <linux/find.h>
#include "shim.h"
#include "oracle.h"

/* --- Per-CPU data (mm/percpu.c, arch/x86/kernel/setup_percpu.c) --- */

/*
 * The build renames every .data..percpu* section of the oracle's objects
 * to tk_percpu, so the linker brackets the per-CPU template with these.
 */
extern char __start_tk_percpu[], __stop_tk_percpu[];

/* __per_cpu_offset (arch/x86/kernel/setup_percpu.c): CPU n's copy of a
 * per-CPU variable is at its link address plus __per_cpu_offset[n]. */
unsigned long __per_cpu_offset[NR_CPUS];
/* The offset of the CPU the oracle runs as (prelude.h). */
unsigned long tk_percpu_offset;
static void *tk_areas[KWO_MAX_CPUS];
static int tk_cpu;

/* pcpu_hot (arch/x86/kernel/cpu/common.c): the running CPU's number,
 * current task and preempt count. */
DEFINE_PER_CPU_ALIGNED(struct pcpu_hot, pcpu_hot);
/* this_cpu_off (arch/x86/kernel/setup_percpu.c). */
DEFINE_PER_CPU_READ_MOSTLY(unsigned long, this_cpu_off);

/* One idle task per CPU, for current (asm/current.h). */
static struct task_struct tk_tasks[KWO_MAX_CPUS];

/* --- CPU masks (kernel/cpu.c) --- */

struct cpumask __cpu_possible_mask __read_mostly;
struct cpumask __cpu_online_mask __read_mostly;
struct cpumask __cpu_present_mask __read_mostly;
struct cpumask __cpu_active_mask __read_mostly;
struct cpumask __cpu_dying_mask __read_mostly;
atomic_t __num_online_cpus __read_mostly;
/* nr_cpu_ids (kernel/smp.c): the CPUs brought up by tk_reset(). */
unsigned int nr_cpu_ids __read_mostly = NR_CPUS;

/* --- What the shim records for the entry points --- */

static unsigned long tk_irqflags[KWO_MAX_CPUS];
static unsigned int tk_softirqs[KWO_MAX_CPUS];
static int tk_tmigr_called[KWO_MAX_CPUS];
static u64 tk_tmigr_global[KWO_MAX_CPUS];
static unsigned long long tk_wakeup_count[KWO_MAX_CPUS];
static unsigned long long tk_warn_count;
static const char *tk_warn_file;
static int tk_warn_line;
static void (*tk_softirq_vec[NR_SOFTIRQS])(void);

int tk_reset(int ncpus)
{
	unsigned long size = __stop_tk_percpu - __start_tk_percpu;
	int cpu;

	if (ncpus < 1 || ncpus > KWO_MAX_CPUS || ncpus > NR_CPUS)
		return -1;
	cpumask_clear(&__cpu_possible_mask);
	cpumask_clear(&__cpu_online_mask);
	cpumask_clear(&__cpu_present_mask);
	cpumask_clear(&__cpu_active_mask);
	cpumask_clear(&__cpu_dying_mask);
	for (cpu = 0; cpu < ncpus; cpu++) {
		if (!tk_areas[cpu])
			tk_areas[cpu] = tk_host_alloc(size, PAGE_SIZE);
		memcpy(tk_areas[cpu], __start_tk_percpu, size);
		__per_cpu_offset[cpu] = (unsigned long)tk_areas[cpu] -
					(unsigned long)__start_tk_percpu;
		per_cpu(this_cpu_off, cpu) = __per_cpu_offset[cpu];
		per_cpu(pcpu_hot, cpu).cpu_number = cpu;
		per_cpu(pcpu_hot, cpu).current_task = &tk_tasks[cpu];
		per_cpu(pcpu_hot, cpu).preempt_count = 0;
		cpumask_set_cpu(cpu, &__cpu_possible_mask);
		cpumask_set_cpu(cpu, &__cpu_online_mask);
		cpumask_set_cpu(cpu, &__cpu_present_mask);
		cpumask_set_cpu(cpu, &__cpu_active_mask);
		tk_irqflags[cpu] = X86_EFLAGS_IF;
		tk_softirqs[cpu] = 0;
		tk_tmigr_called[cpu] = 0;
		tk_tmigr_global[cpu] = KTIME_MAX;
		tk_wakeup_count[cpu] = 0;
	}
	atomic_set(&__num_online_cpus, ncpus);
	nr_cpu_ids = ncpus;
	tk_warn_count = 0;
	tk_warn_file = NULL;
	tk_warn_line = 0;
	tk_select_cpu(0);
	return 0;
}

void tk_select_cpu(int cpu)
{
	tk_cpu = cpu;
	tk_percpu_offset = __per_cpu_offset[cpu];
}

unsigned int tk_softirq_take(int cpu)
{
	unsigned int s = tk_softirqs[cpu];

	tk_softirqs[cpu] = 0;
	return s;
}

int tk_tmigr_take(int cpu, u64 *global)
{
	int called = tk_tmigr_called[cpu];

	if (global)
		*global = tk_tmigr_global[cpu];
	tk_tmigr_called[cpu] = 0;
	tk_tmigr_global[cpu] = KTIME_MAX;
	return called;
}

unsigned long long tk_wakeups(int cpu) { return tk_wakeup_count[cpu]; }

unsigned long long tk_warnings(const char **file, int *line)
{
	if (file)
		*file = tk_warn_file;
	if (line)
		*line = tk_warn_line;
	return tk_warn_count;
}

/* Reached only if the oracle calls what it must not: stop loudly. */
static void __noreturn tk_unreachable(const char *fn)
{
	tk_host_die(fn, "shim.c (not modelled)", 0);
}

/* --- Interrupt flags (arch/x86/include/asm/irqflags.h, via prelude.h) --- */

/* arch_local_save_flags(): the running CPU's flags word (only IF). */
unsigned long tk_irq_save_flags(void) { return tk_irqflags[tk_cpu]; }
/* arch_local_irq_restore(). */
void tk_irq_restore(unsigned long flags) { tk_irqflags[tk_cpu] = flags; }
/* arch_local_irq_disable(): cli. */
void tk_irq_disable(void) { tk_irqflags[tk_cpu] &= ~X86_EFLAGS_IF; }
/* arch_local_irq_enable(): sti. */
void tk_irq_enable(void) { tk_irqflags[tk_cpu] |= X86_EFLAGS_IF; }
/* arch_local_irq_save(): pushf; cli. */
unsigned long tk_irq_save(void)
{
	unsigned long f = tk_irqflags[tk_cpu];

	tk_irq_disable();
	return f;
}
/* arch_irqs_disabled(). */
int tk_irqs_disabled(void) { return !(tk_irqflags[tk_cpu] & X86_EFLAGS_IF); }

/* --- BUG and WARN (lib/bug.c report_bug(), kernel/panic.c __warn()) --- */

/* __WARN_FLAGS() (prelude.h): count, remember the first. */
void tk_warn(const char *file, int line)
{
	if (!tk_warn_count++) {
		tk_warn_file = file;
		tk_warn_line = line;
	}
}

/* BUG() (prelude.h). */
void tk_bug(const char *file, int line)
{
	tk_host_die("BUG()", file, line);
}

/* __warn_printk() (kernel/panic.c): the message of WARN(cond, fmt...); the
 * oracle keeps only the count and location (tk_warn()). */
void __warn_printk(const char *fmt, ...) { }

/* _printk() (kernel/printk/printk.c): the oracle prints nothing. */
int _printk(const char *fmt, ...) { return 0; }

/* --- Spinlocks (kernel/locking/spinlock.c) ---
 * One thread plays every CPU and never waits, so a lock is only marked
 * taken and released with the kernel's own inline helpers, which keep the
 * preempt count and the interrupt flags as the kernel does. */

/* _raw_spin_lock(). */
void __lockfunc _raw_spin_lock(raw_spinlock_t *lock) { __raw_spin_lock(lock); }
/* _raw_spin_lock_irq(). */
void __lockfunc _raw_spin_lock_irq(raw_spinlock_t *lock) { __raw_spin_lock_irq(lock); }
/* _raw_spin_lock_irqsave(). */
unsigned long __lockfunc _raw_spin_lock_irqsave(raw_spinlock_t *lock)
{
	return __raw_spin_lock_irqsave(lock);
}
/* _raw_spin_unlock_irqrestore(). */
void __lockfunc _raw_spin_unlock_irqrestore(raw_spinlock_t *lock, unsigned long flags)
{
	__raw_spin_unlock_irqrestore(lock, flags);
}
/* queued_spin_lock_slowpath() (kernel/locking/qspinlock.c): a contended
 * lock. With one thread a taken lock is never released: a deadlock. */
void queued_spin_lock_slowpath(struct qspinlock *lock, u32 val)
{
	tk_unreachable("queued_spin_lock_slowpath (lock already held: deadlock)");
}

/* --- Mutexes (kernel/locking/mutex.c): never contended here --- */

/* mutex_lock(). */
void mutex_lock(struct mutex *lock) { }
/* mutex_unlock(). */
void mutex_unlock(struct mutex *lock) { }

/* --- Softirqs (kernel/softirq.c) --- */

/* open_softirq(): remember the handler (void (*)(void) since 6.12). */
void open_softirq(int nr, void (*action)(void)) { tk_softirq_vec[nr] = action; }
/* raise_softirq(): mark it pending on the running CPU; the entry points
 * read the mark (kwo_tick()) and run the handler themselves. */
void raise_softirq(unsigned int nr) { tk_softirqs[tk_cpu] |= 1U << nr; }

/* --- hrtimers (kernel/time/hrtimer.c): not part of this oracle --- */

/* hrtimer_get_next_event(): no hrtimer is queued (high resolution mode:
 * the kernel answers KTIME_MAX there too). */
u64 hrtimer_get_next_event(void) { return KTIME_MAX; }
/* hrtimer_run_queues(): nothing to run from the tick. */
void hrtimer_run_queues(void) { }

/* --- Timer migration hierarchy (kernel/time/timer_migration.c) ---
 * The hierarchy is the host's business (tickemu models it apart). The
 * stand-ins record what the wheel hands it and answer as a hierarchy in
 * which another CPU stays active: KTIME_MAX, "no event for you". */

/* tmigr_cpu_deactivate(): the CPU goes idle with its first global timer. */
u64 tmigr_cpu_deactivate(u64 nextexp)
{
	tk_tmigr_called[tk_cpu] = 1;
	tk_tmigr_global[tk_cpu] = nextexp;
	return KTIME_MAX;
}
/* tmigr_cpu_new_timer(): an idle CPU's first global timer changed. */
u64 tmigr_cpu_new_timer(u64 nextevt)
{
	tk_tmigr_called[tk_cpu] = 1;
	tk_tmigr_global[tk_cpu] = nextevt;
	return KTIME_MAX;
}
/* tmigr_quick_check(): would the CPU be the last active one? No. */
u64 tmigr_quick_check(u64 nextevt)
{
	tk_tmigr_called[tk_cpu] = 1;
	tk_tmigr_global[tk_cpu] = nextevt;
	return KTIME_MAX;
}
/* tmigr_cpu_activate(): the CPU is busy again. */
void tmigr_cpu_activate(void) { }
/* tmigr_handle_remote(): expiring idle CPUs' global timers is the
 * caller's (kwo_expire_remote()). */
void tmigr_handle_remote(void) { }
/* tmigr_requires_handle_remote(): never from the tick here. */
bool tmigr_requires_handle_remote(void) { return false; }

/* --- Scheduler (kernel/sched/core.c) --- */

/* wake_up_nohz_cpu(): an IPI to an idle CPU for a new first timer;
 * counted per target CPU when it is another CPU (the kernel's
 * wake_up_idle_cpu() does nothing for the calling CPU). */
void wake_up_nohz_cpu(int cpu)
{
	if (cpu != tk_cpu)
		tk_wakeup_count[cpu]++;
}

/* --- Workqueues (kernel/workqueue.c) --- */

struct workqueue_struct *system_wq __ro_after_init;
struct workqueue_struct *system_percpu_wq __ro_after_init;

/* queue_work_on(): run the work at once, on the calling CPU (the only
 * work queued is timer_update_work, from timers_update_nohz()). */
bool queue_work_on(int cpu, struct workqueue_struct *wq, struct work_struct *work)
{
	work->func(work);
	return true;
}

/* --- POSIX CPU timers (kernel/time/posix-cpu-timers.c) --- */

/* posix_cputimers_init_work(): nothing to set up without tasks. */
void __init posix_cputimers_init_work(void) { }

/* --- Bitmaps (lib/find_bit.c) --- */

/* _find_next_bit(): the first set bit at or after start, or nbits; what
 * for_each_possible_cpu() walks the CPU masks with. */
unsigned long _find_next_bit(const unsigned long *addr, unsigned long nbits,
			     unsigned long start)
{
	for (; start < nbits; start++)
		if (addr[start / BITS_PER_LONG] & (1UL << (start % BITS_PER_LONG)))
			return start;
	return nbits;
}

/* --- Static keys (kernel/jump_label.c), sysctl, NO_HZ state --- */

/* static_key_initialized (kernel/jump_label.c): jump_label_init() ran. */
bool static_key_initialized __read_mostly = true;
/* tick_nohz_active (kernel/time/tick-sched.c): NO_HZ mode is on. */
unsigned long tick_nohz_active __read_mostly = 1;
/* sysctl_vals (kernel/sysctl.c): the constants sysctl tables point at. */
const int sysctl_vals[] = { 0, 1, 2, 3, 4, 100, 200, 1000, 3000, INT_MAX, 65535, -1 };

/* register_sysctl_sz() (fs/proc/proc_sysctl.c): the timer_migration
 * sysctl is registered by an initcall the oracle never runs. */
struct ctl_table_header *register_sysctl_sz(const char *path, struct ctl_table *table,
					    size_t table_size)
{
	tk_unreachable("register_sysctl_sz");
}
/* proc_dointvec_minmax() (kernel/sysctl.c): no /proc here. */
int proc_dointvec_minmax(const struct ctl_table *table, int write, void *buffer,
			 size_t *lenp, loff_t *ppos)
{
	tk_unreachable("proc_dointvec_minmax");
}

/* --- The tick (update_process_times()) and sleeping: not modelled ---
 * update_process_times(), schedule_timeout(), msleep() and
 * usleep_range_state() are in timer.c but outside what the oracle runs:
 * kwo_tick() calls run_local_timers() itself. */

/* account_process_tick() (kernel/sched/cputime.c). */
void account_process_tick(struct task_struct *p, int user_tick)
{
	tk_unreachable("account_process_tick");
}
/* rcu_sched_clock_irq() (kernel/rcu/tree.c). */
void rcu_sched_clock_irq(int user) { tk_unreachable("rcu_sched_clock_irq"); }
/* sched_tick() (kernel/sched/core.c). */
void sched_tick(void) { tk_unreachable("sched_tick"); }
/* irq_work_tick() (kernel/irq_work.c). */
void irq_work_tick(void) { tk_unreachable("irq_work_tick"); }
/* run_posix_cpu_timers() (kernel/time/posix-cpu-timers.c). */
void run_posix_cpu_timers(void) { tk_unreachable("run_posix_cpu_timers"); }
/* wake_up_process() (kernel/sched/core.c): process_timeout()'s wake-up. */
int wake_up_process(struct task_struct *p) { tk_unreachable("wake_up_process"); }
/* schedule() (kernel/sched/core.c). */
asmlinkage __visible void schedule(void) { tk_unreachable("schedule"); }
/* schedule_hrtimeout_range() (kernel/time/sleep_timeout.c or hrtimer.c). */
int schedule_hrtimeout_range(ktime_t *expires, u64 delta, const enum hrtimer_mode mode)
{
	tk_unreachable("schedule_hrtimeout_range");
}
/* ktime_get() (kernel/time/timekeeping.c): only usleep_range_state(). */
ktime_t ktime_get(void) { tk_unreachable("ktime_get"); }
/* dump_stack() (lib/dump_stack.c): after a WARN in schedule_timeout(). */
asmlinkage void dump_stack(void) { tk_unreachable("dump_stack"); }
/* jiffies_to_msecs() (kernel/time/time.c): only msleep_interruptible(). */
unsigned int jiffies_to_msecs(const unsigned long j) { tk_unreachable("jiffies_to_msecs"); }
/* __msecs_to_jiffies() (kernel/time/time.c): only msleep(). */
unsigned long __msecs_to_jiffies(const unsigned int m) { tk_unreachable("__msecs_to_jiffies"); }
