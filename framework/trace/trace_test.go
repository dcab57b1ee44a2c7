package trace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestFlags checks the flags column of trace_print_lat_fmt()
// (kernel/trace/trace_output.c): irqs-off, need-resched, hardirq/softirq,
// preempt depth, migrate-disable.
func TestFlags(t *testing.T) {
	tests := []struct {
		irqsOff, hard, soft bool
		depth               int
		want                string
	}{
		{false, false, false, 0, "....."},
		{true, false, false, 1, "d..1."},
		{true, false, false, 2, "d..2."},
		{true, true, false, 0, "d.h.."},
		{true, true, false, 1, "d.h1."},
		{false, false, true, 1, "..s1."},
		{true, true, true, 2, "d.H2."},
		{true, false, false, 12, "d..c."},
		{true, false, false, 40, "d..f."},
	}
	for _, tt := range tests {
		if got := Flags(tt.irqsOff, tt.hard, tt.soft, tt.depth); got != tt.want {
			t.Errorf("Flags(%v, %v, %v, %d) = %q, want %q", tt.irqsOff, tt.hard, tt.soft, tt.depth, got, tt.want)
		}
	}
}

// TestLineLayout checks one line against the layout of tracefs `trace`:
// "%16s-%-7d [%03d] %s %5lu.%06lu: %s" (print_trace_fmt() with the default
// options), comm cut to 16 characters.
func TestLineLayout(t *testing.T) {
	tests := []struct {
		name string
		t    ktime.Time
		ctx  Ctx
		text string
		want string
	}{
		{"idle", 4620, Ctx{"<idle>", 0, 0, "d.h1."}, "hrtimer_expire_entry: hrtimer=x",
			"          <idle>-0       [000] d.h1.     0.000004: hrtimer_expire_entry: hrtimer=x"},
		{"task", 187938505123456, Ctx{"stress-ng-timer", 2229, 110, "....."}, "sys_rt_sigreturn()",
			" stress-ng-timer-2229    [110] ..... 187938.505123: sys_rt_sigreturn()"},
		{"long comm", ktime.Time(12*ktime.Second + 7*ktime.Microsecond), Ctx{"a-very-long-command-name", 1234567, 3, "d..2."}, "x",
			"a-very-long-comm-1234567 [003] d..2.    12.000007: x"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		w := New(&b, "", 1)
		w.Raw(tt.t, tt.ctx, "e", tt.text)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if got := lines[len(lines)-1]; got != tt.want {
			t.Errorf("%s: line = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestSortedOutput checks that lines emitted ahead of the simulation clock
// are held and written in (time, emission) order once the clock passes them,
// and that a line older than one already written is counted as late.
func TestSortedOutput(t *testing.T) {
	var b bytes.Buffer
	w := New(&b, "", 2)
	now := ktime.Time(0)
	w.SetClock(func() ktime.Time { return now })
	c0, c1 := Ctx{"a", 1, 0, "....."}, Ctx{"b", 2, 1, "....."}
	w.Raw(3000, c0, "e", "third")  // an activity computed ahead
	w.Raw(1000, c1, "e", "first")  // another CPU, earlier
	w.Raw(3000, c1, "e", "fourth") // same time: emission order
	now = 2000
	w.Raw(2000, c0, "e", "second")
	if got := w.Lines(); got != 1 {
		t.Errorf("lines written at clock 2000 = %d, want 1 (only the one before the clock)", got)
	}
	now = 5000
	w.Raw(500, c0, "e", "late") // breaks the contract: clamped to 3000
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			f := strings.Fields(l)
			got = append(got, f[3]+" "+f[4])
		}
	}
	want := []string{"0.000001: first", "0.000002: second", "0.000003: third", "0.000003: fourth", "0.000003: late"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q, want %q", got, want)
	}
	if w.Late() != 1 || w.Lines() != 5 {
		t.Errorf("Late() = %d, Lines() = %d, want 1 and 5", w.Late(), w.Lines())
	}
}

// TestEnabled checks event filtering with comma-separated globs, as the
// --trace-events flag passes them.
func TestEnabled(t *testing.T) {
	w := New(&bytes.Buffer{}, "hrtimer_*, sys_enter_timer_*,sched_switch", 1)
	tests := []struct {
		name string
		want bool
	}{
		{"hrtimer_start", true}, {"hrtimer_expire_entry", true}, {"sched_switch", true},
		{"sys_enter_timer_settime", true}, {"sys_exit_timer_settime", false},
		{"sched_wakeup", false}, {"timer_start", false},
	}
	for _, tt := range tests {
		if got := w.Enabled(tt.name); got != tt.want {
			t.Errorf("Enabled(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	var nilw *Writer
	if nilw.Enabled("hrtimer_start") || New(&bytes.Buffer{}, "", 1).Enabled("anything") != true {
		t.Error("a nil writer must record nothing and an empty filter everything")
	}
}

// TestPtr checks that hashed pointers are 16 hex digits and distinct.
func TestPtr(t *testing.T) {
	seen := map[string]uint64{}
	for id := uint64(1); id <= 10000; id++ {
		p := Ptr(id)
		if len(p) != 16 || strings.Trim(p, "0123456789abcdef") != "" {
			t.Fatalf("Ptr(%d) = %q, want 16 hex digits", id, p)
		}
		if o, ok := seen[p]; ok {
			t.Fatalf("Ptr(%d) = Ptr(%d) = %q", id, o, p)
		}
		seen[p] = id
	}
}
