package kernel

import (
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// broadcastEnter is tick_broadcast_enter() for c entering a state that stops
// its local timer; it reports whether the state may be used and the cost.
func (k *Kernel) broadcastEnter(c *CPU, now ktime.Time) (ok bool, cost int64) {
	if k.bcast == nil {
		return false, 0
	}
	r := k.bcast.Enter(c.id, now)
	c.idle.inBroadcast = c.idle.inBroadcast || r.Handled
	c.syncDev(now)
	k.syncBroadcast(now)
	if r.Handled {
		k.Counters.Inc(cntBroadcastEnter, c.id, 1)
	}
	if r.Program.Writes > 0 {
		k.Counters.Inc(cntBroadcastDeviceWrites, -1, int64(r.Program.Writes))
	}
	return !r.Busy, r.Cost
}

// broadcastExit is tick_broadcast_exit() on idle exit; it returns the cost.
func (k *Kernel) broadcastExit(c *CPU, now ktime.Time) int64 {
	r := k.bcast.Exit(c.id, now)
	c.idle.inBroadcast = false
	if r.Handled {
		k.Counters.Inc(cntBroadcastExit, c.id, 1)
	}
	c.syncDev(now)
	k.syncBroadcast(now)
	return r.Cost
}

// syncBroadcast keeps the broadcast event at the broadcast device's fire time.
func (k *Kernel) syncBroadcast(now ktime.Time) {
	fa := k.bcDev.FireAt(0)
	if fa == ktime.Max {
		k.q.Cancel(k.bcEv)
		return
	}
	if fa < now {
		fa = now
	}
	if !k.bcEv.Queued() || k.bcEv.When() != fa {
		k.q.Schedule(k.bcEv, fa)
	}
}

// broadcastFired: the broadcast device raised its interrupt; it is taken by
// the CPU it was programmed for (tick_broadcast_set_affinity()), else CPU 0.
func (k *Kernel) broadcastFired(now ktime.Time) {
	cpu := k.bcast.TargetCPU()
	if cpu < 0 || cpu >= len(k.cpus) {
		cpu = 0
	}
	c := k.cpus[cpu]
	c.flags |= pendBcast
	c.interruptArrived(now)
}

// broadcastInterrupt is tick_handle_oneshot_broadcast() on c: IPI every CPU
// whose event expired, run c's own if it did.
func (c *CPU) broadcastInterrupt(now ktime.Time) ktime.Time {
	k := c.k
	k.Counters.Inc(cntBroadcastInterrupts, c.id, 1)
	// The broadcast device's interrupt is a device irq (the HPET's legacy
	// IRQ 0, "timer"), not the local timer vector.
	k.tr.Event(now, c.traceCtx(), "irq_handler_entry", "irq=0 name=timer")
	defer func() { k.tr.Event(now, c.traceCtx(), "irq_handler_exit", "irq=0 ret=handled") }()
	r := k.bcast.HandleInterrupt(c.id, now)
	now += ktime.Time(r.Cost)
	for _, cpu := range r.IPIs {
		k.sendIPI(now, k.cpus[cpu], ipiTimer)
		k.Counters.Inc(cntBroadcastIpis, cpu, 1)
		// How late the sleeper's event is handed over: the broadcast device's
		// own latency plus the IPI, before the CPU's idle exit latency.
		if ev := k.local.NextEvent(cpu); ev != ktime.Max && ev <= now {
			d := int64(now-ev) + k.costs.IPILatency
			k.Counters.Inc(cntBroadcastWakeDelayNs, cpu, d)
			k.cpus[cpu].idle.bcastDelay = d
		}
		now += ktime.Time(k.costs.IPISend)
	}
	k.syncBroadcast(now)
	if r.Local {
		now = c.localTimerInterrupt(now, false)
	}
	return now
}
