package trace

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/eras"
)

// ABI is what a kernel release's tracepoints name and print where releases
// differ, for the events the model emits: the emitters (framework/kernel)
// and the trace.dat formats follow the release a run models, so a trace
// reads like that kernel's. testdata/formats holds the format files of a
// real kernel the newest ABI is checked against (abi_test.go).
type ABI struct {
	// Release is the release the ABI is that of.
	Release eras.Release
	// TickFunction is the tick's hrtimer callback as hrtimer_start and
	// hrtimer_expire_entry print it (function=), TickFunctionEras.
	TickFunction string
	// HRSetup is the name of hrtimer_setup()'s event, HRSetupEras.
	HRSetup string
	// WasArmed: hrtimer_start prints was_armed= after mode=, WasArmedEras.
	WasArmed bool
}

// Events renamed between releases: hrtimer_setup()'s event.
const (
	EventHRInit  = "hrtimer_init"
	EventHRSetup = "hrtimer_setup"
)

// The ABI's history, as eras (sdk.Era) like the strategy settings': each
// later era is the kernel change that made a release's tracepoints print
// differently, with the stable point releases that carry it before its
// release (Backports). ABIAt reads them as `kernel { version }` reads a
// setting's (eras.ValueAt), so "6.18.44" traces what 6.18.44 prints.
var (
	// TickFunctionEras: tick_sched_timer up to 6.6; the tick handlers
	// renamed in 6.7 and merged in 6.9.
	TickFunctionEras = []sdk.Era{
		{Since: "3.10", Value: "tick_sched_timer"},
		{Since: "6.7", Value: "tick_nohz_highres_handler", Commit: "dba428a678c7",
			Title: "tick/nohz: Rename the tick handlers to more self-explanatory names"},
		{Since: "6.9", Value: "tick_nohz_handler", Commit: "37263ba0c44b",
			Title: "tick/nohz: Remove duplicate between lowres and highres handlers"},
	}
	// HRSetupEras: hrtimer_init, renamed hrtimer_setup (same fields).
	HRSetupEras = []sdk.Era{
		{Since: "3.10", Value: EventHRInit},
		{Since: "6.15", Value: EventHRSetup, Commit: "5c4da3a96bf4",
			Title: "tracing/timers: Rename hrtimer_init event to hrtimer_setup"},
	}
	// WasArmedEras: hrtimer_start's was_armed, the return value of
	// remove_hrtimer() in __hrtimer_start_range_ns(), 1 when the timer was
	// queued; 0 for the requeue of a callback that returned
	// HRTIMER_RESTART, which __run_hrtimer() dequeued before the callback.
	WasArmedEras = []sdk.Era{
		{Since: "3.10", Value: "false"},
		{Since: "7.1", Value: "true", Commit: "f2e388a019e4", Title: "hrtimer: Reduce trace noise in hrtimer_start()",
			Backports: "6.18.44",
			Note: "posted for 6.1, 6.6, 6.12, 6.18 and 7.0 stable (\"[PATCH 6.18 037/957]\" of the 6.18.32-rc1 review, 20 May 2026, " +
				"stable@vger.kernel.org); 6.18.44 is the first point release seen to print it (its tracefs format and " +
				"testdata/formats/linux-6.18.44), not necessarily the first that does; the point releases of the other series are not known"},
	}
)

// ABIAt is the ABI of release r; the zero release (a run that names no
// kernel version) is the newest modelled release, eras.Newest.
func ABIAt(r eras.Release) ABI {
	if r.IsZero() {
		r = eras.Newest
	}
	tick, _ := eras.ValueAt(TickFunctionEras, r)
	setup, _ := eras.ValueAt(HRSetupEras, r)
	armed, _ := eras.ValueAt(WasArmedEras, r)
	return ABI{Release: r, TickFunction: tick, HRSetup: setup, WasArmed: armed == "true"}
}
