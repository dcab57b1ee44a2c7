package trace

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace/tracedat"
)

// The trace.dat format (--trace FILE.dat): the same events as the text
// trace, as binary ring-buffer records with the event format files the
// kernel would show in tracefs, so trace-cmd report and KernelShark decode
// the fields themselves. The formats are those of Linux 6.12's
// include/trace/events/{timer,irq,irq_vectors,sched,signal,power}.h (the
// fields the text trace prints, in the kernel's order, offsets and sizes as
// tracefs lists them on x86-64), with enum constants written as numbers (a
// kernel with TRACE_DEFINE_ENUM shows them so), and timer_start's flag
// mask as one constant (the kernel's (TIMER_MIGRATING | ... ) is read by
// libtraceevent as (flags & TIMER_MIGRATING) | ..., which prints every flag
// set). Each record is rebuilt from
// the event's text fields: the emitters stay the same for every format.

// datField is one field of an event's format.
type datField struct {
	decl   string // C declaration as the format file shows it ("void * hrtimer")
	size   int
	signed bool
	key    string // the text's key when it differs from the field name
	kind   datKind
	syms   map[string]int64 // datSymbolic: the text values' numbers
}

type datKind int

const (
	datInt      datKind = iota // decimal (or 0x hex) integer
	datHex                     // hex digits, no 0x (%p, %lx)
	datFunc                    // a function name: its kallsyms address
	datComm                    // char[16]
	datString                  // __data_loc char[]
	datSymbolic                // a name from syms, or a number
)

func (f *datField) name() string {
	n := f.decl[strings.LastIndexByte(f.decl, ' ')+1:]
	if i := strings.IndexByte(n, '['); i >= 0 {
		n = n[:i]
	}
	return n
}

// datEvent is one event's format and how its text becomes a record.
type datEvent struct {
	system, name string
	id           int
	fields       []datField
	print        string // print fmt: "...", args
	// prep derives the values of fields the text prints in another form
	// (timer_start's timeout, cpu, idx and flags; itimer_state's it_value).
	prep func(kv map[string]string)
}

func fInt(decl string, size int, signed bool) datField {
	return datField{decl: decl, size: size, signed: signed}
}
func fPtr(decl string) datField  { return datField{decl: decl, size: 8, kind: datHex} }
func fFunc(decl string) datField { return datField{decl: decl, size: 8, kind: datFunc} }
func fComm(decl string) datField { return datField{decl: decl, size: 16, kind: datComm} }

// HRTIMER_MODE_* (include/linux/hrtimer.h): ABS 0, REL 1, PINNED 2, SOFT 4, HARD 8.
var hrtimerModes = map[string]int64{
	"ABS": 0, "REL": 1, "ABS|PINNED": 2, "REL|PINNED": 3, "ABS|SOFT": 4, "REL|SOFT": 5,
	"ABS|PINNED|SOFT": 6, "REL|PINNED|SOFT": 7, "ABS|HARD": 8, "REL|HARD": 9,
	"ABS|PINNED|HARD": 10, "REL|PINNED|HARD": 11,
}

const hrtimerModePrint = `__print_symbolic(REC->mode, { 0, "ABS" }, { 1, "REL" }, { 2, "ABS|PINNED" }, { 3, "REL|PINNED" }, { 4, "ABS|SOFT" }, { 5, "REL|SOFT" }, { 6, "ABS|PINNED|SOFT" }, { 7, "REL|PINNED|SOFT" }, { 8, "ABS|HARD" }, { 9, "REL|HARD" }, { 10, "ABS|PINNED|HARD" }, { 11, "REL|PINNED|HARD" })`

var clockIDs = map[string]int64{"CLOCK_REALTIME": 0, "CLOCK_MONOTONIC": 1, "CLOCK_BOOTTIME": 7, "CLOCK_TAI": 11}

var softirqVecs = `__print_symbolic(REC->vec, { 0, "HI" }, { 1, "TIMER" }, { 2, "NET_TX" }, { 3, "NET_RX" }, { 4, "BLOCK" }, { 5, "IRQ_POLL" }, { 6, "TASKLET" }, { 7, "SCHED" }, { 8, "HRTIMER" }, { 9, "RCU" })`

// TASK_REPORT states as sched_switch prints them (include/trace/events/sched.h).
var taskStates = map[string]int64{"R": 0, "S": 1, "D": 2, "T": 4, "t": 8, "X": 16, "Z": 32, "P": 64, "I": 128, "R+": 256}

// Timer flags (include/linux/timer.h).
const (
	timerCPUMask    = 0x0003ffff
	timerMigrating  = 0x00040000
	timerDeferrable = 0x00080000
	timerPinned     = 0x00100000
	timerIRQSafe    = 0x00200000
	timerArrayShift = 22
)

// datEvents are the formats, in the order they are written. IDs are fixed
// (any numbers work: a reader maps records to formats by them).
var datEvents = []*datEvent{
	{system: "ftrace", name: "function", id: 1,
		fields: []datField{fFunc("unsigned long ip"), fFunc("unsigned long parent_ip")},
		print:  `" %ps <-- %ps", (void *)REC->ip, (void *)REC->parent_ip`},
	{system: "ftrace", name: "print", id: 5,
		fields: []datField{fFunc("unsigned long ip"), {decl: "char buf[]", kind: datString}},
		print:  `"%ps: %s", (void *)REC->ip, REC->buf`},

	hrtimerSetup(EventHRInit, 100),
	hrtimerSetup(EventHRSetup, 105),
	{system: "timer", name: "hrtimer_start", id: 101,
		fields: hrtimerStartFields,
		print:  `"hrtimer=%p function=%ps expires=%llu softexpires=%llu mode=%s", REC->hrtimer, REC->function, (unsigned long long) REC->expires, (unsigned long long) REC->softexpires, ` + hrtimerModePrint},
	{system: "timer", name: "hrtimer_expire_entry", id: 102,
		fields: []datField{fPtr("void * hrtimer"), fInt("s64 now", 8, true), fFunc("void * function")},
		print:  `"hrtimer=%p function=%ps now=%llu", REC->hrtimer, REC->function, (unsigned long long) REC->now`},
	{system: "timer", name: "hrtimer_expire_exit", id: 103, fields: []datField{fPtr("void * hrtimer")}, print: `"hrtimer=%p", REC->hrtimer`},
	{system: "timer", name: "hrtimer_cancel", id: 104, fields: []datField{fPtr("void * hrtimer")}, print: `"hrtimer=%p", REC->hrtimer`},
	{system: "timer", name: "timer_start", id: 110,
		fields: []datField{fPtr("void * timer"), fFunc("void * function"), fInt("unsigned long expires", 8, false),
			fInt("unsigned long bucket_expiry", 8, false), fInt("unsigned long now", 8, false), fInt("unsigned int flags", 4, false)},
		print: `"timer=%p function=%ps expires=%lu [timeout=%ld] bucket_expiry=%lu cpu=%u idx=%u flags=%s", REC->timer, REC->function, REC->expires, (long)REC->expires - REC->now, REC->bucket_expiry, REC->flags & 0x0003FFFF, REC->flags >> 22, __print_flags(REC->flags & 0x003C0000, "|", { 0x00040000, "M" }, { 0x00080000, "D" }, { 0x00100000, "P" }, { 0x00200000, "I" })`,
		prep:  prepTimerStart},
	{system: "timer", name: "timer_expire_entry", id: 111,
		fields: []datField{fPtr("void * timer"), fInt("unsigned long now", 8, false), fFunc("void * function"), fInt("unsigned long baseclk", 8, false)},
		print:  `"timer=%p function=%ps now=%lu baseclk=%lu", REC->timer, REC->function, REC->now, REC->baseclk`},
	{system: "timer", name: "timer_expire_exit", id: 112, fields: []datField{fPtr("void * timer")}, print: `"timer=%p", REC->timer`},
	{system: "timer", name: "timer_cancel", id: 113, fields: []datField{fPtr("void * timer")}, print: `"timer=%p", REC->timer`},
	{system: "timer", name: "itimer_state", id: 120,
		fields: []datField{fInt("int which", 4, true), fInt("unsigned long long expires", 8, false), fInt("long value_sec", 8, true),
			fInt("long value_nsec", 8, true), fInt("long interval_sec", 8, true), fInt("long interval_nsec", 8, true)},
		print: `"which=%d expires=%llu it_value=%ld.%06ld it_interval=%ld.%06ld", REC->which, REC->expires, REC->value_sec, REC->value_nsec / 1000L, REC->interval_sec, REC->interval_nsec / 1000L`,
		prep:  prepItimerState},
	{system: "timer", name: "itimer_expire", id: 121,
		fields: []datField{fInt("int which", 4, true), fInt("pid_t pid", 4, true), fInt("unsigned long long now", 8, false)},
		print:  `"which=%d pid=%d now=%llu", REC->which, (int) REC->pid, REC->now`},
	{system: "timer", name: "tick_stop", id: 130,
		fields: []datField{fInt("int success", 4, true), {decl: "int dependency", size: 4, signed: true, kind: datSymbolic,
			syms: map[string]int64{"NONE": 0, "POSIX_TIMER": 1, "PERF_EVENTS": 2, "SCHED": 4, "CLOCK_UNSTABLE": 8, "RCU": 16, "RCU_EXP": 32}}},
		print: `"success=%d dependency=%s", REC->success, __print_symbolic(REC->dependency, { 0, "NONE" }, { (1 << 0), "POSIX_TIMER" }, { (1 << 1), "PERF_EVENTS" }, { (1 << 2), "SCHED" }, { (1 << 3), "CLOCK_UNSTABLE" }, { (1 << 4), "RCU" }, { (1 << 5), "RCU_EXP" })`},

	{system: "irq_vectors", name: "local_timer_entry", id: 200, fields: []datField{fInt("int vector", 4, true)}, print: `"vector=%d", REC->vector`},
	{system: "irq_vectors", name: "local_timer_exit", id: 201, fields: []datField{fInt("int vector", 4, true)}, print: `"vector=%d", REC->vector`},

	{system: "irq", name: "irq_handler_entry", id: 210,
		fields: []datField{fInt("int irq", 4, true), {decl: "__data_loc char[] name", kind: datString}},
		print:  `"irq=%d name=%s", REC->irq, __get_str(name)`},
	{system: "irq", name: "irq_handler_exit", id: 211,
		fields: []datField{fInt("int irq", 4, true), {decl: "int ret", size: 4, signed: true, kind: datSymbolic, syms: map[string]int64{"handled": 1, "unhandled": 0}}},
		print:  `"irq=%d ret=%s", REC->irq, REC->ret ? "handled" : "unhandled"`},
	{system: "irq", name: "softirq_entry", id: 212, fields: []datField{fInt("unsigned int vec", 4, false)}, print: `"vec=%u [action=%s]", REC->vec, ` + softirqVecs},
	{system: "irq", name: "softirq_exit", id: 213, fields: []datField{fInt("unsigned int vec", 4, false)}, print: `"vec=%u [action=%s]", REC->vec, ` + softirqVecs},
	{system: "irq", name: "softirq_raise", id: 214, fields: []datField{fInt("unsigned int vec", 4, false)}, print: `"vec=%u [action=%s]", REC->vec, ` + softirqVecs},

	{system: "sched", name: "sched_switch", id: 300,
		fields: []datField{fComm("char prev_comm[16]"), fInt("pid_t prev_pid", 4, true), fInt("int prev_prio", 4, true),
			{decl: "long prev_state", size: 8, signed: true, kind: datSymbolic, syms: taskStates},
			fComm("char next_comm[16]"), fInt("pid_t next_pid", 4, true), fInt("int next_prio", 4, true)},
		print: `"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "|", { 0x00000001, "S" }, { 0x00000002, "D" }, { 0x00000004, "T" }, { 0x00000008, "t" }, { 0x00000010, "X" }, { 0x00000020, "Z" }, { 0x00000040, "P" }, { 0x00000080, "I" }) : "R", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio`},
	{system: "sched", name: "sched_wakeup", id: 301,
		fields: []datField{fComm("char comm[16]"), fInt("pid_t pid", 4, true), fInt("int prio", 4, true), fInt("int target_cpu", 4, true)},
		print:  `"comm=%s pid=%d prio=%d target_cpu=%03d", REC->comm, REC->pid, REC->prio, REC->target_cpu`},

	{system: "signal", name: "signal_generate", id: 400,
		fields: []datField{fInt("int sig", 4, true), fInt("int errno", 4, true), fInt("int code", 4, true), fComm("char comm[16]"),
			fInt("pid_t pid", 4, true), {decl: "int group", size: 4, signed: true, key: "grp"}, {decl: "int result", size: 4, signed: true, key: "res"}},
		print: `"sig=%d errno=%d code=%d comm=%s pid=%d grp=%d res=%d", REC->sig, REC->errno, REC->code, REC->comm, REC->pid, REC->group, REC->result`},
	{system: "signal", name: "signal_deliver", id: 401,
		fields: []datField{fInt("int sig", 4, true), fInt("int errno", 4, true), fInt("int code", 4, true),
			{decl: "unsigned long sa_handler", size: 8, kind: datHex}, {decl: "unsigned long sa_flags", size: 8, kind: datHex}},
		print: `"sig=%d errno=%d code=%d sa_handler=%lx sa_flags=%lx", REC->sig, REC->errno, REC->code, REC->sa_handler, REC->sa_flags`},

	{system: "power", name: "cpu_idle", id: 502, fields: []datField{fInt("u32 state", 4, false), fInt("u32 cpu_id", 4, false)},
		print: `"state=%lu cpu_id=%lu", (unsigned long)REC->state, (unsigned long)REC->cpu_id`},
	{system: "power", name: "pm_qos_add_request", id: 500, fields: []datField{fInt("s32 value", 4, true)}, print: `"CPU_DMA_LATENCY value=%d", REC->value`},
	{system: "power", name: "pm_qos_update_target", id: 501,
		fields: []datField{{decl: "enum pm_qos_req_action action", size: 4, kind: datSymbolic, syms: map[string]int64{"ADD_REQ": 0, "UPDATE_REQ": 1, "REMOVE_REQ": 2}},
			fInt("int prev_value", 4, true), fInt("int curr_value", 4, true)},
		print: `"action=%s prev_value=%d curr_value=%d", __print_symbolic(REC->action, { 0, "ADD_REQ" }, { 1, "UPDATE_REQ" }, { 2, "REMOVE_REQ" }), REC->prev_value, REC->curr_value`},
}

// hrtimerSetup is hrtimer_setup()'s event under the name a release gives
// it (ABI.HRSetup): the same fields.
func hrtimerSetup(name string, id int) *datEvent {
	return &datEvent{system: "timer", name: name, id: id,
		fields: []datField{fPtr("void * hrtimer"), {decl: "clockid_t clockid", size: 4, signed: true, kind: datSymbolic, syms: clockIDs},
			{decl: "enum hrtimer_mode mode", size: 4, kind: datSymbolic, syms: hrtimerModes}},
		print: `"hrtimer=%p clockid=%s mode=%s", REC->hrtimer, __print_symbolic(REC->clockid, { 0, "CLOCK_REALTIME" }, { 1, "CLOCK_MONOTONIC" }, { 7, "CLOCK_BOOTTIME" }, { 11, "CLOCK_TAI" }), ` + hrtimerModePrint}
}

var hrtimerStartFields = []datField{fPtr("void * hrtimer"), fFunc("void * function"), fInt("s64 expires", 8, true), fInt("s64 softexpires", 8, true),
	{decl: "enum hrtimer_mode mode", size: 4, kind: datSymbolic, syms: hrtimerModes}}

// hrtimerStartWasArmed is hrtimer_start from 7.1 (ABI.WasArmed,
// f2e388a019e4): a bool was_armed after mode.
var hrtimerStartWasArmed = &datEvent{system: "timer", name: "hrtimer_start", id: 101,
	fields: append(append([]datField(nil), hrtimerStartFields...), datField{decl: "bool was_armed", size: 1}),
	print:  `"hrtimer=%p function=%ps expires=%llu softexpires=%llu mode=%s was_armed=%d", REC->hrtimer, REC->function, (unsigned long long) REC->expires, (unsigned long long) REC->softexpires, ` + hrtimerModePrint + `, REC->was_armed`}

// datFormats are the formats of the events of a release's ABI, by name.
func datFormats(abi ABI) map[string]*datEvent {
	m := make(map[string]*datEvent, len(datByName))
	for n, e := range datByName {
		m[n] = e
	}
	if abi.WasArmed {
		m[hrtimerStartWasArmed.name] = hrtimerStartWasArmed
	}
	return m
}

var datByName = func() map[string]*datEvent {
	m := map[string]*datEvent{}
	for _, e := range datEvents {
		m[e.name] = e
	}
	return m
}()

// prepTimerStart rebuilds timer_start's now and flags fields from what
// TP_printk printed: [timeout=] is expires - now, cpu=, idx= and flags= are
// the low bits, the array index and the flag bits of flags.
func prepTimerStart(kv map[string]string) {
	exp, _ := strconv.ParseInt(kv["expires"], 10, 64)
	to, _ := strconv.ParseInt(kv["timeout"], 10, 64)
	kv["now"] = strconv.FormatInt(exp-to, 10)
	cpu, _ := strconv.ParseInt(kv["cpu"], 10, 64)
	idx, _ := strconv.ParseInt(kv["idx"], 10, 64)
	fl := cpu&timerCPUMask | idx<<timerArrayShift
	for _, f := range strings.Split(kv["flags"], "|") {
		fl |= map[string]int64{"M": timerMigrating, "D": timerDeferrable, "P": timerPinned, "I": timerIRQSafe}[f]
	}
	kv["flags"] = strconv.FormatInt(fl, 10)
}

// prepItimerState splits it_value= and it_interval= (SEC.USEC).
func prepItimerState(kv map[string]string) {
	for _, p := range [][3]string{{"it_value", "value_sec", "value_nsec"}, {"it_interval", "interval_sec", "interval_nsec"}} {
		s, us, _ := strings.Cut(kv[p[0]], ".")
		u, _ := strconv.ParseInt(us, 10, 64)
		kv[p[1]], kv[p[2]] = s, strconv.FormatInt(u*1000, 10)
	}
}

// layout places the fields after the common ones (offset 8) at their
// natural alignment, as the compiler lays out the kernel's entry struct;
// it returns the offsets and the fixed size.
func (e *datEvent) layout() ([]int, int) {
	off := 8
	offs := make([]int, len(e.fields))
	for i := range e.fields {
		f := &e.fields[i]
		size, align := f.size, f.size
		switch {
		case f.kind == datComm:
			align = 1
		case f.kind == datString && strings.HasPrefix(f.decl, "__data_loc"):
			size, align = 4, 4
		case f.kind == datString: // a trailing char buf[]
			size, align = 0, 1
		}
		if align > 8 {
			align = 8
		}
		if align > 1 {
			off = (off + align - 1) &^ (align - 1)
		}
		offs[i] = off
		off += size
	}
	return offs, off
}

// formatText is the event's tracefs format file.
func (e *datEvent) formatText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nID: %d\nformat:\n", e.name, e.id)
	b.WriteString("\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" +
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" +
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n")
	offs, _ := e.layout()
	for i, f := range e.fields {
		size := f.size
		if f.kind == datString {
			size = 0
			if strings.HasPrefix(f.decl, "__data_loc") {
				size = 4
			}
		}
		fmt.Fprintf(&b, "\tfield:%s;\toffset:%d;\tsize:%d;\tsigned:%d;\n", f.decl, offs[i], size, b2i(f.signed))
	}
	fmt.Fprintf(&b, "\nprint fmt: %s\n", e.print)
	return b.String()
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// Syscall numbers of x86-64 (arch/x86/entry/syscalls/syscall_64.tbl) for the
// syscalls the model makes; one it does not know is written as -1.
var syscallNrs = map[string]int{
	"read": 0, "write": 1, "poll": 7, "rt_sigaction": 13, "rt_sigprocmask": 14, "rt_sigreturn": 15,
	"select": 23, "sched_yield": 24, "pause": 34, "nanosleep": 35, "getitimer": 36, "alarm": 37,
	"setitimer": 38, "rt_sigpending": 127, "rt_sigtimedwait": 128, "rt_sigsuspend": 130,
	"futex": 202, "restart_syscall": 219, "timer_create": 222, "timer_settime": 223,
	"timer_gettime": 224, "timer_getoverrun": 225, "timer_delete": 226, "clock_settime": 227,
	"clock_gettime": 228, "clock_getres": 229, "clock_nanosleep": 230, "exit_group": 231,
	"epoll_wait": 232, "ppoll": 271, "epoll_pwait": 281, "timerfd_create": 283,
	"timerfd_settime": 286, "timerfd_gettime": 287,
}

// datState turns text events into trace.dat records.
type datState struct {
	w      *tracedat.Writer
	byName map[string]*datEvent // the formats of the release's ABI
	used   map[string]*datEvent // events written, by name
	sys    map[string]*datEvent // syscall events made from their first line
	funcs  map[string]uint64    // function name -> kallsyms address
	nextID int
	rec    []byte
	kv     map[string]string
}

// funcBase is where the made-up kernel text addresses of function names start.
const funcBase = 0xffffffff81000000

func newDatState(w *tracedat.Writer, abi ABI) *datState {
	return &datState{w: w, byName: datFormats(abi), used: map[string]*datEvent{}, sys: map[string]*datEvent{}, funcs: map[string]uint64{},
		nextID: 1000, kv: map[string]string{}}
}

// addr is a function's kallsyms address, made up in order of first use
// (16 bytes apart, so each is its own symbol).
func (d *datState) addr(fn string) uint64 {
	if a, ok := d.funcs[fn]; ok {
		return a
	}
	a := funcBase + uint64(len(d.funcs)+1)*16
	d.funcs[fn] = a
	return a
}

// event writes one event; name is the event's name and text its function
// column as the text trace prints it.
func (d *datState) event(t ktime.Time, c Ctx, name, text string) error {
	d.w.Comm(c.Pid, c.Comm)
	var e *datEvent
	clear(d.kv)
	switch {
	case name == "function":
		callee, caller, _ := strings.Cut(text, " <-")
		e = d.byName[name]
		d.kv["ip"], d.kv["parent_ip"] = callee, caller
	case name == "tracing_mark_write":
		e = d.byName["print"]
		d.kv["ip"], d.kv["buf"] = "tracing_mark_write", strings.TrimPrefix(text, "tracing_mark_write: ")+"\n"
	case strings.HasPrefix(name, "sys_enter_") || strings.HasPrefix(name, "sys_exit_"):
		var err error
		if e, err = d.syscall(name, text); err != nil {
			return err
		}
	default:
		e = d.byName[name]
		if e == nil {
			return fmt.Errorf("trace.dat: no format for event %q", name)
		}
		fieldsOf(d.kv, e, name, text)
	}
	d.used[e.name] = e
	rec, err := d.record(e, c)
	if err != nil {
		return fmt.Errorf("trace.dat: %s at %d ns: %v", name, int64(t), err)
	}
	d.w.Record(c.CPU, uint64(t), rec)
	return d.w.Err()
}

// fieldsOf fills kv with an event's fields from its text: the key=value
// pairs TP_printk printed ("[action=TIMER]" too), then what e.prep derives.
func fieldsOf(kv map[string]string, e *datEvent, name, text string) {
	for _, tok := range strings.Fields(strings.TrimPrefix(text, name+": ")) {
		tok = strings.TrimSuffix(strings.TrimPrefix(tok, "["), "]")
		if k, v, ok := strings.Cut(tok, "="); ok {
			kv[k] = v
		}
	}
	if e != nil && e.prep != nil {
		e.prep(kv)
	}
}

// syscall returns the format of sys_enter_NAME or sys_exit_NAME (made from
// the first line: the argument names sys_enter prints) and fills kv.
func (d *datState) syscall(name, text string) (*datEvent, error) {
	enter := strings.HasPrefix(name, "sys_enter_")
	call := strings.TrimPrefix(strings.TrimPrefix(name, "sys_enter_"), "sys_exit_")
	var args [][2]string
	if enter {
		in := strings.TrimSuffix(strings.TrimPrefix(text, "sys_"+call+"("), ")")
		for _, a := range strings.Split(in, ", ") {
			if k, v, ok := strings.Cut(a, ": "); ok {
				args = append(args, [2]string{k, v})
				d.kv[k] = v
			}
		}
	} else {
		_, ret, _ := strings.Cut(text, " -> 0x")
		v, err := strconv.ParseUint(ret, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("trace.dat: %s: return value %q", name, ret)
		}
		d.kv["ret"] = strconv.FormatInt(int64(v), 10)
	}
	nr, ok := syscallNrs[call]
	if !ok {
		nr = -1
	}
	d.kv["__syscall_nr"] = strconv.Itoa(nr)
	if e := d.sys[name]; e != nil {
		return e, nil
	}
	e := &datEvent{system: "syscalls", name: name, id: d.nextID, fields: []datField{fInt("int __syscall_nr", 4, true)}}
	d.nextID++
	if enter {
		var f, a []string
		for _, kv := range args {
			e.fields = append(e.fields, datField{decl: "unsigned long " + kv[0], size: 8, kind: datHex})
			f = append(f, kv[0]+": 0x%08lx")
			a = append(a, "((unsigned long)(REC->"+kv[0]+"))")
		}
		e.print = strconv.Quote(strings.Join(f, ", "))
		if len(a) > 0 {
			e.print += ", " + strings.Join(a, ", ")
		}
	} else {
		e.fields = append(e.fields, fInt("long ret", 8, true))
		e.print = `"0x%lx", REC->ret`
	}
	d.sys[name] = e
	return e, nil
}

// record encodes an event: the common fields (type, flags, preempt count,
// pid), then the event's fields from kv.
func (d *datState) record(e *datEvent, c Ctx) ([]byte, error) {
	offs, size := e.layout()
	b := d.rec[:0]
	b = append(b, make([]byte, size)...)
	le := binary.LittleEndian
	le.PutUint16(b[0:], uint16(e.id))
	fl, pc := ctxFlags(c.Flags)
	b[2], b[3] = fl, pc
	le.PutUint32(b[4:], uint32(int32(c.Pid)))
	for i := range e.fields {
		f := &e.fields[i]
		key := f.key
		if key == "" {
			key = f.name()
		}
		v, ok := d.kv[key]
		if !ok {
			return nil, fmt.Errorf("field %s: not in the text", key)
		}
		o := offs[i]
		var n int64
		switch f.kind {
		case datComm:
			copy(b[o:o+15], v)
			continue
		case datString:
			s := v + "\x00"
			if strings.HasPrefix(f.decl, "__data_loc") {
				le.PutUint32(b[o:], uint32(len(b))|uint32(len(s))<<16)
			}
			b = append(b, s...)
			continue
		case datFunc:
			n = int64(d.addr(v))
		case datHex:
			u, err := strconv.ParseUint(v, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("field %s: %q is not hex", key, v)
			}
			n = int64(u)
		case datSymbolic:
			if s, ok := f.syms[v]; ok {
				n = s
				break
			}
			fallthrough
		default:
			x, err := parseNum(v)
			if err != nil {
				return nil, fmt.Errorf("field %s: %q is not a number", key, v)
			}
			n = x
		}
		switch f.size {
		case 1:
			b[o] = byte(n)
		case 2:
			le.PutUint16(b[o:], uint16(n))
		case 4:
			le.PutUint32(b[o:], uint32(n))
		case 8:
			le.PutUint64(b[o:], uint64(n))
		}
	}
	d.rec = b
	return b, nil
}

// ctxFlags turns the five flag characters back into common_flags
// (TRACE_FLAG_IRQS_OFF 0x01, HARDIRQ 0x08, SOFTIRQ 0x10) and
// common_preempt_count (the preempt depth in the low nibble).
func ctxFlags(s string) (flags, preempt uint8) {
	if len(s) < 4 {
		return 0, 0
	}
	if s[0] == 'd' {
		flags |= 0x01
	}
	switch s[2] {
	case 'h':
		flags |= 0x08
	case 's':
		flags |= 0x10
	case 'H':
		flags |= 0x18
	}
	if d := strings.IndexByte("0123456789abcdef", s[3]); d >= 0 {
		preempt = uint8(d)
	}
	return flags, preempt
}

// close adds the formats of the events written and the kallsyms of the
// function names, then writes the file.
func (d *datState) close() error {
	for _, e := range datEvents {
		if u := d.used[e.name]; u != nil {
			d.w.AddFormat(tracedat.Format{System: u.system, Text: u.formatText()})
		}
	}
	names := make([]string, 0, len(d.sys))
	for n := range d.sys {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return d.sys[names[i]].id < d.sys[names[j]].id })
	for _, n := range names {
		e := d.sys[n]
		d.w.AddFormat(tracedat.Format{System: e.system, Text: e.formatText()})
	}
	for fn, a := range d.funcs {
		d.w.AddSym(tracedat.Sym{Addr: a, Name: fn})
	}
	return d.w.Close()
}

// parseNum parses a decimal number, or hex after 0x (target_cpu=007 is
// decimal, not octal).
func parseNum(v string) (int64, error) {
	if h, ok := strings.CutPrefix(v, "0x"); ok {
		u, err := strconv.ParseUint(h, 16, 64)
		return int64(u), err
	}
	return strconv.ParseInt(v, 10, 64)
}
