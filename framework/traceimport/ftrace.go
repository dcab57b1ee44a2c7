package traceimport

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tickemu/tickemu/framework/internal/limitio"
)

// FtraceReader reads ftrace text: the tracefs `trace` / `trace_pipe` file
// (kernel/trace/trace_output.c: "comm-pid [cpu] flags timestamp: event:
// fields", with the "#P:N" header) and `trace-cmd report` output (the same
// without the flags column unless -l, an optional "(tgid)", the "cpus=N"
// header, event names padded with spaces, and the trace-cmd plugins'
// formats). Timestamps are seconds with microsecond (default) or nanosecond
// (trace-cmd -t) decimals, or plain integers (counter clocks), read as ns.
type FtraceReader struct {
	sc     *bufio.Scanner
	hdr    Header
	stats  Stats
	ev     Event
	f      fieldSet
	in     interner
	header bool // still in the leading comment block
	extra  bool // decode extraKinds too
	procs  bool // decode processKinds too
}

// DecodeExtra makes the reader decode signal_generate, signal_deliver and
// write_msr events, which it otherwise counts as unknown.
func (r *FtraceReader) DecodeExtra() { r.extra = true }

// DecodeProcesses makes the reader decode sched_process_fork and
// sched_process_exit events, which it otherwise counts as unknown.
func (r *FtraceReader) DecodeProcesses() { r.procs = true }

// NewFtrace returns a reader of ftrace text from r.
func NewFtrace(r io.Reader) *FtraceReader {
	sc := bufio.NewScanner(limitio.Reader(r, MaxTraceBytes, "the trace", ""))
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	return &FtraceReader{sc: sc, hdr: Header{Format: "ftrace"}, header: true}
}

// Header implements Reader.
func (r *FtraceReader) Header() Header { return r.hdr }

// Stats implements Reader.
func (r *FtraceReader) Stats() Stats { return r.stats }

// Next implements Reader.
func (r *FtraceReader) Next() (*Event, error) {
	if err := nextLine(r.sc, &r.stats, r.parseLine); err != nil {
		return nil, err
	}
	return &r.ev, nil
}

// parseLine decodes one line; ok is false for a line that holds no known
// event (header, comment, stack trace, unknown event).
func (r *FtraceReader) parseLine(line string) (ok bool, err error) {
	n := r.stats.Lines
	s := strings.TrimSpace(line)
	switch {
	case s == "":
		return false, nil
	case s[0] == '#':
		// "# entries-in-buffer/entries-written: 40/40   #P:8"
		// or, in a latency tracer's header, "(M:preempt VP:0, ... #P:4)".
		if i := strings.Index(s, "#P:"); i >= 0 && r.hdr.CPUs == 0 {
			d := s[i+3:]
			j := 0
			for j < len(d) && d[j] >= '0' && d[j] <= '9' {
				j++
			}
			if v, err := strconv.Atoi(d[:j]); err == nil && v > 0 && v <= 1<<16 {
				r.hdr.CPUs = v
			}
		}
		return false, nil
	case strings.HasPrefix(s, "=>") || strings.HasPrefix(s, "<stack trace"):
		return false, nil // stack trace lines (options/stacktrace, trace-cmd -T)
	case strings.HasPrefix(s, "cpus="):
		if v, err := strconv.Atoi(s[5:]); err == nil && v > 0 && v <= 1<<16 && r.hdr.CPUs == 0 {
			r.hdr.CPUs = v
		}
		return false, nil
	case strings.HasPrefix(s, "version ="), strings.HasPrefix(s, "version="),
		strings.HasPrefix(s, "CPU "), strings.HasPrefix(s, "CPU:"), strings.HasPrefix(s, "##### CPU"):
		// trace-cmd: "version = 6", "CPU 3 is empty", "CPU:0 [LOST 12 EVENTS]";
		// tracefs: "##### CPU 2 buffer started ####".
		return false, nil
	}
	// comm-pid [cpu]: the first "[digits]".
	e := &r.ev
	*e = Event{Line: n, TGID: -1}
	var rest string
	lb, rb := cpuField(s)
	if lb < 0 {
		// The latency format (options/latency-format, the irqsoff and
		// wakeup tracers): "comm-pid  CPUflags  TIMEus+: ...".
		m := latencyLine.FindStringSubmatch(s)
		if m == nil {
			return false, &ParseError{Line: n, Msg: "not an ftrace event line (no [CPU] field, not the latency format): " + quoteShort(s)}
		}
		e.Comm, e.PID, _ = commPid(m[1] + "-" + m[2])
		e.CPU, _ = strconv.Atoi(m[3])
		us, err := strconv.ParseInt(m[4], 10, 64)
		if err != nil || us > 1<<53/1000 {
			return false, &ParseError{Line: n, Field: "timestamp", Msg: "bad latency-format time " + quoteShort(m[4])}
		}
		e.Time = us * 1000
		if m[5] != "" {
			f, _ := strconv.ParseInt((m[5] + "000")[:3], 10, 64)
			e.Time += f
		}
		rest = m[6]
	} else {
		cpu, _ := strconv.Atoi(s[lb+1 : rb])
		e.CPU = cpu
		e.Comm, e.PID, e.TGID = commPid(strings.TrimSpace(s[:lb]))
		rest = strings.TrimLeft(s[rb+1:], " ")
		// Optional flags ("d.h1."), then the timestamp ending in ':'.
		var tok string
		tok, rest = nextToken(rest)
		ts, tsOK := parseTimestamp(tok)
		if !tsOK {
			e.Context = flagsContext(tok)
			tok, rest = nextToken(rest)
			if ts, tsOK = parseTimestamp(tok); !tsOK {
				return false, &ParseError{Line: n, Field: "timestamp", Msg: "want SECONDS.FRACTION: or NANOSECONDS:, got " + quoteShort(tok)}
			}
		}
		e.Time = ts
	}
	name, fields := nextToken(rest)
	if !strings.HasSuffix(name, ":") {
		// Function tracer ("do_timer <-tick_do_update_jiffies64"), syscall
		// tracer ("sys_nanosleep(...)"), printk-style lines.
		r.stats.skip(otherName(name))
		return false, nil
	}
	name = name[:len(name)-1]
	kind, known := ftraceKinds[name]
	if !known && r.extra {
		kind, known = extraKinds[name]
	}
	if !known && r.procs {
		kind, known = processKinds[name]
	}
	if !known {
		r.stats.skip(otherName(name))
		return false, nil
	}
	e.Kind = kind
	f := &r.f
	f.reset(n)
	splitFields(f, fields)
	if kind == SchedSwitch || kind == SchedWakeup || kind == SchedWaking || kind == SchedWakeupNew {
		schedPlugin(f, kind, fields)
	}
	if kind == WriteMSR {
		msrFields(f, fields)
	}
	decode(e, f, &r.in)
	if kind == IPIEntry || kind == IPIExit {
		e.Name = r.in.get(name)
	}
	if f.err != nil {
		f.err.Msg = name + ": " + f.err.Msg
		return false, f.err
	}
	return true, nil
}

// latencyLine is a latency-format line (kernel/trace/trace_output.c
// lat_print_generic() and lat_print_timestamp()): comm-pid, the CPU number
// glued to the flags ("2dN.3", "1dn.h111"), the time in us (absolute or
// since the trace start, optionally with a fraction), a delay mark, ':'.
var latencyLine = regexp.MustCompile(`^(\S.*?)-(\d+)\s+(\d{1,5})[.dDnNhHsSzZXbB][^\s]*\s+(\d{1,15})(?:\.(\d{1,3}))?us[ +!#*@$]?\s*:\s*(.*)$`)

// cpuField finds the "[NNN]" CPU column: the first bracket holding only
// digits that follows a space (a comm may itself contain brackets).
func cpuField(s string) (lb, rb int) {
	for i := 1; i < len(s); i++ {
		if s[i] != '[' || s[i-1] != ' ' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > i+1 && j < len(s) && s[j] == ']' && j-i <= 8 {
			return i, j
		}
	}
	return -1, -1
}

// commPid splits "comm-pid" (optionally followed by trace-cmd's or the
// record-tgid option's "(tgid)", "(   3937)", or "(-------)" for a task
// whose tgid the tracer did not save) at the last '-'; tgid is -1 when
// absent.
func commPid(s string) (comm string, pid, tgid int) {
	tgid = -1
	if i := strings.LastIndexByte(s, '('); i > 0 && strings.HasSuffix(s, ")") {
		if v, err := strconv.Atoi(strings.TrimSpace(s[i+1 : len(s)-1])); err == nil && v >= 0 {
			tgid = v
		}
		s = strings.TrimSpace(s[:i])
	}
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return s, -1, tgid
	}
	pid, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return s, -1, tgid
	}
	return s[:i], pid, tgid
}

// flagsContext reads the context from a flags column ("d.h2.", "dNs1",
// "...1."): its third character is the hard/soft interrupt mark of
// trace_print_lat_fmt() (kernel/trace/trace_output.c): 'Z' NMI in a hard
// interrupt, 'z' NMI, 'H' hard interrupt in a softirq, 'h' hard interrupt,
// 's' softirq, 'b' bottom halves disabled, '.' none.
func flagsContext(tok string) Context {
	if len(tok) < 4 {
		return ContextUnknown
	}
	switch tok[2] {
	case 'Z', 'z', 'H', 'h', 's':
		return ContextIRQ
	case '.', 'b':
		return ContextTask
	}
	return ContextUnknown
}

func nextToken(s string) (tok, rest string) {
	s = strings.TrimLeft(s, " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// parseTimestamp parses "SSSS.FFFFFF:" (any number of decimals, as many as
// nine kept) or "NNNN:" (ns).
func parseTimestamp(tok string) (int64, bool) {
	if !strings.HasSuffix(tok, ":") || len(tok) < 2 {
		return 0, false
	}
	tok = tok[:len(tok)-1]
	sec, frac, dot := strings.Cut(tok, ".")
	if sec == "" || !digits(sec) || (dot && (frac == "" || !digits(frac))) || len(sec) > 18 {
		return 0, false
	}
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, false
	}
	if !dot {
		return s, true
	}
	if len(sec) > 10 {
		return 0, false
	}
	if len(frac) > 9 {
		frac = frac[:9]
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	for i := len(frac); i < 9; i++ {
		f *= 10
	}
	return s*1e9 + f, true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// otherName is a bounded name for an unknown line's event.
func otherName(s string) string {
	s = strings.TrimSuffix(s, ":")
	if i := strings.IndexAny(s, "(:"); i > 0 {
		s = s[:i]
	}
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		s = "(empty)"
	}
	return s
}

// splitFields splits "key=value key=value ..." as TP_printk strings print
// them: a token without '=' belongs to the previous value (a comm or a
// module suffix with a space), "[timeout=N]" is the field timeout.
func splitFields(f *fieldSet, s string) {
	for {
		var tok string
		tok, s = nextToken(s)
		if tok == "" {
			if s == "" {
				return
			}
			continue
		}
		if len(tok) > 2 && tok[0] == '[' && tok[len(tok)-1] == ']' && strings.IndexByte(tok, '=') > 0 {
			tok = tok[1 : len(tok)-1]
		}
		if i := strings.IndexByte(tok, '='); i > 0 && !strings.HasPrefix(tok, "==") {
			f.add(tok[:i], tok[i+1:])
			continue
		}
		if tok == "==>" || len(f.p) == 0 {
			continue
		}
		last := &f.p[len(f.p)-1]
		last.v += " " + tok
	}
}

// schedPlugin decodes trace-cmd's sched plugin formats when the line has no
// key=value form: "prev:pid [prio] S ==> next:pid [prio]" and
// "comm:pid [prio] success=1 CPU:002".
func schedPlugin(f *fieldSet, kind Kind, s string) {
	if kind == SchedSwitch {
		if _, ok := f.get("prev_pid"); ok {
			return
		}
		prev, next, ok := strings.Cut(s, "==>")
		if !ok {
			return
		}
		pc, pp := commColonPid(prev)
		nc, np := commColonPid(next)
		f.add("prev_comm", pc)
		f.add("prev_pid", pp)
		f.add("next_comm", nc)
		f.add("next_pid", np)
		if fs := strings.Fields(prev); len(fs) > 0 {
			f.add("prev_state", fs[len(fs)-1])
		}
		return
	}
	if _, ok := f.get("pid"); ok {
		return
	}
	c, p := commColonPid(s)
	if p == "" {
		return
	}
	f.add("comm", c)
	f.add("pid", p)
	if i := strings.Index(s, "CPU:"); i >= 0 {
		cpu, _ := nextToken(s[i+4:])
		f.add("target_cpu", cpu)
	}
}

// msrFields reads write_msr's "6e0, value 1283562cf71" (TP_printk("%x,
// value %llx%s"), " #GP" appended when the write faulted) as msr= and
// value=.
func msrFields(f *fieldSet, s string) {
	reg, rest, ok := strings.Cut(strings.TrimSpace(s), ",")
	if !ok {
		return
	}
	f.add("msr", "0x"+reg)
	v, _ := nextToken(strings.TrimPrefix(strings.TrimSpace(rest), "value"))
	f.add("value", "0x"+v)
}

// commColonPid reads "comm:pid [prio]" (comm may hold spaces and colons).
func commColonPid(s string) (comm, pid string) {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, " ["); i >= 0 {
		s = s[:i]
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i+1:]
}
