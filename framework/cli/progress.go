package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// runProgress draws "run 12.3 s / 305.0 s simulated (4%), 1.2M events/s" on
// a terminal, redrawn in place at most four times a second; nil (nothing
// drawn) when stderr is not a terminal.
type runProgress struct {
	w      io.Writer
	clock  func() time.Time
	every  time.Duration
	start  time.Time
	last   time.Time
	lastEv uint64
	drawn  bool
}

func newRunProgress(stderr io.Writer) *runProgress {
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return newRunProgressTo(f, time.Now)
}

func newRunProgressTo(w io.Writer, clock func() time.Time) *runProgress {
	now := clock()
	return &runProgress{w: w, clock: clock, every: 250 * time.Millisecond, start: now, last: now}
}

// update is experiment.Options.Progress.
func (p *runProgress) update(now, end ktime.Time, events uint64) {
	t := p.clock()
	dt := t.Sub(p.last)
	if dt < p.every {
		return
	}
	rate := float64(events-p.lastEv) / dt.Seconds()
	p.last, p.lastEv = t, events
	pct := 0.0
	if end > 0 {
		pct = 100 * float64(now) / float64(end)
	}
	fmt.Fprintf(p.w, "\rrun %s / %s simulated (%.0f%%), %s events/s, %s elapsed\033[K",
		simSeconds(now), simSeconds(end), pct, siCount(rate), t.Sub(p.start).Round(time.Second))
	p.drawn = true
}

// finish erases the line so that the summary and later messages start clean.
func (p *runProgress) finish() {
	if p != nil && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func simSeconds(t ktime.Time) string {
	return fmt.Sprintf("%.1f s", float64(t)/float64(ktime.Second))
}

func siCount(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.1fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
