package wheel

import (
	"slices"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

func TestConfigure(t *testing.T) {
	ok := sdk.Setup{CPUs: 4, HZ: 250}
	tests := []struct {
		name      string
		setup     sdk.Setup
		cfg       sdk.Config
		wantError string // attribute of the expected error, "-" for none
		wantWarn  string // attribute of the expected warning, "" for none
		drop      string // attribute left out of the Config: the host never does
	}{
		{"defaults", ok, sdk.Config{}, "-", "", ""},
		{"all explicit", ok, sdk.Config{"layout": "cascade", "catchup": "per_jiffy", "softirq_raise": "every_tick",
			"iteration_cost_ns": "1.8", "cascade_cost_ns": "0"}, "-", "", ""},
		{"unknown layout", ok, sdk.Config{"layout": "hashed"}, "layout", "", ""},
		{"unknown catchup", ok, sdk.Config{"catchup": "lazy"}, "catchup", "", ""},
		{"unknown raise", ok, sdk.Config{"softirq_raise": "never"}, "softirq_raise", "", ""},
		{"negative cost", ok, sdk.Config{"expiry_cost_ns": "-1"}, "expiry_cost_ns", "", ""},
		{"NaN cost", ok, sdk.Config{"scan_cost_ns": "NaN"}, "scan_cost_ns", "", ""},
		{"huge cost", ok, sdk.Config{"enqueue_cost_ns": "2e9"}, "enqueue_cost_ns", "", ""},
		{"not a number", ok, sdk.Config{"dequeue_cost_ns": "fast"}, "dequeue_cost_ns", "", ""},
		{"bad HZ", sdk.Setup{CPUs: 1, HZ: 1024}, sdk.Config{}, "", "", ""},
		{"no CPUs", sdk.Setup{CPUs: 0, HZ: 1000}, sdk.Config{}, "", "", ""},
		{"levels per_jiffy warns", ok, sdk.Config{"catchup": "per_jiffy"}, "-", "catchup", ""},
		{"cascade next_expiry raise warns", ok, sdk.Config{"layout": "cascade", "softirq_raise": "next_expiry"}, "-", "softirq_raise", ""},
		{"missing layout", ok, sdk.Config{}, "layout", "", "layout"},
		{"missing cost", ok, sdk.Config{}, "scan_cost_ns", "", "scan_cost_ns"},
	}
	for _, tt := range tests {
		cfg := defaults(t, tt.cfg)
		delete(cfg, tt.drop)
		d := New().Configure(tt.setup, cfg)
		var errAttrs, warnAttrs []string
		for _, x := range d {
			if x.Severity == sdk.SeverityError {
				errAttrs = append(errAttrs, x.Attribute)
			} else {
				warnAttrs = append(warnAttrs, x.Attribute)
			}
		}
		switch {
		case tt.wantError == "-" && d.HasErrors():
			t.Errorf("%s: Configure(%v) = %v, want no error", tt.name, tt.cfg, d)
		case tt.wantError != "-" && !slices.Contains(errAttrs, tt.wantError):
			t.Errorf("%s: Configure(%v) errors on %q, want one on %q", tt.name, tt.cfg, errAttrs, tt.wantError)
		}
		if tt.wantWarn != "" && !slices.Contains(warnAttrs, tt.wantWarn) {
			t.Errorf("%s: Configure(%v) warnings on %q, want one on %q", tt.name, tt.cfg, warnAttrs, tt.wantWarn)
		}
		if tt.wantWarn == "" && len(warnAttrs) > 0 {
			t.Errorf("%s: Configure(%v) warned %v, want none", tt.name, tt.cfg, d)
		}
	}
}

func TestSchemaDocumentsDefaults(t *testing.T) {
	for _, a := range New().Schema().Attributes {
		if strings.HasSuffix(a.Name, "_ns") && !strings.Contains(a.Doc, "Default") {
			t.Errorf("attribute %s: Doc does not state and source its default: %q", a.Name, a.Doc)
		}
	}
}

// TestCosts checks what each call charges with the defaults (ns): enqueue
// 80, dequeue 50, expiry 40 before each callback, iteration 1.7, scan 1.7.
func TestCosts(t *testing.T) {
	w := newWheel(t, 1000, 1, "layout", "cascade", "catchup", "per_jiffy")
	steps := []struct {
		name string
		do   func() int64
		want int64
	}{
		{"mod_timer, new", func() int64 { return w.ModTimer(0, 0, pinned(1, 10)).Cost }, 80},
		{"mod_timer, same expiry", func() int64 { return w.ModTimer(0, 0, pinned(1, 10)).Cost }, 0},
		{"mod_timer, moved", func() int64 { return w.ModTimer(0, 0, pinned(1, 20)).Cost }, 130},
		{"del_timer", func() int64 { return w.DelTimer(0, 0, 1).Cost }, 50},
		{"del_timer, not pending", func() int64 { return w.DelTimer(0, 0, 1).Cost }, 0},
		{"next timer, nothing queued", func() int64 { return w.NextTimerInterrupt(0, 0).Cost }, 0},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Errorf("%s: Cost = %d, want %d", s.name, got, s.want)
		}
	}
}

// TestOffsets: each callback's Offset counts the iterations before it, the
// detach overhead and the earlier callbacks of the same softirq.
func TestOffsets(t *testing.T) {
	w := newWheel(t, 1000, 1, "layout", "cascade", "catchup", "per_jiffy")
	w.ModTimer(0, 0, sdk.WheelTimer{ID: 1, Expires: 10, Flags: sdk.TimerPinned, CallbackCost: 1000})
	w.ModTimer(0, 0, sdk.WheelTimer{ID: 2, Expires: 10, Flags: sdk.TimerPinned, CallbackCost: 500})
	w.ModTimer(0, 0, sdk.WheelTimer{ID: 3, Expires: 12, Flags: sdk.TimerPinned, CallbackCost: 7, Period: 5})
	r := w.RunTimers(0, 20)
	// Iterations 0..10 (11 x 1.7 = 18.7) and the cascade at 0 (4 x 20 = 80).
	want := []sdk.WheelExpiry{
		{ID: 1, Offset: 139, Jiffy: 10},                                     // 98.7 + 40
		{ID: 2, Offset: 1179, Jiffy: 10},                                    // + 1000 + 40
		{ID: 3, Offset: 1722, Jiffy: 12, Rearmed: true, NewExpires: 20 + 5}, // + 500 + 2x1.7 + 40
	}
	if !slices.Equal(r.Expired, want) {
		t.Errorf("RunTimers(0, 20).Expired = %+v, want %+v", r.Expired, want)
	}
	// 21 iterations x 1.7 + 80 cascades + 3 x 40 + 1507 callbacks + 80 re-arm = 1822.7.
	if wantCost := int64(1823); r.Cost != wantCost {
		t.Errorf("RunTimers(0, 20).Cost = %d, want %d", r.Cost, wantCost)
	}
}

func ctr(name string, cpu int, v int64) sdk.Counter {
	return sdk.Counter{Name: name, CPU: cpu, Value: v}
}

// TestCounters checks the per-CPU counters after vector V9 on the cascade
// layout, and their order.
func TestCounters(t *testing.T) {
	w := newWheel(t, 1000, 2, "layout", "cascade", "catchup", "per_jiffy")
	w.ModTimer(0, 0, pinned(1, 1005))
	w.ModTimer(0, 0, pinned(2, 300100))
	w.ModTimer(1, 0, pinned(3, 50))
	w.DelTimer(0, 0, 3) // held by CPU 1: counted there
	w.RunTimers(0, 300000)
	w.RunTimers(0, 300100)
	want := []sdk.Counter{
		ctr("starts", 0, 2), ctr("starts", 1, 1),
		ctr("stops", 0, 0), ctr("stops", 1, 1),
		ctr("runs", 0, 2), ctr("runs", 1, 0),
		ctr("expiries", 0, 2), ctr("expiries", 1, 0),
		ctr("iterations", 0, 300101), ctr("iterations", 1, 0),
		ctr("cascades", 0, 1194), ctr("cascades", 1, 0),
		ctr("timers_cascaded", 0, 3), ctr("timers_cascaded", 1, 0), // T1 at 768, T2 at 294912 and 300032
		ctr("max_gap", 0, 300000), ctr("max_gap", 1, 0),
		ctr("migrated", 0, 0), ctr("migrated", 1, 0),
		ctr("remote_runs", 0, 0), ctr("remote_runs", 1, 0),
		ctr("remote_expiries", 0, 0), ctr("remote_expiries", 1, 0),
	}
	if got := w.Counters(); !slices.Equal(got, want) {
		t.Errorf("Counters() = %v, want %v", got, want)
	}
}

// TestNextTimerInterruptScanCost: 3.10 rescans only when next_timer is
// stale, charging each bucket examined.
func TestNextTimerInterruptScanCost(t *testing.T) {
	w := newWheel(t, 1000, 1, "layout", "cascade")
	w.ModTimer(0, 0, pinned(1, 100))
	w.ModTimer(0, 0, pinned(2, 5000))
	w.DelTimer(0, 0, 1) // the cached earliest: next_timer becomes stale
	r := w.NextTimerInterrupt(0, 0)
	// All 256 tv1 slots, tv2 slots 0..19 (5000>>8 = 19), then, the scan
	// having started at index 0, slot 0 of tv3, tv4 and tv5: 279 x 1.7.
	if r.Next != 5000 || r.Cost != 474 {
		t.Errorf("NextTimerInterrupt(0, 0) = {Next %d, Cost %d}, want {5000, 474}", r.Next, r.Cost)
	}
	if r := w.NextTimerInterrupt(0, 0); r.Next != 5000 || r.Cost != 0 {
		t.Errorf("second NextTimerInterrupt(0, 0) = {Next %d, Cost %d}, want {5000, 0} (cached)", r.Next, r.Cost)
	}
}

// TestMoveBetweenCPUs follows kernel/time/timer.c:__mod_timer(): mod_timer()
// from another CPU with the same expiry keeps the timer where it is (the
// networking fast path, timer_pending() && expires equal); a new expiry in
// another bucket detaches it and queues it on the calling CPU.
func TestMoveBetweenCPUs(t *testing.T) {
	for _, c := range combos {
		w := newWheel(t, 1000, 2, "layout", c.layout, "catchup", c.catchup)
		w.ModTimer(0, 0, pinned(1, 100))
		r := w.ModTimer(1, 0, pinned(1, 100))
		if !r.WasPending || !r.Moved || r.CPU != 0 || r.State.Pending != 1 {
			t.Errorf("%s/%s: ModTimer(cpu 1, same expiry) = %+v, want WasPending, kept on CPU 0", c.layout, c.catchup, r)
		}
		r = w.ModTimer(1, 0, pinned(1, 150))
		if !r.WasPending || r.Moved || r.State.Pending != 1 {
			t.Errorf("%s/%s: ModTimer(cpu 1, new bucket) = %+v, want WasPending and Pending 1 on CPU 1", c.layout, c.catchup, r)
		}
		if got := w.RunTimers(0, 200); len(got.Expired) != 0 || got.State.Pending != 0 {
			t.Errorf("%s/%s: RunTimers(0, 200) = %+v, want nothing on CPU 0", c.layout, c.catchup, got)
		}
		if got := w.RunTimers(1, 200); len(got.Expired) != 1 {
			t.Errorf("%s/%s: RunTimers(1, 200).Expired = %+v, want timer 1", c.layout, c.catchup, got.Expired)
		}
	}
}
