package tracedat

import (
	"bytes"
	"encoding/binary"
	"testing"
)

type rec struct {
	ts   uint64
	data []byte
}

// readCPUs is a minimal reader of what Writer writes: it walks the header
// sections as trace-cmd's trace-input.c does and decodes each CPU's pages
// as kbuffer does (type_len, TIME_EXTEND, length word above 28*4 bytes).
func readCPUs(t *testing.T, b []byte) [][]rec {
	t.Helper()
	le := binary.LittleEndian
	if !bytes.HasPrefix(b, []byte("\x17\x08\x44tracing6\x00\x00\x08")) {
		t.Fatalf("bad magic %q", b[:14])
	}
	p := 14
	if ps := le.Uint32(b[p:]); ps != PageSize {
		t.Fatalf("page size %d", ps)
	}
	p += 4
	for _, name := range []string{"header_page\x00", "header_event\x00"} {
		if string(b[p:p+len(name)]) != name {
			t.Fatalf("want %q at %d", name, p)
		}
		p += len(name)
		p += 8 + int(le.Uint64(b[p:]))
	}
	n := int(le.Uint32(b[p:])) // ftrace formats
	p += 4
	for ; n > 0; n-- {
		p += 8 + int(le.Uint64(b[p:]))
	}
	systems := int(le.Uint32(b[p:]))
	p += 4
	for ; systems > 0; systems-- {
		p += bytes.IndexByte(b[p:], 0) + 1
		n := int(le.Uint32(b[p:]))
		p += 4
		for ; n > 0; n-- {
			p += 8 + int(le.Uint64(b[p:]))
		}
	}
	p += 4 + int(le.Uint32(b[p:])) // kallsyms
	p += 4 + int(le.Uint32(b[p:])) // printk
	p += 8 + int(le.Uint64(b[p:])) // cmdlines
	cpus := int(le.Uint32(b[p:]))
	p += 4
	if string(b[p:p+10]) != "options  \x00" || le.Uint16(b[p+10:]) != 0 || string(b[p+12:p+22]) != "flyrecord\x00" {
		t.Fatalf("bad options/flyrecord at %d: %q", p, b[p:p+22])
	}
	p += 22
	out := make([][]rec, cpus)
	for c := 0; c < cpus; c++ {
		off, size := int(le.Uint64(b[p:])), int(le.Uint64(b[p+8:]))
		p += 16
		if off%PageSize != 0 || size%PageSize != 0 {
			t.Fatalf("CPU %d: data at %d, %d bytes: not page-aligned", c, off, size)
		}
		for pg := off; pg < off+size; pg += PageSize {
			ts := le.Uint64(b[pg:])
			commit := int(le.Uint64(b[pg+8:]))
			d := b[pg+pageHeader : pg+pageHeader+commit]
			for len(d) > 0 {
				h := le.Uint32(d)
				typ, delta := h&31, uint64(h>>5)
				switch {
				case typ == typeTimeExtend:
					ts += delta | uint64(le.Uint32(d[4:]))<<deltaBits
					d = d[8:]
				case typ == 0:
					n := int(le.Uint32(d[4:])) - 4
					ts += delta
					out[c] = append(out[c], rec{ts, d[8 : 8+n]})
					d = d[8+n:]
				case typ <= typeDataMax:
					ts += delta
					out[c] = append(out[c], rec{ts, d[4 : 4+typ*4]})
					d = d[4+typ*4:]
				default:
					t.Fatalf("CPU %d: event type %d", c, typ)
				}
			}
		}
	}
	return out
}

// TestRoundTrip writes records of every size class (small, over 28*4 bytes),
// with deltas that need a TIME_EXTEND and enough of them to fill pages, and
// reads them back.
func TestRoundTrip(t *testing.T) {
	var want [2][]rec
	var buf bytes.Buffer
	w := New(&buf, 2)
	w.AddFormat(Format{System: "ftrace", Text: "name: function\n"})
	w.AddFormat(Format{System: "timer", Text: "name: hrtimer_start\n"})
	w.AddSym(Sym{Addr: 0xffffffff81000010, Name: "tick_sched_timer"})
	w.Comm(1000, "cyclictest")
	ts := uint64(5)
	for i := 0; i < 2000; i++ {
		cpu := i % 2
		size := 8 + i%200 // up to 207 bytes, some above 112
		size &^= 3
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(i + j)
		}
		switch {
		case i%97 == 0:
			ts += 1 << 30 // needs TIME_EXTEND
		case i%5 == 0:
			// same time stamp
		default:
			ts += uint64(i)
		}
		w.Record(cpu, ts, data)
		want[cpu] = append(want[cpu], rec{ts, data})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readCPUs(t, buf.Bytes())
	for c := range want {
		if len(got[c]) != len(want[c]) {
			t.Fatalf("CPU %d: %d records, want %d", c, len(got[c]), len(want[c]))
		}
		for i := range want[c] {
			g, e := got[c][i], want[c][i]
			if g.ts != e.ts || !bytes.Equal(g.data[:len(e.data)], e.data) {
				t.Fatalf("CPU %d record %d: %d %x, want %d %x", c, i, g.ts, g.data, e.ts, e.data)
			}
		}
	}
	if !bytes.Contains(buf.Bytes(), []byte("ffffffff81000010 T tick_sched_timer\n")) ||
		!bytes.Contains(buf.Bytes(), []byte("1000 cyclictest\n")) {
		t.Error("kallsyms or saved_cmdlines missing")
	}
}

// TestErrors: records out of time order, on a CPU that does not exist or
// too large for a page are errors, not a corrupt file.
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(w *Writer)
	}{
		{"back in time", func(w *Writer) { w.Record(0, 10, []byte{1}); w.Record(0, 9, []byte{1}) }},
		{"bad cpu", func(w *Writer) { w.Record(3, 10, []byte{1}) }},
		{"huge", func(w *Writer) { w.Record(0, 10, make([]byte, PageSize)) }},
	} {
		w := New(&bytes.Buffer{}, 1)
		c.do(w)
		if err := w.Close(); err == nil {
			t.Errorf("%s: no error", c.name)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}
