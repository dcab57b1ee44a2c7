// Package bundle reads and writes capture bundles: one real workload run on
// a real kernel, recorded by `tickemu capture` (docs/capture.md).
//
// A bundle is one gzip-compressed tar file (extension .tcap) whose first
// entry is the manifest, bundle.json (the command, its exit status, the
// host's facts, the trace's settings and losses, and the kernel's own
// counters before and after the run), followed by the tracefs trace text
// (trace.txt) and the command's output (stdout.txt, stderr.txt). One file,
// so a capture can be mailed, attached to a report or committed whole; tar
// and gzip, so `tar xzf` opens it without tickemu.
package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tickemu/tickemu/framework/internal/outfile"
)

// Ext is a bundle file's extension.
const Ext = ".tcap"

// FormatVersion is the manifest format this package writes; Open refuses a
// newer one.
const FormatVersion = 1

// The entries of a bundle.
const (
	ManifestName = "bundle.json"
	TraceName    = "trace.txt"
	StdoutName   = "stdout.txt"
	StderrName   = "stderr.txt"
)

// Limits on what Open and File read, so a hostile or broken file fails with
// a message instead of filling memory. The trace itself is streamed.
const (
	MaxManifest = 4 << 20  // bundle.json
	MaxFile     = 64 << 20 // an entry read whole by File
)

// Manifest is bundle.json: everything about the run except the trace and
// the command's output.
type Manifest struct {
	Format int `json:"format"`
	// Tool is the tickemu version that wrote the bundle.
	Tool string `json:"tool"`
	// Name is a short name for the capture (the suite's name for it, or the
	// file name); Note is free provenance text (why, on what machine, under
	// what load).
	Name string `json:"name,omitempty"`
	Note string `json:"note,omitempty"`
	// Command is the workload's argv; ExitStatus its exit status (-1 when it
	// was killed by a signal, Signal then names it).
	Command    []string `json:"command"`
	ExitStatus int      `json:"exit_status"`
	Signal     string   `json:"signal,omitempty"`
	// PID is the command's process id, the root of the workload's process
	// tree (the trace's sched_process_fork events give the rest);
	// CapturePID is the capturing tickemu's own, whose runtime's threads
	// (sleeping and waking while it waits) are in the trace too, and are
	// not the workload's.
	PID        int `json:"pid,omitempty"`
	CapturePID int `json:"capture_pid,omitempty"`
	// KernelThreads are the pids of the kernel threads (PF_KTHREAD in
	// /proc/PID/stat's flags) alive when the command started or when it
	// ended: the kernel charges their running time to system
	// (account_process_tick(): a kernel thread is never in user mode), and
	// a replay runs them so. Empty in bundles from before it was recorded.
	KernelThreads []int `json:"kernel_threads,omitempty"`
	// Start is the wall-clock time the command started; WallNS how long it
	// ran.
	Start  time.Time `json:"start"`
	WallNS int64     `json:"wall_ns"`
	// Host is what the kernel and machine were.
	Host Host `json:"host"`
	// Trace says how the trace was recorded and what it lost.
	Trace TraceInfo `json:"trace"`
	// Before and After are the kernel's own counters right before the
	// command started and right after it ended.
	Before Snapshot `json:"before"`
	After  Snapshot `json:"after"`
	// Changed lists every setting the capture changed for the run, each
	// restored afterwards.
	Changed []Setting `json:"changed,omitempty"`
}

// Host holds the facts of the machine and kernel a capture ran on.
type Host struct {
	Release    string `json:"release"`           // uname -r
	Version    string `json:"version"`           // uname -v
	Machine    string `json:"machine"`           // uname -m
	CPUModel   string `json:"cpu_model"`         // /proc/cpuinfo "model name"
	Hypervisor string `json:"hypervisor"`        // "" on bare metal, else the hypervisor's name ("KVM")
	CmdLine    string `json:"cmdline,omitempty"` // /proc/cmdline
	// CPUs is the number of online CPUs, Online their cpulist.
	CPUs   int    `json:"cpus"`
	Online string `json:"online"`
	// HZ, NoHZ ("off", "idle", "full") and HighRes come from the kernel
	// configuration; Config holds the timekeeping options it was read
	// from, as the configuration file has them ("y", "250", "n" for unset).
	HZ      int               `json:"hz"`
	NoHZ    string            `json:"nohz"`
	HighRes bool              `json:"highres"`
	Config  map[string]string `json:"config,omitempty"`
	// ConfigSource is where Config was read: /proc/config.gz or a
	// /boot/config-RELEASE file; "" when neither was there (HZ is then
	// unknown, 0).
	ConfigSource string `json:"config_source,omitempty"`
	// NohzFull and Isolated are the cpulists of nohz_full= and isolcpus=.
	NohzFull string `json:"nohz_full,omitempty"`
	Isolated string `json:"isolated,omitempty"`
	// TimerMigration is /proc/sys/kernel/timer_migration during the run
	// (nil where the kernel has no such sysctl).
	TimerMigration *int `json:"timer_migration,omitempty"`
	// Clocksource is the current clocksource; Clockevents the per-CPU
	// clockevent devices and Broadcast the broadcast device ("" if none).
	Clocksource string   `json:"clocksource"`
	Clockevents []string `json:"clockevents"`
	Broadcast   string   `json:"broadcast,omitempty"`
	CPUIdle     CPUIdle  `json:"cpuidle"`
	// PMQoSLatencyUS is the CPU latency QoS value in force before the run
	// (reading /dev/cpu_dma_latency): 2000000000 is the kernel's "no
	// constraint". A workload such as cyclictest adds its own request
	// while it runs, which no file shows.
	PMQoSLatencyUS int64 `json:"pm_qos_latency_us"`
}

// CPUIdle is the cpuidle driver, governor and states (of the first online
// CPU; the sysfs lists are per CPU but the same on every machine this has
// met).
type CPUIdle struct {
	Driver   string      `json:"driver,omitempty"`
	Governor string      `json:"governor,omitempty"`
	States   []IdleState `json:"states,omitempty"`
}

// IdleState is one cpuidle state as sysfs describes it.
type IdleState struct {
	Name        string `json:"name"`
	Desc        string `json:"desc,omitempty"`
	LatencyUS   int64  `json:"latency_us"`
	ResidencyUS int64  `json:"residency_us"`
	Disabled    bool   `json:"disabled,omitempty"`
}

// TraceInfo is how the trace was recorded.
type TraceInfo struct {
	Clock    string `json:"clock"`     // trace_clock in use
	BufferKB int    `json:"buffer_kb"` // buffer_size_kb per CPU
	// Instance is the tracefs instance the trace was recorded in
	// (instances/NAME, removed afterwards); "" for the top-level buffer.
	Instance string   `json:"instance,omitempty"`
	Events   []string `json:"events"`  // "group/name" of every event enabled
	Missing  []string `json:"missing"` // events asked for that this kernel lacks
	// Filters are the event filters in force, by event ("msr/write_msr":
	// "msr == 0x6e0"); an event not listed was recorded unfiltered.
	Filters map[string]string `json:"filters,omitempty"`
	Lost    []Lost            `json:"lost,omitempty"` // per CPU, from per_cpu/cpuN/stats
}

// Lost is one CPU's trace losses: events overwritten in the ring buffer
// and events dropped.
type Lost struct {
	CPU     int   `json:"cpu"`
	Overrun int64 `json:"overrun"`
	Dropped int64 `json:"dropped"`
}

// Total is the number of events lost on every CPU.
func (t TraceInfo) Total() int64 {
	var n int64
	for _, l := range t.Lost {
		n += l.Overrun + l.Dropped
	}
	return n
}

// Snapshot is the kernel's counters at one moment.
type Snapshot struct {
	// Stat is /proc/stat's cpu lines: the machine first (CPU -1), then
	// every CPU.
	Stat []CPUStat `json:"stat"`
	// Interrupts and Softirqs are /proc/interrupts and /proc/softirqs,
	// one row each.
	Interrupts []Counter `json:"interrupts"`
	Softirqs   []Counter `json:"softirqs"`
}

// CPUStat is one cpu line of /proc/stat, in USER_HZ ticks (UserHZ).
type CPUStat struct {
	CPU       int    `json:"cpu"` // -1: the machine
	User      uint64 `json:"user"`
	Nice      uint64 `json:"nice"`
	System    uint64 `json:"system"`
	Idle      uint64 `json:"idle"`
	IOWait    uint64 `json:"iowait"`
	IRQ       uint64 `json:"irq"`
	Softirq   uint64 `json:"softirq"`
	Steal     uint64 `json:"steal"`
	Guest     uint64 `json:"guest"`
	GuestNice uint64 `json:"guest_nice"`
}

// UserHZ is the unit of /proc/stat's times: USER_HZ, 100 on every
// architecture Linux runs tickemu's models on.
const UserHZ = 100

// Counter is one row of /proc/interrupts or /proc/softirqs: its label
// ("LOC", "TIMER", "24"), what the kernel says it is, and a count per CPU.
type Counter struct {
	Name   string   `json:"name"`
	Desc   string   `json:"desc,omitempty"`
	PerCPU []uint64 `json:"per_cpu"`
}

// Setting is one setting the capture changed and restored.
type Setting struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// Entry is one file to put in a bundle: its name and either its bytes or
// the path of a file to copy.
type Entry struct {
	Name string
	Data []byte
	Path string
}

// Write writes a bundle to path: the manifest, then the entries in order.
// The file is written beside path and renamed into place when complete, so
// a failure leaves whatever was at path intact.
func Write(path string, m *Manifest, entries []Entry) (err error) {
	m.Format = FormatVersion
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer tmp.Discard()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	zw, err := gzip.NewWriterLevel(bw, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	// Fixed times and owners: the bundle's bytes depend on its contents only.
	hdr := func(name string, size int64) *tar.Header {
		return &tar.Header{Name: name, Mode: 0o644, Size: size, ModTime: m.Start.Truncate(time.Second), Format: tar.FormatPAX}
	}
	if err := tw.WriteHeader(hdr(ManifestName, int64(len(mj)+1))); err != nil {
		return err
	}
	if _, err := tw.Write(append(mj, '\n')); err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name == ManifestName {
			return fmt.Errorf("bundle: entry %s is the manifest's name", e.Name)
		}
		if e.Path == "" {
			if err := tw.WriteHeader(hdr(e.Name, int64(len(e.Data)))); err != nil {
				return err
			}
			if _, err := tw.Write(e.Data); err != nil {
				return err
			}
			continue
		}
		if err := copyFile(tw, hdr, e); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return tmp.Commit()
}

func copyFile(tw *tar.Writer, hdr func(string, int64) *tar.Header, e Entry) error {
	f, err := os.Open(e.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(hdr(e.Name, st.Size())); err != nil {
		return err
	}
	n, err := io.Copy(tw, f)
	if err == nil && n != st.Size() {
		err = fmt.Errorf("%s changed while it was copied into the bundle", e.Path)
	}
	return err
}

// Bundle is an opened bundle: its manifest, and the file to read the
// other entries from.
type Bundle struct {
	Path     string
	Manifest Manifest
	names    []string
}

// Names lists the bundle's entries in order, the manifest first.
func (b *Bundle) Names() []string { return b.names }

// ErrNotBundle is returned (wrapped) by Open for a file that is not a
// bundle at all, so a caller can fall back to reading it as a plain trace.
var ErrNotBundle = errors.New("not a capture bundle")

// Open reads a bundle's manifest and lists its entries. It reads the whole
// file once (the trace is decompressed and thrown away, in constant memory),
// so a truncated bundle fails here rather than half-way through a replay.
func Open(path string) (*Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (no gzip header: %v)", path, ErrNotBundle, err)
	}
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil || h.Name != ManifestName {
		return nil, fmt.Errorf("%s: %w (its first entry is not %s)", path, ErrNotBundle, ManifestName)
	}
	b := &Bundle{Path: path, names: []string{ManifestName}}
	if h.Size > MaxManifest {
		return nil, fmt.Errorf("%s: %s is %d bytes, over the %d-byte limit", path, ManifestName, h.Size, MaxManifest)
	}
	mj, err := io.ReadAll(io.LimitReader(tr, MaxManifest))
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", path, ManifestName, err)
	}
	dec := json.NewDecoder(bytes.NewReader(mj))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b.Manifest); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, ManifestName, err)
	}
	if b.Manifest.Format < 1 || b.Manifest.Format > FormatVersion {
		return nil, fmt.Errorf("%s: bundle format %d; this tickemu reads formats 1 to %d", path, b.Manifest.Format, FormatVersion)
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: after entry %s: %w (a truncated or damaged bundle)", path, b.names[len(b.names)-1], err)
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return nil, fmt.Errorf("%s: entry %s: %w (a truncated or damaged bundle)", path, h.Name, err)
		}
		b.names = append(b.names, h.Name)
	}
	return b, nil
}

// Entry is an open entry of a bundle, read as a stream.
type entryReader struct {
	io.Reader
	f *os.File
}

func (e entryReader) Close() error { return e.f.Close() }

// Open opens one entry of the bundle for reading, streamed: the trace of a
// long capture is never held in memory whole.
func (b *Bundle) Open(name string) (io.ReadCloser, error) {
	f, err := os.Open(b.Path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", b.Path, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			f.Close()
			if err == io.EOF {
				return nil, fmt.Errorf("%s: no entry %s in the bundle (it has %v)", b.Path, name, b.names)
			}
			return nil, fmt.Errorf("%s: %w", b.Path, err)
		}
		if h.Name == name {
			return entryReader{Reader: tr, f: f}, nil
		}
	}
}

// Trace opens the trace text.
func (b *Bundle) Trace() (io.ReadCloser, error) { return b.Open(TraceName) }

// File reads one entry whole (the command's output), up to MaxFile bytes.
func (b *Bundle) File(name string) ([]byte, error) {
	r, err := b.Open(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: entry %s: %w", b.Path, name, err)
	}
	if len(data) > MaxFile {
		return nil, fmt.Errorf("%s: entry %s is over the %d-byte limit", b.Path, name, MaxFile)
	}
	return data, nil
}

// Sniff reports whether the file at path starts as a bundle does (a gzip
// stream), without reading it further: a plain text trace never does.
func Sniff(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [2]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && magic[0] == 0x1f && magic[1] == 0x8b
}
