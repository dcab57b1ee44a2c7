package trace

import (
	"strconv"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// The Perfetto format is the Chrome JSON trace-event format
// (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
// which ui.perfetto.dev and trace_processor import: a {"traceEvents": [...]}
// object of events with a phase ("X" complete slice with ts and dur, "i"
// instant, "C" counter, "M" metadata), timestamps in microseconds (three decimals keep the
// nanoseconds). The machine is process 1; CPU n is its thread n+1, so every
// CPU is one track. The entry/exit event pairs become slices on their CPU's
// track, nested as they happen: local_timer (hard irq), irq_handler, softirq
// vectors, hrtimer and wheel timer callbacks; sched_switch closes the
// previous task's slice and opens the next one's. Every other event is an
// instant on the track with its fields as the "fields" argument. Counters
// ("C", on the machine process): per CPU its idle state (from cpu_idle) and
// its clockevent device writes (Writer.Count).

// sliceKinds maps an entry event to its exit event.
var sliceKinds = map[string]string{
	"local_timer_entry":    "local_timer_exit",
	"irq_handler_entry":    "irq_handler_exit",
	"softirq_entry":        "softirq_exit",
	"hrtimer_expire_entry": "hrtimer_expire_exit",
	"timer_expire_entry":   "timer_expire_exit",
}

var exitKinds = func() map[string]bool {
	m := map[string]bool{}
	for _, v := range sliceKinds {
		m[v] = true
	}
	return m
}()

type openSlice struct {
	exit  string // the event that closes it
	name  string
	cat   string
	start ktime.Time
	args  string
}

type jsonState struct {
	cpus  int
	first bool
	open  [][]openSlice // per CPU: irq-side slices, innermost last
	task  []*openSlice  // per CPU: the running task's slice
}

func newJSONState(cpus int) *jsonState {
	return &jsonState{cpus: cpus, first: true, open: make([][]openSlice, cpus), task: make([]*openSlice, cpus)}
}

// header opens the object and names the process and the CPU tracks.
func (j *jsonState) header() string {
	var b strings.Builder
	b.WriteString(`{"displayTimeUnit":"ns","traceEvents":[` + "\n")
	b.WriteString(`{"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":"tickemu machine"}}`)
	for c := 0; c < j.cpus; c++ {
		b.WriteString(",\n" + `{"ph":"M","pid":1,"tid":` + strconv.Itoa(c+1) + `,"name":"thread_name","args":{"name":"CPU ` + strconv.Itoa(c) + `"}}`)
		b.WriteString(",\n" + `{"ph":"M","pid":1,"tid":` + strconv.Itoa(c+1) + `,"name":"thread_sort_index","args":{"sort_index":` + strconv.Itoa(c) + `}}`)
	}
	j.first = false
	return b.String()
}

// event turns one trace event into JSON events appended to b (none for the
// entry of a slice, which is written when it closes).
func (j *jsonState) event(b []byte, t ktime.Time, c Ctx, name, text string) []byte {
	cpu := c.CPU
	if cpu < 0 || cpu >= j.cpus {
		cpu = 0
	}
	fields := strings.TrimPrefix(text, name+": ")
	if exit, ok := sliceKinds[name]; ok {
		j.open[cpu] = append(j.open[cpu], openSlice{exit: exit, name: sliceName(name, fields), cat: sliceCat(name), start: t, args: fields})
		return b
	}
	if exitKinds[name] {
		st := j.open[cpu]
		for i := len(st) - 1; i >= 0; i-- {
			if st[i].exit != name {
				continue
			}
			// Close it (and anything left open inside it: an exit filtered out).
			for k := len(st) - 1; k >= i; k-- {
				b = j.complete(b, cpu, &st[k], t)
			}
			j.open[cpu] = st[:i]
			break
		}
		return b
	}
	if name == "cpu_idle" {
		// An instant, and the CPU's idle-state counter.
		b = j.counter(b, t, cpu, CounterIdleState, idleStateValue(field(fields, "state")))
	}
	if name == "sched_switch" {
		if ts := j.task[cpu]; ts != nil {
			b = j.complete(b, cpu, ts, t)
			j.task[cpu] = nil
		}
		if next, pid := switchNext(fields); pid != "0" && pid != "" {
			j.task[cpu] = &openSlice{name: next + "-" + pid, cat: "task", start: t, args: "pid=" + pid}
		}
	}
	b = j.sep(b)
	b = append(b, `{"ph":"i","s":"t","pid":1,"tid":`...)
	b = strconv.AppendInt(b, int64(cpu+1), 10)
	b = append(b, `,"ts":`...)
	b = appendUS(b, t)
	b = append(b, `,"name":`...)
	b = strconv.AppendQuote(b, name)
	b = append(b, `,"cat":"event","args":{"fields":`...)
	b = strconv.AppendQuote(b, fields)
	b = append(b, `,"comm":`...)
	b = strconv.AppendQuote(b, c.Comm+"-"+strconv.Itoa(c.Pid))
	b = append(b, "}}"...)
	return b
}

// counter appends a "C" counter sample: Perfetto's JSON importer names the
// track "NAME KEY", here "CPU n TRACK", a process counter of the machine.
func (j *jsonState) counter(b []byte, t ktime.Time, cpu int, track string, v int64) []byte {
	b = j.sep(b)
	b = append(b, `{"ph":"C","pid":1,"ts":`...)
	b = appendUS(b, t)
	b = append(b, `,"name":"CPU `...)
	b = strconv.AppendInt(b, int64(cpu), 10)
	b = append(b, `","args":{`...)
	b = strconv.AppendQuote(b, track)
	b = append(b, ':')
	b = strconv.AppendInt(b, v, 10)
	b = append(b, "}}"...)
	return b
}

// CounterIdleState is the counter track of a CPU's idle state, from
// power:cpu_idle: the cpuidle state index while in it, -1 out of idle
// (cpu_idle's exit, PWR_EVENT_EXIT, prints as 4294967295).
const CounterIdleState = "idle state"

// idleStateValue is cpu_idle's state= as the idle-state counter's value.
func idleStateValue(state string) int64 {
	v, _ := strconv.ParseInt(state, 10, 64)
	if v == 4294967295 {
		return -1
	}
	return v
}

// close ends the open slices at end and closes the object.
func (j *jsonState) close(b []byte, end ktime.Time) []byte {
	for cpu := 0; cpu < j.cpus; cpu++ {
		st := j.open[cpu]
		for k := len(st) - 1; k >= 0; k-- {
			b = j.complete(b, cpu, &st[k], end)
		}
		j.open[cpu] = nil
		if ts := j.task[cpu]; ts != nil {
			b = j.complete(b, cpu, ts, end)
			j.task[cpu] = nil
		}
	}
	return append(b, "\n]}\n"...)
}

func (j *jsonState) sep(b []byte) []byte {
	if j.first {
		j.first = false
		return b
	}
	return append(b, ",\n"...)
}

// complete appends an "X" slice from s.start to end.
func (j *jsonState) complete(b []byte, cpu int, s *openSlice, end ktime.Time) []byte {
	b = j.sep(b)
	b = append(b, `{"ph":"X","pid":1,"tid":`...)
	b = strconv.AppendInt(b, int64(cpu+1), 10)
	b = append(b, `,"ts":`...)
	b = appendUS(b, s.start)
	b = append(b, `,"dur":`...)
	b = appendUS(b, end-s.start)
	b = append(b, `,"name":`...)
	b = strconv.AppendQuote(b, s.name)
	b = append(b, `,"cat":`...)
	b = strconv.AppendQuote(b, s.cat)
	b = append(b, `,"args":{"fields":`...)
	b = strconv.AppendQuote(b, s.args)
	b = append(b, "}}"...)
	return b
}

// appendUS writes ns as microseconds with three decimals.
func appendUS(b []byte, ns ktime.Time) []byte {
	v := int64(ns)
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	b = strconv.AppendInt(b, v/1000, 10)
	frac := v % 1000
	b = append(b, '.')
	b = append(b, byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return b
}

// sliceName names a slice as a kernel engineer reads it.
func sliceName(entry, fields string) string {
	switch entry {
	case "local_timer_entry":
		return "local_timer_interrupt"
	case "irq_handler_entry":
		return "irq " + field(fields, "irq") + " " + field(fields, "name")
	case "softirq_entry":
		if a := field(fields, "[action"); a != "" {
			return strings.TrimSuffix(a, "]") + "_SOFTIRQ"
		}
		return "softirq " + field(fields, "vec")
	case "hrtimer_expire_entry", "timer_expire_entry":
		return field(fields, "function")
	}
	return entry
}

func sliceCat(entry string) string {
	switch entry {
	case "softirq_entry":
		return "softirq"
	case "hrtimer_expire_entry":
		return "hrtimer"
	case "timer_expire_entry":
		return "timer"
	}
	return "irq"
}

// field returns the value of key= in a space-separated field list.
func field(fields, key string) string {
	for _, f := range strings.Fields(fields) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// switchNext returns sched_switch's next_comm and next_pid.
func switchNext(fields string) (comm, pid string) {
	_, after, ok := strings.Cut(fields, "==> ")
	if !ok {
		return "", ""
	}
	return field(after, "next_comm"), field(after, "next_pid")
}
