package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace"
)

// perfettoProtos are the events Perfetto has an ftrace event proto for
// (protos/perfetto/trace/ftrace/{sched,irq,irq_vectors,timer,signal,power}.proto);
// the others are GenericFtraceEvents.
var perfettoProtos = map[string]bool{
	"sched_switch": true, "sched_wakeup": true, "softirq_entry": true, "softirq_exit": true, "softirq_raise": true,
	"irq_handler_entry": true, "irq_handler_exit": true, "signal_deliver": true, "signal_generate": true,
	"hrtimer_start": true, "hrtimer_cancel": true, "hrtimer_expire_entry": true, "hrtimer_expire_exit": true,
	"timer_start": true, "timer_cancel": true, "timer_expire_entry": true, "timer_expire_exit": true,
	"local_timer_entry": true, "local_timer_exit": true, "cpu_idle": true,
}

// protoField is one field of a message of Perfetto's .proto files.
type protoField struct {
	name, typ string
	repeated  bool
}

// protoSchema is what the test reads from Perfetto's own .proto files
// (testdata/perfetto-protos: google/perfetto's protos/perfetto/trace at
// commit ec5d16b14b74, unchanged): every message's fields by number, and
// the enum names. It is a reader of the proto2 syntax those files use
// (messages, nested messages, oneofs, enums, options), enough to decode
// with protowire and fail on any field number or wire type the files do
// not have.
type protoSchema struct {
	msgs  map[string]map[protowire.Number]protoField // full name (Outer.Inner) -> fields
	enums map[string]bool
}

var (
	protoComment = regexp.MustCompile(`//[^\n]*|/\*(?s:.*?)\*/`)
	protoBlock   = regexp.MustCompile(`^(message|enum|oneof)\s+(\w+)\s*\{`)
	protoFieldRe = regexp.MustCompile(`^(optional|repeated|required)?\s*([\w.]+)\s+(\w+)\s*=\s*(\d+)`)
)

func loadProtos(t *testing.T) *protoSchema {
	t.Helper()
	s := &protoSchema{msgs: map[string]map[protowire.Number]protoField{}, enums: map[string]bool{}}
	root := filepath.Join("testdata", "perfetto-protos")
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || !strings.HasSuffix(path, ".proto") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := protoComment.ReplaceAllString(string(src), "")
		var stack []string // "message:Name", "enum:Name", "oneof:Name", "{"
		msg := func() string {
			var parts []string
			for _, e := range stack {
				if n, ok := strings.CutPrefix(e, "message:"); ok {
					parts = append(parts, n)
				}
			}
			return strings.Join(parts, ".")
		}
		// Walk statements ending in '{', '}' or ';'.
		for len(text) > 0 {
			i := strings.IndexAny(text, "{};")
			if i < 0 {
				break
			}
			stmt, end := strings.TrimSpace(text[:i]), text[i]
			text = text[i+1:]
			switch end {
			case '{':
				if m := protoBlock.FindStringSubmatch(stmt + " {"); m != nil {
					stack = append(stack, m[1]+":"+m[2])
					if m[1] == "message" {
						s.msgs[msg()] = map[protowire.Number]protoField{}
					}
					if m[1] == "enum" {
						s.enums[m[2]] = true
					}
				} else {
					stack = append(stack, "{")
				}
			case '}':
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			case ';':
				if len(stack) == 0 || strings.HasPrefix(stack[len(stack)-1], "enum:") || stack[len(stack)-1] == "{" {
					continue
				}
				if m := protoFieldRe.FindStringSubmatch(stmt); m != nil && m[2] != "option" && m[2] != "reserved" {
					n, _ := strconv.Atoi(m[4])
					s.msgs[msg()][protowire.Number(n)] = protoField{name: m[3], typ: m[2], repeated: m[1] == "repeated"}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// resolve finds a field's message type: nested in the message or any
// enclosing one, else a top-level message of that name.
func (s *protoSchema) resolve(scope, typ string) (string, bool) {
	typ = strings.TrimPrefix(typ, "perfetto.protos.")
	for sc := scope; ; {
		cand := typ
		if sc != "" {
			cand = sc + "." + typ
		}
		if _, ok := s.msgs[cand]; ok {
			return cand, true
		}
		if sc == "" {
			return "", false
		}
		if i := strings.LastIndexByte(sc, '.'); i >= 0 {
			sc = sc[:i]
		} else {
			sc = ""
		}
	}
}

// node is a decoded message: each field's values by name (a message value
// is a *node, a string a string, a number a uint64).
type node map[string][]any

func (n node) msgs(name string) []node {
	var out []node
	for _, v := range n[name] {
		out = append(out, v.(node))
	}
	return out
}

func (n node) num(name string) (uint64, bool) {
	if v, ok := n[name]; ok {
		return v[0].(uint64), true
	}
	return 0, false
}

func (n node) str(name string) string {
	if v, ok := n[name]; ok {
		return v[0].(string)
	}
	return ""
}

// decode decodes b as message msg of the schema; a field number the .proto
// does not have, or a wire type its type does not use, is an error.
func (s *protoSchema) decode(msg string, b []byte) (node, error) {
	fields, ok := s.msgs[msg]
	if !ok {
		return nil, fmt.Errorf("no message %s in Perfetto's protos", msg)
	}
	out := node{}
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%s: bad tag", msg)
		}
		b = b[n:]
		f, ok := fields[num]
		if !ok {
			return nil, fmt.Errorf("%s has no field %d", msg, num)
		}
		var v any
		switch wt {
		case protowire.VarintType:
			x, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, fmt.Errorf("%s.%s: bad varint", msg, f.name)
			}
			switch f.typ {
			case "int32", "int64", "uint32", "uint64", "bool", "sint32", "sint64":
			default:
				if !s.enums[f.typ[strings.LastIndexByte(f.typ, '.')+1:]] {
					return nil, fmt.Errorf("%s.%s is %s, written as a varint", msg, f.name, f.typ)
				}
			}
			v, b = x, b[n:]
		case protowire.Fixed64Type:
			x, n := protowire.ConsumeFixed64(b)
			if n < 0 || (f.typ != "fixed64" && f.typ != "sfixed64" && f.typ != "double") {
				return nil, fmt.Errorf("%s.%s is %s, written as fixed64", msg, f.name, f.typ)
			}
			v, b = x, b[n:]
		case protowire.BytesType:
			x, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, fmt.Errorf("%s.%s: bad length", msg, f.name)
			}
			b = b[n:]
			switch f.typ {
			case "string", "bytes":
				v = string(x)
			default:
				full, ok := s.resolve(msg, f.typ)
				if !ok {
					return nil, fmt.Errorf("%s.%s is %s, written as bytes", msg, f.name, f.typ)
				}
				sub, err := s.decode(full, x)
				if err != nil {
					return nil, err
				}
				v = sub
			}
		default:
			return nil, fmt.Errorf("%s.%s: wire type %d", msg, f.name, wt)
		}
		out[f.name] = append(out[f.name], v)
	}
	return out, nil
}

// TestPftraceDecodes writes default.hcl's and posix-signals.hcl's first
// milliseconds as Perfetto's protobuf trace and decodes it against
// Perfetto's own .proto files: every byte is a field those files define,
// with its wire type. Then it checks what Perfetto will show: one
// FtraceEvent per line of the text trace, the same event on the same CPU
// at the same time and pid, with Perfetto's event protos where it has them
// (sched_switch's fields as the text has them); a flow from each timer's
// start to its expiry slice; the interrupt counters equal to the interrupts
// of the text trace, one idle-state sample per cpu_idle, device-writes
// counters that only go up; byte-identical output for the same config and seed.
func TestPftraceDecodes(t *testing.T) {
	s := loadProtos(t)
	for _, c := range []struct {
		file string
		to   ktime.Time
	}{
		{"default.hcl", ktime.Time(20 * ktime.Millisecond)},
		{"posix-signals.hcl", ktime.Time(2 * ktime.Millisecond)},
		{"devices.hcl", ktime.Time(20 * ktime.Millisecond)},
	} {
		t.Run(strings.TrimSuffix(c.file, ".hcl"), func(t *testing.T) {
			pb := windowTrace(t, c.file, trace.FormatPftrace, c.to)
			if again := windowTrace(t, c.file, trace.FormatPftrace, c.to); !bytes.Equal(again, pb) {
				t.Error("a second run wrote a different trace")
			}
			tr, err := s.decode("Trace", pb)
			if err != nil {
				t.Fatal(err)
			}
			text := lines(string(windowTrace(t, c.file, trace.FormatText, c.to)))
			// The text trace's events per CPU: "time pid name".
			want := map[uint64][]string{}
			irqs, idles := map[uint64]int64{}, map[uint64]int64{}
			started, wantFlows := map[string]bool{}, 0
			for _, l := range text {
				m := textLine.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("unparsed text line %q", l)
				}
				cpu, _ := strconv.ParseUint(m[3], 10, 64)
				what := m[6]
				name, _, _ := strings.Cut(what, ": ")
				switch {
				case name == "tracing_mark_write":
					name = "print"
				case !perfettoProtos[name]:
					name = "generic" // syscalls, function-tracer lines, ...
				}
				// A timer's expiry after its start (a re-arm from its
				// own callback traces one too) ends a flow.
				if f := ptrField.FindStringSubmatch(what); f != nil {
					key := f[1] + f[2]
					switch name {
					case "hrtimer_start", "timer_start":
						started[key] = true
					case "hrtimer_cancel", "timer_cancel":
						delete(started, key)
					case "hrtimer_expire_entry", "timer_expire_entry":
						if started[key] {
							wantFlows++
						}
						delete(started, key)
					}
				}
				want[cpu] = append(want[cpu], m[5]+" "+m[2]+" "+name)
				if name == "local_timer_entry" || name == "irq_handler_entry" {
					irqs[cpu]++
				}
				if name == "cpu_idle" {
					idles[cpu]++
				}
			}
			got := map[uint64][]string{}
			tracks := map[uint64]string{}
			flows := map[uint64]bool{}
			counters, samples := map[string]int64{}, map[string]int64{}
			expiries, flowed := 0, 0
			for _, p := range tr.msgs("packet") {
				for _, b := range p.msgs("ftrace_events") {
					cpu, _ := b.num("cpu")
					for _, e := range b.msgs("event") {
						ts, _ := e.num("timestamp")
						pid, _ := e.num("pid")
						name := ""
						for k := range e {
							if k != "timestamp" && k != "pid" && k != "common_flags" {
								name = k
							}
						}
						if ev := e.msgs(name); name == "sched_switch" && ev[0].str("next_comm") == "" {
							t.Errorf("sched_switch without next_comm: %v", ev[0])
						}
						if name == "generic" {
							if g := e.msgs("generic")[0]; g.str("event_name") == "" || len(g.msgs("field")) == 0 {
								t.Errorf("generic event without a name or fields: %v", g)
							}
						}
						if name == "hrtimer_start" {
							if _, ok := e.msgs(name)[0].num("expires"); !ok {
								t.Errorf("hrtimer_start without expires: %v", e)
							}
						}
						us := fmt.Sprintf("%d.%06d", ts/1e9, ts%1e9/1e3)
						got[cpu] = append(got[cpu], us+" "+strconv.FormatUint(pid, 10)+" "+name)
					}
				}
				for _, d := range p.msgs("track_descriptor") {
					u, _ := d.num("uuid")
					tracks[u] = d.str("name")
				}
				for _, te := range p.msgs("track_event") {
					u, _ := te.num("track_uuid")
					if tracks[u] == "" {
						t.Fatalf("track event on track %d before its descriptor", u)
					}
					typ, _ := te.num("type")
					for _, f := range te["flow_ids"] {
						flows[f.(uint64)] = true
					}
					if typ == 1 && strings.Contains(tracks[u], "timers") {
						expiries++
						if f, ok := te.num("terminating_flow_ids"); ok {
							if !flows[f] {
								t.Errorf("expiry %q ends flow %d, which no timer start began", te.str("name"), f)
							}
							flowed++
						}
					}
					if typ == 4 {
						v, _ := te.num("counter_value")
						if strings.HasSuffix(tracks[u], " device writes") && int64(v) <= counters[tracks[u]] {
							t.Errorf("%s went from %d to %d", tracks[u], counters[tracks[u]], int64(v))
						}
						counters[tracks[u]] = int64(v)
						samples[tracks[u]]++
					}
				}
			}
			for cpu, w := range want {
				g := got[cpu]
				if len(g) != len(w) {
					t.Errorf("CPU %d: %d ftrace events, the text trace %d", cpu, len(g), len(w))
				}
				for i := 0; i < min(len(g), len(w)); i++ {
					if g[i] != w[i] {
						t.Errorf("CPU %d event %d: %q, text %q", cpu, i, g[i], w[i])
						break
					}
				}
				if n := samples[fmt.Sprintf("CPU %d idle state", cpu)]; n != idles[cpu] {
					t.Errorf("CPU %d: %d idle state samples, the text trace has %d cpu_idle", cpu, n, idles[cpu])
				}
				if irqs[cpu] > 0 && counters[fmt.Sprintf("CPU %d device writes", cpu)] == 0 {
					t.Errorf("CPU %d: interrupts but no device writes counter", cpu)
				}
				if irqs[cpu] > 0 && counters[fmt.Sprintf("CPU %d interrupts", cpu)] != irqs[cpu] {
					t.Errorf("CPU %d interrupts counter ends at %d, the text trace has %d", cpu, counters[fmt.Sprintf("CPU %d interrupts", cpu)], irqs[cpu])
				}
			}
			if expiries == 0 || flowed == 0 || flowed != wantFlows {
				t.Errorf("%d timer expiry slices, %d with a flow from their start; the text trace has %d expiries after a start", expiries, flowed, wantFlows)
			}
			// The decode, for people to look at: the first packets as text.
			var dump strings.Builder
			bundles := 0
			for i, p := range tr.msgs("packet") {
				if b := p.msgs("ftrace_events"); len(b) > 0 {
					if bundles++; bundles > 1 {
						continue
					}
					first := node{"cpu": b[0]["cpu"], "event": b[0]["event"][:min(12, len(b[0]["event"]))]}
					dump.WriteString("packet (the first 12 events of the bundle) ")
					writeNode(&dump, node{"ftrace_events": {first}}, "")
					continue
				}
				if i < 40 {
					dump.WriteString("packet ")
					writeNode(&dump, p, "")
				}
			}
			out := filepath.Join(artifactDir(t), "pftrace-"+strings.TrimSuffix(c.file, ".hcl")+".txt")
			if err := os.WriteFile(out, []byte(dump.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d packets, %d tracks, %d expiry slices (%d with a flow), counters %v", len(tr["packet"]), len(tracks), expiries, flowed, counters)
		})
	}
}

// writeNode prints a decoded message as protobuf text format.
func writeNode(b *strings.Builder, n node, indent string) {
	b.WriteString("{\n")
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range n[k] {
			b.WriteString(indent + "  " + k)
			switch v := v.(type) {
			case node:
				b.WriteString(" ")
				writeNode(b, v, indent+"  ")
			case string:
				fmt.Fprintf(b, ": %q\n", v)
			default:
				fmt.Fprintf(b, ": %v\n", v)
			}
		}
	}
	b.WriteString(indent + "}\n")
}
