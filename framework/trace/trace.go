// Package trace writes tickemu's event trace in the text layout of tracefs
// `trace` (kernel/trace/trace_output.c): a header, then one line per event,
//
//	<comm>-<pid> [<cpu>] <flags> <sec>.<usec>: <event>: <fields>
//
// with the kernel's event and field names (include/trace/events/timer.h,
// irq.h, irq_vectors.h, sched.h, signal.h; syscall events as
// kernel/trace/trace_syscalls.c prints them), so the greps people run on real
// traces work on ours. Timestamps are simulated CLOCK_MONOTONIC time. The
// format is documented in docs/trace.md.
//
// Lines come out sorted by timestamp, as the merged per-CPU buffers of a real
// trace do: the simulator computes an interrupt's or a syscall's whole
// timeline when it starts, so it emits events with times a little in the
// future; the writer holds them until the simulation clock (SetClock) has
// passed them.
package trace

import (
	"bufio"
	"container/heap"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk/eras"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace/tracedat"
)

// Writer writes trace lines to an io.Writer, keeping only the enabled events
// inside the window. A nil *Writer is valid and records nothing, so callers
// need no checks.
type Writer struct {
	w       *bufio.Writer
	filters []string // glob patterns on the event name; empty = all
	enabled map[string]bool
	clock   func() ktime.Time
	pending lineHeap
	seq     uint64
	last    ktime.Time // timestamp of the last line written
	lines   int64
	late    int64
	err     error
	buf     []byte

	opt   Options
	bytes int64 // bytes handed to the buffered writer
	// headerBytes is the header's share of bytes (not extrapolated).
	headerBytes int64
	est         bool // the size estimate has been made
	json        *jsonState
	dat         *datState
	pf          *pfState
	ring        []ringLine // ring mode: the held lines, oldest first
	ring0       int        // index of the oldest live entry of ring
}

// Format is a trace's file format.
type Format string

// Formats.
const (
	// FormatText is ftrace text (tracefs `trace`), the default.
	FormatText Format = "text"
	// FormatPerfetto is the Chrome JSON trace-event format, which
	// ui.perfetto.dev and trace_processor load: one track per CPU with
	// irq, softirq, timer-callback and task slices, other events as instants.
	FormatPerfetto Format = "perfetto"
	// FormatDat is trace-cmd's trace.dat (version 6), which trace-cmd
	// report and KernelShark read (dat.go, package tracedat).
	FormatDat Format = "dat"
	// FormatPftrace is Perfetto's native protobuf trace (pftrace.go):
	// ftrace event bundles, timer slices and flows, counters.
	FormatPftrace Format = "pftrace"
)

// FormatFor is the format a trace file's name asks for: trace.dat for
// .dat, Perfetto's JSON for .json, Perfetto's protobuf for .pftrace and
// .perfetto-trace, ftrace text otherwise.
func FormatFor(name string) Format {
	switch path.Ext(name) {
	case ".dat":
		return FormatDat
	case ".json":
		return FormatPerfetto
	case ".pftrace", ".perfetto-trace":
		return FormatPftrace
	}
	return FormatText
}

// Options configure a Writer beyond its event filter.
type Options struct {
	Format Format
	// From and To bound the trace window in simulated time: lines before
	// From or at or after To are dropped. To 0 means no upper bound.
	From, To ktime.Time
	// OnError is called once, with the first write error, as soon as it
	// happens (the caller stops the run).
	OnError func(error)
	// WarnBytes and OnEstimate: after 1% of the window (or as soon as
	// WarnBytes are written), the writer extrapolates the trace's size and calls
	// OnEstimate with it if it exceeds WarnBytes. End is the run's end, for
	// a window without To.
	WarnBytes  int64
	End        ktime.Time
	OnEstimate func(estimate int64, at ktime.Time)
	// Ring, when positive, keeps only the last Ring of simulated time in
	// memory and writes it at Close, as ftrace's ring buffer holds what led
	// up to a cyclictest -b break.
	Ring ktime.Time
	// Release is the kernel release the run models (zero: none named): the
	// event formats a trace.dat declares are that release's (ABIAt).
	Release eras.Release
}

// ringLine is a formatted line held by a ring-mode writer (a trace.dat
// writer holds the line itself: its records are written at Close).
type ringLine struct {
	t ktime.Time
	b []byte
	l line
}

// New returns an ftrace-text writer for out. events is a comma-separated
// list of event names or globs ("hrtimer_*,sched_switch,sys_enter_timer_*");
// empty means every event. cpus is the number of CPUs the header announces.
func New(out io.Writer, events string, cpus int) *Writer {
	return NewWith(out, events, cpus, Options{})
}

// NewWith is New with options: the format, a window and error and size
// callbacks.
func NewWith(out io.Writer, events string, cpus int, o Options) *Writer {
	w := &Writer{w: bufio.NewWriterSize(out, 1<<16), enabled: map[string]bool{}, opt: o}
	for _, f := range strings.Split(events, ",") {
		if f = strings.TrimSpace(f); f != "" {
			w.filters = append(w.filters, f)
		}
	}
	if o.Format == FormatPerfetto {
		w.json = newJSONState(cpus)
		w.emit([]byte(w.json.header()))
		w.headerBytes = w.bytes
		return w
	}
	if o.Format == FormatPftrace {
		w.pf = newPfState(emitWriter{w}, cpus)
		return w
	}
	if o.Format == FormatDat {
		w.dat = newDatState(tracedat.New(w.w, cpus), ABIAt(o.Release))
		return w
	}
	// The header names the tracer that makes the lines: function-tracer
	// lines appear only under current_tracer=function.
	tracer := "nop"
	if w.enabled1("function") {
		tracer = "function"
	}
	w.emit([]byte("# tracer: " + tracer + "\n#\n# tickemu simulated trace   #P:" + strconv.Itoa(cpus) + "\n#\n" +
		"#                                _-----=> irqs-off/BH-disabled\n" +
		"#                               / _----=> need-resched\n" +
		"#                              | / _---=> hardirq/softirq\n" +
		"#                              || / _--=> preempt-depth\n" +
		"#                              ||| / _-=> migrate-disable\n" +
		"#                              |||| /     delay\n" +
		"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n" +
		"#              | |         |   |||||     |         |\n"))
	w.headerBytes = w.bytes
	return w
}

// emit hands bytes to the buffered writer; the first error is kept and
// reported at once (a full disk or a closed pipe stops the run).
func (w *Writer) emit(b []byte) {
	if w.err != nil {
		return
	}
	if w.opt.Ring > 0 && w.headerBytes > 0 {
		w.hold(b)
		return
	}
	w.bytes += int64(len(b))
	if _, err := w.w.Write(b); err != nil {
		w.fail(err)
	}
}

func (w *Writer) fail(err error) {
	if w.err != nil {
		return
	}
	w.err = err
	if w.opt.OnError != nil {
		w.opt.OnError(err)
	}
}

// Err is the first write error, nil while writing works.
func (w *Writer) Err() error {
	if w == nil {
		return nil
	}
	return w.err
}

// Bytes is the number of bytes written so far (before buffering).
func (w *Writer) Bytes() int64 {
	if w == nil {
		return 0
	}
	return w.bytes
}

// hold keeps b (written at w.last) in the ring and drops what is older
// than Ring before it.
func (w *Writer) hold(b []byte) {
	w.ring = append(w.ring, ringLine{t: w.last, b: append([]byte(nil), b...)})
	w.dropOld(w.last)
}

// dropOld drops the held lines older than Ring before now.
func (w *Writer) dropOld(now ktime.Time) {
	for w.ring0 < len(w.ring) && w.ring[w.ring0].t < now-w.opt.Ring {
		w.ring[w.ring0] = ringLine{}
		w.ring0++
	}
	if w.ring0 > len(w.ring)/2 && w.ring0 > 1024 {
		w.ring = append(w.ring[:0], w.ring[w.ring0:]...)
		w.ring0 = 0
	}
}

// flushRing writes the held lines (ring mode) at Close.
func (w *Writer) flushRing() {
	lines := w.ring[w.ring0:]
	w.ring, w.ring0 = nil, 0
	ring := w.opt.Ring
	w.opt.Ring = 0
	for _, l := range lines {
		if w.dat != nil || w.pf != nil {
			w.binary(&l.l)
			continue
		}
		w.emit(l.b)
	}
	w.opt.Ring = ring
}

// estimate extrapolates the trace size once, at 1% of the window or when
// the events alone have reached WarnBytes, whichever comes first.
func (w *Writer) estimate(t ktime.Time) {
	o := &w.opt
	if w.est || o.OnEstimate == nil || o.WarnBytes <= 0 {
		return
	}
	to := o.To
	if to == 0 || to > o.End {
		to = o.End
	}
	span := int64(to - o.From)
	done := int64(t - o.From)
	if span <= 0 || done <= 0 {
		return
	}
	ev := w.bytes - w.headerBytes
	if done < span/100 && ev < o.WarnBytes {
		return
	}
	w.est = true
	est := w.headerBytes + int64(float64(ev)*float64(span)/float64(done))
	if est > o.WarnBytes {
		o.OnEstimate(est, t)
	}
}

// SetClock gives the writer the simulation clock. Every event emitted later
// must have a timestamp at or after the clock's time at emission; lines
// older than the clock are then final and are written in timestamp order.
// Without a clock lines are written as they come.
func (w *Writer) SetClock(now func() ktime.Time) {
	if w != nil {
		w.clock = now
	}
}

// Enabled reports whether event name is recorded; callers use it to skip
// formatting work for disabled events. Without a writer it inlines to a nil
// test (the engine asks on its hot path whether or not it traces).
func (w *Writer) Enabled(name string) bool { return w != nil && w.enabled1(name) }

func (w *Writer) enabled1(name string) bool {
	if w.outside() {
		return false
	}
	if len(w.filters) == 0 {
		return true
	}
	on, ok := w.enabled[name]
	if !ok {
		for _, f := range w.filters {
			if m, _ := path.Match(f, name); m {
				on = true
				break
			}
		}
		w.enabled[name] = on
	}
	return on
}

// windowLookahead is how far ahead of the clock the engine may emit an event
// (an activity's timeline is computed when it starts; the longest, a wheel
// catch-up of 300000 jiffies, takes about a millisecond): before the window
// by more than that, nothing emitted can fall inside it.
const windowLookahead = 100 * ktime.Millisecond

// outside reports whether nothing emitted now can fall inside the window,
// so callers skip formatting events (a narrow window on a long run costs
// little more than no trace).
func (w *Writer) outside() bool {
	if w.clock == nil || w.opt.From == 0 && w.opt.To == 0 {
		return false
	}
	now := w.clock()
	return w.opt.To > 0 && now >= w.opt.To || now+ktime.Time(windowLookahead) < w.opt.From
}

// Ctx is where an event happened: the task running (comm, pid; "<idle>"-0 for
// idle) on a CPU, and the irq state flags as ftrace prints them.
type Ctx struct {
	Comm  string
	Pid   int
	CPU   int
	Flags string // five characters, e.g. "d.h1." (irqs off, hardirq); "....." in task context
}

// Flags builds the five-character flags column (trace_print_lat_fmt()):
// irqs-off 'd', need-resched (always '.'), 'h' hardirq / 's' softirq / 'H'
// hardirq inside softirq, the preempt depth as a hex digit ('.' for 0), and
// migrate-disable (always '.').
func Flags(irqsOff, hardirq, softirq bool, depth int) string {
	b := [5]byte{'.', '.', '.', '.', '.'}
	if irqsOff {
		b[0] = 'd'
	}
	switch {
	case hardirq && softirq:
		b[2] = 'H'
	case hardirq:
		b[2] = 'h'
	case softirq:
		b[2] = 's'
	}
	if depth > 0 {
		b[3] = "0123456789abcdef"[min(depth, 15)]
	}
	return string(b[:])
}

// Event writes one "name: fields" event at t.
func (w *Writer) Event(t ktime.Time, c Ctx, name, fields string) {
	if !w.Enabled(name) {
		return
	}
	w.add(t, c, name, name+": "+fields)
}

// Raw writes a line whose function column is text as is (syscall events print
// "sys_nanosleep(rqtp: ..., rmtp: ...)" with no "name:" prefix, function
// tracer lines "callee <-caller"). name is used for filtering.
func (w *Writer) Raw(t ktime.Time, c Ctx, name, text string) {
	if !w.Enabled(name) {
		return
	}
	w.add(t, c, name, text)
}

// Mark writes a trace_marker line, "tracing_mark_write: MSG" (the ftrace
// print event), whatever the event filter, as a write to trace_marker is
// recorded whichever events are enabled.
func (w *Writer) Mark(t ktime.Time, c Ctx, msg string) {
	if w == nil || w.outside() {
		return
	}
	w.add(t, c, "tracing_mark_write", "tracing_mark_write: "+msg)
}

func (w *Writer) add(t ktime.Time, c Ctx, name, text string) {
	w.addLine(line{t: t, ctx: c, name: name, text: text})
}

// Counting reports whether counter samples (Count) are recorded now: only
// the Perfetto formats have counter tracks, and only inside the window.
// Callers test it before counting, so a run without such a trace pays a
// nil test.
func (w *Writer) Counting() bool {
	return w != nil && (w.json != nil || w.pf != nil) && !w.outside()
}

// Count records a sample of a per-CPU counter at t: the value of track
// (CounterDeviceWrites) on cpu. The text and trace.dat formats drop it:
// the kernel has no tracepoint for what it counts.
func (w *Writer) Count(t ktime.Time, cpu int, track string, value int64) {
	if !w.Counting() {
		return
	}
	w.addLine(line{t: t, ctx: Ctx{CPU: cpu}, name: track, count: true, value: value})
}

// CounterDeviceWrites is the counter track of a CPU's clockevent device
// writes (the run's dev-writes column), sampled at each write.
const CounterDeviceWrites = "device writes"

func (w *Writer) addLine(l line) {
	if w.err != nil {
		return
	}
	if w.clock == nil {
		w.write(&l)
		return
	}
	w.flushBefore(w.clock())
	w.seq++
	l.seq = w.seq
	heap.Push(&w.pending, l)
}

// flushBefore writes the pending lines older than now, in (time, emission) order.
func (w *Writer) flushBefore(now ktime.Time) {
	for len(w.pending) > 0 && w.pending[0].t < now {
		l := heap.Pop(&w.pending).(line)
		w.write(&l)
	}
}

// write formats one line: "%16s-%-7d [%03d] %s %5d.%06d: %s" (or its
// trace-event JSON, or a binary record), inside the window only.
func (w *Writer) write(l *line) {
	t, c, name, text := l.t, l.ctx, l.name, l.text
	if t < w.last {
		// An event older than one already written: the emitter broke the
		// SetClock contract. Keep the output monotonic and count it.
		w.late++
		t = w.last
	}
	w.last = t
	if t < w.opt.From || w.opt.To > 0 && t >= w.opt.To {
		return
	}
	w.estimate(t)
	if l.count && w.dat == nil && w.pf == nil && w.json == nil {
		return // no counters in ftrace text
	}
	if w.dat != nil || w.pf != nil {
		if !l.count {
			w.lines++
		}
		if w.opt.Ring > 0 {
			r := *l
			r.t = t
			w.ring = append(w.ring, ringLine{t: t, l: r})
			w.dropOld(t)
			return
		}
		r := *l
		r.t = t
		w.binary(&r)
		return
	}
	if w.json != nil {
		if l.count {
			w.buf = w.json.counter(w.buf[:0], t, c.CPU, name, l.value)
		} else {
			w.buf = w.json.event(w.buf[:0], t, c, name, text)
			w.lines++
		}
		if len(w.buf) > 0 {
			w.emit(w.buf)
		}
		return
	}
	comm := c.Comm
	if len(comm) > 16 {
		comm = comm[:16]
	}
	b := w.buf[:0]
	b = pad(b, 16-len(comm))
	b = append(b, comm...)
	b = append(b, '-')
	n := len(b)
	b = strconv.AppendInt(b, int64(c.Pid), 10)
	b = pad(b, 7-(len(b)-n))
	b = append(b, " ["...)
	if c.CPU < 100 {
		b = append(b, '0')
	}
	if c.CPU < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(c.CPU), 10)
	b = append(b, "] "...)
	b = append(b, c.Flags...)
	b = append(b, ' ')
	ns := int64(t)
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], ns/ktime.Second, 10)
	b = pad(b, 5-len(d))
	b = append(b, d...)
	b = append(b, '.')
	d = strconv.AppendInt(tmp[:0], (ns%ktime.Second)/ktime.Microsecond, 10)
	b = append(b, "000000"[:6-len(d)]...)
	b = append(b, d...)
	b = append(b, ": "...)
	b = append(b, text...)
	b = append(b, '\n')
	w.buf = b
	w.emit(b)
	w.lines++
}

// emitWriter hands a binary format's bytes to the writer's buffer.
type emitWriter struct{ w *Writer }

func (e emitWriter) Write(b []byte) (int, error) {
	e.w.emit(b)
	return len(b), e.w.err
}

// binary writes one trace.dat record (or Perfetto protobuf event or
// counter sample; trace.dat has no counters).
func (w *Writer) binary(l *line) {
	if w.err != nil {
		return
	}
	if w.pf != nil {
		var err error
		if l.count {
			err = w.pf.counter(l.t, l.ctx.CPU, l.name, l.value)
		} else {
			err = w.pf.event(l.t, l.ctx, l.name, l.text)
		}
		if err != nil {
			w.fail(err)
		}
		return
	}
	if l.count {
		return
	}
	before := w.dat.w.Bytes()
	if err := w.dat.event(l.t, l.ctx, l.name, l.text); err != nil {
		w.fail(err)
	}
	w.bytes += w.dat.w.Bytes() - before
}

func pad(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

// Lines is the number of lines written so far.
func (w *Writer) Lines() int64 {
	if w == nil {
		return 0
	}
	return w.lines
}

// Late is the number of lines that arrived after a later line had been
// written (a broken SetClock contract); they were written with the later
// time. Tests expect 0.
func (w *Writer) Late() int64 {
	if w == nil {
		return 0
	}
	return w.late
}

// Close writes the held lines, flushes the writer and returns the first
// write error.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.flushBefore(ktime.Max)
	for len(w.pending) > 0 { // lines at ktime.Max itself
		l := heap.Pop(&w.pending).(line)
		w.write(&l)
	}
	if w.json != nil && w.err == nil {
		w.buf = w.json.close(w.buf[:0], w.last)
		w.emit(w.buf)
	}
	if w.opt.Ring > 0 {
		w.flushRing()
	}
	if w.pf != nil && w.err == nil {
		if err := w.pf.close(); err != nil {
			w.fail(err)
		}
	}
	if w.dat != nil && w.err == nil {
		if err := w.dat.close(); err != nil {
			w.fail(err)
		}
	}
	if w.err == nil {
		if err := w.w.Flush(); err != nil {
			w.fail(err)
		}
	}
	return w.err
}

// Ptr formats an object id as ftrace prints a hashed %p: 16 hex digits. The
// value is a fixed mix of the id, so traces are reproducible and ids distinct.
func Ptr(id uint64) string {
	x := id*0x9E3779B97F4A7C15 + 0x5851F42D4C957F2D
	x ^= x >> 29
	var b [16]byte
	const digits = "0123456789abcdef"
	v := x & 0xffffffff
	for i := 15; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[:])
}

// line is a held trace line, or a counter sample (count: track name,
// value on ctx.CPU).
type line struct {
	t     ktime.Time
	seq   uint64
	ctx   Ctx
	name  string
	text  string
	value int64
	count bool
}

// lineHeap orders held lines by (time, emission sequence).
type lineHeap []line

func (h lineHeap) Len() int { return len(h) }
func (h lineHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h lineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *lineHeap) Push(x any)   { *h = append(*h, x.(line)) }
func (h *lineHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	old[n-1] = line{}
	*h = old[:n-1]
	return x
}
