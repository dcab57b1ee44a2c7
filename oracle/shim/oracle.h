/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oracle.h: the oracle library's C interface (libktimer-oracle.so), the
 * kernel's kernel/time/timer.c run as user code. No kernel type crosses it:
 * callers (the Go differential tests, the kwheel plugin) include only this.
 *
 * Every call names the CPU it runs on and the global jiffies at the call;
 * jiffies must never go backwards between calls. Timers are named by small
 * integers below KWO_MAX_TIMERS; a timer's flags are fixed by its first
 * kwo_mod() (timer_setup()).
 */
#ifndef TICKEMU_ORACLE_H
#define TICKEMU_ORACLE_H

#define KWO_MAX_CPUS 64
#define KWO_MAX_TIMERS 65536
#define KWO_MAX_EXPIRED 65536

/* Timer flags (include/linux/timer.h TIMER_* bits, renumbered). */
#define KWO_PINNED 1
#define KWO_DEFERRABLE 2
#define KWO_IRQSAFE 4

/* Base indexes of kernel/time/timer.c (NO_HZ_COMMON). */
#define KWO_BASE_LOCAL 0
#define KWO_BASE_GLOBAL 1
#define KWO_BASE_DEF 2
#define KWO_NR_BASES 3

/* One timer callback run by kwo_run()/kwo_expire_remote(). */
struct kwo_expiry {
	unsigned long long id;
	/* base->clk - 1 when the callback ran: the collected jiffy until a
	 * re-arm in the same run forwards the base. */
	unsigned long long clk;
	/* rearmed: the callback re-armed the timer (period); its new expiry. */
	unsigned long long new_expires;
	int rearmed;
	int cpu;  /* the CPU whose base held the timer */
	int base; /* which of its bases (KWO_BASE_*) */
};

/* A timer base as the kernel holds it. */
struct kwo_base {
	unsigned long long clk, next_expiry;
	/* next_expiry and timers_pending as timer_recalc_next_expiry() would
	 * leave them (computed on a copy when next_expiry_recalc is set). */
	unsigned long long fresh_next;
	int recalc, timers_pending, fresh_pending, is_idle;
};

/* What one idle-entry call answered. */
struct kwo_next {
	unsigned long long ret_ns;  /* the function's return value */
	unsigned long long basem;   /* the basem passed in */
	unsigned long long next_j;  /* ret_ns as jiffies (~0 for KTIME_MAX) */
	/* The tevt->global the kernel handed to the timer migration hierarchy
	 * (tmigr_cpu_deactivate(), tmigr_cpu_new_timer() or
	 * tmigr_quick_check()), as jiffies; tmigr_called is 0 when it did not
	 * call the hierarchy (next event at most a jiffy away). */
	unsigned long long tmigr_global_j;
	int tmigr_called;
	int idle; /* *idle after timer_base_try_to_set_idle() */
};

const char *kwo_release(void);   /* UTS_RELEASE of the tree built */
int kwo_hz(void);                /* CONFIG_HZ */
int kwo_max_cpus(void);          /* CPUs kwo_reset() takes: KWO_MAX_CPUS or NR_CPUS */
unsigned long long kwo_initial_jiffies(void); /* INITIAL_JIFFIES */

/* Forget every timer and bring ncpus CPUs up at jiffies j (init_timers()
 * and timers_update_nohz()). 0 on success. */
int kwo_reset(int ncpus, unsigned long long j);

/* mod_timer() on cpu; *on, *idx and *bucket_expiry say where the timer
 * is queued: its CPU, wheel index and the jiffy its bucket is processed at
 * (what the timer_start trace point prints). */
int kwo_mod(int cpu, unsigned long long j, unsigned int id,
	    unsigned long long expires, unsigned int flags,
	    unsigned long long period, int *on, int *idx,
	    unsigned long long *bucket_expiry);
/* Forget timer id, which must not be queued: its next kwo_mod() sets it up
 * afresh (timer_setup()) with that call's flags. 0 if it was queued. */
int kwo_forget(unsigned int id);
/* timer_delete() on cpu. */
int kwo_del(int cpu, unsigned long long j, unsigned int id);
/* run_timer_softirq() on cpu; returns the number of callbacks run, whose
 * records are in out[0..n) (n <= max). */
int kwo_run(int cpu, unsigned long long j, struct kwo_expiry *out, int max);
/* timer_expire_remote(cpu) run on CPU on. */
int kwo_expire_remote(int on, int cpu, unsigned long long j,
		      struct kwo_expiry *out, int max);
/* run_local_timers() on cpu: 1 when it raised TIMER_SOFTIRQ. */
int kwo_tick(int cpu, unsigned long long j);
/* get_next_timer_interrupt() (try_idle 0) or timer_base_try_to_set_idle()
 * (try_idle 1, with the CPU's idle state as kept since its last
 * kwo_clear_idle()). */
void kwo_next_event(int cpu, unsigned long long j, int try_idle,
		    struct kwo_next *out);
/* timer_clear_idle() on cpu. */
void kwo_clear_idle(int cpu, unsigned long long j);
/* cpu's base b. */
void kwo_base(int cpu, int b, struct kwo_base *out);
/* Whether timer id is pending, and where (CPU, wheel index). */
int kwo_timer(unsigned int id, int *cpu, int *idx);
/* Timers pending on cpu's bases. */
int kwo_pending(int cpu);
/* wake_up_nohz_cpu(cpu) calls from another CPU since the reset (remote
 * wake-ups). */
unsigned long long kwo_wakeups(int cpu);
/* WARN()s hit since the reset; the first one's file and line. */
unsigned long long kwo_warnings(const char **file, int *line);

#endif /* TICKEMU_ORACLE_H */
