package wheel

import (
	"reflect"
	"testing"

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
