// Package capture records a real workload on the local kernel into a
// capture bundle (framework/bundle): `tickemu capture` (docs/capture.md).
//
// It enables the kernel's timer, interrupt, scheduler, idle and signal trace
// events in a private tracefs instance, runs the command in its own process
// group, and writes the trace, the command's output, the kernel's counters
// before and after and the host's facts (ReadHost) into one file. Every
// tracefs setting it changes is restored, however the capture ends.
package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"

	"github.com/tickemu/tickemu/framework/bundle"
)

// Defaults of Options.
const (
	DefaultBufferKB = 32768
	DefaultClock    = "mono"
	// KillAfter is how long the command's process group has to exit after
	// an interrupt is passed on before it is killed.
	KillAfter = 5 * time.Second
)

// ErrCannotRun wraps the errors that stop a capture before it touches
// anything: not root, no tracefs, a bad flag, an output path that cannot
// be written. The command line exits 2 for them.
var ErrCannotRun = errors.New("cannot capture")

// Options are a capture's settings; the zero value of each field but
// Command is its default.
type Options struct {
	Command  []string
	Out      string // default Name + ".tcap" in the current directory
	Name     string // default the command's base name
	Note     string
	Events   string // --events (ParseEvents)
	BufferKB int    // per CPU; 0: BufferSize's choice
	Clock    string
	// Global uses the top-level trace buffer instead of a private instance.
	Global bool
	// Tool is the tickemu version, for the manifest.
	Tool string
	// Stdout and Stderr receive a copy of the command's output as it runs
	// (nil: not echoed); Log the capture's own progress and warnings.
	Stdout, Stderr, Log io.Writer

	// Tracefs, Proc and Root are the live system's paths, replaced in tests:
	// tracefs's mount point, /proc for the counters, "/" for ReadHost.
	Tracefs, Proc, Root string
	// SkipRootCheck lets tests run a capture on a fake tracefs as a user.
	SkipRootCheck bool
}

// EventCount is how many times one event is in the trace.
type EventCount struct {
	Name  string
	Count int64
}

// Result is a finished capture.
type Result struct {
	Manifest *bundle.Manifest
	Path     string
	Size     int64 // the bundle's bytes
	TraceLen int64 // the trace text's bytes
	Counts   []EventCount
	// Interrupted is the signal that stopped the command, if one did.
	Interrupted os.Signal
	// Notes are warnings worth printing: facts that could not be read,
	// events lost.
	Notes []string
}

func tee(f *os.File, w io.Writer) io.Writer {
	if w == nil {
		return f
	}
	return io.MultiWriter(f, w)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hypervisorVendor is the CPU's hypervisor vendor string (CPUID leaf
// 0x40000000), "" on bare metal or where there is no CPUID.
func hypervisorVendor() string {
	if !cpuid.CPU.Has(cpuid.HYPERVISOR) {
		return ""
	}
	return cpuid.CPU.HypervisorVendorString
}

// copyTrace copies the buffer's trace text to path.
func copyTrace(src, path string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("copying %s: %w", src, err)
	}
	return n, nil
}

// countEvents counts the events in ftrace text by name: the word after the
// timestamp ("  <idle>-0  [001] d.h1.  12.345678: local_timer_entry: ...").
func countEvents(path string) ([]EventCount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	counts := map[string]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if name := eventName(line); name != "" {
			counts[name]++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]EventCount, 0, len(counts))
	for n, c := range counts {
		out = append(out, EventCount{n, c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// eventName finds an ftrace line's event name: the field after the first
// "SECONDS.FRACTION:" that follows the "[CPU]" column.
func eventName(line string) string {
	i := strings.Index(line, "] ")
	if i < 0 {
		return ""
	}
	f := strings.Fields(line[i+2:])
	for k := 0; k+1 < len(f); k++ {
		ts, ok := strings.CutSuffix(f[k], ":")
		if !ok {
			continue
		}
		if _, err := strconv.ParseFloat(ts, 64); err != nil {
			continue
		}
		name, ok := strings.CutSuffix(f[k+1], ":")
		if !ok {
			return ""
		}
		return name
	}
	return ""
}

// BufferSize picks the ring buffer size per CPU for cpus CPUs on a machine
// with availKB of memory available (0: unknown): asked when it is given
// (with a warning when the buffers take more than half of that memory),
// else DefaultBufferKB, lowered so that the buffers take at most a quarter
// of it (a 256-CPU server would otherwise give the trace 8 GB), and never
// below 1 MB. The note says why the size is not the one expected ("" when
// it is).
func BufferSize(askedKB, cpus int, availKB int64) (int, string) {
	if cpus < 1 {
		cpus = 1
	}
	total := func(kb int) int64 { return int64(kb) * int64(cpus) }
	if askedKB > 0 {
		if availKB > 0 && total(askedKB) > availKB/2 {
			return askedKB, fmt.Sprintf("--buffer-kb %d on %d CPUs takes %d MB of the %d MB of memory available", askedKB, cpus, total(askedKB)>>10, availKB>>10)
		}
		return askedKB, ""
	}
	kb := DefaultBufferKB
	if availKB > 0 && total(kb) > availKB/4 {
		kb = max(int(availKB/4/int64(cpus)), 1024)
		return kb, fmt.Sprintf("trace buffer %d KB per CPU: %d KB on each of %d CPUs would take more than a quarter of the %d MB of memory available", kb, DefaultBufferKB, cpus, availKB>>10)
	}
	return kb, ""
}

// memAvailableKB reads MemAvailable from a meminfo file (0 when it cannot).
func memAvailableKB(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return 0
}
