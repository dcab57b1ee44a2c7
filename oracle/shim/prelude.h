/* SPDX-License-Identifier: GPL-2.0 */
/*
 * prelude.h: included (gcc -include) after the kernel's own forced
 * includes into every translation unit of the oracle library, before any
 * kernel header the unit names itself. It makes the x86 kernel headers
 * compile to code that runs as an ordinary user process:
 *
 *  - per-CPU data: the x86 accessors address the running CPU's copy
 *    through the %gs segment. Here every accessor adds tk_percpu_offset
 *    instead, the distance from a per-CPU variable's link address to the
 *    copy of the CPU the oracle currently runs as (oracle.c selects it
 *    before each call into the kernel's code), which is what the generic
 *    accessors of asm-generic/percpu.h do with __my_cpu_offset.
 *  - interrupt flags: arch_local_irq_*() would execute cli/sti/pushf/popf,
 *    which fault in user mode. Here they update a per-CPU "interrupts
 *    disabled" word kept by the shim (shim.c).
 *  - BUG()/WARN(): the x86 forms execute ud2 and rely on the kernel's
 *    exception table. Here they call the shim, which counts warnings (the
 *    tests fail on any) and aborts on BUG().
 *
 * The macros below are expanded where kernel code uses them, so they take
 * effect for every header included afterwards; the headers' original
 * inline functions are left unused.
 */
#ifndef TICKEMU_ORACLE_PRELUDE_H
#define TICKEMU_ORACLE_PRELUDE_H

#ifndef __ASSEMBLY__

/* First, so that the inline functions of later headers use tk_warn(). */
#include <asm/bug.h>

void tk_warn(const char *file, int line);
void __attribute__((noreturn)) tk_bug(const char *file, int line);

#undef __WARN_FLAGS
#define __WARN_FLAGS(flags) tk_warn(__FILE__, __LINE__)
#undef BUG
#define BUG() tk_bug(__FILE__, __LINE__)

#include <asm/percpu.h>

extern unsigned long tk_percpu_offset;

/* The running CPU's copy of a per-CPU variable: no segment, no prefix. */
#undef __percpu_seg_override
#define __percpu_seg_override
#undef __percpu_prefix
#define __percpu_prefix ""
#undef __force_percpu_prefix
#define __force_percpu_prefix ""
#undef __my_cpu_ptr
#define __my_cpu_ptr(ptr) \
	((typeof(*(ptr)) *)((unsigned long)(ptr) + tk_percpu_offset))
#undef __my_cpu_offset
#define __my_cpu_offset tk_percpu_offset
#undef arch_raw_cpu_ptr
#define arch_raw_cpu_ptr(_ptr) \
	((typeof(*(_ptr)) __kernel __force *)((unsigned long)(_ptr) + tk_percpu_offset))
/* this_cpu_read_stable() takes the variable's absolute address ("i"). */
#undef __raw_cpu_read_stable
#define __raw_cpu_read_stable(size, _var) (*__my_cpu_ptr(&(_var)))

/* current: the running CPU's pcpu_hot.current_task, read as above (the
 * x86 form reads a %gs-qualified alias of pcpu_hot). */
#include <asm/current.h>
#undef current
#define current this_cpu_read(pcpu_hot.current_task)

#include <asm/irqflags.h>

unsigned long tk_irq_save_flags(void);
void tk_irq_restore(unsigned long flags);
void tk_irq_disable(void);
void tk_irq_enable(void);
unsigned long tk_irq_save(void);
int tk_irqs_disabled(void);

#define arch_local_save_flags() tk_irq_save_flags()
#define arch_local_irq_restore(flags) tk_irq_restore(flags)
#define arch_local_irq_disable() tk_irq_disable()
#define arch_local_irq_enable() tk_irq_enable()
#define arch_local_irq_save() tk_irq_save()
#define arch_irqs_disabled() tk_irqs_disabled()

#endif /* !__ASSEMBLY__ */
#endif /* TICKEMU_ORACLE_PRELUDE_H */
