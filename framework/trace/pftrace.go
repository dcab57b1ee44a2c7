package trace

import (
	"io"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// The native Perfetto format (--trace FILE.pftrace): a perfetto.protos.Trace
// (protos/perfetto/trace/trace.proto of google/perfetto), a sequence of
// TracePackets, encoded here with protowire against the field numbers of
// Perfetto's .proto files (the numbers below name the message and field).
// Perfetto's protos are ~700 files that import one another; the few
// messages written here do not justify generated code, and
// cmd/tickemu/pftrace_test.go decodes the output against Perfetto's own
// .proto files (cmd/tickemu/testdata/perfetto-protos, pinned) so a wrong
// number fails.
//
// What it holds:
//   - every event as an FtraceEvent in FtraceEventBundles, one bundle per CPU
//     and batch: the events Perfetto has a proto for (sched_switch,
//     sched_wakeup, irq, softirq, local_timer, hrtimer_*, timer_*,
//     signal_*, cpu_idle, print) with their fields, the others as GenericFtraceEvent
//     with named fields. trace_processor builds its own CPU scheduling and
//     thread-state tracks from sched_switch and sched_wakeup, and keeps the
//     timer events' fields in its ftrace_event and args tables (SQL).
//   - TrackEvents on per-CPU tracks: each timer's start as an instant and
//     its callback as a slice named by the function, joined by a flow from
//     the start to the expiry (a cancel ends the flow; the tick re-arming
//     itself traces a start, as __run_hrtimer()'s enqueue does); counters
//     of the local timer and device interrupts taken, of the clockevent
//     device writes (Writer.Count) and of the idle state (from cpu_idle,
//     which trace_processor also turns into its own cpuidle counter).
//
// Timestamps are the simulated time in ns on Perfetto's default clock
// (BOOTTIME) for both.

// Field numbers in Perfetto's protos.
const (
	pfTracePacket = 1 // Trace.packet

	pfPacketFtraceEvents = 1  // TracePacket.ftrace_events (FtraceEventBundle)
	pfPacketTimestamp    = 8  // TracePacket.timestamp
	pfPacketSeqID        = 10 // TracePacket.trusted_packet_sequence_id
	pfPacketTrackEvent   = 11 // TracePacket.track_event
	pfPacketSeqFlags     = 13 // TracePacket.sequence_flags (1: SEQ_INCREMENTAL_STATE_CLEARED)
	pfPacketTrackDesc    = 60 // TracePacket.track_descriptor

	pfBundleCPU   = 1 // FtraceEventBundle.cpu
	pfBundleEvent = 2 // FtraceEventBundle.event

	pfEventTimestamp = 1 // FtraceEvent.timestamp
	pfEventPid       = 2 // FtraceEvent.pid
	pfEventFlags     = 5 // FtraceEvent.common_flags
	pfEventGeneric   = 327

	pfGenericName       = 1 // GenericFtraceEvent.event_name
	pfGenericField      = 2 // GenericFtraceEvent.field
	pfGenericFieldName  = 1 // GenericFtraceEvent.Field.name
	pfGenericFieldStr   = 3 // .str_value
	pfGenericFieldInt   = 4 // .int_value
	pfTrackDescUUID     = 1 // TrackDescriptor.uuid
	pfTrackDescName     = 2 // TrackDescriptor.name
	pfTrackDescCounter  = 8 // TrackDescriptor.counter (CounterDescriptor)
	pfTEType            = 9 // TrackEvent.type
	pfTETrackUUID       = 11
	pfTEName            = 23
	pfTECounter         = 30
	pfTEFlow            = 47
	pfTETermFlow        = 48
	pfTEDebug           = 4  // TrackEvent.debug_annotations
	pfDebugName         = 10 // DebugAnnotation.name
	pfDebugInt          = 4  // DebugAnnotation.int_value
	pfDebugStr          = 6  // DebugAnnotation.string_value
	pfTypeSliceBegin    = 1
	pfTypeSliceEnd      = 2
	pfTypeInstant       = 3
	pfTypeCounter       = 4
	pfSequence          = 1 // the trusted_packet_sequence_id of the track events
	pfBundleMax         = 256
	pfTrackTimers       = 1 << 16 // + CPU: "CPU n timers"
	pfTrackInterrupts   = 2 << 16 // + CPU: counter
	pfTrackIdle         = 3 << 16 // + CPU: counter
	pfTrackCounters     = 4 << 16 // + n<<16 + CPU: the nth Writer.Count track
	pfWireVarint        = protowire.VarintType
	pfWireBytes         = protowire.BytesType
	pfWireFixed64       = protowire.Fixed64Type
	pfFirstPacketMarker = 1
)

// pfField is one field of a Perfetto ftrace event proto: its number, the
// text's key and how the value is encoded.
type pfField struct {
	num  protowire.Number
	key  string
	kind datKind // datInt, datHex, datFunc, datComm (string), datSymbolic
	syms map[string]int64
}

// pfEvents maps the events Perfetto has a proto for to the FtraceEvent field
// of that proto and its fields (protos/perfetto/trace/ftrace/*.proto).
var pfEvents = map[string]struct {
	num    protowire.Number
	fields []pfField
}{
	"sched_switch": {4, []pfField{{1, "prev_comm", datComm, nil}, {2, "prev_pid", datInt, nil}, {3, "prev_prio", datInt, nil},
		{4, "prev_state", datSymbolic, taskStates}, {5, "next_comm", datComm, nil}, {6, "next_pid", datInt, nil}, {7, "next_prio", datInt, nil}}},
	"sched_wakeup":         {17, []pfField{{1, "comm", datComm, nil}, {2, "pid", datInt, nil}, {3, "prio", datInt, nil}, {4, "success", datInt, nil}, {5, "target_cpu", datInt, nil}}},
	"softirq_entry":        {24, []pfField{{1, "vec", datInt, nil}}},
	"softirq_exit":         {25, []pfField{{1, "vec", datInt, nil}}},
	"softirq_raise":        {26, []pfField{{1, "vec", datInt, nil}}},
	"irq_handler_entry":    {36, []pfField{{1, "irq", datInt, nil}, {2, "name", datComm, nil}}},
	"irq_handler_exit":     {37, []pfField{{1, "irq", datInt, nil}, {2, "ret", datSymbolic, map[string]int64{"handled": 1, "unhandled": 0}}}},
	"signal_deliver":       {324, []pfField{{1, "code", datInt, nil}, {2, "sa_flags", datHex, nil}, {3, "sig", datInt, nil}}},
	"signal_generate":      {325, []pfField{{1, "code", datInt, nil}, {2, "comm", datComm, nil}, {3, "grp", datInt, nil}, {4, "pid", datInt, nil}, {5, "res", datInt, nil}, {6, "sig", datInt, nil}}},
	"hrtimer_start":        {551, []pfField{{1, "hrtimer", datHex, nil}, {2, "function", datFunc, nil}, {3, "expires", datInt, nil}, {4, "softexpires", datInt, nil}, {5, "mode", datSymbolic, hrtimerModes}}},
	"hrtimer_cancel":       {552, []pfField{{1, "hrtimer", datHex, nil}}},
	"hrtimer_expire_entry": {553, []pfField{{1, "hrtimer", datHex, nil}, {2, "now", datInt, nil}, {3, "function", datFunc, nil}}},
	"hrtimer_expire_exit":  {554, []pfField{{1, "hrtimer", datHex, nil}}},
	"timer_start":          {555, []pfField{{1, "timer", datHex, nil}, {2, "function", datFunc, nil}, {3, "expires", datInt, nil}, {4, "now", datInt, nil}, {6, "flags", datInt, nil}, {7, "bucket_expiry", datInt, nil}}},
	"timer_cancel":         {556, []pfField{{1, "timer", datHex, nil}}},
	"timer_expire_entry":   {557, []pfField{{1, "timer", datHex, nil}, {2, "now", datInt, nil}, {3, "function", datFunc, nil}, {4, "baseclk", datInt, nil}}},
	"timer_expire_exit":    {558, []pfField{{1, "timer", datHex, nil}}},
	"local_timer_entry":    {559, []pfField{{1, "vector", datInt, nil}}},
	"local_timer_exit":     {560, []pfField{{1, "vector", datInt, nil}}},
	"cpu_idle":             {13, []pfField{{1, "state", datInt, nil}, {2, "cpu_id", datInt, nil}}},
	"tracing_mark_write":   {3, []pfField{{1, "ip", datFunc, nil}, {2, "buf", datComm, nil}}},
}

// pfTimer is a started timer: its flow and what its expiry slice shows.
type pfTimer struct {
	flow     uint64
	function string
	expires  int64
}

type pfState struct {
	out      io.Writer
	cpus     int
	bundles  [][]byte // per CPU: the encoded FtraceEvents of the open bundle
	counts   []int
	tracks   map[uint64]bool
	timers   map[string]*pfTimer // by "hrtimer=PTR" / "timer=PTR"
	nflow    uint64
	irqs     []int64
	counters map[string]uint64 // Writer.Count tracks: their uuid base
	funcs    *datState         // kallsyms-style addresses of function names
	kv       map[string]string
	buf      []byte
	first    bool
	err      error
}

func newPfState(out io.Writer, cpus int) *pfState {
	return &pfState{out: out, cpus: cpus, bundles: make([][]byte, cpus), counts: make([]int, cpus),
		tracks: map[uint64]bool{}, timers: map[string]*pfTimer{}, irqs: make([]int64, cpus), counters: map[string]uint64{},
		funcs: newDatState(nil, ABI{}), kv: map[string]string{}, first: true}
}

// packet writes one TracePacket (Trace.packet, field 1).
func (p *pfState) packet(body []byte) {
	if p.err != nil {
		return
	}
	b := p.buf[:0]
	b = protowire.AppendTag(b, pfTracePacket, pfWireBytes)
	b = protowire.AppendBytes(b, body)
	p.buf = b
	if _, err := p.out.Write(b); err != nil {
		p.err = err
	}
}

// event records one trace event.
func (p *pfState) event(t ktime.Time, c Ctx, name, text string) error {
	cpu := c.CPU
	if cpu < 0 || cpu >= p.cpus {
		cpu = 0
	}
	clear(p.kv)
	fieldsOf(p.kv, datByName[name], name, text)
	if name == "tracing_mark_write" {
		p.kv["ip"], p.kv["buf"] = "tracing_mark_write", strings.TrimPrefix(text, "tracing_mark_write: ")+"\n"
	}
	p.ftrace(t, c, cpu, name, text)
	p.trackEvents(t, cpu, name)
	return p.err
}

// ftrace appends the event to its CPU's bundle, writing the bundle when full.
func (p *pfState) ftrace(t ktime.Time, c Ctx, cpu int, name, text string) {
	var ev []byte
	ev = protowire.AppendTag(ev, pfEventTimestamp, pfWireVarint)
	ev = protowire.AppendVarint(ev, uint64(t))
	ev = protowire.AppendTag(ev, pfEventPid, pfWireVarint)
	ev = protowire.AppendVarint(ev, uint64(c.Pid))
	fl, _ := ctxFlags(c.Flags) // the TRACE_FLAG_* byte, as Perfetto's ftrace reader copies it
	ev = protowire.AppendTag(ev, pfEventFlags, pfWireVarint)
	ev = protowire.AppendVarint(ev, uint64(fl))
	var body []byte
	if pe, ok := pfEvents[name]; ok {
		for _, f := range pe.fields {
			v, ok := p.kv[f.key]
			if !ok && f.key == "success" {
				v, ok = "1", true // sched_wakeup: the task was woken
			}
			if !ok {
				continue
			}
			switch f.kind {
			case datComm:
				body = protowire.AppendTag(body, f.num, pfWireBytes)
				body = protowire.AppendString(body, v)
				continue
			case datFunc:
				body = protowire.AppendTag(body, f.num, pfWireVarint)
				body = protowire.AppendVarint(body, p.funcs.addr(v))
				continue
			case datHex:
				u, _ := strconv.ParseUint(v, 16, 64)
				body = protowire.AppendTag(body, f.num, pfWireVarint)
				body = protowire.AppendVarint(body, u)
				continue
			}
			n, known := f.syms[v]
			if !known {
				n, _ = parseNum(v)
			}
			body = protowire.AppendTag(body, f.num, pfWireVarint)
			body = protowire.AppendVarint(body, uint64(n)) // int32/int64 negatives as 64-bit two's complement
		}
		ev = protowire.AppendTag(ev, pe.num, pfWireBytes)
		ev = protowire.AppendBytes(ev, body)
	} else {
		ev = protowire.AppendTag(ev, pfEventGeneric, pfWireBytes)
		ev = protowire.AppendBytes(ev, p.generic(name, text))
	}
	p.bundles[cpu] = protowire.AppendTag(p.bundles[cpu], pfBundleEvent, pfWireBytes)
	p.bundles[cpu] = protowire.AppendBytes(p.bundles[cpu], ev)
	if p.counts[cpu]++; p.counts[cpu] >= pfBundleMax {
		p.flushBundle(cpu)
	}
}

// generic is a GenericFtraceEvent: the event name and its text's fields
// (integers as int_value, the rest as str_value); a syscall or
// function-tracer line keeps its text as the field "text".
func (p *pfState) generic(name, text string) []byte {
	var b []byte
	b = protowire.AppendTag(b, pfGenericName, pfWireBytes)
	b = protowire.AppendString(b, name)
	keys := make([]string, 0, len(p.kv))
	for k := range p.kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 || strings.HasPrefix(name, "sys_") || name == "function" {
		p.kv = map[string]string{"text": text}
		keys = []string{"text"}
	}
	for _, k := range keys {
		var f []byte
		f = protowire.AppendTag(f, pfGenericFieldName, pfWireBytes)
		f = protowire.AppendString(f, k)
		if n, err := strconv.ParseInt(p.kv[k], 10, 64); err == nil {
			f = protowire.AppendTag(f, pfGenericFieldInt, pfWireVarint)
			f = protowire.AppendVarint(f, uint64(n))
		} else {
			f = protowire.AppendTag(f, pfGenericFieldStr, pfWireBytes)
			f = protowire.AppendString(f, p.kv[k])
		}
		b = protowire.AppendTag(b, pfGenericField, pfWireBytes)
		b = protowire.AppendBytes(b, f)
	}
	return b
}

func (p *pfState) flushBundle(cpu int) {
	if p.counts[cpu] == 0 {
		return
	}
	var bundle []byte
	bundle = protowire.AppendTag(bundle, pfBundleCPU, pfWireVarint)
	bundle = protowire.AppendVarint(bundle, uint64(cpu))
	bundle = append(bundle, p.bundles[cpu]...)
	var pkt []byte
	pkt = protowire.AppendTag(pkt, pfPacketFtraceEvents, pfWireBytes)
	pkt = protowire.AppendBytes(pkt, bundle)
	p.packet(pkt)
	p.bundles[cpu], p.counts[cpu] = p.bundles[cpu][:0], 0
}

// track writes a TrackDescriptor the first time a track is used.
func (p *pfState) track(uuid uint64, name string, counter bool) {
	if p.tracks[uuid] {
		return
	}
	p.tracks[uuid] = true
	var d []byte
	d = protowire.AppendTag(d, pfTrackDescUUID, pfWireVarint)
	d = protowire.AppendVarint(d, uuid)
	d = protowire.AppendTag(d, pfTrackDescName, pfWireBytes)
	d = protowire.AppendString(d, name)
	if counter {
		d = protowire.AppendTag(d, pfTrackDescCounter, pfWireBytes)
		d = protowire.AppendBytes(d, nil)
	}
	var pkt []byte
	pkt = protowire.AppendTag(pkt, pfPacketSeqID, pfWireVarint)
	pkt = protowire.AppendVarint(pkt, pfSequence)
	pkt = protowire.AppendTag(pkt, pfPacketTrackDesc, pfWireBytes)
	pkt = protowire.AppendBytes(pkt, d)
	p.packet(pkt)
}

// trackEvent writes a TrackEvent packet.
type pfTE struct {
	typ        uint64
	track      uint64
	name       string
	counter    int64
	flow, term uint64
	args       [][2]string // debug annotations: name, value (int if it parses)
}

func (p *pfState) trackEvent(t ktime.Time, e pfTE) {
	var te []byte
	te = protowire.AppendTag(te, pfTEType, pfWireVarint)
	te = protowire.AppendVarint(te, e.typ)
	te = protowire.AppendTag(te, pfTETrackUUID, pfWireVarint)
	te = protowire.AppendVarint(te, e.track)
	if e.name != "" {
		te = protowire.AppendTag(te, pfTEName, pfWireBytes)
		te = protowire.AppendString(te, e.name)
	}
	if e.typ == pfTypeCounter {
		te = protowire.AppendTag(te, pfTECounter, pfWireVarint)
		te = protowire.AppendVarint(te, uint64(e.counter))
	}
	if e.flow != 0 {
		te = protowire.AppendTag(te, pfTEFlow, pfWireFixed64)
		te = protowire.AppendFixed64(te, e.flow)
	}
	if e.term != 0 {
		te = protowire.AppendTag(te, pfTETermFlow, pfWireFixed64)
		te = protowire.AppendFixed64(te, e.term)
	}
	for _, a := range e.args {
		var d []byte
		d = protowire.AppendTag(d, pfDebugName, pfWireBytes)
		d = protowire.AppendString(d, a[0])
		if n, err := strconv.ParseInt(a[1], 10, 64); err == nil {
			d = protowire.AppendTag(d, pfDebugInt, pfWireVarint)
			d = protowire.AppendVarint(d, uint64(n))
		} else {
			d = protowire.AppendTag(d, pfDebugStr, pfWireBytes)
			d = protowire.AppendString(d, a[1])
		}
		te = protowire.AppendTag(te, pfTEDebug, pfWireBytes)
		te = protowire.AppendBytes(te, d)
	}
	var pkt []byte
	pkt = protowire.AppendTag(pkt, pfPacketTimestamp, pfWireVarint)
	pkt = protowire.AppendVarint(pkt, uint64(t))
	pkt = protowire.AppendTag(pkt, pfPacketSeqID, pfWireVarint)
	pkt = protowire.AppendVarint(pkt, pfSequence)
	if p.first {
		pkt = protowire.AppendTag(pkt, pfPacketSeqFlags, pfWireVarint)
		pkt = protowire.AppendVarint(pkt, pfFirstPacketMarker)
		p.first = false
	}
	pkt = protowire.AppendTag(pkt, pfPacketTrackEvent, pfWireBytes)
	pkt = protowire.AppendBytes(pkt, te)
	p.packet(pkt)
}

// trackEvents writes the timer slices, flows and counters an event makes.
func (p *pfState) trackEvents(t ktime.Time, cpu int, name string) {
	c := uint64(cpu)
	cs := strconv.Itoa(cpu)
	timers := pfTrackTimers + c
	switch name {
	case "hrtimer_start", "timer_start":
		key := timerKey(name, p.kv)
		p.nflow++
		tm := &pfTimer{flow: p.nflow, function: p.kv["function"]}
		tm.expires, _ = strconv.ParseInt(p.kv["expires"], 10, 64)
		p.timers[key] = tm
		p.track(timers, "CPU "+cs+" timers", false)
		p.trackEvent(t, pfTE{typ: pfTypeInstant, track: timers, name: name + " " + tm.function, flow: tm.flow,
			args: [][2]string{{"expires", p.kv["expires"]}, {"function", tm.function}}})
	case "hrtimer_cancel", "timer_cancel":
		key := timerKey(name, p.kv)
		if tm := p.timers[key]; tm != nil {
			delete(p.timers, key)
			p.track(timers, "CPU "+cs+" timers", false)
			p.trackEvent(t, pfTE{typ: pfTypeInstant, track: timers, name: name + " " + tm.function, term: tm.flow})
		}
	case "hrtimer_expire_entry", "timer_expire_entry":
		key := timerKey(name, p.kv)
		e := pfTE{typ: pfTypeSliceBegin, track: timers, name: p.kv["function"],
			args: [][2]string{{"now", p.kv["now"]}}}
		if tm := p.timers[key]; tm != nil {
			delete(p.timers, key)
			e.term = tm.flow
			if now, err := strconv.ParseInt(p.kv["now"], 10, 64); err == nil {
				e.args = append(e.args, [2]string{"expires", strconv.FormatInt(tm.expires, 10)}, [2]string{"late", strconv.FormatInt(now-tm.expires, 10)})
			}
		}
		p.track(timers, "CPU "+cs+" timers", false)
		p.trackEvent(t, e)
	case "hrtimer_expire_exit", "timer_expire_exit":
		p.track(timers, "CPU "+cs+" timers", false)
		p.trackEvent(t, pfTE{typ: pfTypeSliceEnd, track: timers})
	case "local_timer_entry", "irq_handler_entry":
		p.irqs[cpu]++
		p.track(pfTrackInterrupts+c, "CPU "+cs+" interrupts", true)
		p.trackEvent(t, pfTE{typ: pfTypeCounter, track: pfTrackInterrupts + c, counter: p.irqs[cpu]})
	case "cpu_idle":
		p.track(pfTrackIdle+c, "CPU "+cs+" "+CounterIdleState, true)
		p.trackEvent(t, pfTE{typ: pfTypeCounter, track: pfTrackIdle + c, counter: idleStateValue(p.kv["state"])})
	}
}

// counter writes a Writer.Count sample on its CPU's counter track.
func (p *pfState) counter(t ktime.Time, cpu int, track string, v int64) error {
	if cpu < 0 || cpu >= p.cpus {
		cpu = 0
	}
	base, ok := p.counters[track]
	if !ok {
		base = pfTrackCounters + uint64(len(p.counters))<<16
		p.counters[track] = base
	}
	uuid := base + uint64(cpu)
	p.track(uuid, "CPU "+strconv.Itoa(cpu)+" "+track, true)
	p.trackEvent(t, pfTE{typ: pfTypeCounter, track: uuid, counter: v})
	return p.err
}

// timerKey identifies a timer across its events: the kind and its pointer.
func timerKey(name string, kv map[string]string) string {
	if strings.HasPrefix(name, "hrtimer") {
		return "h" + kv["hrtimer"]
	}
	return "t" + kv["timer"]
}

// close writes the open bundles.
func (p *pfState) close() error {
	for cpu := range p.bundles {
		p.flushBundle(cpu)
	}
	return p.err
}
