package kernel_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/plugins/hpet"
	"github.com/tickemu/tickemu/plugins/hrtimer"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// smiWindow is an SMI storm: every HPET programming whose counter read ends
// in [from, to) is held in SMM for delay before its comparator write.
type smiWindow struct {
	from, to ktime.Time
	delay    int64
}

func (w smiWindow) Delay(start, end ktime.Time) int64 {
	if end >= w.from && end < w.to {
		return w.delay
	}
	return 0
}

// etimeRun runs a 1-CPU high-res machine whose local timers are HPET MSI
// channels, with a 100 us periodic hrtimer, in the hang-handling era he, with
// SMIs delaying every HPET write in [5 ms, 5 ms + storm) by 150 us (longer
// than the timer period, so the counter passes the comparator before it is
// written: the driver's -ETIME).
func etimeRun(t *testing.T, he string, storm int64) *kernel.Kernel {
	t.Helper()
	setup := sdk.Setup{CPUs: 1, HZ: 1000, HighRes: true, Seed: 1}
	wb := configure(t, wheel.New(), setup).(sdk.TimerBase)
	hb := configureWith(t, hrtimer.New(), setup, sdk.Config{"hang_delay": he}).(sdk.HRTimerBase)
	setup.Role = "local"
	dev := configure(t, hpet.New(), setup).(*hpet.Plugin)
	dev.SetInterference(smiWindow{from: 5 * ktime.Time(ktime.Millisecond), to: ktime.Time(5*ktime.Millisecond + storm), delay: 150 * ktime.Microsecond})
	local, err := clockevents.New(dev, clockevents.Options{HZ: 1000})
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Options{
		Machine:  kernel.Machine{CPUs: 1, HZ: 1000, NoHZ: "idle", HighRes: true},
		Settings: kernel.KernelSettings{PosixTimerSignals: "consistent", Costs: rigCosts},
		Plugins:  kernel.Plugins{Wheel: wb, HRTimer: hb, Local: local},
		Seed:     1,
	})
	if err != nil {
		t.Fatal(err)
	}
	tm := k.NewHRTimer("periodic_fn", sdk.ClockMonotonic, sdk.HRModeAbs, 200, nil)
	tm.Period = 100 * ktime.Microsecond
	k.Boot()
	k.StartHRTimer(0, 0, tm, ktime.Time(100*ktime.Microsecond), 0, sdk.HRModeAbs)
	if err := k.Run(10 * ktime.Time(ktime.Millisecond)); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestHPETRaceRetriesInterrupt: in the era that programs with
// tick_program_event(expires_next, 0) (hang_delay = "proportional", the
// hrtimer_interrupt() of 2009-2025), an HPET write that misses its comparator
// (-ETIME) sends hrtimer_interrupt() round its retry loop (nr_retries), not
// into the forced min-delta loop of clockevents_program_min_delta(). Under a
// longer SMI storm every pass's write fails and the third failure is a hang
// ("hrtimer: interrupt took"); the 2026 rework (max_hang_time) decides
// without asking the device and never sees the race.
func TestHPETRaceRetriesInterrupt(t *testing.T) {
	for _, tc := range []struct {
		era           string
		storm         int64
		retries, hang bool
	}{
		{"proportional", 100 * ktime.Microsecond, true, false},
		{"proportional", 1 * ktime.Millisecond, true, true},
		{"max_hang_time", 1 * ktime.Millisecond, false, false},
	} {
		k := etimeRun(t, tc.era, tc.storm)
		retries, hangs, etime := k.Counters.Total("hrtimer_retries"), k.Counters.Total("hrtimer_hangs"), k.Counters.Total("device_etime")
		minDelta := k.Counters.Total("device_retries")
		t.Logf("%s, %v storm: %d -ETIME, %d interrupt retries, %d hangs, %d min-delta retries", tc.era, tc.storm, etime, retries, hangs, minDelta)
		if etime == 0 {
			t.Errorf("%s: no -ETIME from the HPET during the SMI storm", tc.era)
		}
		if (retries > 0) != tc.retries || (hangs > 0) != tc.hang {
			t.Errorf("%s, %v storm: %d interrupt retries, %d hangs; want retries %v, hang %v", tc.era, tc.storm, retries, hangs, tc.retries, tc.hang)
		}
		if tc.retries && minDelta > 0 {
			t.Errorf("%s: %d min-delta retries: the -ETIME of tick_program_event(expires_next, 0) must reach the retry loop, not the forced path", tc.era, minDelta)
		}
	}
}
