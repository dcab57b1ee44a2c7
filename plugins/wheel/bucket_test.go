package wheel

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

// TestModTimerReportsBucket: ModTimer reports where it queued the timer, as
// the timer_start tracepoint prints it; vector V1 (levels, delta 100 at clk 0
// relative: level 1, idx 64+13, bucket_expiry 104 jiffies after the base).
func TestModTimerReportsBucket(t *testing.T) {
	w := newWheelSetup(t, sdk.Setup{CPUs: 1, HZ: 1000})
	const j0 = 1 << 20 // a multiple of 8: the level-1 granule keeps V1's arithmetic
	r := w.ModTimer(0, j0, sdk.WheelTimer{ID: 1, Expires: j0 + 100})
	wantIdx := 64 + int(((j0+100)>>3+1)&63)
	if r.BucketExpiry != j0+104 || r.Index != wantIdx {
		t.Errorf("ModTimer(expires j0+100) = bucket_expiry j0+%d idx %d; want j0+104, %d", r.BucketExpiry-j0, r.Index, wantIdx)
	}
}
