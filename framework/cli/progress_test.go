package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestRunProgress: the line shows simulated time of total, the share, the
// event rate since the last line and the elapsed time, at most every
// quarter second, and is erased at the end; off a terminal there is none.
func TestRunProgress(t *testing.T) {
	var out bytes.Buffer
	wall := time.Unix(1000, 0)
	p := newRunProgressTo(&out, func() time.Time { return wall })
	end := ktime.Time(305 * ktime.Second)
	p.update(ktime.Time(1*ktime.Second), end, 1000) // too soon after the start: nothing
	if out.Len() != 0 {
		t.Fatalf("drawn too soon: %q", out.String())
	}
	wall = wall.Add(500 * time.Millisecond)
	p.update(ktime.Time(12300*ktime.Millisecond), end, 600000)
	// 12.3 s of 305 s in 0.5 s of wall time: about 12 s left.
	if want := "\rrun 12.3 s / 305.0 s simulated (4%), 1.2M events/s, 1s elapsed, about 12s left\033[K"; out.String() != want {
		t.Errorf("line = %q, want %q", out.String(), want)
	}
	p.finish()
	if !strings.HasSuffix(out.String(), "\r\033[K") {
		t.Errorf("not erased: %q", out.String())
	}
	if newRunProgress(&bytes.Buffer{}) != nil {
		t.Error("progress drawn on a stderr that is not a terminal")
	}
	var none *runProgress
	none.finish() // no terminal: finish is a no-op
}
