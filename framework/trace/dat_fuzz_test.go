package trace

import (
	"bytes"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/eras"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace/tracedat"
)

// FuzzBinaryFormats feeds event text to the trace.dat and Perfetto protobuf
// encoders, which parse the text trace's fields back: whatever the text, an
// event is written or refused with an error, never a panic, and the
// files close.
func FuzzBinaryFormats(f *testing.F) {
	for _, s := range [][2]string{
		{"hrtimer_start", "hrtimer_start: hrtimer=00000000ed2d4a55 function=posix_timer_fn expires=2600 softexpires=2600 mode=ABS"},
		{"hrtimer_start", "hrtimer_start: hrtimer=00000000ed2d4a55 function=tick_nohz_handler expires=4000000 softexpires=4000000 mode=ABS|PINNED|HARD was_armed=1"},
		{"timer_start", "timer_start: timer=000000007f949474 function=vmstat expires=4294668296 [timeout=1000] bucket_expiry=4294668352 cpu=0 idx=129 flags=D|P"},
		{"sched_switch", "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid=1000 next_prio=0"},
		{"itimer_state", "itimer_state: which=0 expires=0 it_value=1.000000 it_interval=0.000500"},
		{"irq_handler_entry", "irq_handler_entry: irq=0 name=timer"},
		{"sys_enter_clock_nanosleep", "sys_clock_nanosleep(which_clock: 1, flags: 1, rqtp: 7ffd03e80070, rmtp: 0)"},
		{"sys_exit_clock_nanosleep", "sys_clock_nanosleep -> 0xfffffffffffffdfc"},
		{"function", "posixtimer_deliver_signal <-dequeue_signal"},
		{"tracing_mark_write", "tracing_mark_write: hit latency threshold (864 > 500)"},
	} {
		f.Add(s[0], s[1], "d.h1.", 1000)
	}
	f.Fuzz(func(t *testing.T, name, text, flags string, pid int) {
		c := Ctx{Comm: "x", Pid: pid, CPU: 0, Flags: flags}
		d := newDatState(tracedat.New(&bytes.Buffer{}, 1), ABIAt(eras.Release{}))
		_ = d.event(ktime.Time(5), c, name, text)
		_ = d.close()
		p := newPfState(&bytes.Buffer{}, 1)
		_ = p.event(ktime.Time(5), c, name, text)
		_ = p.close()
	})
}
