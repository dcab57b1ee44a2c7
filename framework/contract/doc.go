// Package contract checks every answer a plugin gives the host against the
// plugin contract of framework/sdk, at the boundary: Wrap returns the plugin
// behind a checker of its kind, and the experiment wraps every plugin it
// opens, whether it runs in process (a linked-in plugin can lie as well as a
// remote one) or in its own process. A violation panics with a
// *sdk.ContractError naming the plugin, the call and the value; the run loop
// recovers it and ends the run, as it does a transport failure.
//
// What is checked, and why each bound (see Limits for the numbers):
//
//   - Costs are >= 0 and at most MaxCost, so that now+cost cannot overflow
//     and no single operation outlasts the kernel's own hard-lockup watchdog.
//   - Times: an interrupt the device will raise is after now for
//     SetNextEvent (the core never programs less than 1 us), not before now
//     for SetState's first fire; the next periodic fire after
//     an interrupt (Ack) is after now, or the host would take the same
//     interrupt at the same instant forever; a handler's end and each
//     callback's start lie between its entry and MaxCost later.
//   - Devices: a finite frequency in (0, MaxFreqHz], delta limits with
//     1 <= min <= max, a shift of at most 32, and 1..Limits.maxChannels()
//     channels (the per-channel state is allocated from it).
//   - Timers: every id a plugin reports expired is one the host gave it
//     (ModTimer, Start); a bitmap indexed by id keeps the check to one load.
//   - Lists the host walks (device writes, expiries) are bounded.
//   - Counter names, diagnostic texts and attribute names are printable and
//     bounded in length, and their number is bounded, so a plugin cannot
//     forge report lines, drive the terminal or flood the report.
//
// The checks are a handful of compares per call; BenchmarkChecked measures
// the in-process cost against the bare plugin.
package contract
