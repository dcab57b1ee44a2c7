// Package clockevents is tickemu's model of the kernel's generic clockevents
// layer and of the oneshot tick broadcast, as a pure library over an
// [sdk.ClockEventDevice] plugin. It has no engine dependency: every call takes
// the simulated time and returns what happened (device writes, their cost, when
// the device will raise its interrupt).
//
// Start with [New], which wraps a configured device plugin in a [Device]:
//
//	kernel/time/clockevents.c:clockevents_config()          -> New (mult/shift, delta limits)
//	kernel/time/tick-oneshot.c:tick_program_event()         -> Device.Program (Device.Reprogram: its common case in registers)
//	kernel/time/clockevents.c:clockevents_program_event()   -> Device.ProgramEvent
//	kernel/time/clockevents.c:clockevents_switch_state()    -> Device.SetState
//	kernel/time/clockevents.c:clockevents_shutdown()        -> Device.Shutdown
//	interrupt prologue (ack, next_event/forced resets)      -> Device.Ack
//	kernel/time/tick-broadcast.c (oneshot broadcast)        -> Broadcast
//
// The conversion arithmetic (mult/shift, delta limits, counter clocks) is in
// framework/sdk/clockmath, part of the plugin SDK, because device plugins use
// it too.
//
// The model follows v6.12 (clockevents_program_event() and the min-delta retry
// loops are unchanged from v4.15 to v7.0); the 2026 "prevent timer interrupt
// starvation" guard (d6e152d905bd with the resets of 4096fd0e8eae) is an
// option, [Options.StarvationGuard].
//
// Ownership: the engine owns one Device per clockevent block and calls it from
// the simulated CPU that owns the channel. Nothing here is safe for concurrent
// use; nothing allocates on the per-operation paths.
package clockevents
