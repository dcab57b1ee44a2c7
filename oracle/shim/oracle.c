// SPDX-License-Identifier: GPL-2.0
/*
 * oracle.c: the oracle's entry points (oracle.h). This unit includes the
 * kernel's kernel/time/timer.c itself (TK_TIMER_C names it), so that the
 * entry points reach the wheel's static functions and per-CPU bases as the
 * rest of the kernel would: run_timer_softirq(), run_local_timers(),
 * timer_recalc_next_expiry() and timer_bases. Nothing here re-implements
 * the wheel; it sets jiffies and the running CPU, calls the kernel's
 * function and reads the kernel's own state back.
 */
#include TK_TIMER_C

#include <generated/utsrelease.h>
#include "shim.h"
#include "oracle.h"

/* A timer the oracle's callers name by id. */
struct kwo_timer {
	struct timer_list t;
	u64 id;
	u64 period;
	/* calc_wheel_index()'s bucket expiry when the timer was last queued. */
	unsigned long bucket_expiry;
	bool set_up;
};

static struct kwo_timer kwo_timers[KWO_MAX_TIMERS];
static struct kwo_expiry *kwo_out;
static int kwo_out_n, kwo_out_max;
static int kwo_ncpus;
/* One more than the largest timer id set up since the reset. */
static unsigned int kwo_ids;
static bool kwo_idle[KWO_MAX_CPUS];

const char *kwo_release(void) { return UTS_RELEASE; }
int kwo_hz(void) { return HZ; }
int kwo_max_cpus(void) { return min(KWO_MAX_CPUS, NR_CPUS); }
unsigned long long kwo_initial_jiffies(void) { return INITIAL_JIFFIES; }

/* basem for jiffies j: CLOCK_MONOTONIC of the tick at j, jiffies having
 * started at INITIAL_JIFFIES at time 0. */
static u64 kwo_basem(unsigned long j)
{
	return (u64)(j - INITIAL_JIFFIES) * TICK_NSEC;
}

/* Run as cpu at jiffies j: what each entry point does first. */
static void kwo_enter(int cpu, unsigned long long j)
{
	if (cpu < 0 || cpu >= kwo_ncpus)
		tk_bug(__FILE__, __LINE__);
	jiffies_64 = j;
	tk_select_cpu(cpu);
}

int kwo_reset(int ncpus, unsigned long long j)
{
	if (ncpus < 1 || ncpus > KWO_MAX_CPUS || ncpus > NR_CPUS)
		return -1;
	memset(kwo_timers, 0, sizeof(kwo_timers));
	memset(kwo_idle, 0, sizeof(kwo_idle));
	kwo_ids = 0;
	kwo_ncpus = ncpus;
	if (tk_reset(ncpus))
		return -1;
	kwo_enter(0, j);
	init_timers();
	/* What the tick code does once NO_HZ is active (tick_nohz_activate()). */
	timers_update_nohz();
	return 0;
}

/* The callback of every oracle timer: record the run, and re-arm with
 * mod_timer(timer, jiffies + period) when the caller declared a period. */
static void kwo_fn(struct timer_list *t)
{
	struct kwo_timer *kt = container_of(t, struct kwo_timer, t);
	unsigned int cpu = t->flags & TIMER_CPUMASK;
	struct timer_base *base = get_timer_cpu_base(t->flags, cpu);
	struct kwo_expiry *e;

	if (kwo_out_n >= kwo_out_max) {
		kwo_out_n++;
		return;
	}
	e = &kwo_out[kwo_out_n++];
	e->id = kt->id;
	e->clk = base->clk - 1;
	e->cpu = cpu;
	e->base = base - per_cpu_ptr(&timer_bases[0], cpu);
	e->rearmed = 0;
	e->new_expires = 0;
	if (kt->period) {
		mod_timer(t, jiffies + kt->period);
		e->rearmed = 1;
		e->new_expires = t->expires;
		base = get_timer_base(t->flags);
		calc_wheel_index(t->expires, base->clk, &kt->bucket_expiry);
	}
}

int kwo_mod(int cpu, unsigned long long j, unsigned int id,
	    unsigned long long expires, unsigned int flags,
	    unsigned long long period, int *on, int *idx,
	    unsigned long long *bucket_expiry)
{
	struct timer_base *old_base = NULL, *base;
	unsigned int old_idx = 0;
	struct kwo_timer *kt;
	int ret;

	if (id >= KWO_MAX_TIMERS)
		tk_bug(__FILE__, __LINE__);
	kwo_enter(cpu, j);
	kt = &kwo_timers[id];
	if (!kt->set_up) {
		unsigned int tf = 0;

		if (flags & KWO_PINNED)
			tf |= TIMER_PINNED;
		if (flags & KWO_DEFERRABLE)
			tf |= TIMER_DEFERRABLE;
		if (flags & KWO_IRQSAFE)
			tf |= TIMER_IRQSAFE;
		timer_setup(&kt->t, kwo_fn, tf);
		kt->id = id;
		kt->set_up = true;
		if (id >= kwo_ids)
			kwo_ids = id + 1;
	}
	kt->period = period;
	if (timer_pending(&kt->t)) {
		old_base = get_timer_base(kt->t.flags);
		old_idx = timer_get_idx(&kt->t);
	}
	ret = mod_timer(&kt->t, expires);
	*on = kt->t.flags & TIMER_CPUMASK;
	*idx = timer_get_idx(&kt->t);
	base = get_timer_base(kt->t.flags);
	/*
	 * A pending timer left in its bucket (same expiry, or the same index
	 * on the same base) keeps its bucket expiry; any other start queued
	 * it with calc_wheel_index(expires, base->clk), and nothing has moved
	 * the base's clock since.
	 */
	if (!(old_base == base && old_idx == (unsigned int)*idx))
		calc_wheel_index(kt->t.expires, base->clk, &kt->bucket_expiry);
	*bucket_expiry = kt->bucket_expiry;
	return ret;
}

int kwo_forget(unsigned int id)
{
	if (id >= KWO_MAX_TIMERS)
		tk_bug(__FILE__, __LINE__);
	if (kwo_timers[id].set_up && timer_pending(&kwo_timers[id].t))
		return 0;
	kwo_timers[id].set_up = false;
	return 1;
}

int kwo_del(int cpu, unsigned long long j, unsigned int id)
{
	if (id >= KWO_MAX_TIMERS)
		tk_bug(__FILE__, __LINE__);
	kwo_enter(cpu, j);
	if (!kwo_timers[id].set_up)
		return 0;
	return timer_delete(&kwo_timers[id].t);
}

static void kwo_collect(struct kwo_expiry *out, int max)
{
	kwo_out = out;
	kwo_out_n = 0;
	kwo_out_max = max;
}

int kwo_run(int cpu, unsigned long long j, struct kwo_expiry *out, int max)
{
	kwo_enter(cpu, j);
	kwo_collect(out, max);
	run_timer_softirq();
	return kwo_out_n;
}

int kwo_expire_remote(int on, int cpu, unsigned long long j,
		      struct kwo_expiry *out, int max)
{
	if (cpu < 0 || cpu >= kwo_ncpus)
		tk_bug(__FILE__, __LINE__);
	kwo_enter(on, j);
	kwo_collect(out, max);
	timer_expire_remote(cpu);
	return kwo_out_n;
}

int kwo_tick(int cpu, unsigned long long j)
{
	kwo_enter(cpu, j);
	tk_softirq_take(cpu);
	run_local_timers();
	return (tk_softirq_take(cpu) >> TIMER_SOFTIRQ) & 1;
}

void kwo_next_event(int cpu, unsigned long long j, int try_idle,
		    struct kwo_next *out)
{
	u64 basem = kwo_basem(j), ret;
	u64 global;

	kwo_enter(cpu, j);
	tk_tmigr_take(cpu, NULL);
	if (try_idle)
		ret = timer_base_try_to_set_idle(j, basem, &kwo_idle[cpu]);
	else
		ret = get_next_timer_interrupt(j, basem);
	out->ret_ns = ret;
	out->basem = basem;
	out->next_j = ret == KTIME_MAX ? ~0ULL : j + (ret - basem) / TICK_NSEC;
	out->tmigr_called = tk_tmigr_take(cpu, &global);
	out->tmigr_global_j = global == KTIME_MAX ? ~0ULL : j + (global - basem) / TICK_NSEC;
	out->idle = kwo_idle[cpu];
}

void kwo_clear_idle(int cpu, unsigned long long j)
{
	kwo_enter(cpu, j);
	timer_clear_idle();
	kwo_idle[cpu] = false;
}

void kwo_base(int cpu, int b, struct kwo_base *out)
{
	static struct timer_base copy;
	struct timer_base *base;

	if (cpu < 0 || cpu >= kwo_ncpus || b < 0 || b >= NR_BASES)
		tk_bug(__FILE__, __LINE__);
	base = per_cpu_ptr(&timer_bases[b], cpu);
	out->clk = base->clk;
	out->next_expiry = base->next_expiry;
	out->recalc = base->next_expiry_recalc;
	out->timers_pending = base->timers_pending;
	out->is_idle = base->is_idle;
	out->fresh_next = base->next_expiry;
	out->fresh_pending = base->timers_pending;
	if (base->next_expiry_recalc) {
		copy = *base;
		timer_recalc_next_expiry(&copy);
		out->fresh_next = copy.next_expiry;
		out->fresh_pending = copy.timers_pending;
	}
}

int kwo_timer(unsigned int id, int *cpu, int *idx)
{
	struct kwo_timer *kt;

	if (id >= KWO_MAX_TIMERS || !kwo_timers[id].set_up)
		return 0;
	kt = &kwo_timers[id];
	*cpu = kt->t.flags & TIMER_CPUMASK;
	*idx = timer_get_idx(&kt->t);
	return timer_pending(&kt->t);
}

int kwo_pending(int cpu)
{
	int n = 0;

	for (unsigned int i = 0; i < kwo_ids; i++) {
		struct kwo_timer *kt = &kwo_timers[i];

		if (kt->set_up && timer_pending(&kt->t) &&
		    (kt->t.flags & TIMER_CPUMASK) == (unsigned int)cpu)
			n++;
	}
	return n;
}

unsigned long long kwo_wakeups(int cpu) { return tk_wakeups(cpu); }

unsigned long long kwo_warnings(const char **file, int *line)
{
	return tk_warnings(file, line);
}
