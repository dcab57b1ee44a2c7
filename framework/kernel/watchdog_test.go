package kernel_test

import (
	"errors"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sim"
)

// TestLivelockEndsRun: an event that keeps re-scheduling itself at the same
// instant (here an external event, as a workload would schedule one) stops
// simulated time; the progress watchdog ends the run with an error that says
// when and which events, and the CPUs' state stays readable.
func TestLivelockEndsRun(t *testing.T) {
	r := newRigTrace(t, "consistent", 2, false)
	var again func(now ktime.Time)
	again = func(now ktime.Time) { r.k.At(now, "runaway", again) }
	r.k.At(3*ktime.Time(ktime.Millisecond), "runaway", again)
	r.k.Start(0)
	err := r.k.Run(ktime.Time(10 * ktime.Millisecond))
	var le *sim.LivelockError
	if !errors.As(err, &le) {
		t.Fatalf("Run = %v, want a *sim.LivelockError", err)
	}
	t.Logf("tickemu: %v", err)
	if le.At != 3*ktime.Time(ktime.Millisecond) || le.Events < sim.DefaultLivelockLimit ||
		len(le.Last) != 1 || le.Last[0].Name != "runaway" {
		t.Errorf("LivelockError = %+v, want at 3ms after %d events, all \"runaway\"", le, sim.DefaultLivelockLimit)
	}
	if r.k.Now() != le.At {
		t.Errorf("Now() = %v after the livelock, want %v", r.k.Now(), le.At)
	}
}
