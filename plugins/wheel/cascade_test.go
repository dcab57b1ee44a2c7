package wheel

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

// TestApplySlackV10 checks kernel/timer.c:apply_slack() (3.10, slack -1).
func TestApplySlackV10(t *testing.T) {
	tests := []struct {
		src              string
		expires, jiffies uint64
		want             uint64
	}{
		{"V10 limit 1003, mask 3", 1000, 0, 1002},
		{"V10 below 256: unchanged", 255, 0, 255},
		{"V10 5 minutes", 300000, 0, 301056},
		{"delta 256: limit +1", 300, 44, 301},
		{"already aligned bits", 1024, 0, 1028},
		{"past expiry", 10, 100, 10},
		{"relative to jiffies", 101000, 100000, 101002},
	}
	for _, tt := range tests {
		if got := applySlack(tt.expires, tt.jiffies); got != tt.want {
			t.Errorf("%s: applySlack(%d, %d) = %d, want %d", tt.src, tt.expires, tt.jiffies, got, tt.want)
		}
	}
}

// TestCascadePlacementV10 checks __internal_add_timer() placement at
// timer_jiffies 0 (pinned timers: mod_timer_pinned(), no slack).
func TestCascadePlacementV10(t *testing.T) {
	tests := []struct {
		src     string
		expires uint64
		want    int
	}{
		{"V10 tv1", 100, 100},
		{"tv1 end", 255, 255},
		{"V10 tv2[1]", 300, tvBucket(0, 1)},
		{"tv2 end", 1<<14 - 1, tvBucket(0, 63)},
		{"V10 tv3[18]", 300100, tvBucket(1, 18)},
		{"tv4", 1 << 20, tvBucket(2, 1)},
		{"V10 tv5[1]", 1 << 26, tvBucket(3, 1)},
		{"V10 clamp to MAX_TVAL: tv5[63]", 1 << 40, tvBucket(3, 63)},
	}
	for _, tt := range tests {
		w := newWheel(t, 1000, 1, "layout", "cascade")
		w.ModTimer(0, 0, pinned(1, tt.expires))
		if got := cascadeBucket(w, 1); got != tt.want {
			t.Errorf("%s: bucket of expires %d at timer_jiffies 0 = %d, want %d", tt.src, tt.expires, got, tt.want)
		}
	}
}

// TestCatchupV9 is vector V9: T1 expires 1005 and T2 300100 are queued at
// jiffies 0, then one softirq runs at 300000 (5 minutes idle at HZ=1000).
func TestCatchupV9(t *testing.T) {
	tests := []struct {
		layout, catchup      string
		iterations, cascades uint64
		t1Jiffy, t2Jiffy     uint64
		t2Iterations         uint64 // iterations of the softirqs at t2Jiffy-1 and t2Jiffy
	}{
		// 3.10: 300,001 iterations, 1,193 cascade() calls (1172 tv2, 19 tv3, 1 tv4, 1 tv5).
		{"cascade", "per_jiffy", 300001, 1193, 1005, 300100, 100},
		// 3.15: the wheel is not empty, so the same walk.
		{"cascade", "skip_empty", 300001, 1193, 1005, 300100, 100},
		// Visits 768 (tv2[3]), 1005 (T1) and 294912 (tv2[0], tv3[18]).
		{"cascade", "next_expiry", 3, 3, 1005, 300100, 2},
		// 5.9+: one collect pass (L0 idx 0, L1 idx 64, L2 idx 144 = T1).
		{"levels", "next_expiry", 1, 0, 1024, 327680, 1},
		// Cost model of the per-jiffy loop on the levels wheel: every jiffy
		// on both bases (BASE_STD and BASE_DEF).
		{"levels", "per_jiffy", 2 * 300001, 0, 1024, 327680, 2 * 27680},
		// BASE_DEF is empty: skipped.
		{"levels", "skip_empty", 300001, 0, 1024, 327680, 27680},
	}
	for _, tt := range tests {
		w := newWheel(t, 1000, 1, "layout", tt.layout, "catchup", tt.catchup)
		w.ModTimer(0, 0, pinned(1, 1005))
		w.ModTimer(0, 0, pinned(2, 300100))
		r := w.RunTimers(0, 300000)
		name := tt.layout + "/" + tt.catchup
		if r.Iterations != tt.iterations || r.Cascades != tt.cascades {
			t.Errorf("%s: RunTimers(0, 300000) iterations, cascades = %d, %d, want %d, %d",
				name, r.Iterations, r.Cascades, tt.iterations, tt.cascades)
		}
		if len(r.Expired) != 1 || r.Expired[0].ID != 1 || r.Expired[0].Jiffy != tt.t1Jiffy {
			t.Errorf("%s: RunTimers(0, 300000).Expired = %+v, want T1 at %d", name, r.Expired, tt.t1Jiffy)
		}
		if r.Gap != 300000 {
			t.Errorf("%s: Gap = %d, want 300000", name, r.Gap)
		}
		if r.State.NextExpiry != tt.t2Jiffy {
			t.Errorf("%s: NextExpiry = %d, want %d", name, r.State.NextExpiry, tt.t2Jiffy)
		}
		r1 := w.RunTimers(0, tt.t2Jiffy-1)
		if len(r1.Expired) != 0 {
			t.Errorf("%s: RunTimers(0, %d) expired %v early", name, tt.t2Jiffy-1, ids(r1.Expired))
		}
		r2 := w.RunTimers(0, tt.t2Jiffy)
		if len(r2.Expired) != 1 || r2.Expired[0].ID != 2 || r2.Expired[0].Jiffy != tt.t2Jiffy {
			t.Errorf("%s: RunTimers(0, %d).Expired = %+v, want T2 at %d", name, tt.t2Jiffy, r2.Expired, tt.t2Jiffy)
		}
		if got := r1.Iterations + r2.Iterations; got != tt.t2Iterations {
			t.Errorf("%s: iterations up to %d = %d, want %d", name, tt.t2Jiffy, got, tt.t2Iterations)
		}
	}
}

// TestCatchupEmptyWheel: with nothing queued, 3.10 still walks every jiffy,
// 3.15's catchup_timer_jiffies() and the 5.9 loop do nothing.
func TestCatchupEmptyWheel(t *testing.T) {
	tests := []struct {
		layout, catchup string
		iterations      uint64
	}{
		{"cascade", "per_jiffy", 300000},
		{"cascade", "skip_empty", 0},
		{"cascade", "next_expiry", 0},
		{"levels", "per_jiffy", 2 * 300000},
		{"levels", "skip_empty", 0},
		{"levels", "next_expiry", 0},
	}
	for _, tt := range tests {
		w := newWheel(t, 1000, 1, "layout", tt.layout, "catchup", tt.catchup)
		w.ModTimer(0, 0, pinned(1, 50))
		if r := w.RunTimers(0, 100); len(r.Expired) != 1 {
			t.Fatalf("%s/%s: RunTimers(0, 100) expired %v, want [1]", tt.layout, tt.catchup, ids(r.Expired))
		}
		r := w.RunTimers(0, 300100)
		if r.Iterations != tt.iterations {
			t.Errorf("%s/%s: RunTimers(0, 300100) on an empty wheel: iterations = %d, want %d",
				tt.layout, tt.catchup, r.Iterations, tt.iterations)
		}
	}
}

// TestCatchupCostV9 checks the default cost calibration: the 3.10 walk of
// V9 must land in the 461-566 us the 3.10 cyclictest report shows.
func TestCatchupCostV9(t *testing.T) {
	w := newWheel(t, 1000, 1, "layout", "cascade", "catchup", "per_jiffy")
	w.ModTimer(0, 0, pinned(1, 1005))
	w.ModTimer(0, 0, pinned(2, 300100))
	r := w.RunTimers(0, 300000)
	// 300001*1.7 + 1193*20 + 2*10 (T1 and T2 cascaded) + 40 (T1's expiry).
	const want = 510002 + 23860 + 20 + 40
	if r.Cost != want {
		t.Errorf("V9 per_jiffy cost = %d ns, want %d", r.Cost, want)
	}
	if r.Cost < 461000 || r.Cost > 566000 {
		t.Errorf("V9 per_jiffy cost = %d ns, want within the reported 461-566 us", r.Cost)
	}
}

// TestScanMatchesEarliest checks that the 3.10 __next_timer_interrupt()
// scan and the bitmap search behind State.NextExpiry agree on the earliest
// expiry, as the kernel's design promises (compared as the jiffy the timer
// runs at: a timer armed in the past runs at timer_jiffies).
func TestScanMatchesEarliest(t *testing.T) {
	w := newWheel(t, 1000, 1, "layout", "cascade", "catchup", "next_expiry")
	cw := w.eng.(*cascadeWheel)
	expiries := []uint64{70000, 300, 1 << 21, 5000, 255, 65536, 16384, 16385, 1<<20 + 3}
	for i, e := range expiries {
		w.ModTimer(0, 0, pinned(sdk.TimerID(i+1), e))
	}
	w.ModTimer(0, 0, sdk.WheelTimer{ID: 100, Expires: 10, Flags: sdk.TimerDeferrable | sdk.TimerPinned})
	checked := 0
	for j := uint64(0); j < 1<<21+10; j += 97 {
		r := w.RunTimers(0, j)
		b := &cw.bases[0]
		got, _ := cw.scan(b)
		if b.activeTimers == 0 {
			break
		}
		if want := r.State.NextExpiry; b.effective(got) != want {
			t.Fatalf("at jiffies %d: scan() = %d, State.NextExpiry = %d", j, got, want)
		}
		checked++
	}
	if checked < 100 {
		t.Errorf("checked %d points, want >= 100", checked)
	}
}
