package traceimport

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tickemu/tickemu/framework/internal/limitio"
)

// BabeltraceReader reads the text output of babeltrace and babeltrace2 on an
// LTTng kernel trace:
//
//	[13:14:15.123456789] (+0.000001234) host timer_hrtimer_start: { cpu_id = 1 }, { hrtimer = 0xFFFF..., function = 0xFFFFFFFF810C0A10, expires = 1000, softexpires = 1000, mode = ( "HRTIMER_MODE_ABS" : container = 0 ) }
//
// The timestamp is the time of day (wrapping at midnight), with
// --clock-date a date and time, with --clock-seconds seconds, with
// --clock-cycles the kernel clock's cycles (1 GHz: ns); the delta, the host
// name and --fields all's trace path may be missing or there; --names all
// prints "timestamp = ..., name = ..., scope = { ... }" instead. The brace
// groups are the packet context (cpu_id), optional contexts (pid, tid,
// procname) and the payload, merged. LTTng's event names (lttng-modules
// include/instrumentation/events/timer.h, irq.h, sched.h, power.h) map onto
// ftrace's: timer_hrtimer_start is hrtimer_start, irq_softirq_entry
// softirq_entry, power_cpu_idle cpu_idle (lttng-modules before 2.7 used the
// kernel's names). Callbacks are raw addresses (function =
// 0xFFFFFFFF810C0A10, or in decimal before lttng-modules 2.8), kept as
// "0xffffffff810c0a10".
type BabeltraceReader struct {
	sc    *bufio.Scanner
	hdr   Header
	stats Stats
	ev    Event
	f     fieldSet
	in    interner
	// day is added to time-of-day stamps after they wrap at midnight.
	day, lastTOD int64
	// babeltrace 1.x prints strings raw, so a string holding a newline (a
	// console event's msg = "...\n") runs on to the next line. held is a
	// known event's line waiting for the rest of its string (heldLine its
	// number); skipping is set while an unknown event's string runs on.
	held     strings.Builder
	heldLine int64
	skipping bool
}

// lttngKinds maps LTTng kernel event names (without a "kernel:" prefix) to kinds.
var lttngKinds = map[string]Kind{
	"timer_hrtimer_init": HRInit, "timer_hrtimer_start": HRStart, "timer_hrtimer_cancel": HRCancel,
	"timer_hrtimer_expire_entry": HRExpireEntry, "timer_hrtimer_expire_exit": HRExpireExit,
	"timer_init": TimerInit, "timer_start": TimerStart, "timer_cancel": TimerCancel,
	"timer_expire_entry": TimerExpireEntry, "timer_expire_exit": TimerExpireExit,
	"irq_handler_entry": IRQEntry, "irq_handler_exit": IRQExit, "irq_softirq_raise": SoftirqRaise,
	"irq_softirq_entry": SoftirqEntry, "irq_softirq_exit": SoftirqExit,
	"x86_irq_vectors_local_timer_entry": LocalTimerEntry, "x86_irq_vectors_local_timer_exit": LocalTimerExit,
	"sched_wakeup": SchedWakeup, "sched_switch": SchedSwitch, "power_cpu_idle": CPUIdle,
	"sched_waking": SchedWaking, "sched_wakeup_new": SchedWakeupNew, "sched_migrate_task": SchedMigrateTask,
	"x86_irq_vectors_irq_work_entry": IRQWorkEntry, "x86_irq_vectors_irq_work_exit": IRQWorkExit,
	// lttng-modules before 2.7 kept the kernel's names (its commit 9bbf98da
	// "Namespace all tracepoints" added the timer_ and irq_ prefixes).
	"hrtimer_init": HRInit, "hrtimer_start": HRStart, "hrtimer_cancel": HRCancel,
	"hrtimer_expire_entry": HRExpireEntry, "hrtimer_expire_exit": HRExpireExit,
	"softirq_raise": SoftirqRaise, "softirq_entry": SoftirqEntry, "softirq_exit": SoftirqExit,
}

// lttngPrios hides LTTng's priorities from decode: lttng-modules records
// p->prio in some events and versions and p->prio - MAX_RT_PRIO in others
// (2.5's sched_wakeup prio = 120 beside its sched_switch prev_prio = 20), so
// a value cannot be read as the kernel's without knowing which; the
// priorities of a babeltrace capture are unknown (-1).
func lttngPrios(f *fieldSet) {
	for i := range f.p {
		switch f.p[i].k {
		case "prio", "prev_prio", "next_prio":
			f.p[i].k = "lttng_" + f.p[i].k
		}
	}
}

// NewBabeltrace returns a reader of babeltrace text from r.
func NewBabeltrace(r io.Reader) *BabeltraceReader {
	sc := bufio.NewScanner(limitio.Reader(r, MaxTraceBytes, "the trace", ""))
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	return &BabeltraceReader{sc: sc, hdr: Header{Format: "babeltrace"}}
}

// Header implements Reader. Babeltrace output states no CPU count.
func (r *BabeltraceReader) Header() Header { return r.hdr }

// Stats implements Reader.
func (r *BabeltraceReader) Stats() Stats { return r.stats }

// Next implements Reader.
func (r *BabeltraceReader) Next() (*Event, error) {
	if err := nextLine(r.sc, &r.stats, r.parseLine); err != nil {
		if err == io.EOF && r.held.Len() > 0 {
			r.held.Reset()
			return nil, &ParseError{Line: r.heldLine, Msg: "unterminated string at the end of the capture"}
		}
		return nil, err
	}
	return &r.ev, nil
}

func (r *BabeltraceReader) parseLine(line string) (bool, error) {
	n := r.stats.Lines
	s := strings.TrimSpace(line)
	starts := strings.HasPrefix(s, "[") || strings.HasPrefix(s, "timestamp = ")
	switch {
	case r.held.Len() > 0:
		if starts {
			r.held.Reset()
			return false, &ParseError{Line: r.heldLine, Msg: "unterminated string (the next line is a new event)"}
		}
		if r.held.Len()+len(line) > MaxLine {
			r.held.Reset()
			return false, &ParseError{Line: r.heldLine, Msg: "unterminated string running past 1 MiB"}
		}
		r.held.WriteByte('\n')
		r.held.WriteString(line)
		if !oddQuotes(line) {
			return false, nil
		}
		n, s = r.heldLine, strings.TrimSpace(r.held.String())
		r.held.Reset()
		return r.parseEvent(n, s, false)
	case r.skipping:
		if !starts {
			if oddQuotes(line) {
				r.skipping = false
			}
			return false, nil
		}
		r.skipping = false
	}
	if s == "" || s[0] == '#' {
		return false, nil
	}
	return r.parseEvent(n, s, true)
}

// runsOn starts joining line n (s, event name) with the lines that finish
// its string: a known event's is held, an unknown one's skipped.
func (r *BabeltraceReader) runsOn(n int64, s, name string) bool {
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	if _, known := lttngKinds[name]; !known {
		r.stats.skip(otherName(name))
		r.skipping = true
		return false
	}
	r.held.WriteString(s)
	r.heldLine = n
	return false
}

// oddQuotes reports whether s holds an odd number of unescaped '"': a
// string opened and not closed on this line, or closed from an earlier one.
func oddQuotes(s string) bool {
	odd := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			odd = !odd
		}
	}
	return odd
}

// parseEvent decodes the event line s (line n); whole is false for lines
// joined after a string ran on, which cannot run on again.
func (r *BabeltraceReader) parseEvent(n int64, s string, whole bool) (bool, error) {
	var stamp, name, groups string
	switch {
	case s[0] == '[':
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return false, &ParseError{Line: n, Field: "timestamp", Msg: "unterminated [timestamp]"}
		}
		stamp = s[1:end]
		rest := strings.TrimLeft(s[end+1:], " ")
		if strings.HasPrefix(rest, "(") { // the delta "(+0.000001234)" or "(+?.?????????)"
			if i := strings.IndexByte(rest, ')'); i >= 0 {
				rest = strings.TrimLeft(rest[i+1:], " ")
			}
		}
		// [trace path] [host[:domain]] name: { ... }, { ... }
		brace := strings.Index(rest, ": ")
		if brace < 0 {
			if !strings.HasSuffix(rest, ":") { // an event with no fields at all ends in ':'
				return false, &ParseError{Line: n, Msg: "no \"name: { fields }\" after the timestamp: " + quoteShort(rest)}
			}
			brace = len(rest) - 1
		}
		name = rest[:brace]
		if i := strings.LastIndexByte(name, ' '); i >= 0 {
			name = name[i+1:]
		}
		groups = rest[brace+1:]
	case strings.HasPrefix(s, "timestamp = "): // --names all / header
		if whole && oddQuotes(s) { // a string runs on: hold or skip before splitting
			name, _, _ = strings.Cut(s[strings.Index(s, ", name = ")+len(", name = "):], ",")
			return r.runsOn(n, s, name), nil
		}
		var msg string
		if stamp, name, groups, msg = splitNamed(s); msg != "" {
			return false, &ParseError{Line: n, Msg: msg}
		}
	default:
		return false, &ParseError{Line: n, Msg: "not a babeltrace event line (no [timestamp] or \"timestamp = \"): " + quoteShort(s)}
	}
	ts, ok := r.timestamp(stamp)
	if !ok {
		return false, &ParseError{Line: n, Field: "timestamp", Msg: "want [HH:MM:SS.NNNNNNNNN], [YYYY-MM-DD HH:MM:SS.N], [SECONDS.N] or [CYCLES], got " + quoteShort(stamp)}
	}
	if i := strings.LastIndexByte(name, ':'); i >= 0 { // "host:kernel", "kernel:sched_switch"
		name = name[i+1:]
	}
	if whole && oddQuotes(groups) { // a string runs on to the next line
		return r.runsOn(n, s, name), nil
	}
	kind, known := lttngKinds[name]
	if !known {
		r.stats.skip(otherName(name))
		return false, nil
	}
	e := &r.ev
	*e = Event{Line: n, Kind: kind, Time: ts, CPU: -1, PID: -1, TGID: -1}
	f := &r.f
	f.reset(n)
	if msg := splitBraces(f, groups); msg != "" {
		return false, &ParseError{Line: n, Msg: name + ": " + msg}
	}
	if v, ok := f.get("cpu_id"); ok {
		if c, err := strconv.Atoi(v); err == nil && c >= 0 && c < 1<<20 {
			e.CPU = c
		}
	}
	if e.CPU < 0 {
		return false, &ParseError{Line: n, Field: "cpu_id", Msg: name + ": missing (babeltrace prints it in the packet context)"}
	}
	if v, ok := f.get("tid"); ok {
		e.PID, _ = strconv.Atoi(v)
	}
	e.Comm = f.optStr("procname")
	lttngRename(f, kind)
	lttngPrios(f)
	decode(e, f, &r.in)
	if f.err != nil {
		f.err.Msg = name + ": " + f.err.Msg
		return false, f.err
	}
	if kind == HRStart || kind == HRExpireEntry || kind == TimerStart || kind == TimerExpireEntry {
		e.Function = r.in.get(strings.ToLower(e.Function))
	}
	return true, nil
}

// splitNamed splits a line of `babeltrace --names all` (or header),
//
//	timestamp = 08:36:01.212746739, delta = +0.000001200, trace:hostname = lager, name = hrtimer_start, stream.packet.context = { cpu_id = 3 }, event.fields = { hrtimer = 3253925872, ... }
//
// into its timestamp, event name and the brace groups; --fields all adds
// "trace = PATH, , trace:domain = kernel" items, which are skipped.
func splitNamed(s string) (stamp, name, groups string, msg string) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if c := s[i]; c == ' ' || c == ',' {
			i++
			continue
		}
		key := ""
		if s[i] != '{' {
			eq := strings.IndexAny(s[i:], "=,")
			if eq < 0 || s[i+eq] != '=' {
				return "", "", "", "item without \"=\" in a --names line: " + quoteShort(s[i:])
			}
			key = strings.TrimSpace(s[i : i+eq])
			i += eq + 1
			for i < len(s) && s[i] == ' ' {
				i++
			}
			if i >= len(s) {
				break
			}
		}
		j, m := valueEnd(s, i)
		if m != "" {
			return "", "", "", key + ": " + m
		}
		v := strings.TrimSpace(s[i:j])
		switch {
		case key == "timestamp":
			stamp = v
		case key == "name":
			name = v
		case strings.HasPrefix(v, "{"):
			b.WriteString(v)
			b.WriteString(", ")
		}
		i = j
	}
	if stamp == "" || name == "" {
		return "", "", "", "a --names line without timestamp = or name ="
	}
	return stamp, name, b.String(), ""
}

// lttngRename maps LTTng payload fields onto the ftrace names decode reads.
func lttngRename(f *fieldSet, kind Kind) {
	for i := range f.p {
		p := &f.p[i]
		switch p.k {
		case "hrtimer", "timer", "function":
			// lttng-modules declared addresses as plain integers before 2.8
			// (its fa91fcac "format address fields as hexadecimal"), so
			// babeltrace prints them in decimal: keep one spelling.
			if kind != SchedWakeup && kind != SchedSwitch && digits(p.v) && p.v != "" {
				if u, err := strconv.ParseUint(p.v, 10, 64); err == nil {
					p.v = "0x" + strconv.FormatUint(u, 16)
				}
			}
		}
		switch kind {
		case HRStart, HRInit:
			if p.k == "mode" {
				p.v = lttngMode(p.v)
			}
			if p.k == "clockid" {
				p.v = clockName(p.v)
			}
		case TimerStart:
			if p.k == "flags" { // the raw timer->flags (u32)
				if v, ok := parseInt(p.v); ok {
					p.v = "0x" + strconv.FormatUint(uint64(v), 16)
				}
			}
		case SchedSwitch:
			if p.k == "prev_state" {
				p.v = lttngState(p.v)
			}
		}
	}
	if kind == TimerStart {
		// lttng's timer->flags keeps the cpu in its low bits (TIMER_CPUMASK).
		if v, ok := f.get("flags"); ok {
			if u, ok := parseInt(v); ok {
				f.add("cpu", strconv.FormatInt(u&0x3ffff, 10))
				f.p[indexOf(f, "flags")].v = decodeModernFlags(uint64(u))
			}
		}
	}
}

func indexOf(f *fieldSet, k string) int {
	for i := range f.p {
		if f.p[i].k == k {
			return i
		}
	}
	return -1
}

// decodeModernFlags decodes timer->flags of 4.10+ (include/linux/timer.h:
// TIMER_MIGRATING 0x00040000, TIMER_DEFERRABLE 0x00080000, TIMER_PINNED
// 0x00100000, TIMER_IRQSAFE 0x00200000) into timer_start's decoded text.
func decodeModernFlags(v uint64) string {
	var out []string
	if v&0x00080000 != 0 {
		out = append(out, "D")
	}
	if v&0x00100000 != 0 {
		out = append(out, "P")
	}
	if v&0x00200000 != 0 {
		out = append(out, "I")
	}
	return strings.Join(out, "|")
}

// lttngMode turns the hrtimer_mode enum as babeltrace prints it,
// `( "HRTIMER_MODE_ABS_PINNED" : container = 2 )`, or a bare number, into
// ftrace's text ("ABS|PINNED").
func lttngMode(v string) string {
	if i := strings.IndexByte(v, '"'); i >= 0 {
		if j := strings.IndexByte(v[i+1:], '"'); j >= 0 {
			name := strings.TrimPrefix(v[i+1:i+1+j], "HRTIMER_MODE_")
			return strings.ReplaceAll(name, "_", "|")
		}
	}
	if n, ok := parseInt(strings.Trim(v, "() ")); ok {
		// enum hrtimer_mode bits: ABS 0, REL 1, PINNED 2, SOFT 4, HARD 8.
		s := "ABS"
		if n&1 != 0 {
			s = "REL"
		}
		if n&2 != 0 {
			s += "|PINNED"
		}
		if n&4 != 0 {
			s += "|SOFT"
		}
		if n&8 != 0 {
			s += "|HARD"
		}
		return s
	}
	return v
}

func clockName(v string) string {
	switch strings.TrimSpace(v) {
	case "0":
		return "CLOCK_REALTIME"
	case "1":
		return "CLOCK_MONOTONIC"
	case "7":
		return "CLOCK_BOOTTIME"
	case "11":
		return "CLOCK_TAI"
	}
	return v
}

// lttngState maps prev_state (a number, or babeltrace2's enum form) to
// ftrace's letter: 0 R, 1 S, 2 D.
func lttngState(v string) string {
	if i := strings.IndexByte(v, '"'); i >= 0 {
		if j := strings.IndexByte(v[i+1:], '"'); j >= 0 {
			v = v[i+1 : i+1+j]
			switch v {
			case "TASK_RUNNING":
				return "R"
			case "TASK_INTERRUPTIBLE":
				return "S"
			case "TASK_UNINTERRUPTIBLE":
				return "D"
			}
			return v
		}
	}
	switch strings.TrimSpace(v) {
	case "0":
		return "R"
	case "1":
		return "S"
	case "2":
		return "D"
	}
	return v
}

// timestamp parses babeltrace's [HH:MM:SS.N], [YYYY-MM-DD HH:MM:SS.N] or
// [SECONDS.N] into ns; time-of-day stamps that go back by more than 12
// hours have crossed midnight.
func (r *BabeltraceReader) timestamp(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, ":") {
		// --clock-seconds "1412670961.212746739", or --clock-cycles
		// "00000007633690030289": the cycles of LTTng's kernel clock, whose
		// frequency is 1 GHz (CLOCK_MONOTONIC in ns).
		if !strings.Contains(s, ".") && len(s) > 1 {
			s = strings.TrimLeft(s, "0")
			if s == "" {
				s = "0"
			}
		}
		return parseTimestamp(s + ":")
	}
	var dayBase int64
	if d, t, ok := strings.Cut(s, " "); ok {
		dt, err := time.Parse("2006-01-02", d)
		if err != nil {
			return 0, false
		}
		dayBase = dt.Unix() * 1e9
		s = t
	}
	hms, frac, _ := strings.Cut(s, ".")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 {
		return 0, false
	}
	var tod int64
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || (i > 0 && v > 60) || len(p) > 2 {
			return 0, false
		}
		tod = tod*60 + int64(v)
	}
	ns, ok := parseTimestamp("0." + frac + ":")
	if frac == "" {
		ns, ok = 0, true
	}
	if !ok {
		return 0, false
	}
	tod = tod*1e9 + ns
	if dayBase != 0 {
		return dayBase + tod, true
	}
	if tod+12*3600*1e9 < r.lastTOD {
		r.day += 24 * 3600 * 1e9
	}
	r.lastTOD = tod
	return r.day + tod, true
}

// splitBraces reads "{ k = v, k = v }, { ... }" into f, flattening nested
// groups into their members; it returns a message for malformed text.
func splitBraces(f *fieldSet, s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == ',' || c == '{' || c == '}':
			i++
			continue
		}
		// key = value
		eq := strings.IndexAny(s[i:], "=,}")
		if eq < 0 || s[i+eq] != '=' {
			return "field without a name: " + quoteShort(s[i:]) + " (babeltrace --names none, scope or header leave names out; give the default output or --names all)"
		}
		// The CTF metadata of LTTng names the fields "_hrtimer", "_expires";
		// babeltrace prints them without the underscore, older readers with.
		key := strings.TrimPrefix(strings.TrimSpace(s[i:i+eq]), "_")
		if key == "" || strings.ContainsAny(key, "{}\"") {
			return "bad field name " + quoteShort(key)
		}
		i += eq + 1
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return "field " + strconv.Quote(key) + " has no value"
		}
		j, msg := valueEnd(s, i)
		if msg != "" {
			return "field " + strconv.Quote(key) + ": " + msg
		}
		v := strings.TrimSpace(s[i:j])
		if len(v) >= 2 && v[0] == '"' {
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			} else {
				v = v[1 : len(v)-1]
			}
		}
		if len(v) > 0 && v[0] == '{' { // a nested struct: flatten it
			if m := splitBraces(f, v[1:len(v)-1]); m != "" {
				return m
			}
		} else {
			f.add(key, v)
		}
		i = j
	}
	return ""
}

// valueEnd returns the end of the value starting at s[i]: a quoted string,
// a balanced (), {} or [] group, or a bare token up to ',' or '}'.
func valueEnd(s string, i int) (int, string) {
	switch s[i] {
	case '"':
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case '"':
				return j + 1, ""
			}
		}
		return 0, "unterminated string"
	case '(', '{', '[':
		depth := 0
		inStr := false
		for j := i; j < len(s); j++ {
			c := s[j]
			if inStr {
				if c == '\\' {
					j++
				} else if c == '"' {
					inStr = false
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '(', '{', '[':
				depth++
			case ')', '}', ']':
				depth--
				if depth == 0 {
					return j + 1, ""
				}
			}
		}
		return 0, "unbalanced brackets"
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' {
		j++
	}
	return j, ""
}
