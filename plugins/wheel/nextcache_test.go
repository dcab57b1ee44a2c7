package wheel

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/tickemu/tickemu/framework/sdk"
)

// FuzzNextTimerCache runs the fuzz operations of FuzzTimerBaseVsReference
// on two levels wheels, one answering repeated NextTimerInterrupt calls
// from its cache and one that always computes them, with every catch-up
// strategy and migration model: every answer of every call must be the
// same (each idle entry asks twice, so that repeats are exercised).
func FuzzNextTimerCache(f *testing.F) {
	f.Add([]byte{2, 0, 0, 1, 0, 100, 0, 6, 0, 0, 0, 0, 6, 16, 0, 0, 0, 4, 0, 255, 255, 0, 6, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		hz := []int{100, 250, 1000}[int(data[0])%3]
		j := uint64(data[1]) * 1000
		var ops []fuzzOp
		for i := 2; i+5 <= len(data) && len(ops) < 300; i += 5 {
			ops = append(ops, decodeOp(data[i:i+5]))
		}
		for _, catchup := range strategies {
			for _, migr := range []string{"push", "pull"} {
				testNextTimerCache(t, hz, j, ops, "catchup", catchup, "migration", migr)
			}
		}
	})
}

func testNextTimerCache(t *testing.T, hz int, j uint64, ops []fuzzOp, kv ...string) {
	t.Helper()
	kv = append(kv, "layout", "levels")
	cached := newWheelSetup(t, sdk.Setup{CPUs: fuzzCPUs, HZ: hz, Seed: 1, TimerMigration: true}, kv...)
	plain := newWheelSetup(t, sdk.Setup{CPUs: fuzzCPUs, HZ: hz, Seed: 1, TimerMigration: true}, kv...)
	if cached.next == nil {
		t.Fatal("the levels layout has no NextTimerInterrupt cache")
	}
	plain.next = nil
	same := func(i int, call string, a, b any) {
		t.Helper()
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%v op %d: %s with the cache = %+v, without = %+v", kv, i, call, a, b)
		}
	}
	for i, op := range ops {
		switch op.kind {
		case 'm':
			wt := sdk.WheelTimer{ID: op.id, Expires: j + op.delta, Flags: op.flags, CallbackCost: op.cbCost, Period: op.period}
			same(i, "ModTimer", cached.ModTimer(op.cpu, j, wt), plain.ModTimer(op.cpu, j, wt))
		case 'd':
			same(i, "DelTimer", cached.DelTimer(op.cpu, j, op.id), plain.DelTimer(op.cpu, j, op.id))
		case 'r':
			j += min(op.advance, 5000)
			for cpu := 0; cpu < fuzzCPUs; cpu++ {
				if op.mask == 0 || op.mask&(1<<cpu) != 0 {
					same(i, "RunTimers", cached.RunTimers(cpu, j), plain.RunTimers(cpu, j))
					same(i, "ExpireRemote", cached.ExpireRemote(cpu, j), plain.ExpireRemote(cpu, j))
				}
			}
		case 'i':
			j += min(op.advance, 5000)
		case 'n':
			for range 2 {
				same(i, "NextTimerInterrupt", cached.NextTimerInterrupt(op.cpu, j), plain.NextTimerInterrupt(op.cpu, j))
			}
		}
	}
	same(len(ops), "Counters", cached.Counters(), plain.Counters())
}

// TestNextCacheEntry: a cache entry is one 64-byte line and gives back what
// was put, the cost left out, for any state (pending counts up to 2^62, both
// splits); a fresh entry matches no call.
func TestNextCacheEntry(t *testing.T) {
	if n := unsafe.Sizeof(nextCache{}); n != 64 {
		t.Errorf("nextCache is %d bytes, want 64", n)
	}
	if fresh := (nextCache{}); fresh.genPlus1 != 0 {
		t.Error("a fresh entry's key is a gen + 1 that a call can have")
	}
	for _, r := range []sdk.NextTimerResult{
		{Next: 5, Cost: 300, State: sdk.WheelState{RaiseAt: 1, NextExpiry: 5, Pending: 3, Split: true, LocalNext: 5, GlobalNext: sdk.NoExpiry}},
		{Next: sdk.NoExpiry, Cost: 0, State: sdk.WheelState{RaiseAt: sdk.NoExpiry, NextExpiry: sdk.NoExpiry, Pending: 1 << 62, LocalNext: 7, GlobalNext: 9}},
		{Next: 1 << 63, Cost: 1, State: sdk.WheelState{RaiseAt: 1<<64 - 2, NextExpiry: 3, Pending: 0, Split: true}},
	} {
		var nc nextCache
		nc.put(77, 12, &r)
		if nc.jiffies != 77 || nc.genPlus1 != 13 {
			t.Errorf("put(77, 12) keyed jiffies %d, gen+1 %d", nc.jiffies, nc.genPlus1)
		}
		got := sdk.NextTimerResult{Cost: -1, State: sdk.WheelState{Pending: -5}}
		nc.get(&got)
		want := r
		want.Cost = 0
		if got != want {
			t.Errorf("get after put(%+v) = %+v, want %+v", r, got, want)
		}
	}
}
