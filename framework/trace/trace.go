// Package trace writes tickemu's event trace in the text layout of tracefs
// `trace` (kernel/trace/trace_output.c): one line per event,
//
//	<comm>-<pid> [<cpu>] <flags> <sec>.<usec>: <event>: <fields>
//
// with the kernel's event and field names (include/trace/events/timer.h, irq.h,
// sched.h, signal.h), so the greps people run on real traces work on ours.
// Timestamps are simulated CLOCK_MONOTONIC time.
package trace

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/tickemu/tickemu/framework/ktime"
)

// Writer writes trace lines to an io.Writer, keeping only the enabled events.
// A nil *Writer is valid and records nothing, so callers need no checks.
type Writer struct {
	w       *bufio.Writer
	filters []string // glob patterns on the event name; empty = all
	enabled map[string]bool
	lines   int64
	err     error
}

// New returns a writer for out. events is a comma-separated list of event names
// or globs ("hrtimer_*,sched_switch"); empty means every event.
func New(out io.Writer, events string, cpus int) *Writer {
	w := &Writer{w: bufio.NewWriterSize(out, 1<<16), enabled: map[string]bool{}}
	for _, f := range strings.Split(events, ",") {
		if f = strings.TrimSpace(f); f != "" {
			w.filters = append(w.filters, f)
		}
	}
	fmt.Fprintf(w.w, "# tracer: nop\n#\n# entries-in-buffer/entries-written: see end   #P:%d\n#\n", cpus)
	w.w.WriteString("#                                _-----=> irqs-off/BH-disabled\n" +
		"#                               / _----=> need-resched\n" +
		"#                              | / _---=> hardirq/softirq\n" +
		"#                              || / _--=> preempt-depth\n" +
		"#                              ||| / _-=> migrate-disable\n" +
		"#                              |||| /     delay\n" +
		"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n" +
		"#              | |         |   |||||     |         |\n")
	return w
}

// Enabled reports whether event name is recorded; callers use it to skip
// formatting work for disabled events.
func (w *Writer) Enabled(name string) bool {
	if w == nil {
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

// Ctx is where an event happened: the task running (comm, pid; "<idle>"-0 for
// idle) on a CPU, and the irq state flags as ftrace prints them.
type Ctx struct {
	Comm  string
	Pid   int
	CPU   int
	Flags string // five characters, e.g. "d.h1." (irqs off, hardirq); "....." in task context
}

// Event writes one "name: fields" event at t.
func (w *Writer) Event(t ktime.Time, c Ctx, name, fields string) {
	if !w.Enabled(name) {
		return
	}
	w.line(t, c, name+": "+fields)
}

// Raw writes a line whose function column is text as is (syscall events print
// "sys_nanosleep(rqtp: ..., rmtp: ...)" with no "name:" prefix). name is used
// for filtering.
func (w *Writer) Raw(t ktime.Time, c Ctx, name, text string) {
	if !w.Enabled(name) {
		return
	}
	w.line(t, c, text)
}

func (w *Writer) line(t ktime.Time, c Ctx, text string) {
	if w.err != nil {
		return
	}
	ns := int64(t)
	comm := c.Comm
	if len(comm) > 16 {
		comm = comm[:16]
	}
	_, w.err = fmt.Fprintf(w.w, "%16s-%-7d [%03d] %s %5d.%06d: %s\n", comm, c.Pid, c.CPU, c.Flags,
		ns/ktime.Second, (ns%ktime.Second)/ktime.Microsecond, text)
	w.lines++
}

// Lines is the number of lines written.
func (w *Writer) Lines() int64 {
	if w == nil {
		return 0
	}
	return w.lines
}

// Close flushes the writer and returns the first write error.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// Ptr formats an object id as ftrace prints a hashed %p: 16 hex digits. The
// value is a fixed mix of the id, so traces are reproducible and ids distinct.
func Ptr(id uint64) string {
	x := id*0x9E3779B97F4A7C15 + 0x5851F42D4C957F2D
	x ^= x >> 29
	return fmt.Sprintf("%016x", x&0xffffffff)
}
