package traceimport

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// genCapture is an io.Reader that writes a synthetic capture of size bytes on
// the fly (no file): a 4-CPU machine where each CPU ticks every 1 ms, a
// cyclictest-like sleeper per CPU sleeps 200 us, a wheel timer re-arms, and
// unknown events are mixed in, in ftrace or babeltrace text.
type genCapture struct {
	size, done int64
	babel      bool
	buf        []byte
	off        int
	t          int64 // ns
	i          int64
}

func newGen(size int64, babel bool) *genCapture {
	return &genCapture{size: size, babel: babel, t: 100e9}
}

func (g *genCapture) Read(p []byte) (int, error) {
	if g.off >= len(g.buf) {
		if g.done >= g.size {
			return 0, io.EOF
		}
		g.fill()
		// End on a whole line at size bytes.
		if rem := g.size - g.done; int64(len(g.buf)) > rem {
			cut := strings.LastIndexByte(string(g.buf[:rem]), '\n') + 1
			if cut == 0 {
				g.done = g.size
				return 0, io.EOF
			}
			g.buf = g.buf[:cut]
		}
	}
	n := copy(p, g.buf[g.off:])
	g.off += n
	g.done += int64(n)
	return n, nil
}

// fill makes the next batch of lines: one 200 us step of every CPU.
func (g *genCapture) fill() {
	g.buf = g.buf[:0]
	g.off = 0
	if g.i == 0 && !g.babel {
		g.buf = append(g.buf, "# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:4\n#\n"...)
	}
	for cpu := 0; cpu < 4; cpu++ {
		g.t += 50_000
		sl := 0xffffb4a74be70000 + uint64(cpu)*0x100
		now := g.t
		g.line(cpu, "hrtimer_cancel", "hrtimer", sl, now, "", 0, 0)
		g.line(cpu, "hrtimer_expire_entry", "hrtimer", sl, now, "hrtimer_wakeup", now+1200, 0)
		g.line(cpu, "hrtimer_expire_exit", "hrtimer", sl, now+2000, "", 0, 0)
		g.line(cpu, "hrtimer_start", "hrtimer", sl, now+9000, "hrtimer_wakeup", now+209000, now+200000)
		g.line(cpu, "sched_switch", "", 0, now+9500, "", 0, 0)
		if g.i%5 == 0 {
			tk := 0xffff927ae205c418 + uint64(cpu)*0x80000
			g.line(cpu, "hrtimer_expire_entry", "hrtimer", tk, now+100, "tick_sched_timer", now+150, 0)
			g.line(cpu, "timer_start", "timer", 0xf41058a8+uint64(cpu), now+300, "delayed_work_timer_fn", 4294767396+g.i, 0)
			g.line(cpu, "workqueue_queue_work", "", 0, now+400, "", 0, 0)
		}
	}
	g.i++
}

func (g *genCapture) line(cpu int, ev, ptrName string, ptr uint64, t int64, fn string, a, b int64) {
	if g.babel {
		g.babelLine(cpu, ev, ptr, t, fn, a, b)
		return
	}
	g.buf = append(g.buf, "          <idle>-0       ["...)
	g.buf = append(g.buf, fmt.Sprintf("%03d", cpu)...)
	g.buf = append(g.buf, "] d.h1. "...)
	g.buf = strconv.AppendInt(g.buf, t/1e9, 10)
	g.buf = append(g.buf, '.')
	g.buf = append(g.buf, fmt.Sprintf("%06d", t%1e9/1000)...)
	g.buf = append(g.buf, ": "...)
	g.buf = append(g.buf, ev...)
	g.buf = append(g.buf, ": "...)
	switch ev {
	case "sched_switch":
		g.buf = append(g.buf, "prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid=1200 next_prio=19"...)
	case "workqueue_queue_work":
		g.buf = append(g.buf, "work struct=00000000cd023738 function=psi_avgs_work workqueue=events req_cpu=512 cpu=0"...)
	default:
		g.buf = append(g.buf, ptrName...)
		g.buf = append(g.buf, '=')
		g.buf = strconv.AppendUint(g.buf, ptr, 16)
		switch ev {
		case "hrtimer_expire_entry":
			g.buf = append(g.buf, " function="...)
			g.buf = append(g.buf, fn...)
			g.buf = append(g.buf, " now="...)
			g.buf = strconv.AppendInt(g.buf, a, 10)
		case "hrtimer_start":
			g.buf = append(g.buf, " function="...)
			g.buf = append(g.buf, fn...)
			g.buf = append(g.buf, " expires="...)
			g.buf = strconv.AppendInt(g.buf, a, 10)
			g.buf = append(g.buf, " softexpires="...)
			g.buf = strconv.AppendInt(g.buf, b, 10)
			g.buf = append(g.buf, " mode=ABS"...)
		case "timer_start":
			g.buf = append(g.buf, " function="...)
			g.buf = append(g.buf, fn...)
			g.buf = append(g.buf, " expires="...)
			g.buf = strconv.AppendInt(g.buf, a, 10)
			g.buf = append(g.buf, " [timeout=100] bucket_expiry="...)
			g.buf = strconv.AppendInt(g.buf, a+4, 10)
			g.buf = append(g.buf, " cpu=0 idx=110 flags=I"...)
		}
	}
	g.buf = append(g.buf, '\n')
}

func (g *genCapture) babelLine(cpu int, ev string, ptr uint64, t int64, fn string, a, b int64) {
	tod := t % (24 * 3600 * 1e9)
	g.buf = append(g.buf, fmt.Sprintf("[%02d:%02d:%02d.%09d] (+0.000001000) host ", tod/3600e9, tod/60e9%60, tod/1e9%60, tod%1e9)...)
	switch ev {
	case "sched_switch":
		g.buf = append(g.buf, fmt.Sprintf("sched_switch: { cpu_id = %d }, { prev_comm = \"swapper/1\", prev_tid = 0, prev_prio = 20, prev_state = 0, next_comm = \"cyclictest\", next_tid = 1200, next_prio = -81 }\n", cpu)...)
	case "workqueue_queue_work":
		g.buf = append(g.buf, fmt.Sprintf("workqueue_queue_work: { cpu_id = %d }, { work = 0xFFFF8801F000A000, function = 0xFFFFFFFF81234560, req_cpu = 512 }\n", cpu)...)
	case "hrtimer_cancel":
		g.buf = append(g.buf, fmt.Sprintf("timer_hrtimer_cancel: { cpu_id = %d }, { hrtimer = 0x%X }\n", cpu, ptr)...)
	case "hrtimer_expire_exit":
		g.buf = append(g.buf, fmt.Sprintf("timer_hrtimer_expire_exit: { cpu_id = %d }, { hrtimer = 0x%X }\n", cpu, ptr)...)
	case "hrtimer_expire_entry":
		g.buf = append(g.buf, fmt.Sprintf("timer_hrtimer_expire_entry: { cpu_id = %d }, { hrtimer = 0x%X, now = %d, function = 0xFFFFFFFF810C0A10 }\n", cpu, ptr, a)...)
	case "hrtimer_start":
		g.buf = append(g.buf, fmt.Sprintf("timer_hrtimer_start: { cpu_id = %d }, { hrtimer = 0x%X, function = 0xFFFFFFFF810C0A10, expires = %d, softexpires = %d, mode = ( \"HRTIMER_MODE_ABS\" : container = 0 ) }\n", cpu, ptr, a, b)...)
	case "timer_start":
		g.buf = append(g.buf, fmt.Sprintf("timer_start: { cpu_id = %d }, { timer = 0x%X, function = 0xFFFFFFFF81234560, expires = %d, now = %d, flags = 0x200000 }\n", cpu, ptr, a, a-100)...)
	}
}

var genSize = flag.Int64("capture-size", 2<<30, "bytes of synthetic capture BenchmarkImport reads")

// peakRSS is the process's peak resident set (VmHWM), in bytes, or 0.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// drain reads r to the end, sampling the heap every 64k events; it returns
// the events read and the largest heap in use seen.
func drain(tb testing.TB, r Reader) (events, peakHeap int64) {
	var ms runtime.MemStats
	for {
		_, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			tb.Fatal(err)
		}
		events++
		if events&0xffff == 0 {
			runtime.ReadMemStats(&ms)
			peakHeap = max(peakHeap, int64(ms.HeapInuse))
		}
	}
}

// BenchmarkImport reads a multi-GB synthetic capture (-capture-size, default
// 2 GiB) generated on the fly, in each format, and reports MB/s, events/s,
// the peak heap in use and the process's peak RSS:
//
//	go test -run XXX -bench Import -benchtime 1x ./framework/traceimport
func BenchmarkImport(b *testing.B) {
	for _, babel := range []bool{false, true} {
		name := "ftrace"
		if babel {
			name = "babeltrace"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(*genSize)
			var ev, heap int64
			for i := 0; i < b.N; i++ {
				e, h := drain(b, Detect(newGen(*genSize, babel)))
				ev += e
				heap = max(heap, h)
			}
			b.ReportMetric(float64(ev)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
		})
	}
}

// The readers keep constant memory: reading a large generated capture leaves
// the heap in use far below the capture's size (64 MiB, 32 MiB with -short;
// BenchmarkImport reads 2 GiB).
func TestBoundedMemory(t *testing.T) {
	size := int64(64 << 20)
	if testing.Short() {
		size = 32 << 20
	}
	for _, babel := range []bool{false, true} {
		r := Detect(newGen(size, babel))
		ev, heap := drain(t, r)
		if ev < size/400 {
			t.Fatalf("only %d events in %d bytes", ev, size)
		}
		if heap > 24<<20 {
			t.Errorf("babel=%v: heap in use reached %d MiB reading %d MiB", babel, heap>>20, size>>20)
		}
		if r.Stats().Unknown["workqueue_queue_work"] == 0 {
			t.Errorf("unknown events not counted: %v", r.Stats().Unknown)
		}
	}
}
