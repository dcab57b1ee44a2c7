package governor

import (
	"math"
	"math/rand"
	"strconv"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

// menuRef is menu_update()'s state with every value in 64 bits, the way
// the model kept it before the 32-bit fields: the reference the device's
// narrower fields must always equal.
type menuRef struct {
	needsUpdate, tickWakeup              bool
	nextTimerUS, lastResidencyUS, tickUS uint64
	bucket, intervalPtr, lastStateIdx    int
	correctionFactor                     [menuBuckets]uint64
	intervals                            [menuIntervals]uint64
}

func (d *menuRef) selectAndUpdate(st []sdk.CPUIdleState, r sdk.IdleSelect) {
	if d.needsUpdate {
		target := &st[d.lastStateIdx]
		var measured uint64
		if d.tickWakeup && d.nextTimerUS > d.tickUS {
			measured = 9 * menuMaxInteresting / 10
		} else {
			measured = d.lastResidencyUS
			lat := nsToUS(target.ExitLatency)
			if measured > 2*lat {
				measured -= lat
			} else {
				measured /= 2
			}
		}
		if measured > d.nextTimerUS {
			measured = d.nextTimerUS
		}
		f := d.correctionFactor[d.bucket]
		f -= f / menuDecay
		if d.nextTimerUS > 0 && measured < menuMaxInteresting {
			f += menuResolution * measured / d.nextTimerUS
		} else {
			f += menuResolution
		}
		d.correctionFactor[d.bucket] = f
		d.intervals[d.intervalPtr] = measured
		d.intervalPtr = (d.intervalPtr + 1) % menuIntervals
		d.needsUpdate = false
	}
	d.tickUS = uint64(r.TickNsec / 1000)
	d.nextTimerUS = nsToUS(r.SleepLength)
	d.bucket = whichBucket(d.nextTimerUS)
}

// TestMenuStateIs64BitExact drives menu with random selects and reflects,
// sleep lengths and residencies from 0 to past 2^32 us, ticks and tick
// wakeups, and checks after every call that its state equals the 64-bit
// reference's: so no stored value ever needs more than its 32 bits
// (correction factors stay at most RESOLUTION * DECAY), and every choice,
// which reads only that state and the request, is what it was.
func TestMenuStateIs64BitExact(t *testing.T) {
	g := MenuFactory.New().(*Menu)
	if d := g.Configure(sdk.Setup{CPUs: 1, HZ: 1000, HighRes: true}, sdk.Config{"select_cost": "0"}); d.HasErrors() {
		t.Fatal(d)
	}
	g.Enable(0, states)
	ref := menuRef{}
	for i := range ref.correctionFactor {
		ref.correctionFactor[i] = menuResolution * menuDecay
	}
	rng := rand.New(rand.NewSource(1))
	ns := func() int64 {
		switch rng.Intn(6) {
		case 0:
			return rng.Int63n(20000) - 1000 // around 0 and the first buckets
		case 1:
			return rng.Int63n(2000000) // up to 2 ms
		case 2:
			return rng.Int63n(200000000) // up to 200 ms
		case 3:
			return math.MaxUint32*1000 + rng.Int63n(3000000) - 1500000 // around the 32-bit saturation
		case 4:
			return math.MaxInt64 - rng.Int63n(1000)
		}
		return rng.Int63()
	}
	for step := 0; step < 200000; step++ {
		r := sdk.IdleSelect{SleepLength: ns(), DeltaTick: ns(), TickStopped: rng.Intn(2) == 0,
			LatencyReq: []int64{0, 10000, sdk.NoLatencyLimit}[rng.Intn(3)], TickNsec: []int64{1000000, 4000000, 10000000, ns()}[rng.Intn(4)]}
		ch := g.Select(r)
		ref.selectAndUpdate(states, r)
		res := ns()
		wake := rng.Intn(3) == 0
		g.Reflect(sdk.IdleReflect{State: ch.State, Residency: res, TickWakeup: wake})
		ref.lastStateIdx, ref.lastResidencyUS, ref.needsUpdate, ref.tickWakeup = ch.State, nsToUS(res), true, wake

		d := &g.dev[0]
		same := d.needsUpdate == ref.needsUpdate && d.tickWakeup == ref.tickWakeup && uint64(d.nextTimerUS) == ref.nextTimerUS &&
			uint64(d.lastResidencyUS) == ref.lastResidencyUS && d.tickUS == ref.tickUS && int(d.bucket) == ref.bucket &&
			int(d.intervalPtr) == ref.intervalPtr && d.lastStateIdx == ref.lastStateIdx
		for i := range ref.correctionFactor {
			same = same && uint64(d.correctionFactor[i]) == ref.correctionFactor[i] && ref.correctionFactor[i] <= menuResolution*menuDecay
		}
		for i := range ref.intervals {
			same = same && uint64(d.intervals[i]) == ref.intervals[i]
		}
		if !same {
			t.Fatalf("step %d (%+v, residency %d): state %+v, the 64-bit reference %+v", step, r, res, *d, ref)
		}
	}
}

// TestSelectBeforeEnable: a select on a CPU never enabled, or out of range,
// panics naming the governor, the call and the CPU.
func TestSelectBeforeEnable(t *testing.T) {
	for _, cpu := range []int{1, 2, -1} {
		g := MenuFactory.New().(*Menu)
		if d := g.Configure(sdk.Setup{CPUs: 2, HZ: 1000, HighRes: true}, sdk.Config{"select_cost": "0"}); d.HasErrors() {
			t.Fatal(d)
		}
		g.Enable(0, states)
		func() {
			defer func() {
				e, ok := recover().(error)
				if want := "governor menu: Select on cpu " + strconv.Itoa(cpu) + " before Enable"; !ok || e.Error() != want {
					t.Errorf("cpu %d: panic %v, want %q", cpu, e, want)
				}
			}()
			g.Select(sdk.IdleSelect{CPU: cpu, LatencyReq: sdk.NoLatencyLimit, TickNsec: 1000000})
		}()
	}
}
