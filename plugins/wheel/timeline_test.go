package wheel

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/tickemu/tickemu/framework/sdk"
)

// TestTimelines runs the data-driven timelines in testdata/timeline: each
// file is a sequence of host operations on the wheel and, after each, what
// it answered. `go test -run TestTimelines -rewrite` rewrites the expected
// output from what the code does now (review the diff against
// docs/reference/wheel-tick.md!).
//
// Commands (times in jiffies):
//
//	new [hz=N] [combos=(levels/next_expiry,cascade/per_jiffy,...)]
//	    a fresh one-CPU wheel per layout/catch-up combination (default: the
//	    schema's defaults). Every later command runs on each; an output that
//	    differs between combinations is printed per group.
//	mod id=N expires=J [now=J] [pinned]
//	    mod_timer(): whether it was pending and where it was queued.
//	del id=N [now=J]
//	    del_timer().
//	run now=J
//	    run_timer_softirq() at jiffies J: the expired timers (ID@collected
//	    jiffy), the catch-up work and the next expiry.
//	run-each from=J to=J
//	    run_timer_softirq() at every jiffy from..to (a ticking CPU); prints
//	    only the expiries.
//	bucket id=N
//	    the legacy (cascade) layout's bucket of a queued timer: tv1 is 0-255.
func TestTimelines(t *testing.T) {
	datadriven.Walk(t, "testdata/timeline", func(t *testing.T, path string) {
		var wheels []*Wheel
		var names []string
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "new" {
				wheels, names = newTimeline(t, d)
				return ""
			}
			if wheels == nil {
				d.Fatalf(t, "%s before new", d.Cmd)
			}
			outs := make([]string, len(wheels))
			for i, w := range wheels {
				outs[i] = timelineStep(t, d, w)
			}
			return groupOutputs(names, outs)
		})
	})
}

func newTimeline(t *testing.T, d *datadriven.TestData) ([]*Wheel, []string) {
	hz := 1000
	d.MaybeScanArgs(t, "hz", &hz)
	combos := []string{""}
	if a, ok := d.Arg("combos"); ok {
		combos = a.Vals
	}
	var wheels []*Wheel
	for _, c := range combos {
		var kv []string
		if c != "" {
			layout, catchup, ok := strings.Cut(c, "/")
			if !ok {
				d.Fatalf(t, "combo %q is not LAYOUT/CATCHUP", c)
			}
			kv = []string{"layout", layout, "catchup", catchup}
		}
		wheels = append(wheels, newWheel(t, hz, 1, kv...))
	}
	return wheels, combos
}

// timelineStep runs one command on w and returns what it printed.
func timelineStep(t *testing.T, d *datadriven.TestData, w *Wheel) string {
	var id int
	var now, expires, from, to uint64
	d.MaybeScanArgs(t, "id", &id)
	d.MaybeScanArgs(t, "now", &now)
	var b strings.Builder
	switch d.Cmd {
	case "mod":
		d.ScanArgs(t, "expires", &expires)
		tm := sdk.WheelTimer{ID: sdk.TimerID(id), Expires: expires}
		if d.HasArg("pinned") {
			tm.Flags |= sdk.TimerPinned
		}
		r := w.ModTimer(0, now, tm)
		fmt.Fprintf(&b, "was_pending: %v\nbucket: idx %d, expiry %d\n", r.WasPending, r.Index, r.BucketExpiry)
	case "del":
		r := w.DelTimer(0, now, sdk.TimerID(id))
		fmt.Fprintf(&b, "was_pending: %v\n", r.WasPending)
	case "run":
		r := w.RunTimers(0, now)
		fmt.Fprintf(&b, "expired: %s\niterations: %d, cascades: %d, gap: %d\nnext_expiry: %s\n",
			fmtExpired(r.Expired), r.Iterations, r.Cascades, r.Gap, fmtJiffy(r.State.NextExpiry))
	case "run-each":
		d.ScanArgs(t, "from", &from)
		d.ScanArgs(t, "to", &to)
		var ex []sdk.WheelExpiry
		for j := from; j <= to; j++ {
			ex = append(ex, w.RunTimers(0, j).Expired...)
		}
		fmt.Fprintf(&b, "expired: %s\n", fmtExpired(ex))
	case "bucket":
		if _, ok := w.eng.(*cascadeWheel); !ok {
			d.Fatalf(t, "bucket needs the cascade layout")
		}
		fmt.Fprintf(&b, "bucket: %d\n", cascadeBucket(w, sdk.TimerID(id)))
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	return b.String()
}

func fmtExpired(ex []sdk.WheelExpiry) string {
	if len(ex) == 0 {
		return "none"
	}
	s := make([]string, len(ex))
	for i, e := range ex {
		s[i] = fmt.Sprintf("T%d@%d", e.ID, e.Jiffy)
	}
	return strings.Join(s, " ")
}

func fmtJiffy(j uint64) string {
	if j == sdk.NoExpiry {
		return "none"
	}
	return fmt.Sprint(j)
}

// groupOutputs returns the common output when every combination agrees,
// else each distinct output under the combinations that gave it.
func groupOutputs(names, outs []string) string {
	if len(outs) == 1 || !slices.ContainsFunc(outs, func(o string) bool { return o != outs[0] }) {
		return outs[0]
	}
	var b strings.Builder
	done := make([]bool, len(outs))
	for i := range outs {
		if done[i] {
			continue
		}
		var group []string
		for j := i; j < len(outs); j++ {
			if !done[j] && outs[j] == outs[i] {
				done[j] = true
				group = append(group, names[j])
			}
		}
		fmt.Fprintf(&b, "%s:\n", strings.Join(group, ", "))
		for _, l := range strings.Split(strings.TrimSuffix(outs[i], "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String()
}
