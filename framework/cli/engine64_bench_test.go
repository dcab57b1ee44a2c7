package cli

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
)

// The engine benchmarks on a big machine (issue 16 item 4). Each reports the
// engine's events per wall second and host CPU time per simulated second, and
// its ratio to a bare event loop timed in the same iteration, so a figure
// read on a shared, noisy machine is still comparable between runs.

// big64Cyclictest is a 64-CPU x86 box at HZ=1000 with NO_HZ idle and one
// idle state, cyclictest with 64 threads at 200 us, distance 0, and the
// deferrable 1 s vmstat timer on every CPU (as in configs/default.hcl).
const big64Cyclictest = `
machine {
  cpus    = 64
  hz      = 1000
  nohz    = "idle"
  highres = true
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "2us"
  }
}
wheel {
  plugin  = "wheel"
  layout  = "levels"
  catchup = "next_expiry"
}
hrtimer {
  plugin = "hrtimer"
}
clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}
governor {
  plugin = "menu"
}
workload "cyclictest" "rt" {
  threads  = 64
  interval = "200us"
  distance = "0us"
  priority = 99
}
workload "kernel_timers" "vmstat" {
  period     = "1s"
  deferrable = true
}
run {
  duration = "%DUR%"
  seed     = 1
}
`

// big64Spec loads src's variant (none: "") with %DUR% set to dur.
func big64Spec(b *testing.B, name, src, variant string, dur time.Duration) *config.Spec {
	b.Helper()
	spec, diags := config.LoadBytes(name, []byte(strings.ReplaceAll(src, "%DUR%", dur.String())), config.Options{Variant: variant})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	return spec
}

// posixSignals64 is configs/posix-signals.hcl on 64
// CPUs with one stress-ng --timer instance per CPU.
func posixSignals64(b *testing.B) string {
	b.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "configs", "posix-signals.hcl"))
	if err != nil {
		b.Fatal(err)
	}
	s := string(src)
	for _, r := range []struct{ re, to string }{
		{`(?m)^(\s*cpus\s*=\s*)1$`, "${1}64"},
		{`(?m)^(\s*instances\s*=\s*)1$`, "${1}64"},
		{`(?m)^(\s*duration\s*=\s*)var\.duration$`, `${1}"%DUR%"`},
	} {
		re := regexp.MustCompile(r.re)
		if !re.MatchString(s) {
			b.Fatalf("configs/posix-signals.hcl: no line matches %s", r.re)
		}
		s = re.ReplaceAllString(s, r.to)
	}
	return s
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bareEvent is the bare loop's event record: a time and a tie-break sequence.
type bareEvent struct {
	at, seq int64
}

// bareHeap is a 4-ary min-heap of events keyed by (at, seq).
type bareHeap []*bareEvent

func (h bareHeap) less(i, j int) bool {
	a, b := h[i], h[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (h *bareHeap) push(e *bareEvent) {
	*h = append(*h, e)
	s := *h
	for j := len(s) - 1; j > 0; {
		i := (j - 1) / 4
		if !s.less(j, i) {
			break
		}
		s[i], s[j] = s[j], s[i]
		j = i
	}
}

func (h *bareHeap) pop() *bareEvent {
	s := *h
	top, last := s[0], len(s)-1
	s[0] = s[last]
	s = s[:last]
	*h = s
	for i, n := 0, len(s); ; {
		m := i
		for c := 4*i + 1; c <= 4*i+4 && c < n; c++ {
			if s.less(c, m) {
				m = c
			}
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	return top
}

// bareLoop is the reference the engine is measured against: a 4-ary min-heap
// of 256 pending events, each popped and re-armed at a pseudo-random later
// time, nothing else. It returns the events fired per wall second.
func bareLoop(events int) float64 {
	const pending = 256
	h := make(bareHeap, 0, pending)
	var seq int64
	x := uint64(0x9e3779b97f4a7c15)
	next := func() int64 { // xorshift64: 1 ns .. 200 us
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int64(x%200000) + 1
	}
	for range pending {
		seq++
		h.push(&bareEvent{at: next(), seq: seq})
	}
	start := time.Now()
	for range events {
		e := h.pop()
		seq++
		e.at += next()
		e.seq = seq
		h.push(e)
	}
	return float64(events) / time.Since(start).Seconds()
}

// bareLoopEvents is how many events each iteration times the bare loop for
// (some tens of ms).
const bareLoopEvents = 1 << 20

// BenchmarkBareEventLoop is the bare 4-ary heap loop alone (events/s).
func BenchmarkBareEventLoop(b *testing.B) {
	var rate float64
	for b.Loop() {
		rate += bareLoop(bareLoopEvents)
	}
	b.ReportMetric(rate/float64(b.N), "events/s")
	b.ReportMetric(0, "ns/op")
}

// benchEngine runs spec in process per iteration and reports events/s, host
// CPU ms per simulated second, events per simulated wakeup, allocations per
// event, and the engine's events/s as a fraction of the bare loop's timed in
// the same iteration ("x-bare-loop").
func benchEngine(b *testing.B, spec *config.Spec) {
	b.ReportAllocs()
	var events, wakeups int64
	var wall, cpu time.Duration
	var bare float64
	for b.Loop() {
		bare += bareLoop(bareLoopEvents)
		c0, w0 := cpuTime(b), time.Now()
		res, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtins)})
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(w0)
		cpu += cpuTime(b) - c0
		events += int64(res.Config.Events)
		wakeups += res.Total("wakeups")
	}
	rate := float64(events) / wall.Seconds()
	simS := float64(spec.Run.Duration) / 1e9 * float64(b.N)
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(bare/float64(b.N), "bare-events/s")
	b.ReportMetric(rate/(bare/float64(b.N)), "x-bare-loop")
	b.ReportMetric(float64(cpu.Milliseconds())/simS, "cpu-ms/sim-s")
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
	if wakeups > 0 {
		b.ReportMetric(float64(events)/float64(wakeups), "events/wakeup")
	}
}

// BenchmarkEngine64 is the engine on a 64-CPU machine: cyclictest (64
// threads at 200 us, 200 simulated ms) and configs/posix-signals.hcl with
// 64 stress-ng --timer instances (5 simulated ms).
func BenchmarkEngine64(b *testing.B) {
	b.Run("cyclictest", func(b *testing.B) {
		benchEngine(b, big64Spec(b, "cyclictest64.hcl", big64Cyclictest, "", 200*time.Millisecond))
	})
	b.Run("posix-signals", func(b *testing.B) { // variant consistent
		benchEngine(b, big64Spec(b, "posix-signals64.hcl", posixSignals64(b), "consistent", 5*time.Millisecond))
	})
}

// gcHeap matches a GODEBUG=gctrace=1 line's heap sizes: at the start of the
// cycle, at its end, and live ("4->4->1 MB").
var gcHeap = regexp.MustCompile(`, (\d+)->(\d+)->(\d+) MB,`)

// runMemory runs `tickemu run` on src (with %DUR% = dur) in a child process
// (this test binary as the command) and returns its peak RSS and the largest
// heap a GC cycle saw, in MB.
func runMemory(b *testing.B, src string, dur time.Duration) (rssMB, heapMB float64) {
	b.Helper()
	file := filepath.Join(b.TempDir(), "mem.hcl")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(src, "%DUR%", dur.String())), 0o644); err != nil {
		b.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "run", file, "--format", "json")
	cmd.Env = append(os.Environ(), hostEnv+"=1", "GODEBUG=gctrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("tickemu run (%v): %v\n%s", dur, err, stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Fatal("no rusage for the child")
	}
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		if m := gcHeap.FindStringSubmatch(sc.Text()); m != nil {
			for _, s := range m[1:3] {
				v, _ := strconv.ParseFloat(s, 64)
				heapMB = max(heapMB, v)
			}
		}
	}
	return float64(ru.Maxrss) / 1024, heapMB
}

// BenchmarkEngine64Memory runs the 64-CPU cyclictest for 100 ms and for 1 s
// (10x) as separate processes and reports each one's peak RSS and GC heap
// peak: memory must not grow with the run's length.
func BenchmarkEngine64Memory(b *testing.B) {
	var rss1, rss10, heap1, heap10 float64
	for b.Loop() {
		r, h := runMemory(b, big64Cyclictest, 100*time.Millisecond)
		rss1, heap1 = rss1+r, heap1+h
		r, h = runMemory(b, big64Cyclictest, time.Second)
		rss10, heap10 = rss10+r, heap10+h
	}
	n := float64(b.N)
	b.ReportMetric(rss1/n, "peak-rss-MB-1x")
	b.ReportMetric(rss10/n, "peak-rss-MB-10x")
	b.ReportMetric(rss10/rss1, "rss-10x/1x")
	b.ReportMetric(heap1/n, "peak-heap-MB-1x")
	b.ReportMetric(heap10/n, "peak-heap-MB-10x")
	b.ReportMetric(0, "ns/op")
}
