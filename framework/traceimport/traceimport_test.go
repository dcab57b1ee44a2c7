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
				if s := ev[10]; s.PrevComm != "swapper/1" || s.PrevPID != 0 || s.PrevState != "R" || s.NextComm != "cyclictest" || s.NextPID != 1200 {
					t.Errorf("switch: %+v", s)
				}
				if s := ev[11]; s.Comm != "kworker/1:1" || s.PID != 88 || s.Timeout != 100 || !s.HasTimeout || s.BucketExpiry != 4294767400 || s.TimerCPU != 1 || s.Flags != "I" {
					t.Errorf("timer_start: %+v", s)
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
