// SPDX-License-Identifier: GPL-2.0

//go:build kernel_oracle

package kwheel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
	"github.com/tickemu/tickemu/oracle/ktimer"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// TestSameAsWheel drives kwheel and plugins/wheel (at the library's
// release: levels, next_expiry, pull) through the SDK with the same random
// calls and compares every answer but the costs and catch-up iteration
// counts (kwheel cannot see the next-expiry scans, nor a collect pass that
// expires nothing): return values, placements, bucket expiries, expiries in
// order with their jiffies and re-arms, next events and wheel states.
func TestSameAsWheel(t *testing.T) {
	lib, err := ktimer.Open(ktimer.DefaultPath())
	if err != nil {
		t.Fatal(err)
	}
	setup := sdk.Setup{CPUs: 4, HZ: lib.HZ(), HighRes: true, Seed: 1, TimerMigration: true}
	calls := 0
	for seed := uint64(1); seed <= 20; seed++ {
		k := sdktest.Configure(t, New().(*KWheel), setup, nil)
		g := sdktest.Configure(t, wheel.New().(*wheel.Wheel), setup, sdk.Config{"layout": "levels", "catchup": "next_expiry",
			"softirq_raise": "next_expiry", "migration": "pull"})
		rng := rand.New(rand.NewPCG(seed, 1))
		j := lib.InitialJiffies()
		for cpu := 0; cpu < setup.CPUs; cpu++ {
			k.RunTimers(cpu, j)
			g.RunTimers(cpu, j)
		}
		for i := 0; i < 3000; i++ {
			cpu := rng.IntN(setup.CPUs)
			var desc, kr, gr string
			switch op := rng.IntN(10); {
			case op < 4:
				var f sdk.TimerFlags
				id := sdk.TimerID(rng.IntN(40))
				if id%4 == 1 {
					f |= sdk.TimerPinned
				}
				if id%5 == 2 {
					f |= sdk.TimerDeferrable
				}
				wt := sdk.WheelTimer{ID: id, Expires: j + uint64(rng.IntN(1<<uint(rng.IntN(20)))), Flags: f,
					CallbackCost: int64(rng.IntN(1000))}
				if rng.IntN(5) == 0 {
					wt.Period = 1 + uint64(rng.IntN(300))
				}
				desc = fmt.Sprintf("ModTimer(%d, %d, %+v)", cpu, j, wt)
				a, b := k.ModTimer(cpu, j, wt), g.ModTimer(cpu, j, wt)
				a.Cost, b.Cost = 0, 0
				due(&a.State, j)
				due(&b.State, j)
				kr, gr = fmt.Sprintf("%+v", a), fmt.Sprintf("%+v", b)
			case op < 5:
				id := sdk.TimerID(rng.IntN(40))
				desc = fmt.Sprintf("DelTimer(%d, %d, %d)", cpu, j, id)
				a, b := k.DelTimer(cpu, j, id), g.DelTimer(cpu, j, id)
				a.Cost, b.Cost = 0, 0
				due(&a.State, j)
				due(&b.State, j)
				kr, gr = fmt.Sprintf("%+v", a), fmt.Sprintf("%+v", b)
			case op < 7:
				desc = fmt.Sprintf("RunTimers(%d, %d)", cpu, j)
				kr, gr = runString(k.RunTimers(cpu, j), j), runString(g.RunTimers(cpu, j), j)
			case op < 8:
				desc = fmt.Sprintf("ExpireRemote(%d, %d)", cpu, j)
				kr, gr = runString(k.ExpireRemote(cpu, j), j), runString(g.ExpireRemote(cpu, j), j)
			case op < 9:
				desc = fmt.Sprintf("NextTimerInterrupt(%d, %d)", cpu, j)
				a, b := k.NextTimerInterrupt(cpu, j), g.NextTimerInterrupt(cpu, j)
				a.Cost, b.Cost = 0, 0
				due(&a.State, j)
				due(&b.State, j)
				kr, gr = fmt.Sprintf("%+v", a), fmt.Sprintf("%+v", b)
			default:
				j += 1 + uint64(rng.IntN(1<<uint(rng.IntN(14))))
				continue
			}
			calls++
			if kr != gr {
				t.Fatalf("seed %d call %d %s:\nkwheel %s\nwheel  %s", seed, i, desc, kr, gr)
			}
		}
	}
	t.Logf("%d calls answered alike", calls)
}

// runString prints a RunTimersResult without its costs and iteration
// count (expiry offsets are costs too), and without the jiffies of the
// expiries after a re-arm: kwheel reports the base clock the kernel's
// callback sees, which a re-arm forwards, the wheel plugin the jiffy the
// bucket was collected at (its documented divergence).
func runString(r sdk.RunTimersResult, j uint64) string {
	r.Cost, r.Iterations = 0, 0
	due(&r.State, j)
	rearmed := false
	for i := range r.Expired {
		r.Expired[i].Offset = 0
		if rearmed {
			r.Expired[i].Jiffy = 0
		}
		rearmed = rearmed || r.Expired[i].Rearmed
	}
	return fmt.Sprintf("%+v", r)
}

// due writes a RaiseAt at or before jiffies j as j: the tick raises at its
// next jiffy either way. kwheel finds the first jiffy at or after the
// call's at which the kernel raises; the wheel plugin reports the earliest
// next_expiry, which may be past.
func due(st *sdk.WheelState, j uint64) {
	if st.RaiseAt != sdk.NoExpiry && int64(st.RaiseAt-j) < 0 {
		st.RaiseAt = j
	}
}
