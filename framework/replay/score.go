package replay

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tickemu/tickemu/framework/traceimport"
)

// FuncScore counts one callback's operations.
type FuncScore struct {
	Function                         string
	Wheel                            bool
	Starts, Expiries, Rearms, Cancel int64
	// Lateness holds expiry lateness in ns (wheel timers: jiffies times
	// the tick period).
	Lateness Hist
}

// TickScore counts the tick's.
type TickScore struct {
	Expiries int64
	// FarArms are starts of the tick timer more than one tick after the
	// time they were made: the tick deferred by NO_HZ.
	FarArms int64
	// Stops are tick_stop events with success=1.
	Stops int64
	// IdleKept are expiries of the tick on an idle CPU (the idle task
	// switched in last, or no switch on that CPU at all) after which the
	// tick stays on its period: neither a start more than one tick ahead
	// nor a cancel nor a successful tick_stop follows before the CPU's
	// next tick expiry, and the CPU does not switch to a task meanwhile
	// (the window ends at those two only, so that a capture with and one
	// without the irq events count alike). In 3.10 the tick's own restart is an
	// hrtimer_start one tick ahead that a stopping irq_exit() overrides
	// (tick_nohz_irq_exit()); the last word counts. Such a tick was kept
	// by something else than a timer: can_stop_idle_tick() /
	// tick_nohz_next_event() saw rcu_needs_cpu(), irq_work or a pending
	// softirq, or a timer due in the next period.
	IdleKept int64
	// IdleKeptRCU are the IdleKept ticks during which RCU_SOFTIRQ was
	// raised on that CPU (rcu_sched_clock_irq() found rcu_pending()).
	IdleKeptRCU int64
}

// rcuSoftirq is RCU_SOFTIRQ's vector (include/linux/interrupt.h, the same
// since 2.6.28).
const rcuSoftirq = 9

// idleTick is one CPU's window after a tick expiry (Scorer.idleTick).
type idleTick struct {
	// known: a sched_switch on the CPU has shown whether it is idle.
	known, idle bool
	// open: a tick expired while the CPU was idle (or not yet known) and
	// the window is running; stopped: the tick was then re-armed far,
	// cancelled or stopped; rcu: RCU_SOFTIRQ was raised.
	open, stopped, rcu bool
	// Windows closed before the CPU's idleness was known: counted once
	// the first switch shows the idle task was running (prev pid 0).
	unknownKept, unknownKeptRCU int64
}

// Score is a capture's or a run's counts.
type Score struct {
	Funcs map[string]*FuncScore
	Tick  TickScore
	// Events is the number of events scored.
	Events int64
}

// Scorer scores a stream of events.
type Scorer struct {
	c        *Classifier
	s        Score
	isTick   func(string) bool
	tickNsec int64
	offset   int64
	// Until, when positive, ignores events after it (trace clock): a model
	// run lasts a little longer than the capture it replays.
	Until int64
	// idle is each CPU's idle-tick window (TickScore.IdleKept).
	idle []idleTick
	// Setup counts, per callback ("timer:" before a timer_list one's), the
	// starts at time 0 that are the replay's arming of timers armed before
	// the capture (Capture.PreArmed, SetupStarts): the capture shows no
	// start for them, so the model's are not counted either.
	Setup map[string]int
}

// SetupStarts is Scorer.Setup for a replay of c on a machine of cpus CPUs:
// the timers the replay workload arms at time 0 because the capture first
// shows them expiring (not the tick, not hrtimer_wakeup sleepers, not on a
// CPU the machine lacks).
func SetupStarts(c *Capture, cpus int) map[string]int {
	m := map[string]int{}
	for _, pa := range c.PreArmed {
		if pa.CPU >= cpus || c.IsTick(pa.Function) || pa.Function == "hrtimer_wakeup" {
			continue
		}
		k := pa.Function
		if pa.Wheel {
			k = "timer:" + k
		}
		m[k]++
	}
	return m
}

// NewScorer returns a scorer: isTick names the tick's callback, tickNsec is
// the tick period, offset the timers' CLOCK_MONOTONIC minus the trace clock
// (Capture.Offset; 0 for tickemu's own trace), o the classifier's options.
func NewScorer(isTick func(string) bool, tickNsec, offset int64, o Options) *Scorer {
	return &Scorer{c: NewClassifier(o), s: Score{Funcs: map[string]*FuncScore{}}, isTick: isTick, tickNsec: tickNsec, offset: offset}
}

// Feed scores one event.
func (sc *Scorer) Feed(e *traceimport.Event) {
	if sc.Until > 0 && e.Time > sc.Until {
		return
	}
	sc.s.Events++
	sc.idleTick(e)
	for i := range sc.c.Feed(e) {
		sc.op(&sc.c.out[i])
	}
}

// Score finishes and returns the score.
func (sc *Scorer) Score() *Score {
	for i := range sc.c.Finish() {
		sc.op(&sc.c.out[i])
	}
	for cpu := range sc.idle {
		w := &sc.idle[cpu]
		sc.closeIdleTick(w)
		if !w.known {
			// No switch on this CPU in the whole capture: the idle task
			// ran throughout (a task running throughout would have been
			// switched out by the tick's scheduler at least once).
			sc.s.Tick.IdleKept += w.unknownKept
			sc.s.Tick.IdleKeptRCU += w.unknownKeptRCU
		}
	}
	return &sc.s
}

// idleTick follows e's CPU's tick windows for TickScore.IdleKept.
func (sc *Scorer) idleTick(e *traceimport.Event) {
	if e.CPU < 0 || e.CPU >= 1<<16 {
		return
	}
	for e.CPU >= len(sc.idle) {
		sc.idle = append(sc.idle, idleTick{})
	}
	w := &sc.idle[e.CPU]
	switch e.Kind {
	case traceimport.SchedSwitch:
		if e.NextPID != 0 {
			// The CPU leaves idle: whatever the tick's last arm, it
			// was kept for the task (can_stop_idle_tick() refuses
			// with need_resched()) or is restarted by
			// tick_nohz_idle_exit() now; not an idle tick kept.
			w.open = false
		}
		sc.closeIdleTick(w)
		if !w.known {
			w.known = true
			if e.PrevPID == 0 {
				sc.s.Tick.IdleKept += w.unknownKept
				sc.s.Tick.IdleKeptRCU += w.unknownKeptRCU
			}
		}
		w.idle = e.NextPID == 0
	case traceimport.HRExpireEntry:
		if !sc.isTick(e.Function) {
			return
		}
		sc.closeIdleTick(w)
		if w.idle || !w.known {
			w.open, w.stopped, w.rcu = true, false, false
		}
	case traceimport.HRStart:
		if w.open && sc.isTick(e.Function) {
			w.stopped = e.Expires-(e.Time+sc.offset) > sc.tickNsec
		}
	case traceimport.HRCancel:
		if w.open && sc.isTick(e.Function) {
			w.stopped = true
		}
	case traceimport.TickStop:
		if w.open && e.Success == 1 {
			w.stopped = true
		}
	case traceimport.SoftirqRaise:
		if w.open && e.Vec == rcuSoftirq {
			w.rcu = true
		}
	}
}

// closeIdleTick ends w's window and counts a kept tick.
func (sc *Scorer) closeIdleTick(w *idleTick) {
	if !w.open {
		return
	}
	w.open = false
	if w.stopped {
		return
	}
	rcu := int64(0)
	if w.rcu {
		rcu = 1
	}
	if w.known {
		sc.s.Tick.IdleKept++
		sc.s.Tick.IdleKeptRCU += rcu
		return
	}
	w.unknownKept++
	w.unknownKeptRCU += rcu
}

// fn returns the score of a callback.
func (sc *Scorer) fn(name string, wheel bool) *FuncScore {
	if name == "" {
		name = "(unknown)"
	}
	key := name
	if wheel {
		key = "timer:" + name
	}
	f := sc.s.Funcs[key]
	if f == nil {
		f = &FuncScore{Function: name, Wheel: wheel}
		sc.s.Funcs[key] = f
	}
	return f
}

func (sc *Scorer) op(o *Op) {
	if o.Kind == OpTickStop {
		if o.Success == 1 {
			sc.s.Tick.Stops++
		}
		return
	}
	if !o.Wheel && sc.isTick(o.Function) {
		switch o.Kind {
		case OpExpire:
			sc.s.Tick.Expiries++
		case OpStart:
			if o.Expires-(o.Time+sc.offset) > sc.tickNsec {
				sc.s.Tick.FarArms++
			}
		}
		return
	}
	if o.Kind == OpCancel && o.Function == "" {
		return // a timer the capture never showed started or expired
	}
	if o.Kind == OpStart && o.Time == 0 && len(sc.Setup) > 0 {
		k := o.Function
		if o.Wheel {
			k = "timer:" + k
		}
		if sc.Setup[k] > 0 {
			sc.Setup[k]--
			return
		}
	}
	f := sc.fn(o.Function, o.Wheel)
	switch o.Kind {
	case OpStart:
		f.Starts++
		if o.Rearm {
			f.Rearms++
		}
	case OpCancel:
		f.Cancel++
	case OpExpire:
		f.Expiries++
		if o.HasLateness {
			l := o.Lateness
			if o.Wheel {
				l *= sc.tickNsec
			}
			f.Lateness.Add(l)
		}
	}
}

// ScoreReader scores every event of r.
func (sc *Scorer) ScoreReader(r traceimport.Reader) (*Score, error) {
	for {
		e, err := r.Next()
		if err == io.EOF {
			return sc.Score(), nil
		}
		if err != nil {
			return nil, err
		}
		sc.Feed(e)
	}
}

// Hist is a bounded histogram of signed ns values with about 3% resolution:
// 32 buckets per power of two, each sign.
type Hist struct {
	n   int64
	pos [64 * 32]int64
	neg [64 * 32]int64
	min int64
	max int64
}

func bucket(v uint64) int {
	if v < 32 {
		return int(v)
	}
	e := 63 - leadingZeros(v)     // 5..63
	m := int(v>>(uint(e)-5)) & 31 // the 5 bits after the leading one
	return (e-4)*32 + m
}

func leadingZeros(v uint64) int {
	n := 0
	for v&(1<<63) == 0 {
		v <<= 1
		n++
	}
	return n
}

// bucketValue is the lower bound of bucket b.
func bucketValue(b int) int64 {
	if b < 32 {
		return int64(b)
	}
	e := b/32 + 4
	m := b % 32
	return int64((32 + uint64(m)) << (uint(e) - 5))
}

// Add records v.
func (h *Hist) Add(v int64) {
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if h.n == 0 || v > h.max {
		h.max = v
	}
	h.n++
	if v >= 0 {
		h.pos[bucket(uint64(v))]++
	} else {
		h.neg[bucket(uint64(-v))]++
	}
}

// Count is the number of values.
func (h *Hist) Count() int64 { return h.n }

// Quantile returns the q-quantile (0..1), within the bucket resolution,
// clamped to the exact min and max.
func (h *Hist) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	if rank <= 1 {
		return h.min
	}
	if rank >= h.n {
		return h.max
	}
	var seen int64
	for b := len(h.neg) - 1; b >= 0; b-- {
		if seen += h.neg[b]; seen >= rank {
			return max(-bucketValue(b), h.min)
		}
	}
	for b := range h.pos {
		if seen += h.pos[b]; seen >= rank {
			return min(max(bucketValue(b), h.min), h.max)
		}
	}
	return h.max
}

// Row is one line of the side-by-side table.
type Row struct {
	Name           string
	Capture, Model int64
	// Lateness rows hold ns and print as durations.
	Duration bool
	// NA is set when the capture cannot show the figure: babeltrace has no
	// tick_stop event; without an hrtimer expiry the capture gives no
	// offset between its clock and the timers', so no arm distance.
	NA bool
	// NoCapture and NoModel mark a lateness row's side that has no sample
	// (no expiry whose start is in the trace): unknown, not 0.
	NoCapture, NoModel bool
}

// Diff is (model - capture) / capture, or NaN for a zero capture.
func (r Row) Diff() float64 {
	if r.Capture == 0 {
		if r.Model == 0 {
			return 0
		}
		return math.NaN()
	}
	return float64(r.Model-r.Capture) / float64(r.Capture)
}

// Table lines up a capture's and a model's scores: per callback (sorted by
// the capture's starts + expiries, then name) starts, expiries, re-arms,
// cancels, lateness p50 and p99, then the tick's figures.
func Table(capture, model *Score, noTickStop, noFarArms bool) []Row {
	keys := map[string]bool{}
	for k := range capture.Funcs {
		keys[k] = true
	}
	for k := range model.Funcs {
		keys[k] = true
	}
	list := make([]string, 0, len(keys))
	for k := range keys {
		list = append(list, k)
	}
	get := func(s *Score, k string) *FuncScore {
		if f := s.Funcs[k]; f != nil {
			return f
		}
		return &FuncScore{}
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := get(capture, list[i]), get(capture, list[j])
		na, nb := a.Starts+a.Expiries, b.Starts+b.Expiries
		if na != nb {
			return na > nb
		}
		return list[i] < list[j]
	})
	var rows []Row
	for _, k := range list {
		c, m := get(capture, k), get(model, k)
		rows = append(rows,
			Row{Name: k + " starts", Capture: c.Starts, Model: m.Starts},
			Row{Name: k + " expiries", Capture: c.Expiries, Model: m.Expiries},
			Row{Name: k + " re-arms", Capture: c.Rearms, Model: m.Rearms},
			Row{Name: k + " cancels", Capture: c.Cancel, Model: m.Cancel},
			Row{Name: k + " lateness p50", Capture: c.Lateness.Quantile(0.5), Model: m.Lateness.Quantile(0.5), Duration: true,
				NoCapture: c.Lateness.Count() == 0, NoModel: m.Lateness.Count() == 0},
			Row{Name: k + " lateness p99", Capture: c.Lateness.Quantile(0.99), Model: m.Lateness.Quantile(0.99), Duration: true,
				NoCapture: c.Lateness.Count() == 0, NoModel: m.Lateness.Count() == 0},
		)
	}
	rows = append(rows,
		Row{Name: "tick expiries", Capture: capture.Tick.Expiries, Model: model.Tick.Expiries},
		Row{Name: "tick arms > 1 tick ahead", Capture: capture.Tick.FarArms, Model: model.Tick.FarArms, NA: noFarArms},
		Row{Name: "tick stops", Capture: capture.Tick.Stops, Model: model.Tick.Stops, NA: noTickStop},
		Row{Name: "idle ticks kept", Capture: capture.Tick.IdleKept, Model: model.Tick.IdleKept, NA: noFarArms},
		Row{Name: "idle ticks kept (RCU)", Capture: capture.Tick.IdleKeptRCU, Model: model.Tick.IdleKeptRCU, NA: noFarArms},
	)
	return rows
}

// WriteTable prints rows as a text table: name, capture, model, change.
func WriteTable(w io.Writer, rows []Row) error {
	width := len("figure")
	for _, r := range rows {
		width = max(width, len(r.Name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %12s  %12s  %8s\n", width, "figure", "capture", "model", "diff")
	for _, r := range rows {
		cv, mv := fmt.Sprint(r.Capture), fmt.Sprint(r.Model)
		if r.Duration {
			cv, mv = dur(r.Capture), dur(r.Model)
		}
		d := r.Diff()
		ds := fmt.Sprintf("%+.1f%%", 100*d)
		if r.NoCapture {
			cv = "unknown"
		}
		if r.NoModel {
			mv = "unknown"
		}
		switch {
		case r.NA:
			cv, ds = "n/a", ""
		case r.NoCapture || r.NoModel:
			ds = "" // nothing to compare with
		case math.IsNaN(d):
			ds = "new"
		case r.Capture == r.Model:
			ds = "="
		}
		fmt.Fprintf(&b, "%-*s  %12s  %12s  %8s\n", width, r.Name, cv, mv, ds)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// dur prints ns as a duration with 3 significant digits ("12.3us").
func dur(ns int64) string { return Dur(float64(ns)) }

// Dur prints ns as a duration with 3 significant digits ("12.3us"), the
// unit of replay's table and of tickemu check's.
func Dur(ns float64) string {
	a := math.Abs(ns)
	sign := ""
	if ns < 0 {
		sign = "-"
	}
	switch {
	case a < 1e3:
		return fmt.Sprintf("%s%dns", sign, int64(a))
	case a < 1e6:
		return fmt.Sprintf("%s%.3gus", sign, a/1e3)
	case a < 1e9:
		return fmt.Sprintf("%s%.3gms", sign, a/1e6)
	}
	return fmt.Sprintf("%s%.3gs", sign, a/1e9)
}

// merge adds o's values to h.
func (h *Hist) merge(o *Hist) {
	if o.n == 0 {
		return
	}
	if h.n == 0 {
		*h = *o
		return
	}
	h.n += o.n
	h.min, h.max = min(h.min, o.min), max(h.max, o.max)
	for i := range h.pos {
		h.pos[i] += o.pos[i]
		h.neg[i] += o.neg[i]
	}
}

// Resolve renames the callbacks kept as raw addresses (an LTTng capture's,
// and the model's replay of them) to the symbols name gives, as ftrace's
// %ps would have printed them; callbacks that come to share a name (two
// addresses in one function, or the model's own timer of that name) are
// counted together. It returns the addresses left unresolved, sorted.
func (s *Score) Resolve(name func(fn string) (string, bool)) (unresolved []string) {
	funcs := make(map[string]*FuncScore, len(s.Funcs))
	keys := make([]string, 0, len(s.Funcs))
	for k := range s.Funcs {
		keys = append(keys, k)
	}
	sort.Strings(keys) // merge in one order: same bytes every run
	for _, k := range keys {
		f := s.Funcs[k]
		if traceimport.IsAddress(f.Function) {
			if n, ok := name(f.Function); ok {
				f.Function = n
				k = n
				if f.Wheel {
					k = "timer:" + n
				}
			} else {
				unresolved = append(unresolved, f.Function)
			}
		}
		g := funcs[k]
		if g == nil {
			funcs[k] = f
			continue
		}
		g.Starts += f.Starts
		g.Expiries += f.Expiries
		g.Rearms += f.Rearms
		g.Cancel += f.Cancel
		g.Lateness.merge(&f.Lateness)
	}
	s.Funcs = funcs
	sort.Strings(unresolved)
	return slices.Compact(unresolved)
}
