package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// A progress line is drawn on a terminal only and redrawn in place; it says
// how far, how fast, how long so far and how long to go, since a 64-CPU run
// or a large grid can take most of an hour. Whatever else a command prints
// to stderr while one is drawn (a warning, the signal message) first erases
// it through statusLine, so that nothing is written on its line.

// statusLine is the progress line drawn now, if any: the signal handler
// erases it before it speaks.
var statusLine struct {
	sync.Mutex
	clear func()
}

func setStatusLine(clear func()) {
	statusLine.Lock()
	statusLine.clear = clear
	statusLine.Unlock()
}

// clearStatusLine erases the progress line, if one is drawn.
func clearStatusLine() {
	statusLine.Lock()
	clear := statusLine.clear
	statusLine.Unlock()
	if clear != nil {
		clear()
	}
}

// terminal returns stderr as a file when it is a terminal.
func terminal(stderr io.Writer) (*os.File, bool) {
	f, ok := stderr.(*os.File)
	return f, ok && term.IsTerminal(int(f.Fd()))
}

// runProgress draws "run 12.3 s / 305.0 s simulated (4%), 1.2M events/s,
// 1m05s elapsed, about 25m left" for one run, at most four times a second;
// nil (nothing drawn) when stderr is not a terminal.
type runProgress struct {
	progressLine
	clock  func() time.Time
	every  time.Duration
	start  time.Time
	last   time.Time
	lastEv uint64
}

// progressLine is the one line of stderr a progress display redraws in place;
// anything else printed meanwhile erases it first (setStatusLine).
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	drawn bool
}

// draw replaces the line; the caller holds mu.
func (l *progressLine) draw(format string, args ...any) {
	fmt.Fprintf(l.w, "\r"+format+"\033[K", args...)
	l.drawn = true
}

// clear erases the line (drawn again at the next update).
func (l *progressLine) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn {
		fmt.Fprint(l.w, "\r\033[K")
		l.drawn = false
	}
}

func newRunProgress(stderr io.Writer) *runProgress {
	f, ok := terminal(stderr)
	if !ok {
		return nil
	}
	p := newRunProgressTo(f, time.Now)
	setStatusLine(p.clear)
	return p
}

func newRunProgressTo(w io.Writer, clock func() time.Time) *runProgress {
	now := clock()
	return &runProgress{progressLine: progressLine{w: w}, clock: clock, every: 250 * time.Millisecond, start: now, last: now}
}

// update is experiment.Options.Progress.
func (p *runProgress) update(now, end ktime.Time, events uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.clock()
	dt := t.Sub(p.last)
	if dt < p.every {
		return
	}
	rate := float64(events-p.lastEv) / dt.Seconds()
	p.last, p.lastEv = t, events
	elapsed := t.Sub(p.start)
	pct, left := 0.0, "left unknown"
	if end > 0 {
		pct = 100 * float64(now) / float64(end)
	}
	if now > 0 && end > now {
		// The simulated time's pace so far: wakeup-heavy stretches make it
		// uneven, so it is "about".
		left = "about " + roundDur(time.Duration(float64(elapsed)*float64(end-now)/float64(now))) + " left"
	}
	p.draw("run %s / %s simulated (%.0f%%), %s events/s, %s elapsed, %s",
		simSeconds(now), simSeconds(end), pct, siCount(rate), roundDur(elapsed), left)
}

// finish erases the line so that the summary and later messages start clean.
func (p *runProgress) finish() {
	if p != nil {
		setStatusLine(nil)
		p.clear()
	}
}

// progressBar draws "compare [=====     ] 12/40 runs, 0.8 runs/s, 15s
// elapsed, about 35s left" for a grid of runs (compare, a sweep, bisect),
// redrawn at every finished run; nil (nothing drawn) when stderr is not a
// terminal.
type progressBar struct {
	progressLine
	what  string
	width int
	clock func() time.Time
	start time.Time
}

func newProgressBar(stderr io.Writer, what string) *progressBar {
	f, ok := terminal(stderr)
	if !ok {
		return nil
	}
	p := newProgressBarTo(f, what, time.Now)
	setStatusLine(p.clear)
	return p
}

func newProgressBarTo(w io.Writer, what string, clock func() time.Time) *progressBar {
	return &progressBar{progressLine: progressLine{w: w}, what: what, width: 30, clock: clock, start: clock()}
}

// update is the Progress of experiment.CompareOptions and bisect.Options:
// done of total runs have finished.
func (p *progressBar) update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fill := p.width * done / max(total, 1)
	elapsed := p.clock().Sub(p.start)
	pace := ""
	if done > 0 && elapsed > 0 {
		pace = fmt.Sprintf(", %s", runRate(float64(done)/elapsed.Seconds()))
	}
	left := ""
	if done > 0 && done < total {
		left = ", about " + roundDur(time.Duration(float64(elapsed)*float64(total-done)/float64(done))) + " left"
	}
	p.draw("%s [%s%s] %d/%d runs%s, %s elapsed%s", p.what,
		strings.Repeat("=", fill), strings.Repeat(" ", p.width-fill), done, total, pace, roundDur(elapsed), left)
}

// finish erases the bar so that later messages start on a clean line.
func (p *progressBar) finish() {
	if p != nil {
		setStatusLine(nil)
		p.clear()
	}
}

// runRate is a rate of runs, per second or per minute for slow ones.
func runRate(perSecond float64) string {
	if perSecond < 0.1 {
		return fmt.Sprintf("%.1f runs/min", perSecond*60)
	}
	return fmt.Sprintf("%.1f runs/s", perSecond)
}

// roundDur rounds a wall time for a progress line: whole seconds, whole
// minutes beyond ten minutes.
func roundDur(d time.Duration) string {
	if d >= 10*time.Minute {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
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
