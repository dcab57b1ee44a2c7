// Package sdk is the public contract between tickemu and its plugins.
//
// Start here: a plugin is one of four kinds, named after the kernel structure it
// models.
//
//	TimerBase         struct timer_base        kernel/time/timer.c     (plugins/wheel)
//	HRTimerBase       struct hrtimer_cpu_base  kernel/time/hrtimer.c   (plugins/hrtimer)
//	ClockEventDevice  struct clock_event_device + its driver           (plugins/lapic, hpet, archtimer)
//	Governor          struct cpuidle_governor  drivers/cpuidle/governors/ (plugins/governor)
//
// Every kind embeds Plugin (Info, Schema, Configure, Counters). One plugin value
// models every CPU of the machine; per-CPU calls carry the CPU number.
//
// Plugins are pure state machines. The host passes the simulated time (or jiffies)
// on every call; the plugin returns its effects (expired timers, device writes to
// perform) and what the call cost in simulated nanoseconds, computed from the
// plugin's own cost parameters. A plugin never calls another plugin and never reads
// the wall clock or an unseeded random source: the same calls in the same order
// must give the same answers, in process and over gRPC.
//
// Callbacks are declared, not called back. A timer carries the cost of its callback
// and whether the callback re-arms it (Period), so a plugin can run a whole
// hrtimer_interrupt() or __run_timers() in one call and report when each callback
// ran; the host then applies each callback's side effects (wake a task, queue a
// signal, run the tick) at that time. This keeps the plugin boundary at one round
// trip per interrupt or softirq instead of one per timer.
//
// Problems the user must see (a config value the plugin rejects) are Diagnostics;
// the error return of a transport means the transport failed.
//
// # What a plugin may import
//
// Everything a plugin needs is this package and the packages under it:
//
//	framework/sdk/ktime      simulated time, HZ and jiffies, duration and frequency units
//	framework/sdk/clockmath  the kernel's mult/shift and delta arithmetic, counter clocks
//	framework/sdk/simrand    the seeded random streams (derive them from Setup.Seed and Setup.Role)
//	framework/sdk/serve      main of a tickemu-plugin-NAME binary
//	framework/sdk/sdktest    conformance suites and GRPCPair, the plugin over the real transport in-test
//	framework/sdk/model      the answers a declared DeadlineModel, HRTimerModel or NextTimerModel gives
//	framework/sdk/eras       kernel releases and the rules a schema's Eras follow
//	framework/sdk/shim       both ends of the go-plugin transport (serve and GRPCPair use it)
//	framework/sdk/pluginlog  a plugin process's log lines, as the host reads them
//	framework/sdk/cpuwait    whether a late call hangs or waits for a CPU (the call deadline's judge)
//
// plus plugins/builtin, the builtin factories, for tests and custom builds.
// None of these packages imports a host package (kernel, experiment, config,
// loader, ...), directly or not: internal/repocheck's
// TestSDKImportsNoHostPackage holds every package under framework/sdk to it,
// so a plugin author's go test builds the SDK and nothing of the simulator.
// Running a whole scenario with a plugin linked in needs the host: that
// harness is framework/scenariotest (RunScenario), host-side and outside
// this promise. A plugin imports no other tickemu package (plugins/builtin's
// TestPluginImports checks the plugins in the tree and the examples; an
// example's tests may also import framework/scenariotest).
//
// # Compatibility promise
//
// The SDK is the packages listed above. Two things are promised, both tied to
// ProtocolVersion:
//
//   - Wire: a plugin binary built against any SDK with the same
//     ProtocolVersion is served by any tickemu speaking that version; the
//     handshake refuses any other version and says which.
//   - Go API: while ProtocolVersion stays the same, the SDK's exported API
//     changes only compatibly in the sense of golang.org/x/exp/apidiff (no
//     removed or changed identifier, no method added to an interface a plugin
//     implements), so a plugin that compiled keeps compiling and a custom build
//     (`tickemu build --with`) of it keeps linking. An incompatible change
//     comes with a ProtocolVersion bump, in the same commit.
//
// `make api-check` (part of `make ci`) enforces the Go side: it compares the
// SDK with the baseline: the SDK at the last commit that changed
// api/sdk/BASELINE, which records the protocol version (`make api-baseline`
// writes it in the commit that bumps ProtocolVersion). The check exports that
// commit from the git history into a temp dir and runs apidiff there, so no
// generated file is committed. There is no release tag yet; after the first
// release the comparison is against the last release tag of the same protocol
// version.
//
// Behaviour is part of the promise too: the same calls in the same order give
// the same answers; simrand's sequence for a seed and name never changes;
// clockmath follows the kernel's integer arithmetic bit for bit; Config values
// keep their canonical forms. Until tickemu 1.0 the module has no major
// version to bump, so ProtocolVersion is the version to watch.
package sdk
