package kernel_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
)

// TestEOIBeforeLocalTimerEntry: sysvec_apic_timer_interrupt()
// (arch/x86/kernel/apic/apic.c) calls apic_eoi() before
// trace_local_timer_entry(), and the EOI is CPU time of the interrupted
// context. A 1 us POSIX timer written as a TSC deadline that has passed
// when the write lands (past_deadline_latency 0: KVM injects it at the
// write) reaches local_timer_entry only after the write and the EOI, and
// the task that armed it loses the EOI: its next computation ends that
// much later than with a bare-metal EOI.
func TestEOIBeforeLocalTimerEntry(t *testing.T) {
	run := func(eoi string) (entryAfterStart int64, computeEnd int64) {
		r := newRigDevice(t, "consistent", 1, true, sdk.Config{
			"deadline_write_cost": "8000", "eoi_cost": eoi, "past_deadline_latency": "0ns",
		})
		id := -1
		steps := []step{do(kernel.Sigprocmask{How: kernel.SigSetmask, Set: kernel.SigMask(kernel.SIGRTMIN)})}
		steps = append(steps, createTimer(&id, sdk.ClockRealtime)...)
		steps = append(steps,
			func(kernel.Result) kernel.Action { return kernel.TimerSettime{ID: id, Value: us} },
			do(kernel.Compute{NS: us}))
		s := &script{steps: steps}
		r.spawn("p", "arm", 0, kernel.SchedOther, 0, s)
		r.run(2 * ms)
		start := traceTime(t, r, `hrtimer_start: .* function=posix_timer_fn`)
		entry := traceTime(t, r, `local_timer_entry:`, start)
		return entry - start, int64(s.results[len(s.results)-1].Now)
	}
	bareGap, bareEnd := run("50")
	kvmGap, kvmEnd := run("7000")
	// The trace prints microseconds: the write (8 us) and the EOI (7 us)
	// lie between the start and the entry, not the write alone.
	if kvmGap < 15 || bareGap > 9 {
		t.Errorf("hrtimer_start -> local_timer_entry: %d us with a 7 us EOI, %d us with 50 ns; want >= 15 and <= 9", kvmGap, bareGap)
	}
	if d := kvmEnd - bareEnd; d < 6900 || d > 7100 {
		t.Errorf("the arming task's next computation ends %d ns later with a 7 us EOI; want about 6950 (the EOI stops it)", d)
	}
}

// traceTime returns the microsecond of the first trace line matching
// pattern at or after the microsecond from (if given).
func traceTime(t *testing.T, r *rig, pattern string, from ...int64) int64 {
	t.Helper()
	re := regexp.MustCompile(pattern)
	ts := regexp.MustCompile(`\s(\d+)\.(\d{6}):`)
	for _, l := range regexp.MustCompile("\n").Split(r.buf.String(), -1) {
		if !re.MatchString(l) {
			continue
		}
		m := ts.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		frac, _ := strconv.ParseInt(m[2], 10, 64)
		v := sec*1_000_000 + frac
		if len(from) == 0 || v >= from[0] {
			return v
		}
	}
	t.Fatalf("no trace line matches %q", pattern)
	return 0
}
