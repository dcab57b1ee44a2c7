// Package tracedat writes trace-cmd's trace.dat file, version 6
// (trace-cmd's Documentation/trace-cmd/trace-cmd.dat.v6.5.txt; the reader
// is lib/trace-cmd/trace-input.c), which `trace-cmd report` and KernelShark
// read. No Go library writes it, so this is a small writer of the parts a
// reader needs. All numbers are little endian; the layout is:
//
//	"\x17\x08\x44tracing" "6\0"        magic and version
//	u8 0 (little endian) u8 8 (long size) u32 page size
//	"header_page\0"  u64 size, text    events/header_page of tracefs
//	"header_event\0" u64 size, text    events/header_event
//	u32 n, n x (u64 size, text)        ftrace event formats (events/ftrace/*/format)
//	u32 systems, per system:           event formats
//	    name\0, u32 n, n x (u64 size, text)
//	u32 size, text                     /proc/kallsyms ("ADDR T NAME\n")
//	u32 size, text                     printk_formats (empty)
//	u64 size, text                     saved_cmdlines ("PID COMM\n")
//	u32 cpus
//	"options  \0" u16 0                no options
//	"flyrecord\0"
//	cpus x (u64 offset, u64 size)      each CPU's ring-buffer pages
//	padding to the page size, then each CPU's pages
//
// A page is the kernel ring buffer's (kernel/trace/ring_buffer.c, struct
// buffer_data_page): u64 time stamp of the page, u64 commit (bytes of data
// used), then events. An event is a u32 header, type_len in the low 5 bits
// and the time delta from the previous event (or the page's time stamp) in
// the high 27, then its data: type_len*4 bytes when the data is at most
// 28*4 bytes, else type_len 0 and a u32 length (data + 4) before the data
// (rb_update_event()). A delta of 2^27 ns or more is carried by a
// TIME_EXTEND event (type_len 30) first, its upper bits in the next u32.
//
// The writer keeps each CPU's pages in a temporary file until Close, when
// the header (which needs the event formats and each CPU's size) and the
// pages are written out in one pass: the output may be a pipe.
package tracedat

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"
)

// PageSize is the ring-buffer page size written (x86-64's).
const PageSize = 4096

// pageHeader is the size of a page's time stamp and commit fields.
const pageHeader = 16

// headerPage and headerEvent are tracefs' events/header_page and
// events/header_event of a 64-bit kernel (ring_buffer_print_page_header(),
// ring_buffer_print_entry_header()).
const headerPage = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n" +
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n" +
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n" +
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n"

const headerEvent = "# compressed entry header\n" +
	"\ttype_len    :    5 bits\n" +
	"\ttime_delta  :   27 bits\n" +
	"\tarray       :   32 bits\n" +
	"\n" +
	"\tpadding     : type == 29\n" +
	"\ttime_extend : type == 30\n" +
	"\ttime_stamp : type == 31\n" +
	"\tdata max type_len  == 28\n"

// Ring-buffer event types (include/linux/ring_buffer.h).
const (
	typeDataMax    = 28
	typeTimeExtend = 30
	deltaBits      = 27
)

// Format is one event's format file (tracefs events/SYSTEM/NAME/format).
type Format struct {
	System string // "ftrace" formats go to the ftrace section
	Text   string
}

// Writer writes one trace.dat file.
type Writer struct {
	out     io.Writer
	cpus    []*cpuBuf
	formats []Format
	syms    []Sym
	cmdline map[int]string
	bytes   int64
	err     error
}

// Sym is a kallsyms entry: an address and a function name.
type Sym struct {
	Addr uint64
	Name string
}

// cpuBuf is one CPU's ring buffer: the page being filled and a temporary
// file of the full ones.
type cpuBuf struct {
	tmp   *os.File
	w     *bufio.Writer
	page  [PageSize]byte
	used  int // bytes of event data in page
	last  uint64
	pages int64
	open  bool // page has its time stamp
}

// New returns a writer of a trace of cpus CPUs to out.
func New(out io.Writer, cpus int) *Writer {
	w := &Writer{out: out, cmdline: map[int]string{}}
	w.cpus = make([]*cpuBuf, cpus)
	for i := range w.cpus {
		w.cpus[i] = &cpuBuf{}
	}
	return w
}

// AddFormat adds an event format; formats are written in the order added,
// grouped by system in the order systems first appear.
func (w *Writer) AddFormat(f Format) { w.formats = append(w.formats, f) }

// AddSym adds a kallsyms entry (written sorted by address).
func (w *Writer) AddSym(s Sym) { w.syms = append(w.syms, s) }

// Comm records a pid's command name for saved_cmdlines.
func (w *Writer) Comm(pid int, comm string) {
	if _, ok := w.cmdline[pid]; !ok {
		w.cmdline[pid] = comm
	}
}

// Bytes is the size of the events recorded so far (headers, time extends
// and data), what the CPU data will take before its last pages are padded.
func (w *Writer) Bytes() int64 { return w.bytes }

// Err is the first error.
func (w *Writer) Err() error { return w.err }

// Record appends an event's data (common fields first) on cpu at ts ns;
// each CPU's records must come in time order.
func (w *Writer) Record(cpu int, ts uint64, data []byte) {
	if w.err != nil {
		return
	}
	if cpu < 0 || cpu >= len(w.cpus) {
		w.err = fmt.Errorf("trace.dat: event on CPU %d of %d", cpu, len(w.cpus))
		return
	}
	c := w.cpus[cpu]
	if c.open && ts < c.last {
		w.err = fmt.Errorf("trace.dat: CPU %d: time %d before %d", cpu, ts, c.last)
		return
	}
	n := len(data)
	size := 4 + (n+3)&^3
	if n > typeDataMax*4 {
		size += 4
	}
	var delta uint64
	if c.open {
		delta = ts - c.last
	}
	extend := delta >= 1<<deltaBits
	need := size
	if extend {
		need += 8
	}
	if need > PageSize-pageHeader {
		w.err = fmt.Errorf("trace.dat: event of %d bytes does not fit a page", n)
		return
	}
	if !c.open || pageHeader+c.used+need > PageSize {
		if c.open {
			if err := w.flushPage(c); err != nil {
				w.err = err
				return
			}
		}
		c.page = [PageSize]byte{}
		binary.LittleEndian.PutUint64(c.page[0:], ts)
		c.used, c.open, c.last, delta, extend = 0, true, ts, 0, false
	}
	p := c.page[pageHeader+c.used:]
	if extend {
		binary.LittleEndian.PutUint32(p, typeTimeExtend|uint32(delta&(1<<deltaBits-1))<<5)
		binary.LittleEndian.PutUint32(p[4:], uint32(delta>>deltaBits))
		p = p[8:]
		c.used += 8
		delta = 0
	}
	if n > typeDataMax*4 {
		binary.LittleEndian.PutUint32(p, uint32(delta)<<5)
		binary.LittleEndian.PutUint32(p[4:], uint32((n+3)&^3+4))
		copy(p[8:], data)
	} else {
		binary.LittleEndian.PutUint32(p, uint32((n+3)/4)|uint32(delta)<<5)
		copy(p[4:], data)
	}
	c.used += size
	c.last = ts
	w.bytes += int64(need)
}

// flushPage writes the CPU's page (commit = bytes used) to its temporary file.
func (w *Writer) flushPage(c *cpuBuf) error {
	if c.tmp == nil {
		f, err := os.CreateTemp("", "tickemu-trace-dat-*")
		if err != nil {
			return fmt.Errorf("trace.dat: %v", err)
		}
		c.tmp, c.w = f, bufio.NewWriterSize(f, 1<<16)
	}
	binary.LittleEndian.PutUint64(c.page[8:], uint64(c.used))
	if _, err := c.w.Write(c.page[:]); err != nil {
		return fmt.Errorf("trace.dat: %v", err)
	}
	c.pages++
	c.open = false
	return nil
}

// Close writes the file: the header, then each CPU's pages. It removes the
// temporary files whatever happens.
func (w *Writer) Close() error {
	defer func() {
		for _, c := range w.cpus {
			if c.tmp != nil {
				c.tmp.Close()
				os.Remove(c.tmp.Name())
			}
		}
	}()
	if w.err != nil {
		return w.err
	}
	for _, c := range w.cpus {
		if c.open {
			if err := w.flushPage(c); err != nil {
				return err
			}
		}
		if c.w != nil {
			if err := c.w.Flush(); err != nil {
				return fmt.Errorf("trace.dat: %v", err)
			}
		}
	}
	hdr := w.header()
	// The CPU data starts page-aligned after the header and the flyrecord
	// offsets (16 bytes a CPU).
	start := int64(len(hdr) + 16*len(w.cpus))
	start = (start + PageSize - 1) &^ (PageSize - 1)
	off := start
	for _, c := range w.cpus {
		size := c.pages * PageSize
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(off))
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(size))
		off += size
	}
	hdr = append(hdr, make([]byte, start-int64(len(hdr)))...)
	bw := bufio.NewWriterSize(w.out, 1<<16)
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	for _, c := range w.cpus {
		if c.tmp == nil {
			continue
		}
		if _, err := c.tmp.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("trace.dat: %v", err)
		}
		if _, err := io.Copy(bw, c.tmp); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// header builds everything before the flyrecord offsets.
func (w *Writer) header() []byte {
	le := binary.LittleEndian
	b := []byte("\x17\x08\x44tracing6\x00")
	b = append(b, 0, 8)
	b = le.AppendUint32(b, PageSize)
	b = append(b, "header_page\x00"...)
	b = le.AppendUint64(b, uint64(len(headerPage)))
	b = append(b, headerPage...)
	b = append(b, "header_event\x00"...)
	b = le.AppendUint64(b, uint64(len(headerEvent)))
	b = append(b, headerEvent...)

	var ftrace []Format
	var systems []string
	bySys := map[string][]Format{}
	for _, f := range w.formats {
		if f.System == "ftrace" {
			ftrace = append(ftrace, f)
			continue
		}
		if _, ok := bySys[f.System]; !ok {
			systems = append(systems, f.System)
		}
		bySys[f.System] = append(bySys[f.System], f)
	}
	b = le.AppendUint32(b, uint32(len(ftrace)))
	for _, f := range ftrace {
		b = le.AppendUint64(b, uint64(len(f.Text)))
		b = append(b, f.Text...)
	}
	b = le.AppendUint32(b, uint32(len(systems)))
	for _, s := range systems {
		b = append(b, s...)
		b = append(b, 0)
		b = le.AppendUint32(b, uint32(len(bySys[s])))
		for _, f := range bySys[s] {
			b = le.AppendUint64(b, uint64(len(f.Text)))
			b = append(b, f.Text...)
		}
	}

	syms := append([]Sym(nil), w.syms...)
	sort.Slice(syms, func(i, j int) bool { return syms[i].Addr < syms[j].Addr })
	var ks []byte
	for _, s := range syms {
		ks = fmt.Appendf(ks, "%016x T %s\n", s.Addr, s.Name)
	}
	b = le.AppendUint32(b, uint32(len(ks)))
	b = append(b, ks...)
	b = le.AppendUint32(b, 0) // printk formats

	pids := make([]int, 0, len(w.cmdline))
	for p := range w.cmdline {
		pids = append(pids, p)
	}
	sort.Ints(pids)
	var cl []byte
	for _, p := range pids {
		cl = fmt.Appendf(cl, "%d %s\n", p, w.cmdline[p])
	}
	b = le.AppendUint64(b, uint64(len(cl)))
	b = append(b, cl...)

	b = le.AppendUint32(b, uint32(len(w.cpus)))
	b = append(b, "options  \x00"...)
	b = le.AppendUint16(b, 0)
	b = append(b, "flyrecord\x00"...)
	return b
}
