package calibrate

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/traceimport"
)

// Synthetic traces in tracefs text with nanosecond decimals, so every
// interval is known exactly by construction.
func line(comm string, cpu int, ts, rest string) string {
	return "  " + comm + " [00" + string(rune('0'+cpu)) + "] d..1. " + ts + ": " + rest + "\n"
}

func TestMeasure(t *testing.T) {
	const sleep = "hrtimer_setup: hrtimer=00000000000000a1 clockid=CLOCK_MONOTONIC mode=ABS"
	start := func(timer, expires string) string {
		return "hrtimer_start: hrtimer=" + timer + " function=hrtimer_wakeup expires=" + expires + " softexpires=" + expires + " mode=ABS was_armed=0"
	}
	switchOut := "sched_switch: prev_comm=ct prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"
	for _, tc := range []struct {
		name  string
		trace string
		want  map[string][]Interval
		msr   bool
	}{
		{
			name: "sleep that programs the device, then one that does not",
			trace: line("ct-100", 0, "10.000000000", sleep) +
				line("ct-100", 0, "10.000000700", start("00000000000000a1", "10500000000")) +
				line("ct-100", 0, "10.000001500", "write_msr: 6e0, value 123") +
				line("ct-100", 0, "10.000010700", switchOut) +
				// A second sleeper on CPU 0 expiring later: not the first, no write.
				line("ct-100", 0, "10.000020000", "hrtimer_setup: hrtimer=00000000000000a2 clockid=CLOCK_MONOTONIC mode=ABS") +
				line("ct-100", 0, "10.000020600", start("00000000000000a2", "10600000000")) +
				line("ct-100", 0, "10.000022600", switchOut),
			want: map[string][]Interval{
				EStartProgram: {{10000, 1}},
				EStartPlain:   {{2000, 0}},
			},
			msr: true,
		},
		{
			name: "without msr events the first timer is the one that programs",
			trace: line("ct-100", 0, "10.000000700", start("00000000000000a1", "10500000000")) +
				line("ct-100", 0, "10.000009700", switchOut) +
				line("ct-100", 0, "10.000020600", start("00000000000000a2", "10600000000")) +
				line("ct-100", 0, "10.000022600", switchOut),
			want: map[string][]Interval{EStartProgram: {{9000, 0}}, EStartPlain: {{2000, 0}}},
		},
		{
			name: "a soft hrtimer, even an earlier one, is not in the queue the device is programmed from",
			trace: line("ct-100", 0, "10.000000100", "hrtimer_start: hrtimer=00000000000000f1 function=watchdog_timer_fn expires=10000050000 softexpires=10000050000 mode=ABS|SOFT was_armed=0") +
				line("ct-100", 0, "10.000000700", start("00000000000000a1", "10500000000")) +
				line("ct-100", 0, "10.000009700", switchOut),
			want: map[string][]Interval{EStartProgram: {{9000, 0}}},
		},
		{
			name: "a timer interrupt on a busy CPU: entry, wakeup, tail, exit, softirq, switch",
			trace: line("ct-100", 1, "10.000000000", start("00000000000000b1", "10000040000")) +
				line("ct-100", 1, "10.000001000", "sched_switch: prev_comm=ct prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=hog next_pid=200 next_prio=120") +
				line("hog-200", 1, "10.000050000", "local_timer_entry: vector=236") +
				line("hog-200", 1, "10.000050400", "hrtimer_expire_entry: hrtimer=00000000000000b1 function=hrtimer_wakeup now=10000055000") +
				line("hog-200", 1, "10.000050900", "sched_waking: comm=ct pid=100 prio=120 target_cpu=001") +
				line("hog-200", 1, "10.000051500", "sched_wakeup: comm=ct pid=100 prio=120 target_cpu=001") +
				line("hog-200", 1, "10.000052000", "hrtimer_expire_exit: hrtimer=00000000000000b1") +
				line("hog-200", 1, "10.000059000", "write_msr: 6e0, value 123") +
				line("hog-200", 1, "10.000059500", "local_timer_exit: vector=236") +
				line("hog-200", 1, "10.000059800", "softirq_entry: vec=1 [action=TIMER]") +
				line("hog-200", 1, "10.000061000", "timer_expire_entry: timer=00000000000000c1 function=process_timeout now=4294967296 baseclk=4294967296") +
				line("hog-200", 1, "10.000063000", "timer_expire_exit: timer=00000000000000c1") +
				line("hog-200", 1, "10.000063500", "softirq_exit: vec=1 [action=TIMER]"),
			want: map[string][]Interval{
				// sched_wakeup -> expire_exit, the MSR write -> local_timer_exit.
				ETracepoint:    {{500, 0}, {500, 0}},
				EIRQEntry:      {{400, 0}},
				EWakeup:        {{1600, 2}},
				EHRTail:        {{7500, 1}},
				EIRQExit:       {{300, 0}},
				ESoftirqEntry:  {{1200, 0}},
				ETimerCallback: {{2000, 0}},
				ELatenessBusy:  {{15000, 0}},
				// The sleep before: no MSR write between its start and
				// the switch, in a trace that has them.
				EStartPlain: {{1000, 0}},
			},
			msr: true,
		},
		{
			name: "the same on an idle CPU, then the switch to the woken task",
			trace: line("ct-100", 1, "10.000000000", start("00000000000000b1", "10000040000")) +
				line("ct-100", 1, "10.000001000", "sched_switch: prev_comm=ct prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120") +
				line("<idle>-0", 1, "10.000002000", "cpu_idle: state=1 cpu_id=1") +
				line("<idle>-0", 1, "10.000060000", "local_timer_entry: vector=236") +
				line("<idle>-0", 1, "10.000060400", "hrtimer_expire_entry: hrtimer=00000000000000b1 function=hrtimer_wakeup now=10000070000") +
				line("<idle>-0", 1, "10.000060900", "sched_waking: comm=ct pid=100 prio=120 target_cpu=001") +
				line("<idle>-0", 1, "10.000061500", "sched_wakeup: comm=ct pid=100 prio=120 target_cpu=001") +
				line("<idle>-0", 1, "10.000062000", "hrtimer_expire_exit: hrtimer=00000000000000b1") +
				line("<idle>-0", 1, "10.000062500", "local_timer_exit: vector=236") +
				line("<idle>-0", 1, "10.000063000", "cpu_idle: state=4294967295 cpu_id=1") +
				line("<idle>-0", 1, "10.000064000", "sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=100 next_prio=120") +
				line("ct-100", 1, "10.000070000", "local_timer_entry: vector=236") +
				line("ct-100", 1, "10.000070300", "local_timer_exit: vector=236") +
				line("ct-100", 1, "10.000071300", "sched_switch: prev_comm=ct prev_pid=100 prev_prio=120 prev_state=R ==> next_comm=hog next_pid=200 next_prio=120"),
			want: map[string][]Interval{
				ETracepoint:   {{500, 0}},
				EIRQEntry:     {{400, 0}},
				EWakeup:       {{1600, 2}},
				EHRTail:       {{500, 0}},
				ELatenessIdle: {{30000, 0}},
				// No MSR events: the sleep's timer became the CPU's first.
				EStartProgram: {{1000, 0}},
				// The cpu_idle exit sits between local_timer_exit and the
				// switch: not the next event, no sample. The later switch
				// is to a task not woken in that interrupt: none either.
			},
		},
		{
			name: "a POSIX timer's signal: generated in posix_timer_fn, delivered on the way out",
			trace: line("sng-300", 0, "10.000000000", "local_timer_entry: vector=236") +
				line("sng-300", 0, "10.000000200", "hrtimer_expire_entry: hrtimer=00000000000000d1 function=posix_timer_fn now=10000000100") +
				line("sng-300", 0, "10.000001000", "signal_generate: sig=34 errno=0 code=-2 comm=sng pid=300 grp=1 res=0") +
				line("sng-300", 0, "10.000001500", "hrtimer_expire_exit: hrtimer=00000000000000d1") +
				line("sng-300", 0, "10.000002000", "local_timer_exit: vector=236") +
				line("sng-300", 0, "10.000005000", "signal_deliver: sig=34 errno=0 code=-2 sa_handler=5555 sa_flags=c000000") +
				// A kill() from a task: not a timer's signal.
				line("go-400", 0, "10.000010000", "signal_generate: sig=23 errno=0 code=-6 comm=go pid=401 grp=0 res=0") +
				line("go-401", 0, "10.000010500", "signal_deliver: sig=23 errno=0 code=-6 sa_handler=4944a0 sa_flags=1c000004") +
				// A timer's signal whose target is switched in first: no sample.
				line("sng-300", 0, "10.000020000", "hrtimer_expire_entry: hrtimer=00000000000000d1 function=posix_timer_fn now=10000020000") +
				line("sng-300", 0, "10.000020300", "signal_generate: sig=34 errno=0 code=-2 comm=sng pid=301 grp=1 res=0") +
				line("sng-300", 0, "10.000020600", "hrtimer_expire_exit: hrtimer=00000000000000d1") +
				line("sng-300", 0, "10.000021000", "sched_switch: prev_comm=sng prev_pid=300 prev_prio=120 prev_state=R ==> next_comm=sng next_pid=301 next_prio=120") +
				line("sng-301", 0, "10.000022000", "signal_deliver: sig=34 errno=0 code=-2 sa_handler=5555 sa_flags=c000000"),
			want: map[string][]Interval{
				// signal_generate -> expire_exit, twice.
				ETracepoint:     {{500, 0}, {300, 0}},
				EIRQEntry:       {{200, 0}},
				ESignalGenerate: {{800, 0}, {300, 0}},
				EHRTail:         {{500, 0}},
				ESignalDeliver:  {{4000, 2}},
			},
		},
		{
			name: "a timer that expires on another CPU leaves the queue of the one that started it",
			trace: line("ct-100", 0, "10.000000700", start("00000000000000a1", "10000100000")) +
				line("ct-100", 0, "10.000001700", switchOut) +
				line("x-300", 1, "10.000100000", "local_timer_entry: vector=236") +
				line("x-300", 1, "10.000100500", "hrtimer_expire_entry: hrtimer=00000000000000a1 function=hrtimer_wakeup now=10000110000") +
				line("x-300", 1, "10.000101500", "hrtimer_expire_exit: hrtimer=00000000000000a1") +
				line("ct-100", 0, "10.000200700", start("00000000000000a2", "10000300000")) +
				line("ct-100", 0, "10.000209700", switchOut),
			want: map[string][]Interval{
				// Both starts were the CPU's first: without the expiry
				// elsewhere removing a1, a2 would count as plain.
				EStartProgram: {{1000, 0}, {9000, 0}},
				EIRQEntry:     {{500, 0}},
				EWakeup:       {{1000, 0}},
			},
		},
		{
			name: "a timer run early in another's interrupt (its soft expiry passed) is not the device's lateness",
			trace: line("a-100", 1, "10.000000000", start("00000000000000b1", "10000040000")) +
				line("b-101", 1, "10.000000500", "hrtimer_start: hrtimer=00000000000000b2 function=hrtimer_wakeup expires=10000090000 softexpires=10000040000 mode=ABS was_armed=0") +
				line("hog-200", 1, "10.000050000", "local_timer_entry: vector=236") +
				line("hog-200", 1, "10.000050400", "hrtimer_expire_entry: hrtimer=00000000000000b1 function=hrtimer_wakeup now=10000055000") +
				line("hog-200", 1, "10.000051400", "hrtimer_expire_exit: hrtimer=00000000000000b1") +
				line("hog-200", 1, "10.000052000", "hrtimer_expire_entry: hrtimer=00000000000000b2 function=hrtimer_wakeup now=10000055000") +
				line("hog-200", 1, "10.000053000", "hrtimer_expire_exit: hrtimer=00000000000000b2") +
				line("hog-200", 1, "10.000053500", "local_timer_exit: vector=236"),
			want: map[string][]Interval{
				EIRQEntry:     {{400, 0}},
				EWakeup:       {{1000, 0}, {1000, 0}},
				EHRTail:       {{500, 0}},
				ELatenessBusy: {{15000, 0}}, // b2's -35 us is not a sample
			},
		},
		{
			name: "IPIs: the send's ICR write, the delivery to a busy CPU; one to an idle CPU is no sample",
			trace: line("hog-200", 1, "10.000000100", "sched_switch: prev_comm=a prev_pid=201 prev_prio=120 prev_state=S ==> next_comm=hog next_pid=200 next_prio=120") +
				line("ct-100", 0, "10.000001000", "ipi_send_cpu: cpu=1 callsite=ttwu_queue_wakelist+0x8a/0x100 callback=0x0") +
				line("ct-100", 0, "10.000011000", "write_msr: 830, value 1000000fd") +
				line("hog-200", 1, "10.000021000", "reschedule_entry: vector=253") +
				line("hog-200", 1, "10.000021500", "reschedule_exit: vector=253") +
				line("<idle>-0", 1, "10.000030000", "cpu_idle: state=1 cpu_id=1") +
				line("ct-100", 0, "10.000040000", "ipi_send_cpu: cpu=1 callsite=ttwu_queue_wakelist+0x8a/0x100 callback=0x0") +
				line("ct-100", 0, "10.000049000", "write_msr: 830, value 1000000fd") +
				line("<idle>-0", 1, "10.000070000", "reschedule_entry: vector=253"),
			want: map[string][]Interval{
				EIPISend:    {{10000, 0}, {9000, 0}},
				EIPILatency: {{20000, 0}},
			},
			msr: true,
		},
		{
			name: "the tick's callback, with a softirq raised inside",
			trace: line("<idle>-0", 0, "10.000000010", "hrtimer_expire_entry: hrtimer=00000000000000e1 function=tick_nohz_handler now=10000000000") +
				line("<idle>-0", 0, "10.000003010", "softirq_raise: vec=1 [action=TIMER]") +
				line("<idle>-0", 0, "10.000005010", "hrtimer_expire_exit: hrtimer=00000000000000e1"),
			want: map[string][]Interval{ETick: {{5000, 1}}},
		},
		{
			name: "an RCU softirq, and a timer softirq that is not one",
			trace: line("<idle>-0", 0, "10.000000010", "softirq_entry: vec=9 [action=RCU]") +
				line("<idle>-0", 0, "10.000004010", "softirq_exit: vec=9 [action=RCU]") +
				line("<idle>-0", 0, "10.000005010", "softirq_entry: vec=1 [action=TIMER]") +
				line("<idle>-0", 0, "10.000006010", "softirq_exit: vec=1 [action=TIMER]"),
			want: map[string][]Interval{ERCUSoftirq: {{4000, 0}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := traceimport.NewFtrace(strings.NewReader("# tracer: nop\n" + tc.trace))
			r.DecodeExtra()
			m, err := Measure(r)
			if err != nil {
				t.Fatal(err)
			}
			if m.Resolution != 1 {
				t.Errorf("Resolution = %d, want 1 (ns timestamps)", m.Resolution)
			}
			if m.MSRTraced != tc.msr {
				t.Errorf("MSRTraced = %v, want %v", m.MSRTraced, tc.msr)
			}
			for _, k := range slices.Sorted(maps.Keys(m.Samples)) {
				if !slices.Equal(m.Samples[k], tc.want[k]) {
					t.Errorf("%s = %v, want %v", k, m.Samples[k], tc.want[k])
				}
			}
			for k, v := range tc.want {
				if _, ok := m.Samples[k]; !ok {
					t.Errorf("%s: no samples, want %v", k, v)
				}
			}
		})
	}
}

func TestMeasureResolution(t *testing.T) {
	r := traceimport.NewFtrace(strings.NewReader(line("a-1", 0, "10.000001", "local_timer_entry: vector=236") + line("a-1", 0, "10.000002", "local_timer_exit: vector=236")))
	r.DecodeExtra()
	m, err := Measure(r)
	if err != nil || m.Resolution != 1000 {
		t.Errorf("Measure of microsecond timestamps: resolution %v, %v; want 1000", m, err)
	}
	if _, err := Measure(traceimport.NewFtrace(strings.NewReader("# tracer: nop\n"))); err == nil {
		t.Error("Measure of an empty trace: no error")
	}
}

// FuzzMeasure: whatever a trace holds, Measure returns samples or an error,
// never panics, and every sample comes from a known estimator.
func FuzzMeasure(f *testing.F) {
	f.Add(line("ct-100", 0, "10.000000700", "hrtimer_start: hrtimer=00000000000000a1 function=hrtimer_wakeup expires=10500000000 softexpires=10500000000 mode=ABS was_armed=0") +
		line("ct-100", 0, "10.000001500", "write_msr: 6e0, value 123") +
		line("ct-100", 0, "10.000010700", "sched_switch: prev_comm=ct prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"))
	f.Add(line("sng-300", 0, "10.000000200", "hrtimer_expire_entry: hrtimer=00000000000000d1 function=posix_timer_fn now=10000000100") +
		line("sng-300", 0, "10.000001000", "signal_generate: sig=34 errno=0 code=-2 comm=sng pid=300 grp=1 res=0") +
		line("sng-300", 0, "10.000005000", "signal_deliver: sig=34 errno=0 code=-2 sa_handler=5555 sa_flags=c000000") +
		line("sng-300", 0, "10.000005000", "write_msr: , value"))
	known := map[string]bool{}
	for _, e := range Estimators {
		known[e.Name] = true
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := traceimport.NewFtrace(strings.NewReader(s))
		r.DecodeExtra()
		m, err := Measure(r)
		if err != nil {
			return
		}
		for k := range m.Samples {
			if !known[k] {
				t.Fatalf("samples of unknown estimator %q", k)
			}
		}
		_ = Estimates(m)
	})
}

// TestMeasurePastDeadline: a TSC-deadline write whose CPU's earliest hard
// expiry had passed (in CLOCK_MONOTONIC, mapped by the last
// hrtimer_expire_entry) is a past_deadline sample up to the next interrupt;
// a write of a future deadline, or one within the timestamps' resolution, is not.
func TestMeasurePastDeadline(t *testing.T) {
	// The trace clock is CLOCK_MONOTONIC + 5 us: now=10000000000 at 10.000005.
	tr := line("sng-300", 0, "10.000005000", "hrtimer_expire_entry: hrtimer=00000000000000d1 function=posix_timer_fn now=10000000000") +
		line("sng-300", 0, "10.000006000", "hrtimer_expire_exit: hrtimer=00000000000000d1") +
		// Started at mono 10.000015 for 10.000016, written at mono 10.000030: past.
		line("sng-300", 0, "10.000020000", "hrtimer_start: hrtimer=00000000000000d1 function=posix_timer_fn expires=10000016000 softexpires=10000016000 mode=ABS was_armed=0") +
		line("sng-300", 0, "10.000035000", "write_msr: 6e0, value 123") +
		line("sng-300", 0, "10.000045000", "local_timer_entry: vector=236") +
		line("sng-300", 0, "10.000046000", "hrtimer_expire_entry: hrtimer=00000000000000d1 function=posix_timer_fn now=10000041000") +
		line("sng-300", 0, "10.000047000", "hrtimer_expire_exit: hrtimer=00000000000000d1") +
		line("sng-300", 0, "10.000048000", "local_timer_exit: vector=236") +
		// A future deadline (mono 10.000100), written at mono 10.000055.
		line("sng-300", 0, "10.000058000", "hrtimer_start: hrtimer=00000000000000d1 function=posix_timer_fn expires=10000100000 softexpires=10000100000 mode=ABS was_armed=0") +
		line("sng-300", 0, "10.000060000", "write_msr: 6e0, value 456") +
		line("sng-300", 0, "10.000120000", "local_timer_entry: vector=236")
	r := traceimport.NewFtrace(strings.NewReader(tr))
	r.DecodeExtra()
	m, err := Measure(r)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Samples[EPastDeadline]
	if len(got) != 1 || got[0].NS != 10000 {
		t.Errorf("past_deadline samples %v; want one of 10 us (the past write to its interrupt)", got)
	}
}
