package replayrun_test

import (
	"fmt"
	"sort"
	"testing"
)

// TestReplayDeviceInterrupts: a capture's device interrupts reach the
// model's CPU with their run time and the softirqs raised in them; the
// clockevent's interrupt (an hrtimer expires in it, or it is named as a
// timer device) is the model's own and is not delivered again. One CPU,
// idle: eth0 interrupts every 2 ms, each 8 us long and raising NET_RX; an
// irq 27 "arch_timer" and an irq 40 whose handler expires an
// hrtimer; an irq 0 "timer" without one.
func TestReplayDeviceInterrupts(t *testing.T) {
	type ev struct {
		us         int64
		ev, fields string
	}
	var evs []ev
	for i := int64(0); i < 50; i++ {
		at := 1000 + 2000*i
		evs = append(evs, ev{at, "irq_handler_entry", "irq=30 name=eth0"}, ev{at + 3, "softirq_raise", "vec=3 [action=NET_RX]"},
			ev{at + 8, "irq_handler_exit", "irq=30 ret=handled"}, ev{at + 9, "softirq_entry", "vec=3 [action=NET_RX]"},
			ev{at + 20, "softirq_exit", "vec=3 [action=NET_RX]"})
	}
	evs = append(evs, ev{2500, "irq_handler_entry", "irq=27 name=arch_timer"}, ev{2510, "irq_handler_exit", "irq=27 ret=handled"},
		ev{4500, "irq_handler_entry", "irq=40 name=irq40"},
		ev{4501, "hrtimer_expire_entry", fmt.Sprintf("hrtimer=00000000bbbb0001 function=some_fn now=%d", 4501_000)},
		ev{4510, "irq_handler_exit", "irq=40 ret=handled"},
		ev{6500, "irq_handler_entry", "irq=0 name=timer"}, ev{6510, "irq_handler_exit", "irq=0 ret=handled"})
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].us < evs[j].us })
	var c oneCPUCapture
	for _, e := range evs {
		c.line(e.us, e.ev, e.fields)
	}
	out := replayWith(t, c.write(t, "irqs.txt"), "")
	got := func(name string) int64 {
		var n int64
		for _, x := range out.Result.Kernel.Counters {
			if x.Source == "kernel" && x.Name == name {
				n += x.Value
			}
		}
		return n
	}
	if n := got("device_interrupts"); n != 50 {
		t.Errorf("device interrupts delivered: %d, want the 50 of eth0", n)
	}
	if n := got("softirq_NET_RX"); n != 50 {
		t.Errorf("NET_RX softirqs run: %d, want 50 (one raised in each eth0 handler)", n)
	}
	if ctx := out.Result.Kernel.CPUs[0].IRQNS; ctx < 50*8000 {
		t.Errorf("irq time %d ns, want at least the 50 handlers' 8 us each", ctx)
	}
}
