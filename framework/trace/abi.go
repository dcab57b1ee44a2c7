package trace

import "github.com/tickemu/tickemu/framework/sdk/eras"

// ABI is what a kernel release's tracepoints name and print where releases
// differ, for the events the model emits: the emitters (framework/kernel)
// and the trace.dat formats follow the release a run models, so a trace
// reads like that kernel's. testdata/formats holds the format files of a
// real kernel the newest ABI is checked against (abi_test.go).
type ABI struct {
	// Release is the release the ABI is that of.
	Release eras.Release
	// TickFunction is the tick's hrtimer callback as hrtimer_start and
	// hrtimer_expire_entry print it (function=): tick_sched_timer up to 6.6,
	// tick_nohz_highres_handler in 6.7 and 6.8 (dba428a678c7 "tick/nohz:
	// Rename the tick handlers to more self-explanatory names"),
	// tick_nohz_handler from 6.9 (37263ba0c44b "tick/nohz: Remove duplicate
	// between lowres and highres handlers").
	TickFunction string
	// HRSetup is the name of hrtimer_setup()'s event: hrtimer_init, and
	// hrtimer_setup from 6.15 (5c4da3a96bf4 "tracing/timers: Rename
	// hrtimer_init event to hrtimer_setup"), with the same fields.
	HRSetup string
	// WasArmed: hrtimer_start prints was_armed= after mode= (7.1,
	// f2e388a019e4 "hrtimer: Reduce trace noise in hrtimer_start()": the
	// return value of remove_hrtimer() in __hrtimer_start_range_ns(), 1 when
	// the timer was queued; 0 for the requeue of a callback that returned
	// HRTIMER_RESTART, which __run_hrtimer() dequeued before the callback).
	// Backported to the stable series (6.18.44 prints it).
	WasArmed bool
}

// Events renamed between releases: hrtimer_setup()'s event.
const (
	EventHRInit  = "hrtimer_init"
	EventHRSetup = "hrtimer_setup"
)

// ABIAt is the ABI of release r; the zero release (a run that names no
// kernel version) is the newest modelled release, eras.Newest.
func ABIAt(r eras.Release) ABI {
	if r.IsZero() {
		r = eras.Newest
	}
	at := func(maj, min int) bool { return r.Compare(eras.Release{Major: maj, Minor: min}) >= 0 }
	a := ABI{Release: r, TickFunction: "tick_sched_timer", HRSetup: EventHRInit, WasArmed: at(7, 1)}
	switch {
	case at(6, 9):
		a.TickFunction = "tick_nohz_handler"
	case at(6, 7):
		a.TickFunction = "tick_nohz_highres_handler"
	}
	if at(6, 15) {
		a.HRSetup = EventHRSetup
	}
	return a
}
