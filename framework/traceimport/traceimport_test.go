package traceimport

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readAll reads every event of r, copying them.
func readAll(t testing.TB, r Reader) ([]Event, error) {
	t.Helper()
	var out []Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, *e)
	}
}

func openTestdata(t *testing.T, name string) Reader {
	t.Helper()
	f, err := Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestHandWrittenCaptures(t *testing.T) {
	tests := []struct {
		file    string
		format  string
		cpus    int
		kinds   []Kind
		unknown map[string]int64
		check   func(t *testing.T, ev []Event)
	}{
		{
			file: "tracefs-6x.txt", format: "ftrace", cpus: 2,
			kinds:   []Kind{HRInit, HRStart, TickStop, HRStart, CPUIdle, LocalTimerEntry, HRCancel, HRExpireEntry, SchedWakeup, HRExpireExit, SchedSwitch, TimerStart, TimerExpireEntry},
			unknown: map[string]int64{"workqueue_queue_work": 1},
			check: func(t *testing.T, ev []Event) {
				e := ev[1]
				if e.Time != 100_000_101_000 || e.CPU != 1 || e.Comm != "cyclictest" || e.PID != 1200 ||
					e.Timer != 0xffffb4a74be7fe70 || e.Function != "hrtimer_wakeup" || e.Expires != 100000600000 ||
					e.SoftExpires != 100000600000 || e.Mode != "ABS" || e.WasArmed != -1 {
					t.Errorf("hrtimer_start: %+v", e)
				}
				if ev[2].Success != 1 || ev[2].Dependency != "NONE" {
					t.Errorf("tick_stop: %+v", ev[2])
				}
				if ev[3].Mode != "ABS|PINNED|HARD" {
					t.Errorf("tick mode %q", ev[3].Mode)
				}
				if ev[7].Now != 100000605123 {
					t.Errorf("expire now %d", ev[7].Now)
				}
				if w := ev[8]; w.WakeComm != "cyclictest" || w.WakePID != 1200 || w.TargetCPU != 1 {
					t.Errorf("wakeup: %+v", w)
				}
				if s := ev[10]; s.PrevComm != "swapper/1" || s.PrevPID != 0 || s.PrevState != "R" || s.NextComm != "cyclictest" || s.NextPID != 1200 || s.PrevPrio != 120 || s.NextPrio != 19 {
					t.Errorf("switch: %+v", s)
				}
				if s := ev[11]; s.Comm != "kworker/1:1" || s.PID != 88 || s.Timeout != 100 || !s.HasTimeout || s.BucketExpiry != 4294767400 || s.TimerCPU != 1 || s.Flags != "I" {
					t.Errorf("timer_start: %+v", s)
				}
			},
		},
		{
			// Lines of captures on a 6.18 KVM guest: the events current
			// kernels emit beside the timer ones.
			file: "tracefs-6.18.txt", format: "ftrace", cpus: 2,
			kinds: []Kind{PMQoSAddRequest, PMQoSUpdateTarget, SchedWaking, SchedWakeup, SchedWakeupNew, SchedMigrateTask,
				IPISendCPU, IPISendCPUMask, IPIEntry, IPIExit, IPIEntry, IRQWorkEntry, IRQWorkExit, TimerBaseIdle, HRInit,
				PMQoSRemoveRequest, PMQoSUpdateTarget},
			unknown: map[string]int64{"itimer_state": 1, "cpu_idle_miss": 1},
			check: func(t *testing.T, ev []Event) {
				if ev[0].QoSValue != 0 || ev[1].QoSAction != "ADD_REQ" || ev[1].QoSPrev != 2000000000 || ev[1].QoSValue != 0 {
					t.Errorf("pm_qos add: %+v %+v", ev[0], ev[1])
				}
				if w := ev[2]; w.WakeComm != "migration/0" || w.WakePID != 18 || w.TargetCPU != 0 || w.Time != 150_308_299_000 {
					t.Errorf("sched_waking: %+v", w)
				}
				if w := ev[4]; w.WakeComm != "go" || w.WakePID != 11705 || w.TargetCPU != 1 || w.WakePrio != 120 || ev[2].WakePrio != 0 {
					t.Errorf("sched_wakeup_new: %+v", w)
				}
				if m := ev[5]; m.WakeComm != "tickemu" || m.WakePID != 11686 || m.OrigCPU != 1 || m.TargetCPU != 0 {
					t.Errorf("sched_migrate_task: %+v", m)
				}
				if i := ev[6]; i.TargetCPU != 1 || i.Function != "0x0" {
					t.Errorf("ipi_send_cpu: %+v", i)
				}
				if i := ev[7]; i.CPUMask != "0-1" || i.Function != "do_sync_core" {
					t.Errorf("ipi_send_cpumask: %+v", i)
				}
				if i := ev[8]; i.Name != "reschedule_entry" || i.Vec != 253 || ev[10].Name != "call_function_single_entry" {
					t.Errorf("ipi vectors: %+v %+v", i, ev[10])
				}
				if w := ev[11]; w.Vec != 246 || w.CPU != 1 {
					t.Errorf("irq_work_entry: %+v", w)
				}
				if b := ev[13]; !b.IsIdle || b.TimerCPU != 1 {
					t.Errorf("timer_base_idle: %+v", b)
				}
				if h := ev[14]; h.Clock != "CLOCK_MONOTONIC" || h.Mode != "REL|HARD" || h.Timer != 0x718535b9 {
					t.Errorf("hrtimer_setup: %+v", h)
				}
				if ev[15].QoSValue != -1 || ev[16].QoSAction != "REMOVE_REQ" || ev[16].QoSValue != 2000000000 {
					t.Errorf("pm_qos remove: %+v %+v", ev[15], ev[16])
				}
			},
		},
		{
			file: "trace-cmd-report.txt", format: "ftrace", cpus: 4,
			kinds:   []Kind{HRExpireEntry, HRStart, SchedSwitch, SchedWakeup, TimerStart, HRCancel},
			unknown: map[string]int64{"kernel_stack": 1},
			check: func(t *testing.T, ev []Event) {
				if ev[0].Function != "hrtimer_wakeup" || ev[0].Now != 21402099965347 || ev[0].Timer != 0xffffacffe3163cf8 {
					t.Errorf("plugin expire_entry: %+v", ev[0])
				}
				if ev[1].Function != "tick_nohz_handler" || ev[1].Mode != "" || ev[1].Comm != "Timer" {
					t.Errorf("plugin start: %+v", ev[1])
				}
				if s := ev[2]; s.Comm != "IPDL Background" || s.PID != 4695 || s.PrevComm != "IPDL Background" || s.PrevPID != 4695 || s.PrevState != "S" || s.NextComm != "swapper/0" || s.NextPID != 0 {
					t.Errorf("plugin switch: %+v", s)
				}
				if w := ev[3]; w.WakeComm != "cyclictest" || w.WakePID != 1171 || w.TargetCPU != 2 {
					t.Errorf("plugin wakeup: %+v", w)
				}
				if s := ev[4]; s.Comm != "trace-cmd" || s.PID != 28284 || s.Function != "intel_uncore_fw_release_timer" || s.Flags != "" || s.TimerCPU != -1 {
					t.Errorf("old timer_start: %+v", s)
				}
				if ev[5].Time != 21403_059912345 {
					t.Errorf("10-decimal timestamp: %d", ev[5].Time)
				}
			},
		},
		{
			file: "old-3x.txt", format: "ftrace", cpus: 0,
			kinds: []Kind{TimerInit, TimerStart, HRStart, TickStop, TimerExpireEntry, SchedWakeup},
			check: func(t *testing.T, ev []Event) {
				if ev[1].Timeout != 1 || ev[1].BucketExpiry != 0 {
					t.Errorf("3.x timer_start: %+v", ev[1])
				}
				if ev[3].Success != 1 {
					t.Errorf("3.x tick_stop: %+v", ev[3])
				}
				if ev[4].Now != 4294958435 {
					t.Errorf("timer_expire_entry without baseclk: %+v", ev[4])
				}
			},
		},
		{
			file: "babeltrace.txt", format: "babeltrace",
			kinds:   []Kind{HRInit, HRStart, HRCancel, HRExpireEntry, TimerStart, SchedSwitch, SchedWakeup, CPUIdle, SoftirqEntry},
			unknown: map[string]int64{"lttng_statedump_process_state": 1},
			check: func(t *testing.T, ev []Event) {
				if ev[0].Clock != "CLOCK_MONOTONIC" || ev[0].Mode != "ABS" {
					t.Errorf("init: %+v", ev[0])
				}
				s := ev[1]
				if s.Time != (13*3600+59*60+59)*1e9+999999000 || s.CPU != 1 || s.Function != "0xffffffff810c0a10" || s.Expires != 50e9 || s.SoftExpires != 49999950000 || s.Mode != "ABS|PINNED" {
					t.Errorf("start: %+v", s)
				}
				if c := ev[2]; c.PID != 66036 || c.Comm != "java" || c.Timer != 0xFFFF88003FD0D6F0 {
					t.Errorf("cancel context: %+v", c)
				}
				if x := ev[3]; x.Now != 50000001000 || x.Function != "0xffffffff810c0a10" {
					t.Errorf("expire: %+v", x)
				}
				if w := ev[4]; w.Timeout != 100 || w.BucketExpiry != 4295000104 || w.Flags != "P" || w.TimerCPU != 0 {
					t.Errorf("timer_start: %+v", w)
				}
				if s := ev[5]; s.PrevState != "R" || s.NextPID != 78397 || s.NextComm != "java" {
					t.Errorf("switch: %+v", s)
				}
				if ev[6].WakePID != 42 || ev[7].State != 4294967295 || ev[8].Vec != 1 {
					t.Errorf("wakeup/idle/softirq: %+v %+v %+v", ev[6], ev[7], ev[8])
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			r := openTestdata(t, tc.file)
			ev, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if h := r.Header(); h.Format != tc.format || h.CPUs != tc.cpus {
				t.Errorf("header %+v, want format %s cpus %d", h, tc.format, tc.cpus)
			}
			var kinds []Kind
			for _, e := range ev {
				kinds = append(kinds, e.Kind)
			}
			if !equalKinds(kinds, tc.kinds) {
				t.Fatalf("kinds %v\nwant  %v", kinds, tc.kinds)
			}
			st := r.Stats()
			if st.Events != int64(len(ev)) {
				t.Errorf("stats: %d events, returned %d", st.Events, len(ev))
			}
			for name, n := range tc.unknown {
				if st.Unknown[name] != n {
					t.Errorf("unknown %s: %d, want %d (all: %v)", name, st.Unknown[name], n, st.Unknown)
				}
			}
			tc.check(t, ev)
		})
	}
}

func equalKinds(a, b []Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A malformed line is an error naming its line number and field.
func TestMalformedLines(t *testing.T) {
	good := "          <idle>-0       [001] d..1.   100.000110: tick_stop: success=1 dependency=NONE\n"
	tests := []struct {
		name, text string
		babel      bool
		want       string
	}{
		{"no cpu field", good + "garbage here\n", false, "line 2: not an ftrace event line"},
		{"bad timestamp", good + good + "  a-1 [000] d..1. 12x.5: tick_stop: success=1\n", false, `line 3: field "timestamp"`},
		{"missing expires", "  a-1 [000] d..1. 1.000000: hrtimer_start: hrtimer=ffff function=f softexpires=1 mode=ABS\n", false, `line 1: field "expires": hrtimer_start: missing`},
		{"not a number", "  a-1 [000] d..1. 1.000000: hrtimer_expire_entry: hrtimer=ffff function=f now=12ab\n", false, `line 1: field "now": hrtimer_expire_entry: not a number: "12ab"`},
		{"tick_stop success", "  a-1 [000] d..1. 1.000000: tick_stop: success=maybe dependency=NONE\n", false, `field "success"`},
		{"empty pointer", "  a-1 [000] d..1. 1.000000: hrtimer_cancel: hrtimer=\n", false, `field "hrtimer": hrtimer_cancel: empty`},
		{"babeltrace no cpu_id", "[1.000000000] (+?.?) h timer_hrtimer_cancel: { hrtimer = 0x1 }\n", true, `line 1: field "cpu_id"`},
		{"babeltrace bad value", "[1.0] (+?) h timer_hrtimer_expire_entry: { cpu_id = 0 }, { hrtimer = 0x1, now = zz, function = 0x2 }\n", true, `field "now"`},
		{"babeltrace unterminated", "[1.0] (+?) h timer_hrtimer_cancel: { cpu_id = 0 }, { hrtimer = \"abc }\n", true, "unterminated string"},
		{"babeltrace bad stamp", "[1:2] (+?) h timer_hrtimer_cancel: { cpu_id = 0 }\n", true, `field "timestamp"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Reader = NewFtrace(strings.NewReader(tc.text))
			if tc.babel {
				r = NewBabeltrace(strings.NewReader(tc.text))
			}
			_, err := readAll(t, r)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a ParseError containing %q", err, tc.want)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	for _, name := range []string{"tracefs-6x.txt", "trace-cmd-report.txt", "old-3x.txt", "babeltrace.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		r := Detect(strings.NewReader(string(b)))
		want := "ftrace"
		if strings.HasPrefix(name, "babel") {
			want = "babeltrace"
		}
		if r.Header().Format != want {
			t.Errorf("%s detected as %s", name, r.Header().Format)
		}
	}
}

func TestBabeltraceMidnight(t *testing.T) {
	text := "[23:59:59.999999999] (+?) h timer_hrtimer_cancel: { cpu_id = 0 }, { hrtimer = 0x1 }\n" +
		"[00:00:00.000000001] (+0.000000002) h timer_hrtimer_cancel: { cpu_id = 0 }, { hrtimer = 0x1 }\n" +
		"[2024-03-01 10:00:00.5] (+0.1) h timer_hrtimer_cancel: { cpu_id = 0 }, { hrtimer = 0x1 }\n"
	ev, err := readAll(t, NewBabeltrace(strings.NewReader(text)))
	if err != nil {
		t.Fatal(err)
	}
	if d := ev[1].Time - ev[0].Time; d != 2 {
		t.Errorf("midnight: delta %d ns, want 2", d)
	}
	if ev[2].Time != 1709287200_500000000 {
		t.Errorf("dated stamp %d", ev[2].Time)
	}
}

// The unknown-event table is bounded whatever the capture holds.
func TestUnknownBounded(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteString("  a-1 [000] d..1. 1.000000: ev")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteByte(byte('a' + i%26))
		b.WriteString(string(rune('a' + i/26%26)))
		b.WriteString(": x=1\n")
	}
	r := NewFtrace(strings.NewReader(b.String()))
	if _, err := readAll(t, r); err != nil {
		t.Fatal(err)
	}
	st := r.Stats()
	if len(st.Unknown) > maxUnknownNames+1 || st.UnknownTotal() != 1000 {
		t.Errorf("%d names, %d skipped", len(st.Unknown), st.UnknownTotal())
	}
}

func FuzzFtrace(f *testing.F) {
	for _, name := range []string{"tracefs-6x.txt", "trace-cmd-report.txt", "old-3x.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := NewFtrace(strings.NewReader(s))
		checkReader(t, r, s)
	})
}

func FuzzBabeltrace(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "babeltrace.txt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add("[1.0] (+?) h timer_start: { cpu_id = 0 }, { timer = 0x1, function = 0x2, expires = 5, now = 1, flags = 3 }\n")
	var all strings.Builder
	for _, l := range realBabeltraceLines {
		f.Add(l.line + "\n")
		all.WriteString(l.line + "\n")
	}
	f.Add(all.String())
	f.Add("[1.0] (+?) h console: { cpu_id = 1 }, { msg = \"a\n\" }\n[1.1] (+?) h irq_handler_entry: { cpu_id = 1 }, { irq = 27, name = \"a\nb\" }\n")
	f.Fuzz(func(t *testing.T, s string) {
		r := NewBabeltrace(strings.NewReader(s))
		checkReader(t, r, s)
	})
}

// checkReader: no panic; errors are ParseErrors within the input's lines;
// counts are consistent.
func checkReader(t *testing.T, r Reader, s string) {
	lines := int64(strings.Count(s, "\n") + 1)
	var n int64
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a ParseError", err)
			}
			if pe.Line < 1 || pe.Line > lines {
				t.Fatalf("error on line %d of %d", pe.Line, lines)
			}
			return
		}
		if e.Kind == Unknown || e.Line < 1 || e.Line > lines {
			t.Fatalf("event %+v", e)
		}
		n++
	}
	if st := r.Stats(); st.Events != n || st.Lines > lines {
		t.Fatalf("stats %+v after %d events, %d lines", st, n, lines)
	}
}

// realBabeltraceLines are lines babeltrace 1.5.11 and babeltrace2 2.0.4
// (Debian) print for real LTTng kernel traces of the Trace Compass test
// traces (EPL-2.0, framework/replay/testdata/captures/README.md): bug446190
// (lttng-modules 2.5, Linux 3.10 on a 32-bit ARM board: the kernel's event
// names, addresses in decimal), uneven-streams (lttng-modules 2.10, Linux
// 4.11: timer_ and irq_ prefixes, hex addresses, raw timer flags, cpu_id
// in power_cpu_idle's payload too) and synctraces/scp_src (lttng-modules
// 2.1, x86-64: 64-bit addresses in decimal), with the options that change
// the line's layout.
var realBabeltraceLines = []struct {
	name, line string
	check      func(e Event) bool
}{
	{"2.5 hrtimer_init", `[08:36:01.258754639] (+0.000000400) lager hrtimer_init: { cpu_id = 0 }, { hrtimer = 3444833056, clockid = 1, mode = 0 }`,
		func(e Event) bool {
			return e.Kind == HRInit && e.Timer == 3444833056 && e.Clock == "CLOCK_MONOTONIC" && e.Mode == "ABS"
		}},
	{"2.5 hrtimer_start", `[08:36:01.212746739] (+0.000001200) lager hrtimer_start: { cpu_id = 3 }, { hrtimer = 3253925872, function = 3221663248, expires = 7633700000000, softexpires = 7633700000000 }`,
		func(e Event) bool {
			return e.Kind == HRStart && e.CPU == 3 && e.Timer == 3253925872 && e.Function == "0xc006ae10" &&
				e.Expires == 7633700000000 && e.SoftExpires == 7633700000000 && e.Mode == "" &&
				e.Time == (8*3600+36*60+1)*1e9+212746739
		}},
	{"2.5 hrtimer_cancel", `[08:36:01.212724539] (+0.000003300) lager hrtimer_cancel: { cpu_id = 1 }, { hrtimer = 3253852144 }`,
		func(e Event) bool { return e.Kind == HRCancel && e.CPU == 1 && e.Timer == 3253852144 }},
	{"2.5 hrtimer_expire_entry", `[08:36:01.212727339] (+0.000001500) lager hrtimer_expire_entry: { cpu_id = 1 }, { hrtimer = 3253852144, now = 7633690007089, function = 3221663248 }`,
		func(e Event) bool {
			return e.Kind == HRExpireEntry && e.Now == 7633690007089 && e.Function == "0xc006ae10"
		}},
	{"2.5 hrtimer_expire_exit", `[08:36:01.212744639] (+0.000001800) lager hrtimer_expire_exit: { cpu_id = 3 }, { hrtimer = 3253925872 }`,
		func(e Event) bool { return e.Kind == HRExpireExit && e.Timer == 3253925872 }},
	{"2.5 timer_init", `[08:36:01.242797939] (+0.000013400) lager timer_init: { cpu_id = 0 }, { timer = 3465273052 }`,
		func(e Event) bool { return e.Kind == TimerInit && e.Timer == 3465273052 }},
	{"2.5 timer_start", `[08:36:01.242801039] (+0.000003100) lager timer_start: { cpu_id = 0 }, { timer = 3465273052, function = 3221435856, expires = 733375, now = 733372 }`,
		func(e Event) bool {
			return e.Kind == TimerStart && e.Timer == 3465273052 && e.Function == "0xc00335d0" && e.Expires == 733375 &&
				e.HasTimeout && e.Timeout == 3 && e.TimerCPU == -1 && e.Flags == ""
		}},
	{"2.5 timer_cancel", `[08:36:01.212755139] (+0.000001800) lager timer_cancel: { cpu_id = 0 }, { timer = 3455664788 }`,
		func(e Event) bool { return e.Kind == TimerCancel && e.Timer == 3455664788 }},
	{"2.5 timer_expire_entry", `[08:36:01.212757139] (+0.000000800) lager timer_expire_entry: { cpu_id = 0 }, { timer = 3455664788, now = 733369, function = 3225779972 }`,
		func(e Event) bool {
			return e.Kind == TimerExpireEntry && e.Now == 733369 && e.Function == "0xc0457f04"
		}},
	{"2.5 timer_expire_exit", `[08:36:01.212761639] (+0.000001500) lager timer_expire_exit: { cpu_id = 0 }, { timer = 3455664788 }`,
		func(e Event) bool { return e.Kind == TimerExpireExit && e.Timer == 3455664788 }},
	{"2.5 softirq_raise", `[08:36:01.212731739] (+0.000003200) lager softirq_raise: { cpu_id = 0 }, { vec = 1 }`,
		func(e Event) bool { return e.Kind == SoftirqRaise && e.Vec == 1 }},
	{"2.5 softirq_entry", `[08:36:01.212752839] (+0.000002200) lager softirq_entry: { cpu_id = 0 }, { vec = 1 }`,
		func(e Event) bool { return e.Kind == SoftirqEntry && e.Vec == 1 }},
	{"2.5 irq_handler_entry", `[08:36:01.212720739] (+0.000005100) lager irq_handler_entry: { cpu_id = 1 }, { irq = 27, name = "arch_timer" }`,
		func(e Event) bool { return e.Kind == IRQEntry && e.IRQ == 27 && e.Name == "arch_timer" }},
	{"2.5 sched_wakeup", `[08:36:01.211287139] (+0.000005400) lager sched_wakeup: { cpu_id = 1 }, { comm = "lttng-consumerd", tid = 496, prio = 120, success = 1, target_cpu = 2 }`,
		func(e Event) bool {
			return e.Kind == SchedWakeup && e.WakeComm == "lttng-consumerd" && e.WakePID == 496 && e.TargetCPU == 2
		}},
	{"2.5 sched_switch", `[08:36:01.213514339] (+0.000001000) lager sched_switch: { cpu_id = 2 }, { prev_comm = "lttng-consumerd", prev_tid = 496, prev_prio = 20, prev_state = 2, next_comm = "kworker/2:1", next_tid = 44, next_prio = 20 }`,
		func(e Event) bool {
			return e.Kind == SchedSwitch && e.PrevPID == 496 && e.PrevState == "D" && e.NextComm == "kworker/2:1" && e.NextPID == 44
		}},
	{"first line's delta", `[08:36:01.211260539] (+?.?????????) lager hrtimer_cancel: { cpu_id = 1 }, { hrtimer = 3253852144 }`,
		func(e Event) bool { return e.Kind == HRCancel && e.Time == (8*3600+36*60+1)*1e9+211260539 }},
	{"babeltrace -f all: trace path and host:domain", `[08:36:01.242801039] (+0.000003100) ctf/src/main/resources/bug446190 lager:kernel timer_start: { cpu_id = 0 }, { timer = 3465273052, function = 3221435856, expires = 733375, now = 733372 }`,
		func(e Event) bool { return e.Kind == TimerStart && e.Timer == 3465273052 && e.Timeout == 3 }},
	{"babeltrace2 -f all: host printed twice", `[08:36:01.211296639] (+0.000001200) lagerlager:kernel sched_switch: { cpu_id = 2 }, { prev_comm = "swapper/2", prev_tid = 0, prev_prio = 20, prev_state = 0, next_comm = "lttng-consumerd", next_tid = 496, next_prio = 20 }`,
		func(e Event) bool {
			return e.Kind == SchedSwitch && e.CPU == 2 && e.PrevState == "R" && e.NextPID == 496
		}},
	{"--clock-seconds", `[1412670961.212727339] (+0.000001500) lager hrtimer_expire_entry: { cpu_id = 1 }, { hrtimer = 3253852144, now = 7633690007089, function = 3221663248 }`,
		func(e Event) bool { return e.Kind == HRExpireEntry && e.Time == 1412670961212727339 }},
	{"--clock-date --no-delta", `[2014-10-07 08:36:01.212724539] lager hrtimer_cancel: { cpu_id = 1 }, { hrtimer = 3253852144 }`,
		func(e Event) bool { return e.Kind == HRCancel && e.Time == 1412670961212724539 }},
	{"--clock-cycles", `[00000007633690010889] (+000000001500) lager hrtimer_expire_entry: { cpu_id = 1 }, { hrtimer = 3253852144, now = 7633690007089, function = 3221663248 }`,
		func(e Event) bool {
			return e.Kind == HRExpireEntry && e.Time == 7633690010889 && e.Now == 7633690007089
		}},
	{"--names all", `timestamp = 08:36:01.212746739, delta = +0.000001200, trace:hostname = lager, name = hrtimer_start, stream.packet.context = { cpu_id = 3 }, event.fields = { hrtimer = 3253925872, function = 3221663248, expires = 7633700000000, softexpires = 7633700000000 }`,
		func(e Event) bool {
			return e.Kind == HRStart && e.CPU == 3 && e.Function == "0xc006ae10" && e.Time == (8*3600+36*60+1)*1e9+212746739
		}},
	{"-f all --names all", `timestamp = 08:36:01.212720739, delta = +0.000005100, trace = lager, , trace:hostname = lager, trace:domain = kernel, name = irq_handler_entry, stream.packet.context = { cpu_id = 1 }, event.fields = { irq = 27, name = "arch_timer" }`,
		func(e Event) bool { return e.Kind == IRQEntry && e.CPU == 1 && e.IRQ == 27 && e.Name == "arch_timer" }},
	{"2.10 timer_hrtimer_start", `[18:18:55.351852628] (+0.000002976) calista timer_hrtimer_start: { cpu_id = 2 }, { hrtimer = 0xFFFF94222DC94600, function = 0xFFFFFFFF9E30CF00, expires = 832212000000, softexpires = 832212000000 }`,
		func(e Event) bool {
			return e.Kind == HRStart && e.Timer == 0xFFFF94222DC94600 && e.Function == "0xffffffff9e30cf00" && e.Expires == 832212000000
		}},
	{"2.10 timer_hrtimer_expire_entry", `[18:18:55.355853284] (+0.000000634) calista timer_hrtimer_expire_entry: { cpu_id = 2 }, { hrtimer = 0xFFFF94222DC94600, now = 832212003654, function = 0xFFFFFFFF9E30CF00 }`,
		func(e Event) bool { return e.Kind == HRExpireEntry && e.Now == 832212003654 }},
	{"2.10 timer_start raw flags", `[18:18:55.359246449] (+0.000002719) calista timer_start: { cpu_id = 2 }, { timer = 0xFFFFBE5E80D47790, function = 0xFFFFFFFF9E2FB050, expires = 4295100350, now = 4295100349, flags = 2 }`,
		func(e Event) bool {
			return e.Kind == TimerStart && e.TimerCPU == 2 && e.Flags == "" && e.Timeout == 1 && e.Function == "0xffffffff9e2fb050"
		}},
	{"2.10 power_cpu_idle", `[18:18:55.359609404] (+0.000001143) calista power_cpu_idle: { cpu_id = 2 }, { state = 7, cpu_id = 2 }`,
		func(e Event) bool { return e.Kind == CPUIdle && e.CPU == 2 && e.State == 7 }},
	{"2.10 irq_softirq_raise", `[18:18:55.351854166] (+0.000001538) calista irq_softirq_raise: { cpu_id = 2 }, { vec = 1 }`,
		func(e Event) bool { return e.Kind == SoftirqRaise && e.Vec == 1 }},
	{"2.10 sched_wakeup without success", `[18:18:55.348198143] (+0.000000681) calista sched_wakeup: { cpu_id = 2 }, { comm = "migration/2", tid = 21, prio = -100, target_cpu = 2 }`,
		func(e Event) bool { return e.Kind == SchedWakeup && e.WakePID == 21 && e.TargetCPU == 2 }},
	{"2.1 x86-64 decimal addresses", `[19:01:16.527992537] (+0.000000550) VM1 hrtimer_start: { cpu_id = 0 }, { hrtimer = 18446612132844857728, function = 18446744071579558096, expires = 10517198948280, softexpires = 10517198948280 }`,
		func(e Event) bool {
			return e.Kind == HRStart && e.Timer == 18446612132844857728 && e.Function == "0xffffffff810ae0d0"
		}},
	{"sched_waking (decoded since 6.x captures carry it)", `[18:18:55.348197462] (+0.000000937) calista sched_waking: { cpu_id = 2 }, { comm = "migration/2", tid = 21, prio = -100, target_cpu = 2 }`,
		func(e Event) bool {
			return e.Kind == SchedWaking && e.WakeComm == "migration/2" && e.WakePID == 21 && e.TargetCPU == 2 && e.CPU == 2 && e.WakePrio == -1
		}},
	{"underscore field names", `[08:36:01.212724539] (+0.000003300) lager hrtimer_cancel: { cpu_id = 1 }, { _hrtimer = 3253852144 }`,
		func(e Event) bool { return e.Kind == HRCancel && e.Timer == 3253852144 }},
}

func TestBabeltraceRealOutput(t *testing.T) {
	for _, tc := range realBabeltraceLines {
		t.Run(tc.name, func(t *testing.T) {
			r := NewBabeltrace(strings.NewReader(tc.line + "\n"))
			ev, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(ev) != 1 || !tc.check(ev[0]) {
				t.Fatalf("got %+v", ev)
			}
			if d := Detect(strings.NewReader(tc.line + "\n")); d.Header().Format != "babeltrace" {
				t.Errorf("detected as %s", d.Header().Format)
			}
		})
	}
	// Unknown events are counted, whatever their layout.
	text := "[08:36:01.211260539] (+?.?????????) lager kmem_kmalloc: { cpu_id = 1 }, { call_site = 0xBF083A6C, ptr = 0xCDEB5C00, bytes_req = 712, bytes_alloc = 1024, gfp_flags = 208 }\n" +
		"[18:18:55.348197462] (+0.000000937) calista sched_stat_runtime: { cpu_id = 2 }, { comm = \"migration/2\", tid = 21, runtime = 5000, vruntime = 1 }\n" +
		"timestamp = 08:36:07.217750839, delta = +0.000002300, trace:hostname = lager, name = sys_ioctl, stream.packet.context = { cpu_id = 1 }, event.fields = { fd = 31, cmd = 63063, arg = 0 }\n"
	r := NewBabeltrace(strings.NewReader(text))
	if ev, err := readAll(t, r); err != nil || len(ev) != 0 {
		t.Fatalf("%v %v", ev, err)
	}
	if u := r.Stats().Unknown; u["kmem_kmalloc"] != 1 || u["sched_stat_runtime"] != 1 || u["sys_ioctl"] != 1 {
		t.Errorf("unknown %v", u)
	}
}

// Output without field names (babeltrace --names none, payload, scope) is
// refused with a message that says so.
func TestBabeltraceUnnamedFields(t *testing.T) {
	for _, line := range []string{
		`[08:36:01.212724539] (+0.000003300) lager hrtimer_cancel: { 1 }, { hrtimer = 3253852144 }`,
		`[08:36:01.212746739] (+0.000001200) lager hrtimer_start: { 3 }, { 3253925872, 3221663248, 7633700000000, 7633700000000 }`,
		`[08:36:01.212746739] (+0.000001200) lager hrtimer_start: stream.packet.context = { 3 }, event.fields = { 3253925872, 3221663248, 7633700000000, 7633700000000 }`,
		`timestamp = 08:36:01.212746739, delta = +0.000001200, trace:hostname = lager, name = hrtimer_start, { 3 }, { 3253925872, 3221663248, 7633700000000, 7633700000000 }`,
	} {
		_, err := readAll(t, NewBabeltrace(strings.NewReader(line+"\n")))
		if err == nil || !strings.Contains(err.Error(), "line 1:") || !strings.Contains(err.Error(), "--names") {
			t.Errorf("%s: error %v", line, err)
		}
	}
}

// babeltrace 1.x prints strings raw: the console event of the bug446190
// trace (a printk message ending in a newline) takes two lines. A known
// event's string running on is joined; one that never ends is an error
// naming the line it started on.
func TestBabeltraceStringRunsOn(t *testing.T) {
	text := "[00000007633719707089] (+0.000012900) lager console: { cpu_id = 1 }, { _msg_length = 59, msg = \"LTTng: block device enumeration is not supported by kernel\n" +
		"\" }\n" +
		"[00000007633719707090] (+0.000000001) lager irq_handler_entry: { cpu_id = 1 }, { irq = 27, name = \"arch\n" +
		"timer\" }\n" +
		"[00000007633719707091] (+0.000000001) lager hrtimer_cancel: { cpu_id = 1 }, { hrtimer = 3253852144 }\n" +
		"timestamp = 08:36:01.242423539, delta = +0.000012900, trace:hostname = lager, name = console, stream.packet.context = { cpu_id = 1 }, event.fields = { _msg_length = 59, msg = \"LTTng: block device enumeration is not supported by kernel\n" +
		"\" }\n"
	r := NewBabeltrace(strings.NewReader(text))
	ev, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 2 || ev[0].Kind != IRQEntry || ev[0].Name != "arch\ntimer" || ev[0].Line != 3 || ev[1].Kind != HRCancel || ev[1].Line != 5 {
		t.Fatalf("events %+v", ev)
	}
	if r.Stats().Unknown["console"] != 2 {
		t.Errorf("unknown %v", r.Stats().Unknown)
	}
	for _, bad := range []string{
		"[1.0] (+?) h irq_handler_entry: { cpu_id = 1 }, { irq = 27, name = \"arch\n[2.0] (+?) h hrtimer_cancel: { cpu_id = 1 }, { hrtimer = 1 }\n",
		"[1.0] (+?) h irq_handler_entry: { cpu_id = 1 }, { irq = 27, name = \"arch\nmore\n",
	} {
		_, err := readAll(t, NewBabeltrace(strings.NewReader(bad)))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 1 || !strings.Contains(err.Error(), "unterminated string") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

// A trace whose metadata has no env.hostname (lttng-modules 2.0's) gets no
// host column from babeltrace.
func TestBabeltraceNoHost(t *testing.T) {
	text := "[08:36:01.212724539] (+0.000003300) hrtimer_cancel: { cpu_id = 1 }, { hrtimer = 3253852144 }\n" +
		"[08:36:01.212727339] hrtimer_expire_entry: { cpu_id = 1 }, { hrtimer = 3253852144, now = 7633690007089, function = 3221663248 }\n"
	ev, err := readAll(t, NewBabeltrace(strings.NewReader(text)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 2 || ev[0].Kind != HRCancel || ev[1].Kind != HRExpireEntry || ev[1].Function != "0xc006ae10" {
		t.Fatalf("%+v", ev)
	}
}
