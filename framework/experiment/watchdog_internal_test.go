package experiment

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk/cpuwait"
)

// TestStallWatchWarnsWhenAsked: a 4 s deadline, extended once while the
// run waited for a CPU, then expired, expires again at every later sample
// of the same stall (the run waiting on a plugin process, whose own
// deadline ends the call); none of that is logged. The warning comes once,
// when the stall is a linked-in plugin's (warnStarved), and a new beat
// forgets it.
func TestStallWatchWarnsWhenAsked(t *testing.T) {
	const s = time.Second
	var log bytes.Buffer
	wait := time.Duration(0)
	sw := &stallWatch{log: zerolog.New(&log), timeout: 4 * s, period: 100 * time.Millisecond, last: 1}
	sw.judge = cpuwait.New(4*s, func() (cpuwait.Sample, bool) { return cpuwait.Sample{Wait: wait}, true })
	sw.check = sw.judge.First()
	t0 := time.Unix(1000, 0)
	sw.start, sw.since = t0, t0
	for _, st := range []struct {
		at   time.Duration
		wait time.Duration
		want string
	}{
		{2 * s, 0, ""},
		{4 * s, 2 * s, ""}, // starved for the whole probe: extended
		{6 * s, 2*s + 100*time.Millisecond, "no answer within 4s"},
		{6*s + 100*time.Millisecond, 2*s + 100*time.Millisecond, "no answer within 4s"},
		{6*s + 200*time.Millisecond, 2*s + 100*time.Millisecond, "no answer within 4s"},
	} {
		wait = st.wait
		if got := sw.expired(t0.Add(st.at), 1); got != st.want {
			t.Fatalf("expired at %v = %q, want %q", st.at, got, st.want)
		}
	}
	if log.Len() != 0 {
		t.Fatalf("expired logged:\n%s", &log)
	}
	sw.warnStarved()
	if got := log.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, `"cpu_wait":2000`) ||
		!strings.Contains(got, "extended while the run waited for a CPU, then expired") {
		t.Fatalf("warnStarved logged %q, want one warning with cpu_wait 2000 ms", got)
	}
	log.Reset()
	if got := sw.expired(t0.Add(7*s), 2); got != "" {
		t.Fatalf("expired after a new beat = %q", got)
	}
	sw.warnStarved()
	if log.Len() != 0 {
		t.Errorf("warnStarved after a new beat logged %q", &log)
	}
}
