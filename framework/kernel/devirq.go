package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Device interrupts other than the timers' (a network card's, a display
// controller's vblank): a replayed capture's irq_handler_entry/exit pairs.
// They matter to the tick through what every interrupt on an idle CPU does:
// the CPU leaves its idle state, tick_nohz_irq_enter() brings jiffies up to
// date, the handler may raise softirqs, and on the way back to idle the
// tick is decided again (tick_nohz_irq_exit() -> __tick_nohz_idle_enter()
// up to 4.16, the idle loop's tick_nohz_idle_stop_tick() since), which
// re-programs a stopped tick for the next timer.

// extIRQ is one pending device interrupt.
type extIRQ struct {
	irq      int
	name     string
	cost     int64  // the handler's run time
	softirqs uint32 // the vectors it raises (1<<vec)
}

// DeviceInterrupt delivers device interrupt irq (name as /proc/interrupts
// and irq_handler_entry show it) to cpu at now: its handler runs for cost
// ns in hard interrupt context and raises the softirqs in the mask
// (1<<vec: NET_RX from a network driver's napi_schedule(), say). It is
// taken at once, or when the CPU's current activity ends (interrupts
// disabled).
func (k *Kernel) DeviceInterrupt(cpu int, now ktime.Time, irq int, name string, cost int64, softirqs uint32) {
	c := k.cpus[cpu]
	if k.extIRQ == nil {
		k.extIRQ = make([][]extIRQ, len(k.cpus))
	}
	k.extIRQ[cpu] = append(k.extIRQ[cpu], extIRQ{irq: irq, name: name, cost: max(cost, 0), softirqs: softirqs & softirqMask})
	c.flags |= pendExtIRQ
	c.interruptArrived(now)
}

// deviceInterrupts runs c's pending device interrupt handlers
// (handle_irq_event() of each), from now; it returns when they end.
func (c *CPU) deviceInterrupts(now ktime.Time) ktime.Time {
	k := c.k
	for _, d := range k.extIRQ[c.id] {
		k.Counters.Inc(cntDeviceIRQs, c.id, 1)
		if k.tr != nil {
			k.tr.Event(now, c.traceCtx(), "irq_handler_entry", "irq="+itoa(int64(d.irq))+" name="+d.name)
		}
		s := now
		now += ktime.Time(d.cost)
		for vec := 0; vec < nrSoftirqs; vec++ {
			if d.softirqs&(1<<vec) != 0 {
				c.RaiseSoftirq(now, vec)
			}
		}
		if k.tr != nil {
			k.tr.Event(now, c.traceCtx(), "irq_handler_exit", "irq="+itoa(int64(d.irq))+" ret=handled")
		}
		c.span(SpanDeviceIRQ, s, now, 0)
	}
	k.extIRQ[c.id] = k.extIRQ[c.id][:0]
	return now
}
