//go:build unix

package loader

import (
	"os/exec"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/sdk/cpuwait"
)

// TestStartDeadline runs a start deadline of 100 ms on a process that never
// handshakes (sleep), with what the kernel says faked: a process that had
// the CPU is killed at the deadline; one whose group waits for a CPU all
// the time is not, until MaxStretch deadlines; a stopped one is killed at
// the deadline however starved.
func TestStartDeadline(t *testing.T) {
	const timeout = 100 * time.Millisecond
	for _, tc := range []struct {
		name    string
		starved bool
		stopped bool
		// The process must still run after alive, and be killed by limit.
		alive, limit time.Duration
	}{
		{"had the CPU", false, false, 0, timeout + 3*time.Second},
		{"starved", true, false, 3 * timeout, cpuwait.MaxStretch*timeout + 3*time.Second},
		{"stopped", true, true, 0, timeout + 3*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			begin := time.Now()
			read := func(int) cpuwait.Reader {
				return func() (cpuwait.Sample, bool) {
					s := cpuwait.Sample{Stopped: tc.stopped}
					if tc.starved {
						s.Wait = time.Since(begin)
					}
					return s, true
				}
			}
			d := watchStart(timeout, read)
			r := startSleeper(t, d)
			exited := make(chan struct{})
			go func() { _ = r.Wait(t.Context()); close(exited) }()
			defer func() { r.killGroup(); <-exited }()
			select {
			case <-exited:
				t.Fatalf("killed after %v, want it alive until %v", time.Since(begin), tc.alive)
			case <-time.After(tc.alive):
			}
			select {
			case <-exited:
			case <-time.After(time.Until(begin.Add(tc.limit))):
				t.Fatalf("still running after %v", time.Since(begin))
			}
			if !d.stop() || !r.killedByHost() {
				t.Errorf("after the kill, stop() = false or killedByHost() = false; want true")
			}
			t.Logf("killed after %v", time.Since(begin))
		})
	}
	t.Run("stopped before the deadline", func(t *testing.T) {
		d := watchStart(time.Hour, func(int) cpuwait.Reader {
			t.Error("the process was read before the deadline")
			return func() (cpuwait.Sample, bool) { return cpuwait.Sample{}, false }
		})
		r := startSleeper(t, d)
		defer func() { r.killGroup(); _ = r.Wait(t.Context()) }()
		if d.stop() || r.killedByHost() {
			t.Error("a deadline stopped at once expired")
		}
	})
}

// startSleeper starts a 30 s sleep in its own process group under d, as
// the loader starts a plugin process: the runner is handed to d first.
func startSleeper(t *testing.T, d *startDeadline) *groupRunner {
	t.Helper()
	r, err := newGroupRunner(exec.Command("sleep", "30"), exec.Command("sleep"))
	if err != nil {
		t.Fatal(err)
	}
	d.runner <- r
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return r
}
