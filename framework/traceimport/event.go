// Package traceimport reads kernel traces captured on real machines: ftrace
// text (the tracefs `trace` file with its header, and `trace-cmd report`
// output) and LTTng's babeltrace / babeltrace2 text output. It decodes the
// events tickemu models — the timer:* events of include/trace/events/timer.h
// (timer_list and hrtimer life cycle, tick_stop), irq:* (hard and soft
// interrupts, the local timer vector), sched:sched_wakeup and sched_switch,
// power:cpu_idle — into Events, one at a time.
//
// Readers stream: each holds one line and a few counters, so a capture of
// several GB is read in constant memory. Events the package does not know are
// counted (Stats.Unknown) and skipped; a line that looks like an event but
// cannot be decoded — a known event missing a field it always has, a field
// that is not a number — is an error naming the line number and the field.
//
// The field formats follow the kernel's TP_printk strings across versions
// (docs/replay.md lists them): hrtimer_start with and without mode= (4.16)
// and was_armed= (f2e388a019e4), timer_start with and without bucket_expiry=, cpu=
// idx= and decoded flags, timer_expire_entry with and without baseclk=,
// tick_stop's success= in both spellings, trace-cmd's plugin
// formats (function=NAME/0xOFFSET, comm:pid [prio]).
package traceimport

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/tickemu/tickemu/framework/internal/limitio"
)

// Kind is the event an Event holds.
type Kind uint8

// Kinds. The names are the ftrace event names; babeltrace's are mapped onto
// them (timer_hrtimer_start is HRStart).
const (
	Unknown Kind = iota
	HRInit
	HRStart
	HRCancel
	HRExpireEntry
	HRExpireExit
	TimerInit
	TimerStart
	TimerCancel
	TimerExpireEntry
	TimerExpireExit
	TickStop
	IRQEntry
	IRQExit
	SoftirqRaise
	SoftirqEntry
	SoftirqExit
	LocalTimerEntry
	LocalTimerExit
	SchedWakeup
	SchedSwitch
	CPUIdle
	// Events of current kernels (6.x): sched_waking (try_to_wake_up()'s
	// start, on the waker's CPU), sched_wakeup_new (a new task's first
	// wakeup), sched_migrate_task, ipi_send_cpu / ipi_send_cpumask (6.6),
	// the x86 irq_vectors entries of irq_work and of IPIs, timer_base_idle
	// (6.9's timer migration) and the CPU latency PM QoS requests
	// (kernel/power/qos.c).
	SchedWaking
	SchedWakeupNew
	SchedMigrateTask
	IPISendCPU
	IPISendCPUMask
	IRQWorkEntry
	IRQWorkExit
	IPIEntry
	IPIExit
	TimerBaseIdle
	PMQoSAddRequest
	PMQoSUpdateRequest
	PMQoSRemoveRequest
	PMQoSUpdateTarget
	// The extra kinds, decoded only by a reader asked to (DecodeExtra):
	// replay's counting rules predate them and count them as unknown.
	SignalGenerate
	SignalDeliver
	WriteMSR
	// The process life cycle (include/trace/events/sched.h), decoded only
	// by a reader asked to (DecodeProcesses): a fork (threads too) and a
	// task's exit.
	SchedProcessFork
	SchedProcessExit
	numKinds
)

var kindNames = [numKinds]string{
	Unknown: "unknown", HRInit: "hrtimer_init", HRStart: "hrtimer_start", HRCancel: "hrtimer_cancel",
	HRExpireEntry: "hrtimer_expire_entry", HRExpireExit: "hrtimer_expire_exit",
	TimerInit: "timer_init", TimerStart: "timer_start", TimerCancel: "timer_cancel",
	TimerExpireEntry: "timer_expire_entry", TimerExpireExit: "timer_expire_exit", TickStop: "tick_stop",
	IRQEntry: "irq_handler_entry", IRQExit: "irq_handler_exit", SoftirqRaise: "softirq_raise",
	SoftirqEntry: "softirq_entry", SoftirqExit: "softirq_exit", LocalTimerEntry: "local_timer_entry",
	LocalTimerExit: "local_timer_exit", SchedWakeup: "sched_wakeup", SchedSwitch: "sched_switch", CPUIdle: "cpu_idle",
	SchedWaking: "sched_waking", SchedWakeupNew: "sched_wakeup_new", SchedMigrateTask: "sched_migrate_task",
	IPISendCPU: "ipi_send_cpu", IPISendCPUMask: "ipi_send_cpumask", IRQWorkEntry: "irq_work_entry", IRQWorkExit: "irq_work_exit",
	IPIEntry: "ipi_vector_entry", IPIExit: "ipi_vector_exit", TimerBaseIdle: "timer_base_idle",
	PMQoSAddRequest: "pm_qos_add_request", PMQoSUpdateRequest: "pm_qos_update_request", PMQoSRemoveRequest: "pm_qos_remove_request",
	PMQoSUpdateTarget: "pm_qos_update_target",
	SignalGenerate:    "signal_generate", SignalDeliver: "signal_deliver", WriteMSR: "write_msr",
	SchedProcessFork: "sched_process_fork", SchedProcessExit: "sched_process_exit",
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ftraceKinds maps ftrace event names to kinds. hrtimer_setup is 6.15's name
// of hrtimer_init (same fields).
var ftraceKinds = map[string]Kind{
	"hrtimer_init": HRInit, "hrtimer_setup": HRInit, "hrtimer_start": HRStart, "hrtimer_cancel": HRCancel,
	"hrtimer_expire_entry": HRExpireEntry, "hrtimer_expire_exit": HRExpireExit,
	"timer_init": TimerInit, "timer_start": TimerStart, "timer_cancel": TimerCancel,
	"timer_expire_entry": TimerExpireEntry, "timer_expire_exit": TimerExpireExit, "tick_stop": TickStop,
	"irq_handler_entry": IRQEntry, "irq_handler_exit": IRQExit, "softirq_raise": SoftirqRaise,
	"softirq_entry": SoftirqEntry, "softirq_exit": SoftirqExit, "local_timer_entry": LocalTimerEntry,
	"local_timer_exit": LocalTimerExit, "sched_wakeup": SchedWakeup, "sched_switch": SchedSwitch, "cpu_idle": CPUIdle,
	"sched_waking": SchedWaking, "sched_wakeup_new": SchedWakeupNew, "sched_migrate_task": SchedMigrateTask,
	"ipi_send_cpu": IPISendCPU, "ipi_send_cpumask": IPISendCPUMask, "irq_work_entry": IRQWorkEntry, "irq_work_exit": IRQWorkExit,
	// The x86 IPI vectors (arch/x86/include/asm/trace/irq_vectors.h); Name
	// keeps which.
	"reschedule_entry": IPIEntry, "reschedule_exit": IPIExit, "call_function_entry": IPIEntry, "call_function_exit": IPIExit,
	"call_function_single_entry": IPIEntry, "call_function_single_exit": IPIExit,
	"timer_base_idle": TimerBaseIdle, "pm_qos_add_request": PMQoSAddRequest, "pm_qos_update_request": PMQoSUpdateRequest,
	"pm_qos_remove_request": PMQoSRemoveRequest, "pm_qos_update_target": PMQoSUpdateTarget,
}

// extraKinds are the events an ftrace reader decodes only after
// DecodeExtra: signal:signal_generate and signal_deliver (include/trace/events/signal.h),
// msr:write_msr (arch/x86/include/asm/msr-trace.h, the MSR writes of
// x86 kernels built with tracepoints on MSR access).
var extraKinds = map[string]Kind{
	"signal_generate": SignalGenerate, "signal_deliver": SignalDeliver, "write_msr": WriteMSR,
}

// processKinds are the events an ftrace reader decodes only after
// DecodeProcesses: sched_process_fork (kernel_clone(), for a thread as for
// a process) and sched_process_exit (do_exit()).
var processKinds = map[string]Kind{
	"sched_process_fork": SchedProcessFork, "sched_process_exit": SchedProcessExit,
}

// Event is one decoded trace event. Fields an event kind does not have are
// zero; Expires and the like are the raw values of the trace (ns of the
// timer's clock for hrtimers, jiffies for timer_list timers).
type Event struct {
	Kind Kind
	// Time is the event's timestamp in ns of the trace clock, CPU the CPU
	// whose buffer holds it, Comm and PID the task that was running.
	Time int64
	CPU  int
	Comm string
	PID  int
	// Line is the capture line the event came from (1-based).
	Line int64
	// TGID is the running task's thread group (its process: the
	// record-tgid option's "(tgid)" column); -1 when the line has none.
	TGID int
	// Context is where the event was emitted, from the flags column: in a
	// hard or soft interrupt (or NMI) the task column is the interrupted
	// task, not the one the event is for.
	Context Context

	// Timer is the timer pointer (hrtimer= / timer=), as printed: hashed
	// %p values are stable within one boot, which is all that matters.
	Timer uint64
	// Function is the callback: a symbol name (ftrace), or for babeltrace
	// captures the raw address "0xffffffff810c0a10".
	Function string
	// Expires, SoftExpires (hrtimer_start), Now (expire_entry: ns for an
	// hrtimer, jiffies for a timer_list timer), Timeout (timer_start's
	// [timeout=], expires - jiffies), BucketExpiry (timer_start, 5.8+;
	// 0 when absent).
	Expires, SoftExpires, Now, Timeout, BucketExpiry int64
	HasTimeout                                       bool
	// Mode is hrtimer_start's / hrtimer_init's mode ("ABS|PINNED|HARD"),
	// empty before 4.16. WasArmed is hrtimer_start's was_armed (since f2e388a019e4): 1 when
	// the timer was queued, 0 not, -1 when the trace has no such field.
	Mode     string
	WasArmed int8
	// Clock is hrtimer_init's clockid ("CLOCK_MONOTONIC").
	Clock string
	// Flags is timer_start's flags as decoded text ("D|P", "I"); TimerCPU
	// its cpu= (-1 when absent).
	Flags    string
	TimerCPU int
	// FlagsTraced is set when timer_start has a flags field at all (kernels
	// since 4.2, whose timer->flags replaced the flag bits kept in the base
	// pointer; lttng-modules records it for them since its 32328e6c): an
	// empty Flags then says the timer is not deferrable.
	FlagsTraced bool
	// Success and Dependency are tick_stop's fields (Success 1 when the
	// tick was stopped).
	Success    int
	Dependency string
	// IRQ and Vec are the irq and softirq numbers; Name irq_handler_entry's
	// name.
	IRQ, Vec int
	Name     string
	// Sched: the woken or moved task (sched_wakeup, sched_waking,
	// sched_wakeup_new, sched_migrate_task: WakeComm/WakePID; TargetCPU the
	// wakeup's target_cpu, the migration's dest_cpu, ipi_send_cpu's cpu;
	// OrigCPU the migration's orig_cpu) and the switch (prev/next).
	WakeComm  string
	WakePID   int
	TargetCPU int
	OrigCPU   int
	PrevComm  string
	PrevPID   int
	PrevState string
	NextComm  string
	NextPID   int
	// Kernel priorities (0-99 RT, 100-139 SCHED_OTHER by nice; -1 when the
	// line has none): the woken or moved task's prio= (WakePrio), the
	// switch's prev_prio= and next_prio=.
	WakePrio, PrevPrio, NextPrio int
	// State is cpu_idle's state (4294967295 = PWR_EVENT_EXIT, leaving idle).
	State int64
	// CPUMask is ipi_send_cpumask's cpumask ("0-1", "3"); Function holds
	// the IPI's callback (0x0 for none).
	CPUMask string
	// IsIdle is timer_base_idle's is_idle (TimerCPU its cpu).
	IsIdle bool
	// QoSValue is a PM QoS request's value in us (pm_qos_add_request,
	// _update_request; -1, PM_QOS_DEFAULT_VALUE, for a removal), and for
	// pm_qos_update_target the constraint after the change (curr_value;
	// QoSPrev before it, QoSAction "ADD_REQ", "UPDATE_REQ" or
	// "REMOVE_REQ").
	QoSValue, QoSPrev int64
	QoSAction         string
	// Signal events: the signal number, and (signal_generate) the target
	// task in WakeComm/WakePID and the result (0 delivered, 1 ignored,
	// 2 already pending, 3 overflow, 4 lose info).
	Sig, Result int
	// WriteMSR: the register and the value written.
	MSR, Value uint64
	// sched_process_fork: the forking task in WakeComm/WakePID and the
	// new one in ChildComm/ChildPID; sched_process_exit: the exiting task
	// in WakeComm/WakePID, GroupDead set when it was its process's last
	// thread.
	ChildComm string
	ChildPID  int
	GroupDead bool
}

// Context is the context an event was emitted in, as the ftrace flags
// column shows it (kernel/trace/trace_output.c, trace_print_lat_fmt()).
type Context uint8

// Contexts. Unknown: the line has no flags column (trace-cmd report without
// -l, babeltrace) or a character this reader does not know.
const (
	ContextUnknown Context = iota
	// ContextTask: neither hard nor soft interrupt ('.', or 'b' for bottom
	// halves disabled in task context).
	ContextTask
	// ContextIRQ: a hard interrupt, a softirq or an NMI ('h', 's', 'H',
	// 'z', 'Z').
	ContextIRQ
)

// Header is what a capture says about itself.
type Header struct {
	// Format is "ftrace" (tracefs trace file or trace-cmd report) or
	// "babeltrace".
	Format string
	// CPUs is the CPU count the header states (tracefs "#P:8", trace-cmd
	// "cpus=8"); 0 when the capture does not say.
	CPUs int
}

// Stats counts what a reader has read.
type Stats struct {
	Lines  int64 // lines read
	Events int64 // events returned
	// Unknown counts the skipped events by name; names beyond the first
	// maxUnknownNames are counted under "(other)".
	Unknown map[string]int64
}

// UnknownTotal is the number of events skipped.
func (s Stats) UnknownTotal() int64 {
	var n int64
	for _, v := range s.Unknown {
		n += v
	}
	return n
}

const maxUnknownNames = 256

func (s *Stats) skip(name string) {
	if s.Unknown == nil {
		s.Unknown = map[string]int64{}
	}
	if _, ok := s.Unknown[name]; !ok && len(s.Unknown) >= maxUnknownNames {
		name = "(other)"
	}
	s.Unknown[name]++
}

// Reader is a streaming capture reader.
type Reader interface {
	// Next returns the next known event, or io.EOF at the end. The Event is
	// reused by the next call.
	Next() (*Event, error)
	// Header is what the capture said about itself so far (complete once the
	// first event has been returned).
	Header() Header
	// Stats counts the lines and events read so far.
	Stats() Stats
}

// ParseError is a malformed line.
type ParseError struct {
	Line  int64
	Field string // the field that could not be decoded, or ""
	Msg   string
}

func (e *ParseError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("line %d: field %q: %s", e.Line, e.Field, e.Msg)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// ErrTooLong is returned for a line longer than MaxLine.
var ErrTooLong = errors.New("line too long")

// MaxLine is the longest line a reader accepts.
const MaxLine = 1 << 20

// MaxTraceBytes bounds the text a reader reads: an hour of every timer
// event of a busy 64-CPU machine is a few GB; an endless input (a FIFO, a
// generator) stops here.
const MaxTraceBytes = 16 << 30

// nextLine scans sc up to the next line parse decodes into an event,
// counting lines and events in st; it returns io.EOF at the end, and a
// ParseError for a line longer than MaxLine. Both readers' Next.
func nextLine(sc *bufio.Scanner, st *Stats, parse func(string) (bool, error)) error {
	for sc.Scan() {
		st.Lines++
		ok, err := parse(sc.Text())
		if err != nil {
			return err
		}
		if ok {
			st.Events++
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return &ParseError{Line: st.Lines + 1, Msg: "line longer than 1 MiB"}
		}
		var tl *limitio.TooLargeError
		if errors.As(err, &tl) {
			return &ParseError{Line: st.Lines + 1, Msg: tl.Error()}
		}
		return err
	}
	return io.EOF
}
