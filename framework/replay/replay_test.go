package replay

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/traceimport"
)

func scoreText(t *testing.T, text string, o Options) (*Score, *Capture) {
	t.Helper()
	c, err := Scan(traceimport.Detect(strings.NewReader(text)))
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScorer(c.IsTick, c.TickNsec(), c.Offset, o)
	s, err := sc.ScoreReader(traceimport.Detect(strings.NewReader(text)))
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

const hdr = "# tracer: nop\n#\n# entries-in-buffer/entries-written: 9/9   #P:2\n"

func l(cpu, ts, ev, fields string) string {
	return "          <idle>-0       [" + cpu + "] d.h1.   " + ts + ": " + ev + ": " + fields + "\n"
}

// The counting rules of docs/replay.md, one case each.
func TestCountingRules(t *testing.T) {
	const T = "hrtimer=ffff000000000001"
	tests := []struct {
		name                                    string
		text                                    string
		o                                       Options
		starts, expiries, rearms, cancels, late int64
	}{
		{"expiry after debug_deactivate's cancel",
			l("000", "1.000000", "hrtimer_start", T+" function=f expires=1001000000 softexpires=1001000000 mode=ABS") +
				l("000", "1.001002", "hrtimer_cancel", T) +
				l("000", "1.001002", "hrtimer_expire_entry", T+" function=f now=1001002000"),
			Options{}, 1, 1, 0, 0, 2000},
		{"restart of a queued timer traced as cancel + start (<= 7.0)",
			l("000", "1.000000", "hrtimer_start", T+" function=f expires=1001000000 softexpires=1001000000 mode=ABS") +
				l("000", "1.000500", "hrtimer_cancel", T) +
				l("000", "1.000501", "hrtimer_start", T+" function=f expires=1002000000 softexpires=1002000000 mode=ABS"),
			Options{}, 2, 0, 1, 0, 0},
		{"a cancel before a start that found the timer idle (was_armed=0) is a cancel",
			l("000", "1.000000", "hrtimer_start", T+" function=f expires=1001000000 softexpires=1001000000 mode=ABS was_armed=0") +
				l("000", "1.000500", "hrtimer_cancel", T) +
				l("000", "1.000501", "hrtimer_start", T+" function=f expires=1002000000 softexpires=1002000000 mode=ABS was_armed=0"),
			Options{}, 2, 0, 0, 1, 0},
		{"a cancel followed by something else is a cancel",
			l("000", "1.000000", "hrtimer_start", T+" function=f expires=1001000000 softexpires=1001000000 mode=ABS") +
				l("000", "1.000500", "hrtimer_cancel", T) +
				l("000", "1.000501", "tick_stop", "success=1 dependency=NONE") +
				l("000", "1.000600", "hrtimer_start", T+" function=f expires=1002000000 softexpires=1002000000 mode=ABS"),
			Options{}, 2, 0, 0, 1, 0},
		{"a cancel on another CPU's event stays pending, then times out",
			l("000", "1.000000", "hrtimer_start", T+" function=f expires=1001000000 softexpires=1001000000 mode=ABS") +
				l("000", "1.000500", "hrtimer_cancel", T) +
				l("001", "1.000501", "tick_stop", "success=1 dependency=NONE") +
				l("001", "1.900000", "tick_stop", "success=1 dependency=NONE"),
			Options{}, 1, 0, 0, 1, 0},
		{"start of a queued timer without a traced cancel (tickemu's trace) is a re-arm",
			l("000", "1.000000", "hrtimer_start", T+" function=f expires=1001000000 softexpires=1001000000 mode=ABS") +
				l("000", "1.000500", "hrtimer_start", T+" function=f expires=1002000000 softexpires=1002000000 mode=ABS"),
			Options{}, 2, 0, 1, 0, 0},
		{"was_armed=1 (f2e388a019e4) is a re-arm, was_armed=0 is not",
			l("000", "1.000000", "hrtimer_start", T+" function=f expires=1001000000 softexpires=1001000000 mode=ABS was_armed=1") +
				l("000", "1.000100", "hrtimer_start", T+" function=f expires=1001000000 softexpires=1001000000 mode=ABS was_armed=0"),
			Options{}, 2, 0, 1, 0, 0},
		{"after a restarting callback the timer is queued (Options.Restarts)",
			l("000", "1.000000", "hrtimer_expire_entry", T+" function=f now=1000000000") +
				l("000", "1.000500", "hrtimer_start", T+" function=f expires=1002000000 softexpires=1002000000 mode=ABS"),
			Options{Restarts: func(fn string) bool { return fn == "f" }}, 1, 1, 1, 0, 0},
		{"timer_list: cancel + start is a re-arm, lateness in jiffies x tick",
			l("000", "1.000000", "timer_start", "timer=ffff2 function=w expires=1100 [timeout=100] cpu=0 idx=1 flags=") +
				l("000", "1.050000", "timer_cancel", "timer=ffff2") +
				l("000", "1.050001", "timer_start", "timer=ffff2 function=w expires=1200 [timeout=150] cpu=0 idx=1 flags=") +
				l("000", "1.250000", "timer_cancel", "timer=ffff2") +
				l("000", "1.250001", "timer_expire_entry", "timer=ffff2 function=w now=1203 baseclk=1203"),
			Options{}, 2, 1, 1, 0, 3_000_000},
		{"tickemu's trace (ExplicitCancels): del_timer + mod_timer of a timer on the stack is a cancel and a start",
			l("000", "1.000000", "timer_start", "timer=ffff3 function=process_timeout expires=1100 [timeout=3] cpu=0 idx=1 flags=") +
				l("000", "1.010000", "timer_cancel", "timer=ffff3") +
				l("000", "1.010004", "timer_start", "timer=ffff3 function=process_timeout expires=1103 [timeout=3] cpu=0 idx=1 flags="),
			Options{ExplicitCancels: true}, 2, 0, 0, 1, 0},
		{"the same lines without ExplicitCancels: a re-arm",
			l("000", "1.000000", "timer_start", "timer=ffff3 function=process_timeout expires=1100 [timeout=3] cpu=0 idx=1 flags=") +
				l("000", "1.010000", "timer_cancel", "timer=ffff3") +
				l("000", "1.010004", "timer_start", "timer=ffff3 function=process_timeout expires=1103 [timeout=3] cpu=0 idx=1 flags="),
			Options{}, 2, 0, 1, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := scoreText(t, hdr+tc.text, tc.o)
			var f *FuncScore
			for _, x := range s.Funcs {
				f = x
			}
			if f == nil {
				t.Fatalf("no callback scored: %+v", s)
			}
			if f.Starts != tc.starts || f.Expiries != tc.expiries || f.Rearms != tc.rearms || f.Cancel != tc.cancels {
				t.Errorf("starts %d expiries %d rearms %d cancels %d, want %d %d %d %d",
					f.Starts, f.Expiries, f.Rearms, f.Cancel, tc.starts, tc.expiries, tc.rearms, tc.cancels)
			}
			if tc.late != 0 && f.Lateness.Quantile(0.5) != tc.late {
				t.Errorf("lateness %d, want %d", f.Lateness.Quantile(0.5), tc.late)
			}
		})
	}
}

// The tick: expiries, arms more than a tick ahead (NO_HZ), stops; HZ and
// the clock offset come from the tick's expiries.
func TestTickAndHZ(t *testing.T) {
	const T = "hrtimer=ffff0000000000aa function=tick_nohz_handler"
	var b strings.Builder
	b.WriteString(hdr)
	for i := 0; i < 6; i++ { // 4 ms apart: HZ 250; now= is 3.4 ms ahead of the trace clock
		ts := int64(50_000_000 + i*4_000_000)
		b.WriteString(l("001", secs(ts), "hrtimer_expire_entry", T+" now="+itoa(ts+3_400_000)))
	}
	// Stop at idle: armed 100 ms ahead.
	b.WriteString(l("001", secs(80_000_000), "tick_stop", "success=1 dependency=NONE"))
	b.WriteString(l("001", secs(80_000_010), "hrtimer_start", "hrtimer=ffff0000000000aa function=tick_nohz_handler expires="+itoa(180_000_000)+" softexpires="+itoa(180_000_000)+" mode=ABS|PINNED|HARD"))
	// Restart one tick ahead: not far.
	b.WriteString(l("001", secs(90_000_000), "hrtimer_start", "hrtimer=ffff0000000000aa function=tick_nohz_handler expires="+itoa(96_000_000)+" softexpires="+itoa(96_000_000)+" mode=ABS|PINNED|HARD"))
	s, c := scoreText(t, b.String(), Options{})
	if c.HZ != 250 || c.Tick != "tick_nohz_handler" || c.Offset != 3_400_000 || c.CPUs != 2 || !c.CPUsStated {
		t.Fatalf("capture %+v", c)
	}
	// No switch on CPU 1: idle throughout; the stop after the sixth
	// expiry is undone by the restart one tick ahead before any other
	// tick, so all six count as kept (TestIdleTicksKept).
	if s.Tick != (TickScore{Expiries: 6, FarArms: 1, Stops: 1, IdleKept: 6}) {
		t.Errorf("tick %+v", s.Tick)
	}
	if len(s.Funcs) != 0 {
		t.Errorf("the tick counted as a callback: %v", s.Funcs)
	}
}

// Raw addresses (babeltrace): the tick is the callback expiring one tick
// apart; periods of silently restarting timers and pre-armed timers are found.
func TestScanAddresses(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 5; i++ {
		ts := int64(10e9 + int64(i)*1e6)
		b.WriteString("[" + secs(ts) + "] (+?) h timer_hrtimer_expire_entry: { cpu_id = 0 }, { hrtimer = 0xA, now = " + itoa(ts+7) + ", function = 0xFFFFFFFF810C0A10 }\n")
		b.WriteString("[" + secs(ts+10) + "] (+?) h timer_hrtimer_expire_entry: { cpu_id = 1 }, { hrtimer = 0xB, now = " + itoa(ts+5+int64(i)*6e6) + ", function = 0xFFFFFFFF81000001 }\n")
	}
	c, err := Scan(traceimport.Detect(strings.NewReader(b.String())))
	if err != nil {
		t.Fatal(err)
	}
	if c.Tick != "0xffffffff810c0a10" || c.HZ != 1000 || c.Offset != 7 || c.CPUs != 2 || c.CPUsStated {
		t.Errorf("capture %+v", c)
	}
	if p := c.Periods["0xffffffff81000001"]; p != 7e6 {
		t.Errorf("period %d, want 7ms (all %v)", p, c.Periods)
	}
	if len(c.PreArmed) != 2 {
		t.Errorf("pre-armed %+v", c.PreArmed)
	}
}

func TestHistQuantiles(t *testing.T) {
	var h Hist
	for i := int64(1); i <= 1000; i++ {
		h.Add(i * 1000)
	}
	h.Add(-5000)
	if p := h.Quantile(0.5); p < 480_000 || p > 520_000 {
		t.Errorf("p50 %d", p)
	}
	if p := h.Quantile(0.99); p < 960_000 || p > 1_000_000 {
		t.Errorf("p99 %d", p)
	}
	if h.Quantile(0) != -5000 || h.Quantile(1) != 1_000_000 {
		t.Errorf("min/max %d %d", h.Quantile(0), h.Quantile(1))
	}
}

func secs(ns int64) string {
	s := itoa(ns % 1e9)
	for len(s) < 9 {
		s = "0" + s
	}
	return itoa(ns/1e9) + "." + s
}

func itoa(v int64) string {
	if v < 0 {
		return "-" + itoa(-v)
	}
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}

// A capture whose timer_start has no flags (before 4.2) shows a deferrable
// timer only by its lateness: more than half of its expiries 2 jiffies or
// more after its expires, over at least 3.
func TestScanDeferrable(t *testing.T) {
	capture := func(flags string, lateBy int) string {
		// Lines in time order, as tracefs merges the CPUs' buffers.
		type line struct {
			at   int
			text string
		}
		var ls []line
		ts := func(j int) string { return strconv.Itoa(j/1000) + "." + fmt.Sprintf("%06d", j%1000*1000) }
		add := func(cpu string, at int, ev, fields string) { ls = append(ls, line{at, l(cpu, ts(at), ev, fields)}) }
		for i := 0; i < 4; i++ {
			at := 1000 + 100*i
			add("000", at, "timer_start", fmt.Sprintf("timer=ffff1 function=vmstat expires=%d [timeout=50]%s", at+50, flags))
			add("000", at+50+lateBy, "timer_expire_entry", fmt.Sprintf("timer=ffff1 function=vmstat now=%d", at+50+lateBy))
			add("001", at+10, "timer_start", fmt.Sprintf("timer=ffff2 function=ontime expires=%d [timeout=5]%s", at+15, flags))
			add("001", at+15, "timer_expire_entry", fmt.Sprintf("timer=ffff2 function=ontime now=%d", at+15))
		}
		sort.SliceStable(ls, func(i, j int) bool { return ls[i].at < ls[j].at })
		var b strings.Builder
		b.WriteString(hdr)
		for _, x := range ls {
			b.WriteString(x.text)
		}
		return b.String()
	}
	tests := []struct {
		name  string
		text  string
		wantD bool
	}{
		{"3.x: no flags, late by 30 jiffies", capture("", 30), true},
		{"3.x: no flags, late by 1 jiffy", capture("", 1), false},
		{"flags traced: not inferred", capture(" cpu=0 idx=1 flags=", 30), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Scan(traceimport.Detect(strings.NewReader(tc.text)))
			if err != nil {
				t.Fatal(err)
			}
			if c.Deferrable["vmstat"] != tc.wantD || c.Deferrable["ontime"] {
				t.Errorf("deferrable %v, want vmstat %v", c.Deferrable, tc.wantD)
			}
		})
	}
}

// A timer armed before the capture shows as cancel + expiry on kernels
// before f2e388a019e4 (__run_hrtimer()'s debug_deactivate()): it is still
// pre-armed, and its arming by the replay is a setup start, not a start.
func TestPreArmedAfterExpiryCancel(t *testing.T) {
	text := hdr +
		l("000", "1.000000", "hrtimer_cancel", "hrtimer=ffff000000000009") +
		l("000", "1.000001", "hrtimer_expire_entry", "hrtimer=ffff000000000009 function=posix_timer_fn now=1000001000") +
		l("001", "1.000002", "timer_cancel", "timer=ffff8") +
		l("001", "1.000003", "timer_expire_entry", "timer=ffff8 function=delayed_work_timer_fn now=4294937296") +
		l("001", "1.000004", "hrtimer_cancel", "hrtimer=ffff00000000000a")
	c, err := Scan(traceimport.Detect(strings.NewReader(text)))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.PreArmed) != 2 || c.PreArmed[0].Function != "posix_timer_fn" || !c.PreArmed[1].Wheel {
		t.Fatalf("pre-armed %+v", c.PreArmed)
	}
	setup := SetupStarts(c, 2)
	if setup["posix_timer_fn"] != 1 || setup["timer:delayed_work_timer_fn"] != 1 || len(setup) != 2 {
		t.Errorf("setup %v", setup)
	}
	if s := SetupStarts(c, 1); len(s) != 1 {
		t.Errorf("on 1 CPU: %v", s)
	}
	// The model's arming at time 0 is not a start; a later one is.
	sc := NewScorer(func(string) bool { return false }, 1e6, 0, Options{ExplicitCancels: true})
	sc.Setup = setup
	model := "# tracer: nop\n" +
		l("000", "0.000000", "hrtimer_start", "hrtimer=ffff0000000000a1 function=posix_timer_fn expires=1000001000 softexpires=1000001000 mode=ABS") +
		l("000", "1.000001", "hrtimer_expire_entry", "hrtimer=ffff0000000000a1 function=posix_timer_fn now=1000001000") +
		l("000", "1.000050", "hrtimer_start", "hrtimer=ffff0000000000a1 function=posix_timer_fn expires=2000001000 softexpires=2000001000 mode=ABS")
	s, err := sc.ScoreReader(traceimport.Detect(strings.NewReader(model)))
	if err != nil {
		t.Fatal(err)
	}
	if f := s.Funcs["posix_timer_fn"]; f == nil || f.Starts != 1 || f.Expiries != 1 || f.Rearms != 0 {
		t.Errorf("model score %+v", f)
	}
}

// Idle ticks kept (TickScore.IdleKept): a tick expiring on an idle CPU
// that is left on its period until the CPU's next tick expiry, with
// RCU_SOFTIRQ raised or not; one case per rule.
func TestIdleTicksKept(t *testing.T) {
	const T = "hrtimer=ffff0000000000aa function=tick_sched_timer"
	tick := func(i int) string { // expiry i, 4 ms apart; now= equals the trace clock
		ts := int64(100_000_000 + i*4_000_000)
		return l("001", secs(ts), "hrtimer_expire_entry", T+" now="+itoa(ts))
	}
	arm := func(i int, ahead int64) string { // a start of the tick ahead ns after expiry i
		ts := int64(100_000_000+i*4_000_000) + 2_000
		e := itoa(int64(100_000_000+i*4_000_000) + ahead)
		return l("001", secs(ts), "hrtimer_start", T+" expires="+e+" softexpires="+e+" mode=ABS|PINNED")
	}
	at := func(i int, d int64) string { return secs(int64(100_000_000+i*4_000_000) + d) }
	toIdle := l("001", at(-1, 0), "sched_switch", "prev_comm=a prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120")
	toTask := func(i int) string {
		return l("001", at(i, 5_000), "sched_switch", "prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=100 next_prio=120")
	}
	rcu := func(i int) string { return l("001", at(i, 1_000), "softirq_raise", "vec=9 [action=RCU]") }
	// Five expiries 4 ms apart give the HZ and the offset; the cases add
	// to them.
	base := func(extra ...string) string {
		s := hdr
		for i := 0; i < 5; i++ {
			s += tick(i)
		}
		return s + strings.Join(extra, "")
	}
	tests := []struct {
		name      string
		text      string
		kept, rcu int64
	}{
		{"no switch: idle throughout, every tick kept", base(), 5, 0},
		{"a task switched in first: never idle", hdr + toTask(-1) + tick(0) + tick(1) + tick(2) + tick(3) + tick(4), 0, 0},
		{"idle: each expiry kept", hdr + toIdle + tick(0) + tick(1) + tick(2) + tick(3) + tick(4), 5, 0},
		{"3.10 restart then stop: not kept", hdr + toIdle + tick(0) + arm(0, 4_000_000) + l("001", at(0, 3_000), "hrtimer_cancel", T) +
			arm(0, 400_000_000) + tick(1) + tick(2) + tick(3) + tick(4), 4, 0},
		{"3.10 restart alone: kept", hdr + toIdle + tick(0) + arm(0, 4_000_000) + tick(1) + tick(2) + tick(3) + tick(4), 5, 0},
		{"tick_stop success: not kept", hdr + toIdle + tick(0) + l("001", at(0, 1_500), "tick_stop", "success=1 dependency=NONE") +
			tick(1) + tick(2) + tick(3) + tick(4), 4, 0},
		{"RCU_SOFTIRQ in a kept tick", hdr + toIdle + tick(0) + rcu(0) + tick(1) + rcu(1) + arm(1, 400_000_000) + tick(2) + tick(3) + tick(4), 4, 1},
		{"the tick woke a task: not an idle tick kept", hdr + toIdle + tick(0) + rcu(0) + toTask(0) + tick(1) + tick(2) + tick(3) + tick(4), 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := scoreText(t, tc.text, Options{})
			if s.Tick.IdleKept != tc.kept || s.Tick.IdleKeptRCU != tc.rcu {
				t.Errorf("idle ticks kept %d (RCU %d), want %d (%d)", s.Tick.IdleKept, s.Tick.IdleKeptRCU, tc.kept, tc.rcu)
			}
		})
	}
}

// TestBackwardsTimestamps: a capture whose time goes back by more than
// BackwardsTolerance (two runs in one file) is refused with the line, its
// time and the latest time before it; per-CPU clocks a few us apart are
// not.
func TestBackwardsTimestamps(t *testing.T) {
	const S = "success=1 dependency=NONE"
	run := l("000", "100.000000", "tick_stop", S) + l("001", "100.500000", "tick_stop", S) + l("000", "101.000000", "tick_stop", S)
	tests := []struct {
		name, text string
		err        string
	}{
		{"two runs concatenated", hdr + run + hdr + l("000", "50.000000", "tick_stop", S) + run,
			`line 10: field "timestamp": 50.000000 s is 51.000000 s before line 6's 101.000000 s`},
		{"a CPU's clock a few us behind", hdr + run + l("001", "100.999990", "tick_stop", S) + l("000", "101.000001", "tick_stop", S), ""},
		{"just over the tolerance", hdr + l("000", "10.002000", "tick_stop", S) + l("001", "10.000999", "tick_stop", S),
			"line 5: field \"timestamp\": 10.000999 s is 0.001001 s before line 4's 10.002000 s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Scan(traceimport.Detect(strings.NewReader(tc.text)))
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Last != 101_000_001_000 {
					t.Errorf("Last %d", c.Last)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}
