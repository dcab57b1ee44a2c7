// Package calibrate fits a machine's costs from real traces (capture
// bundles): `tickemu calibrate`. Each estimator is a traced interval that
// isolates one piece of kernel work (Estimators lists them with the kernel
// function each stands for); Measure collects its samples from one trace,
// Estimate reduces them to a centre and an uncertainty, Pool combines
// bundles, and Fit maps the estimates onto the model's cost constants
// (docs/calibration-fit.md).
package calibrate

import (
	"fmt"
	"io"
	"strings"

	"github.com/tickemu/tickemu/framework/traceimport"
)

// An Estimator is one traced interval.
type Estimator struct {
	Name string
	// Interval is the pair of events and the condition that select it.
	Interval string
	// Kernel is the kernel code the interval spans.
	Kernel string
}

// The estimators, in the order they print.
const (
	ETracepoint     = "tracepoint"
	EIRQEntry       = "irq_entry"
	EHRTail         = "hrtimer_tail"
	EIRQExit        = "irq_exit"
	ESoftirqEntry   = "softirq_entry"
	ETick           = "tick"
	EWakeup         = "wakeup"
	ETimerCallback  = "timer_callback"
	ELatenessBusy   = "lateness_busy"
	ELatenessIdle   = "lateness_idle"
	ESwitchBusy     = "switch_busy"
	ESwitchIdle     = "switch_idle"
	ESignalGenerate = "signal_generate"
	ESignalDeliver  = "signal_deliver"
	EStartProgram   = "start_program"
	EStartPlain     = "start_plain"
	EIPISend        = "ipi_send"
	EIPILatency     = "ipi_latency"
	ERCUSoftirq     = "rcu_softirq"
	EPastDeadline   = "past_deadline"
)

// Estimators lists every estimator.
var Estimators = []Estimator{
	{ETracepoint, "sched_wakeup or signal_generate -> hrtimer_expire_exit of the callback they are in, MSR 0x6e0 write -> local_timer_exit; next events",
		"one tracepoint's own cost: the end of try_to_wake_up() or send_sigqueue(), the callback's return and __run_hrtimer()'s exit tracepoint right after it; the end of hrtimer_interrupt() after tick_program_event()"},
	{EIRQEntry, "local_timer_entry -> hrtimer_expire_entry, next events on the CPU",
		"sysvec_apic_timer_interrupt() after irq_enter_rcu(): hrtimer_interrupt() up to the first __run_hrtimer()"},
	{EHRTail, "the last hrtimer_expire_exit -> local_timer_exit, only MSR writes between",
		"the end of hrtimer_interrupt(): hrtimer_update_next_event() and tick_program_event() (the device's reprogramming)"},
	{EIRQExit, "local_timer_exit -> softirq_entry, next events on the CPU",
		"irq_exit_rcu() -> invoke_softirq() -> handle_softirqs() up to the first softirq"},
	{ESoftirqEntry, "softirq_entry -> the next event inside the softirq",
		"handle_softirqs(): one softirq's entry before its action's first traced step"},
	{ETick, "hrtimer_expire_entry -> hrtimer_expire_exit of the tick timer",
		"tick_nohz_handler() / tick_sched_timer(): jiffies, update_process_times(), sched_tick()"},
	{EWakeup, "hrtimer_expire_entry -> hrtimer_expire_exit of an hrtimer_wakeup timer",
		"hrtimer_wakeup() -> wake_up_process() -> try_to_wake_up()"},
	{ETimerCallback, "timer_expire_entry -> timer_expire_exit",
		"call_timer_fn(): one timer_list callback"},
	{ELatenessBusy, "hrtimer_expire_entry now= minus the expires= of its hrtimer_start, hrtimer_wakeup timers first on a busy CPU",
		"the clockevent's delivery: deadline -> interrupt -> hrtimer_interrupt() reading the clock"},
	{ELatenessIdle, "the same on a CPU that was idle (cpu_idle entered, not left)",
		"the same plus leaving the idle state (haltpoll: HLT exits to the hypervisor)"},
	{ESwitchBusy, "local_timer_exit -> sched_switch to a task woken in that interrupt, from a running task",
		"irq_exit_rcu(), preempt_schedule_irq() -> __schedule() up to context_switch()"},
	{ESwitchIdle, "the same, from the idle task",
		"irq_exit_rcu(), the idle loop's exit, schedule_idle() -> __schedule() up to context_switch()"},
	{ESignalGenerate, "hrtimer_expire_entry of posix_timer_fn -> signal_generate",
		"posix_timer_fn() -> posix_timer_queue_signal() -> send_sigqueue() up to its tracepoint"},
	{ESignalDeliver, "signal_generate in posix_timer_fn -> signal_deliver of that signal by its target on the same CPU, no switch between",
		"the interrupt's tail, irq_exit_rcu(), exit_to_user_mode() -> get_signal() -> dequeue_signal() (with posixtimer_rearm() of an interval timer)"},
	{EStartProgram, "hrtimer_start -> sched_switch away from the starting task, the timer became the CPU's first (an MSR 0x6e0 write between, when traced)",
		"do_nanosleep(): enqueue_hrtimer(), hrtimer_reprogram() -> lapic_next_deadline() (WRMSR IA32_TSC_DEADLINE), schedule()"},
	{EStartPlain, "the same, the timer did not become the first (no device write)",
		"do_nanosleep(): enqueue_hrtimer(), schedule()"},
	{EPastDeadline, "an MSR 0x6e0 write -> the CPU's next local_timer_entry, when the CPU's earliest queued hard hrtimer had expired before the write (its expires= against the write's time in CLOCK_MONOTONIC, from the CPU's last hrtimer_expire_entry now=)",
		"a TSC-deadline write of a deadline already past: in a KVM guest start_sw_tscdeadline() finds tscdeadline <= guest_tsc and calls apic_timer_expired() at once, so the interrupt is injected at the next VM entry (no host hrtimer), and taken when the guest enables interrupts"},
	{ERCUSoftirq, "softirq_entry -> softirq_exit of RCU_SOFTIRQ (vec 9)",
		"rcu_core(): grace-period bookkeeping and rcu_do_batch()'s callbacks"},
	{EIPISend, "ipi_send_cpu -> the write of MSR 0x830 (x2APIC ICR), next events",
		"smp_send_reschedule() / arch_send_call_function_single_ipi() -> x2apic_send_IPI(): the ICR write (a VM exit in a guest)"},
	{EIPILatency, "ipi_send_cpu -> the target CPU's next IPI vector entry (reschedule_entry, call_function_*_entry), the target running a task",
		"the IPI's delivery to the target and its IDT entry, up to sysvec_reschedule_ipi()'s tracepoint"},
}

// Interval is one sample: its length and the traced events inside it (each
// adds a tracepoint's cost, removed by Correct).
type Interval struct {
	NS       int64
	Interior int
}

// Measurement is what one trace gives every estimator.
type Measurement struct {
	Samples map[string][]Interval
	// Resolution is the timestamps' resolution in ns: 1000 for the
	// tracefs text of an ns clock (microsecond decimals), else 1.
	Resolution int64
	// MSRTraced is set when the trace holds msr:write_msr events, and
	// TSCDeadline when one of them wrote IA32_TSC_DEADLINE: the clockevent
	// is the local APIC in TSC-deadline mode.
	MSRTraced   bool
	TSCDeadline bool
	Events      int64
}

// isTickFn names the tick's hrtimer callback across releases.
var isTickFn = map[string]bool{"tick_nohz_handler": true, "tick_sched_timer": true, "tick_nohz_highres_handler": true}

// tscDeadlineMSR is IA32_TSC_DEADLINE; x2apicICR the x2APIC interrupt
// command register, written to send an IPI.
const (
	tscDeadlineMSR = 0x6e0
	x2apicICR      = 0x830
)

// rcuSoftirq is RCU_SOFTIRQ's number (include/linux/interrupt.h).
const rcuSoftirq = 9

type cpuState struct {
	last     traceimport.Kind
	lastTime int64
	has      bool
	lastMSR  uint64 // the register of the CPU's last MSR write
	// rcuEntry: the open RCU_SOFTIRQ's entry (-1: none), rcuN the events
	// since.
	rcuEntry int64
	rcuN     int
	// ipiSent: the first ipi_send_cpu to this CPU not yet received (-1:
	// none), and whether the CPU was running a task then.
	ipiSent     int64
	ipiSentBusy bool
	// idle: in a cpuidle state (cpu_idle entered, not left).
	idle bool
	// inLT: inside a local timer interrupt; ltIdle: the CPU was idle when
	// it came; woken: tasks woken in it.
	inLT   bool
	ltIdle bool
	// ltFirst: the CPU's earliest queued hard hrtimer when the interrupt
	// came (ltFirstOK: there was one).
	ltFirst   uint64
	ltFirstOK bool
	woken     map[int]bool
	// The open intervals: their start and the events seen since.
	expEntry   int64 // hrtimer_expire_entry of the timer expEntryT
	expEntryT  uint64
	expEntryFn string
	expN       int
	tEntry     int64 // timer_expire_entry
	tEntryT    uint64
	tN         int
	start      int64 // hrtimer_start by startPID that may be followed by its switch
	startPID   int
	startFirst bool
	startMSR   int
	startN     int
	gen        int64 // signal_generate for genPID/genSig
	genPID     int
	genSig     int
	genN       int
	genSwitch  bool
	// hxExit: the last hrtimer_expire_exit, hxOnlyMSR while only MSR
	// writes followed it.
	hxExit    int64
	hxN       int
	hxOnlyMSR bool
	// queue: the hard hrtimers queued on the CPU, by timer, with their
	// expiry.
	queue map[uint64]int64
	// monoOff is CLOCK_MONOTONIC less the trace clock, from the CPU's last
	// hrtimer_expire_entry (monoOK: there was one); pastWrite is the last
	// TSC-deadline write of an already expired deadline not yet followed
	// by the interrupt (-1: none), pastN the events since.
	monoOff   int64
	monoOK    bool
	pastWrite int64
	pastN     int
}

// earliest is the queued timer with the earliest expiry (the lowest
// pointer among equal ones, so the answer does not follow map order).
func (c *cpuState) earliest() (uint64, bool) {
	var t uint64
	var x int64
	ok := false
	for o, e := range c.queue {
		if !ok || e < x || e == x && o < t {
			t, x, ok = o, e, true
		}
	}
	return t, ok
}

func (c *cpuState) first(t uint64) bool {
	e, ok := c.queue[t]
	if !ok {
		return false
	}
	for o, x := range c.queue {
		if o != t && x < e {
			return false
		}
	}
	return true
}

// Measure reads a trace and collects every estimator's samples. The reader
// must decode the extra kinds (FtraceReader.DecodeExtra).
func Measure(r traceimport.Reader) (*Measurement, error) {
	m := &Measurement{Samples: map[string][]Interval{}, Resolution: 1000}
	cpus := map[int]*cpuState{}
	expires := map[uint64]int64{}
	// queuedOn is the CPU whose queue holds a timer: a timer that expires
	// or is cancelled elsewhere must leave it, or it would stay the first.
	queuedOn := map[uint64]*cpuState{}
	dequeue := func(t uint64) {
		if q, ok := queuedOn[t]; ok {
			delete(q.queue, t)
			delete(queuedOn, t)
		}
	}
	// hrtimer_start -> sched_switch samples are classified at the end,
	// once it is known whether the trace holds MSR writes at all.
	type startSample struct {
		ns    int64
		first bool
		msr   int
	}
	var starts []startSample
	add := func(name string, ns int64, interior int) {
		m.Samples[name] = append(m.Samples[name], Interval{NS: ns, Interior: interior})
	}
	cpu := func(n int) *cpuState {
		c := cpus[n]
		if c == nil {
			c = &cpuState{queue: map[uint64]int64{}, woken: map[int]bool{}, expEntry: -1, tEntry: -1, start: -1, gen: -1, hxExit: -1, ipiSent: -1, rcuEntry: -1, pastWrite: -1}
			cpus[n] = c
		}
		return c
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		m.Events++
		if e.Time%1000 != 0 {
			m.Resolution = 1
		}
		c := cpu(e.CPU)
		next := c.has // the previous event on this CPU is the one just before
		prev, prevT := c.last, c.lastTime
		// Interiors: every open interval counts this event.
		c.expN++
		c.tN++
		c.startN++
		c.genN++
		c.hxN++
		c.rcuN++
		c.pastN++
		if e.Kind != traceimport.WriteMSR && e.Kind != traceimport.LocalTimerExit {
			c.hxOnlyMSR = false
		}
		switch e.Kind {
		case traceimport.HRStart:
			dequeue(e.Timer)
			if !hardMode(e.Mode) {
				break
			}
			c.queue[e.Timer] = e.Expires
			queuedOn[e.Timer] = c
			expires[e.Timer] = e.Expires
			c.start, c.startPID, c.startFirst, c.startMSR, c.startN = e.Time, e.PID, c.first(e.Timer), 0, 0
		case traceimport.HRCancel:
			dequeue(e.Timer)
		case traceimport.IPISendCPU:
			if t := cpu(e.TargetCPU); t.ipiSent < 0 && e.TargetCPU != e.CPU {
				t.ipiSent, t.ipiSentBusy = e.Time, !t.idle
			}
		case traceimport.IPIEntry:
			if c.ipiSent >= 0 && c.ipiSentBusy {
				add(EIPILatency, e.Time-c.ipiSent, 0)
			}
			c.ipiSent = -1
		case traceimport.WriteMSR:
			m.MSRTraced = true
			m.TSCDeadline = m.TSCDeadline || e.MSR == tscDeadlineMSR
			if e.MSR == tscDeadlineMSR && c.start >= 0 {
				c.startMSR++
			}
			if e.MSR == tscDeadlineMSR && c.monoOK {
				// The write programs the CPU's earliest hard expiry; the
				// trace's microsecond timestamps leave the mapping a
				// resolution uncertain, so a deadline counts as past
				// only by more than that.
				c.pastWrite = -1
				if t, ok := c.earliest(); ok && c.queue[t] < e.Time+c.monoOff-m.Resolution {
					c.pastWrite, c.pastN = e.Time, 0
				}
			}
			if next && prev == traceimport.IPISendCPU && e.MSR == x2apicICR {
				add(EIPISend, e.Time-prevT, 0)
			}
			c.lastMSR = e.MSR
		case traceimport.LocalTimerEntry:
			if c.pastWrite >= 0 {
				add(EPastDeadline, e.Time-c.pastWrite, c.pastN-1)
				c.pastWrite = -1
			}
			c.inLT, c.ltIdle = true, c.idle
			clear(c.woken)
			// The device was programmed for the earliest hard expiry
			// queued when the interrupt came; timers whose soft expiry
			// has passed run in the same interrupt, early for theirs.
			c.ltFirst, c.ltFirstOK = c.earliest()
		case traceimport.HRExpireEntry:
			c.monoOff, c.monoOK = e.Now-e.Time, true
			if next && prev == traceimport.LocalTimerEntry {
				add(EIRQEntry, e.Time-prevT, 0)
			}
			if c.inLT && e.Function == "hrtimer_wakeup" {
				if x, ok := expires[e.Timer]; ok && c.ltFirstOK && c.ltFirst == e.Timer {
					name := ELatenessBusy
					if c.ltIdle {
						name = ELatenessIdle
					}
					add(name, e.Now-x, 0)
				}
			}
			if c.inLT && e.Function == "posix_timer_fn" {
				c.gen = -1
			}
			dequeue(e.Timer)
			delete(expires, e.Timer)
			c.expEntry, c.expEntryT, c.expEntryFn, c.expN = e.Time, e.Timer, e.Function, 0
		case traceimport.HRExpireExit:
			if next && (prev == traceimport.SchedWakeup || prev == traceimport.SignalGenerate) && c.expEntry >= 0 && c.expEntryT == e.Timer {
				add(ETracepoint, e.Time-prevT, 0)
			}
			if c.expEntry >= 0 && c.expEntryT == e.Timer {
				switch {
				case isTickFn[c.expEntryFn]:
					add(ETick, e.Time-c.expEntry, c.expN-1)
				case c.expEntryFn == "hrtimer_wakeup":
					add(EWakeup, e.Time-c.expEntry, c.expN-1)
				}
			}
			c.expEntry = -1
			c.hxExit, c.hxN, c.hxOnlyMSR = e.Time, 0, true
		case traceimport.TimerExpireEntry:
			c.tEntry, c.tEntryT, c.tN = e.Time, e.Timer, 0
		case traceimport.TimerExpireExit:
			if c.tEntry >= 0 && c.tEntryT == e.Timer {
				add(ETimerCallback, e.Time-c.tEntry, c.tN-1)
			}
			c.tEntry = -1
		case traceimport.LocalTimerExit:
			if next && prev == traceimport.WriteMSR && c.lastMSR == tscDeadlineMSR {
				add(ETracepoint, e.Time-prevT, 0)
			}
			if c.hxExit >= 0 && c.hxOnlyMSR {
				add(EHRTail, e.Time-c.hxExit, c.hxN-1)
			}
			c.hxExit = -1
			c.inLT = false
		case traceimport.SoftirqEntry:
			if next && prev == traceimport.LocalTimerExit {
				add(EIRQExit, e.Time-prevT, 0)
			}
			if e.Vec == rcuSoftirq {
				c.rcuEntry, c.rcuN = e.Time, 0
			}
		case traceimport.SoftirqExit:
			if e.Vec == rcuSoftirq && c.rcuEntry >= 0 {
				add(ERCUSoftirq, e.Time-c.rcuEntry, c.rcuN-1)
			}
			c.rcuEntry = -1
		case traceimport.SchedWaking:
			if c.inLT {
				c.woken[e.WakePID] = true
			}
		case traceimport.SchedSwitch:
			if next && prev == traceimport.LocalTimerExit && c.woken[e.NextPID] {
				if e.PrevPID == 0 {
					add(ESwitchIdle, e.Time-prevT, 0)
				} else {
					add(ESwitchBusy, e.Time-prevT, 0)
				}
			}
			if c.start >= 0 && e.PrevPID == c.startPID && (c.startN == 1 || c.startN == 2 && c.startMSR == 1) {
				starts = append(starts, startSample{e.Time - c.start, c.startFirst, c.startMSR})
			}
			c.start = -1
			c.genSwitch = true
		case traceimport.SignalGenerate:
			if c.expEntry < 0 || c.expEntryFn != "posix_timer_fn" {
				break // not a timer's signal (a kill(), the Go runtime's preemption)
			}
			if next && prev == traceimport.HRExpireEntry {
				add(ESignalGenerate, e.Time-prevT, 0)
			}
			c.gen, c.genPID, c.genSig, c.genN, c.genSwitch = e.Time, e.WakePID, e.Sig, 0, false
		case traceimport.SignalDeliver:
			if c.gen >= 0 && !c.genSwitch && e.PID == c.genPID && e.Sig == c.genSig {
				add(ESignalDeliver, e.Time-c.gen, c.genN-1)
			}
			c.gen = -1
		case traceimport.CPUIdle:
			c.idle = e.State != 4294967295 && e.State != -1
		}
		if next && prev == traceimport.SoftirqEntry && e.Kind != traceimport.SoftirqExit {
			add(ESoftirqEntry, e.Time-prevT, 0)
		}
		// An interval that must be followed at once ends at any other event.
		if e.Kind != traceimport.HRStart && e.Kind != traceimport.WriteMSR && e.Kind != traceimport.SchedSwitch && c.start >= 0 {
			c.start = -1
		}
		c.last, c.lastTime, c.has = e.Kind, e.Time, true
	}
	for _, s := range starts {
		switch {
		case m.MSRTraced && s.msr == 1:
			add(EStartProgram, s.ns, 1)
		case m.MSRTraced:
			add(EStartPlain, s.ns, 0)
		case s.first:
			add(EStartProgram, s.ns, 0)
		default:
			add(EStartPlain, s.ns, 0)
		}
	}
	if m.Events == 0 {
		return nil, fmt.Errorf("no events")
	}
	return m, nil
}

// hardMode: an hrtimer_start mode without SOFT (soft timers expire from
// HRTIMER_SOFTIRQ and program the device only through the softirq's own
// expiry).
func hardMode(mode string) bool { return !strings.Contains(mode, "SOFT") }
