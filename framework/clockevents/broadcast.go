package clockevents

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Broadcast models the oneshot tick broadcast of kernel/time/tick-broadcast.c
// (v6.12) as a pure state machine: CPUs whose local timer stops in a deep idle
// state (FeatC3Stop) hand their next event to one global broadcast device
// (the HPET), whose interrupt wakes them by IPI.
//
// It owns the broadcast masks (tick_broadcast_oneshot_mask, _pending_mask,
// _force_mask) and drives two Devices: channel bcCh of the broadcast device
// and, per CPU, channel cpu of the local device, whose next_event it reads and
// whose state it switches. The engine owns both Devices and keeps one pending
// fire event per channel at Device.FireAt.
//
// Divergence: only oneshot broadcast mode is modelled (the periodic-mode
// tick_broadcast_mask path and the hrtimer pseudo broadcast device are not);
// lock contention on tick_broadcast_lock is not charged.
type Broadcast struct {
	bc    *Device
	bcCh  int
	local *Device
	// oneshot: CPUs in deep idle relying on the broadcast device.
	// pending: CPUs the broadcast handler already decided to wake.
	// force: CPUs whose event had expired at idle exit; the handler must
	// run their event.
	oneshot, pending, force cpumask
	tmp                     cpumask
	ipis                    []int
	target                  int
}

// NewBroadcast installs bc (channel bcCh) as the broadcast device for the
// per-CPU device local. bc must qualify as tick_check_broadcast_device()
// demands: oneshot capable, not per-CPU, not stopping in deep idle.
func NewBroadcast(bc *Device, bcCh int, local *Device) (*Broadcast, error) {
	if bc.Has(sdk.FeatPerCPU) || bc.Has(sdk.FeatC3Stop) || !bc.Has(sdk.FeatOneshot) {
		return nil, fmt.Errorf("%w: %q", ErrNotBroadcast, bc.Name())
	}
	if bcCh < 0 || bcCh >= bc.Channels() {
		return nil, fmt.Errorf("%w: channel %d of %q", ErrNotBroadcast, bcCh, bc.Name())
	}
	if !local.Has(sdk.FeatPerCPU) {
		return nil, fmt.Errorf("%w: %q", ErrNotLocal, local.Name())
	}
	n := local.Channels()
	return &Broadcast{
		bc: bc, bcCh: bcCh, local: local,
		oneshot: newCPUMask(n), pending: newCPUMask(n), force: newCPUMask(n), tmp: newCPUMask(n),
		ipis:   make([]int, 0, n),
		target: -1,
	}, nil
}

// InMask reports whether cpu relies on the broadcast device.
func (b *Broadcast) InMask(cpu int) bool { return b.oneshot.has(cpu) }

// Pending reports whether cpu is in the pending mask.
func (b *Broadcast) Pending(cpu int) bool { return b.pending.has(cpu) }

// Forced reports whether cpu is in the force mask; the kernel's
// tick_check_broadcast_expired() lets the idle loop avoid a deep state then.
func (b *Broadcast) Forced(cpu int) bool { return b.force.has(cpu) }

// TargetCPU is the CPU the broadcast device was last programmed for
// (tick_broadcast_set_affinity()'s target; -1 before the first programming).
// The engine routes the broadcast interrupt there for a device whose IRQ
// follows its target (DYNIRQ), or to a fixed CPU (legacy IRQ0).
func (b *Broadcast) TargetCPU() int { return b.target }

// EnterResult is the outcome of Enter.
type EnterResult struct {
	// Busy is -EBUSY: the CPU is in the force mask (the broadcast IPI is
	// imminent) and must not enter the deep state. Its bit stays in the
	// mask, as in the kernel; see IRQEnter.
	Busy bool
	// Handled: the CPU was added to the broadcast mask (false when the
	// local device keeps running in deep idle, or the CPU was already in).
	Handled bool
	// LocalStopped: the local device was shut down.
	LocalStopped bool
	// Program is the broadcast device programming, Program.Writes == 0
	// when the broadcast device already fires early enough.
	Program ProgramResult
	// Cost is everything the call charged to cpu (local shutdown and
	// broadcast programming).
	Cost int64
}

// Enter models tick_broadcast_enter() -> ___tick_broadcast_oneshot_control(
// TICK_BROADCAST_ENTER) (v6.12) for cpu at now: a CPU whose local device does
// not stop in deep idle (no FeatC3Stop) needs nothing (tick_broadcast_oneshot_
// control()); otherwise, the first time, set its bit in the oneshot mask, shut
// the local device down (broadcast_shutdown_local(): a switch to SHUTDOWN that
// keeps next_event), then either report busy (force bit set) or, if the CPU's
// next event is earlier than the broadcast device's, reprogram the broadcast
// device for it (tick_broadcast_set_event(): ONESHOT, program with force=1).
//
// Divergence: a local channel not in oneshot mode (periodic tick) reports
// Busy; the kernel's periodic broadcast mode is not modelled.
func (b *Broadcast) Enter(cpu int, now ktime.Time) EnterResult {
	var r EnterResult
	if !b.local.Has(sdk.FeatC3Stop) {
		return r
	}
	if st := b.local.State(cpu); st == sdk.StatePeriodic {
		r.Busy = true
		return r
	}
	if b.oneshot.testAndSet(cpu) {
		return r
	}
	r.Handled = true
	sr := b.local.SetState(cpu, now, sdk.StateShutdown, 0)
	r.LocalStopped = sr.OK
	r.Cost += sr.Cost
	if b.force.has(cpu) {
		r.Busy = true
		return r
	}
	if next := b.local.NextEvent(cpu); next < b.bc.NextEvent(b.bcCh) {
		r.Program = b.setEvent(cpu, now.Add(r.Cost), next)
		r.Cost += r.Program.Cost
	}
	return r
}

// setEvent models tick_broadcast_set_event(): switch the broadcast device to
// ONESHOT if needed, program it with force=1, and aim its interrupt at cpu.
func (b *Broadcast) setEvent(cpu int, now, expires ktime.Time) ProgramResult {
	var cost int64
	if b.bc.State(b.bcCh) != sdk.StateOneshot {
		cost = b.bc.SetState(b.bcCh, now, sdk.StateOneshot, 0).Cost
	}
	r := b.bc.ProgramEvent(b.bcCh, now.Add(cost), expires, true)
	r.Cost += cost
	b.target = cpu
	return r
}

// ExitResult is the outcome of Exit.
type ExitResult struct {
	// Handled: the CPU was in the broadcast mask.
	Handled bool
	// Pending: the broadcast handler already sent (or is sending) this
	// CPU's IPI, so the local device is not reprogrammed.
	Pending bool
	// Forced: the CPU's event had already expired; it was put in the force
	// mask for the broadcast handler to run, and the local device is not
	// reprogrammed (avoids the broadcast/local ping-pong).
	Forced bool
	// Program is the local device reprogramming (tick_program_event(
	// dev->next_event, 1)), Program.Writes == 0 when none was made.
	Program ProgramResult
	// Cost is everything charged to cpu (local state change and write).
	Cost int64
}

// Exit models tick_broadcast_exit() -> ___tick_broadcast_oneshot_control(
// TICK_BROADCAST_EXIT) (v6.12) for cpu at now: if the CPU was in the oneshot
// mask, clear it and switch the local device back to ONESHOT; then no
// reprogramming if the pending bit was set (cleared here) or there is no next
// event; set the force bit if the next event has already expired; otherwise
// reprogram the local device for it.
func (b *Broadcast) Exit(cpu int, now ktime.Time) ExitResult {
	var r ExitResult
	if !b.oneshot.testAndClear(cpu) {
		return r
	}
	r.Handled = true
	sr := b.local.SetState(cpu, now, sdk.StateOneshot, 0)
	r.Cost += sr.Cost
	if b.pending.testAndClear(cpu) {
		r.Pending = true
		return r
	}
	next := b.local.NextEvent(cpu)
	if next == ktime.Max {
		return r
	}
	t := now.Add(r.Cost)
	if next <= t {
		b.force.set(cpu)
		r.Forced = true
		return r
	}
	r.Program = b.local.Program(cpu, t, next, true)
	r.Cost += r.Program.Cost
	return r
}

// IRQEnter models tick_check_oneshot_broadcast_this_cpu(), called from
// irq_enter() when an interrupt ends cpu's idle: a CPU still in the broadcast
// mask gets its local device back in ONESHOT mode (its bit stays set until
// Exit). It returns the cost.
func (b *Broadcast) IRQEnter(cpu int, now ktime.Time) int64 {
	if !b.oneshot.has(cpu) || b.local.State(cpu) == sdk.StatePeriodic {
		return 0
	}
	return b.local.SetState(cpu, now, sdk.StateOneshot, 0).Cost
}

// InterruptResult is the outcome of HandleInterrupt.
type InterruptResult struct {
	// IPIs lists the CPUs to wake with the broadcast IPI (the local
	// device's ->broadcast(), LOCAL_TIMER_VECTOR on x86), ascending. The
	// slice is reused by the next call.
	IPIs []int
	// Local: the handling CPU's own event expired; it runs its local
	// event handler directly (tick_do_broadcast() returned true).
	Local bool
	// Ack is the broadcast device's interrupt acknowledge.
	Ack AckResult
	// Program rearms the broadcast device for the earliest remaining
	// sleeper (Program.Writes == 0 when none remains).
	Program ProgramResult
	// Cost is everything charged to the handling CPU (ack and rearm; the
	// IPIs' send cost is the engine's).
	Cost int64
}

// HandleInterrupt models kernel/time/tick-broadcast.c:
// tick_handle_oneshot_broadcast() (v6.12) on cpu at now, including the
// driver's acknowledge: every sleeper whose event has expired goes to the
// pending mask and is woken; the force mask is folded in and cleared; the
// handling CPU itself runs its handler locally instead of receiving an IPI;
// the device is rearmed with force=1 for the earliest remaining sleeper.
func (b *Broadcast) HandleInterrupt(cpu int, now ktime.Time) InterruptResult {
	var r InterruptResult
	r.Ack = b.bc.Ack(b.bcCh, now) // dev->next_event = KTIME_MAX
	r.Cost = r.Ack.Cost
	now = now.Add(r.Cost) // the handler's ktime_get() runs after the ack
	next, nextCPU := ktime.Max, 0
	b.tmp.zero()
	b.ipis = b.oneshot.appendCPUs(b.ipis[:0])
	for _, c := range b.ipis {
		ev := b.local.NextEvent(c)
		if ev <= now {
			b.tmp.set(c)
			b.pending.set(c)
		} else if ev < next {
			next, nextCPU = ev, c
		}
	}
	b.pending.clear(cpu)
	b.tmp.or(b.force)
	b.force.zero()
	if b.tmp.testAndClear(cpu) {
		r.Local = true
	}
	b.ipis = b.tmp.appendCPUs(b.ipis[:0])
	r.IPIs = b.ipis
	if next != ktime.Max {
		r.Program = b.setEvent(nextCPU, now, next)
		r.Cost += r.Program.Cost
	}
	return r
}
