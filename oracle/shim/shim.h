/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shim.h: what the shim (shim.c) offers the oracle's entry points
 * (oracle.c) besides the kernel functions it stands in for.
 */
#ifndef TICKEMU_ORACLE_SHIM_H
#define TICKEMU_ORACLE_SHIM_H

#include <linux/types.h>

/* Allocate the per-CPU copies of ncpus CPUs afresh from the per-CPU
 * template, mark the CPUs possible, present, online and active, and clear
 * every record below. 0 on success. */
int tk_reset(int ncpus);
/* Run as cpu from now on: per-CPU accesses reach cpu's copy. */
void tk_select_cpu(int cpu);
/* The softirqs raised on cpu since the last call, as a bit mask. */
unsigned int tk_softirq_take(int cpu);
/* Whether cpu called the timer migration hierarchy since the last call;
 * *global (if not NULL) is the expiry it handed over (KTIME_MAX if none). */
int tk_tmigr_take(int cpu, u64 *global);
/* wake_up_nohz_cpu(cpu) calls since the reset. */
unsigned long long tk_wakeups(int cpu);
/* WARN()s since the reset, and where the first one was. */
unsigned long long tk_warnings(const char **file, int *line);

/* host.c: the C library, from a unit built with user-space flags. */
void *tk_host_alloc(unsigned long size, unsigned long align);
void __attribute__((noreturn)) tk_host_die(const char *what, const char *file, int line);

#endif
