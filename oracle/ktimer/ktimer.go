// SPDX-License-Identifier: GPL-2.0

//go:build kernel_oracle

package ktimer

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include "../shim/oracle.h"

struct kwo_fns {
	const char *(*release)(void);
	int (*hz)(void);
	int (*max_cpus)(void);
	unsigned long long (*initial_jiffies)(void);
	int (*reset)(int, unsigned long long);
	int (*mod)(int, unsigned long long, unsigned int, unsigned long long, unsigned int,
		   unsigned long long, int *, int *, unsigned long long *);
	int (*forget)(unsigned int);
	int (*del)(int, unsigned long long, unsigned int);
	int (*run)(int, unsigned long long, struct kwo_expiry *, int);
	int (*expire_remote)(int, int, unsigned long long, struct kwo_expiry *, int);
	int (*tick)(int, unsigned long long);
	void (*next_event)(int, unsigned long long, int, struct kwo_next *);
	void (*clear_idle)(int, unsigned long long);
	void (*base)(int, int, struct kwo_base *);
	int (*timer)(unsigned int, int *, int *);
	int (*pending)(int);
	unsigned long long (*wakeups)(int);
	unsigned long long (*warnings)(const char **, int *);
};

// kwo_load fills f from the library at path; NULL on success, else the
// name of the missing symbol or dlerror()'s text.
static const char *kwo_load(const char *path, struct kwo_fns *f) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return dlerror();
#define SYM(field, name) if (!(*(void **)&f->field = dlsym(h, name))) return name;
	SYM(release, "kwo_release")
	SYM(hz, "kwo_hz")
	SYM(max_cpus, "kwo_max_cpus")
	SYM(initial_jiffies, "kwo_initial_jiffies")
	SYM(reset, "kwo_reset")
	SYM(mod, "kwo_mod")
	SYM(del, "kwo_del")
	SYM(forget, "kwo_forget")
	SYM(run, "kwo_run")
	SYM(expire_remote, "kwo_expire_remote")
	SYM(tick, "kwo_tick")
	SYM(next_event, "kwo_next_event")
	SYM(clear_idle, "kwo_clear_idle")
	SYM(base, "kwo_base")
	SYM(timer, "kwo_timer")
	SYM(pending, "kwo_pending")
	SYM(wakeups, "kwo_wakeups")
	SYM(warnings, "kwo_warnings")
#undef SYM
	return NULL;
}

static const char *kwo_call_release(struct kwo_fns *f) { return f->release(); }
static int kwo_call_hz(struct kwo_fns *f) { return f->hz(); }
static int kwo_call_max_cpus(struct kwo_fns *f) { return f->max_cpus(); }
static unsigned long long kwo_call_initial_jiffies(struct kwo_fns *f) { return f->initial_jiffies(); }
static int kwo_call_reset(struct kwo_fns *f, int n, unsigned long long j) { return f->reset(n, j); }
static int kwo_call_mod(struct kwo_fns *f, int cpu, unsigned long long j, unsigned int id,
			unsigned long long expires, unsigned int flags, unsigned long long period,
			int *on, int *idx, unsigned long long *be) {
	return f->mod(cpu, j, id, expires, flags, period, on, idx, be);
}
static int kwo_call_forget(struct kwo_fns *f, unsigned int id) { return f->forget(id); }
static int kwo_call_del(struct kwo_fns *f, int cpu, unsigned long long j, unsigned int id) {
	return f->del(cpu, j, id);
}
static int kwo_call_run(struct kwo_fns *f, int cpu, unsigned long long j, struct kwo_expiry *out, int max) {
	return f->run(cpu, j, out, max);
}
static int kwo_call_expire_remote(struct kwo_fns *f, int on, int cpu, unsigned long long j,
				  struct kwo_expiry *out, int max) {
	return f->expire_remote(on, cpu, j, out, max);
}
static int kwo_call_tick(struct kwo_fns *f, int cpu, unsigned long long j) { return f->tick(cpu, j); }
static void kwo_call_next_event(struct kwo_fns *f, int cpu, unsigned long long j, int try_idle,
				struct kwo_next *out) {
	f->next_event(cpu, j, try_idle, out);
}
static void kwo_call_clear_idle(struct kwo_fns *f, int cpu, unsigned long long j) { f->clear_idle(cpu, j); }
static void kwo_call_base(struct kwo_fns *f, int cpu, int b, struct kwo_base *out) { f->base(cpu, b, out); }
static int kwo_call_timer(struct kwo_fns *f, unsigned int id, int *cpu, int *idx) {
	return f->timer(id, cpu, idx);
}
static int kwo_call_pending(struct kwo_fns *f, int cpu) { return f->pending(cpu); }
static unsigned long long kwo_call_wakeups(struct kwo_fns *f, int cpu) { return f->wakeups(cpu); }
static unsigned long long kwo_call_warnings(struct kwo_fns *f, const char **file, int *line) {
	return f->warnings(file, line);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"
)

// Flags are a timer's TIMER_* flags (include/linux/timer.h).
type Flags uint32

// Timer flags.
const (
	Pinned     Flags = C.KWO_PINNED
	Deferrable Flags = C.KWO_DEFERRABLE
	IRQSafe    Flags = C.KWO_IRQSAFE
)

// The CPU's timer bases (kernel/time/timer.c, NO_HZ_COMMON).
const (
	BaseLocal  = C.KWO_BASE_LOCAL
	BaseGlobal = C.KWO_BASE_GLOBAL
	BaseDef    = C.KWO_BASE_DEF
	NrBases    = C.KWO_NR_BASES
)

// MaxTimers bounds timer ids (KWO_MAX_TIMERS).
const MaxTimers = C.KWO_MAX_TIMERS

// NoExpiry is the jiffy value of "no event" (KTIME_MAX converted).
const NoExpiry = ^uint64(0)

// Expiry is one timer callback the kernel ran.
type Expiry struct {
	ID uint32
	// Clk is the timer's base clock minus one when its callback ran: the
	// jiffy the timer's bucket was collected at, until a re-arm in the
	// same run forwarded the base (the kernel's own trace point reads it
	// so).
	Clk uint64
	// Rearmed: the callback re-armed the timer (a declared period) to
	// NewExpires.
	Rearmed    bool
	NewExpires uint64
	CPU        int // the CPU whose base held the timer
	Base       int // which of its bases (BaseLocal, BaseGlobal, BaseDef)
}

// Base is one timer base as the kernel holds it (struct timer_base).
type Base struct {
	Clk, NextExpiry       uint64
	Recalc, TimersPending bool // next_expiry_recalc, timers_pending
	FreshNext             uint64
	FreshPending, IsIdle  bool
}

// Next is what get_next_timer_interrupt() or timer_base_try_to_set_idle()
// answered.
type Next struct {
	RetNS, BaseM uint64
	NextJ        uint64 // RetNS in jiffies, NoExpiry for KTIME_MAX
	// TmigrCalled: the wheel handed its first global timer to the timer
	// migration hierarchy, at TmigrGlobalJ (NoExpiry: none).
	TmigrCalled  bool
	TmigrGlobalJ uint64
	Idle         bool // the base's is_idle after the call
}

// Lib is the loaded oracle library.
type Lib struct {
	fns  C.struct_kwo_fns
	path string
	out  *C.struct_kwo_expiry
}

// maxExpired bounds one run's callbacks (the library's KWO_MAX_EXPIRED).
const maxExpired = C.KWO_MAX_EXPIRED

var (
	loadMu sync.Mutex
	loaded = map[string]*Lib{}
)

// DefaultPath is where `make kernel-oracle` puts the library: $KERNEL_ORACLE_LIB
// if set, else bin/oracle/libktimer-oracle.so in the repository (build
// output, never committed).
func DefaultPath() string {
	if p := os.Getenv("KERNEL_ORACLE_LIB"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "bin", "oracle", "libktimer-oracle.so")
}

// ErrMissing is wrapped by Open's error when the library does not exist.
var ErrMissing = errors.New("kernel oracle library missing: build it with `make kernel-oracle` (scripts/kernel-oracle.sh, docs/kernel-oracle.md)")

// Open loads the library at path (once per path and process).
func Open(path string) (*Lib, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if l := loaded[abs]; l != nil {
		return l, nil
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("%s: %w", abs, ErrMissing)
	}
	cpath := C.CString(abs)
	defer C.free(unsafe.Pointer(cpath))
	l := &Lib{path: abs}
	if msg := C.kwo_load(cpath, &l.fns); msg != nil {
		return nil, fmt.Errorf("loading kernel oracle %s: %s (rebuild it with `make kernel-oracle`)", abs, C.GoString(msg))
	}
	l.out = (*C.struct_kwo_expiry)(C.calloc(maxExpired, C.size_t(unsafe.Sizeof(C.struct_kwo_expiry{}))))
	loaded[abs] = l
	return l, nil
}

// Path is the library's file.
func (l *Lib) Path() string { return l.path }

// Release is the kernel release the library was built from (UTS_RELEASE).
func (l *Lib) Release() string { return C.GoString(C.kwo_call_release(&l.fns)) }

// HZ is the kernel's CONFIG_HZ.
func (l *Lib) HZ() int { return int(C.kwo_call_hz(&l.fns)) }

// MaxCPUs is the largest machine the library runs (its NR_CPUS, at most
// KWO_MAX_CPUS).
func (l *Lib) MaxCPUs() int { return int(C.kwo_call_max_cpus(&l.fns)) }

// InitialJiffies is the kernel's INITIAL_JIFFIES.
func (l *Lib) InitialJiffies() uint64 { return uint64(C.kwo_call_initial_jiffies(&l.fns)) }

// Reset forgets every timer and brings cpus CPUs up at jiffies j.
func (l *Lib) Reset(cpus int, j uint64) error {
	if C.kwo_call_reset(&l.fns, C.int(cpus), C.ulonglong(j)) != 0 {
		return fmt.Errorf("kernel oracle: cannot reset to %d CPUs (at most %d)", cpus, l.MaxCPUs())
	}
	return nil
}

// Mod is mod_timer() on cpu at jiffies j; a timer's flags are fixed by
// its first Mod (or first after Forget). period > 0 makes the callback
// re-arm the timer with mod_timer(timer, jiffies + period). It returns
// mod_timer()'s value and where the timer is queued.
func (l *Lib) Mod(cpu int, j uint64, id uint32, expires uint64, f Flags, period uint64) (wasPending bool, q Queued) {
	var con, cidx C.int
	var be C.ulonglong
	r := C.kwo_call_mod(&l.fns, C.int(cpu), C.ulonglong(j), C.uint(id), C.ulonglong(expires), C.uint(f),
		C.ulonglong(period), &con, &cidx, &be)
	return r != 0, Queued{CPU: int(con), Index: int(cidx), BucketExpiry: uint64(be)}
}

// Queued says where Mod queued a timer: its CPU, its wheel index and the
// jiffy its bucket is processed at (the timer_start trace point's cpu,
// idx and bucket_expiry).
type Queued struct {
	CPU, Index   int
	BucketExpiry uint64
}

// Forget drops timer id, which must not be queued, so that its next Mod
// sets it up afresh with that call's flags; false if it is queued.
func (l *Lib) Forget(id uint32) bool { return C.kwo_call_forget(&l.fns, C.uint(id)) != 0 }

// Del is timer_delete() on cpu at jiffies j.
func (l *Lib) Del(cpu int, j uint64, id uint32) bool {
	return C.kwo_call_del(&l.fns, C.int(cpu), C.ulonglong(j), C.uint(id)) != 0
}

func (l *Lib) expiries(n C.int) []Expiry {
	if n > maxExpired {
		panic(fmt.Sprintf("kernel oracle: %d callbacks in one run (at most %d recorded)", n, maxExpired))
	}
	if n == 0 {
		return nil
	}
	recs := unsafe.Slice(l.out, int(n))
	out := make([]Expiry, n)
	for i, r := range recs {
		out[i] = Expiry{ID: uint32(r.id), Clk: uint64(r.clk), Rearmed: r.rearmed != 0,
			NewExpires: uint64(r.new_expires), CPU: int(r.cpu), Base: int(r.base)}
	}
	return out
}

// Run is run_timer_softirq() on cpu at jiffies j: the callbacks it ran, in order.
func (l *Lib) Run(cpu int, j uint64) []Expiry {
	return l.expiries(C.kwo_call_run(&l.fns, C.int(cpu), C.ulonglong(j), l.out, maxExpired))
}

// ExpireRemote is timer_expire_remote(cpu) run on CPU on at jiffies j.
func (l *Lib) ExpireRemote(on, cpu int, j uint64) []Expiry {
	return l.expiries(C.kwo_call_expire_remote(&l.fns, C.int(on), C.int(cpu), C.ulonglong(j), l.out, maxExpired))
}

// Tick is run_local_timers() on cpu at jiffies j: whether it raised TIMER_SOFTIRQ.
func (l *Lib) Tick(cpu int, j uint64) bool {
	return C.kwo_call_tick(&l.fns, C.int(cpu), C.ulonglong(j)) != 0
}

// NextEvent is get_next_timer_interrupt() (tryIdle false) or
// timer_base_try_to_set_idle() (tryIdle true) on cpu at jiffies j.
func (l *Lib) NextEvent(cpu int, j uint64, tryIdle bool) Next {
	var n C.struct_kwo_next
	t := C.int(0)
	if tryIdle {
		t = 1
	}
	C.kwo_call_next_event(&l.fns, C.int(cpu), C.ulonglong(j), t, &n)
	return Next{RetNS: uint64(n.ret_ns), BaseM: uint64(n.basem), NextJ: uint64(n.next_j),
		TmigrCalled: n.tmigr_called != 0, TmigrGlobalJ: uint64(n.tmigr_global_j), Idle: n.idle != 0}
}

// ClearIdle is timer_clear_idle() on cpu at jiffies j.
func (l *Lib) ClearIdle(cpu int, j uint64) { C.kwo_call_clear_idle(&l.fns, C.int(cpu), C.ulonglong(j)) }

// Base reads cpu's base b.
func (l *Lib) Base(cpu, b int) Base {
	var o C.struct_kwo_base
	C.kwo_call_base(&l.fns, C.int(cpu), C.int(b), &o)
	return Base{Clk: uint64(o.clk), NextExpiry: uint64(o.next_expiry), Recalc: o.recalc != 0,
		TimersPending: o.timers_pending != 0, FreshNext: uint64(o.fresh_next),
		FreshPending: o.fresh_pending != 0, IsIdle: o.is_idle != 0}
}

// Timer says whether timer id is pending and where.
func (l *Lib) Timer(id uint32) (pending bool, cpu, idx int) {
	var c, i C.int
	p := C.kwo_call_timer(&l.fns, C.uint(id), &c, &i)
	return p != 0, int(c), int(i)
}

// Pending counts the timers queued on cpu's bases.
func (l *Lib) Pending(cpu int) int { return int(C.kwo_call_pending(&l.fns, C.int(cpu))) }

// Wakeups counts wake_up_nohz_cpu(cpu) calls from another CPU since the
// reset (remote wake-ups).
func (l *Lib) Wakeups(cpu int) uint64 { return uint64(C.kwo_call_wakeups(&l.fns, C.int(cpu))) }

// Warnings counts the kernel's WARN()s since the reset and says where the first was.
func (l *Lib) Warnings() (n uint64, file string, line int) {
	var f *C.char
	var ln C.int
	n = uint64(C.kwo_call_warnings(&l.fns, &f, &ln))
	if f != nil {
		file = C.GoString(f)
	}
	return n, file, int(ln)
}
