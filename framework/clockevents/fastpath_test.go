package clockevents

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// FuzzProgramShortcut runs one sequence of programmings, acks and state
// changes on twin devices, one through Program and Reprogram (with their
// shortcut for a future event on a ONESHOT channel), the other through
// program (the general path), every write's -ETIME decided by the input, and checks that every
// answer, every counter and every channel field is the same.
func FuzzProgramShortcut(f *testing.F) {
	// Each op is 4 bytes: kind, channel and force, time, -ETIME bits.
	f.Add([]byte{0, 0, 50, 0, 2, 0, 0, 0, 0, 1, 50, 1, 0, 0, 50, 1, 0, 0, 6, 0, 0, 1, 3, 0})
	f.Add([]byte{0, 1, 50, 3, 1, 1, 255, 0, 0, 0, 50, 0, 0, 1, 200, 7, 2, 1, 9, 0, 0, 3, 1, 0})
	f.Add([]byte{3, 0, 2, 0, 0, 0, 50, 0, 4, 1, 0, 0, 0, 1, 50, 0, 3, 0, 3, 0, 0, 0, 60, 255})
	f.Fuzz(func(t *testing.T, ops []byte) {
		for _, opts := range []Options{{}, {MinDelta: RetryTenfold}, {MinDelta: RetryOnce}, {StarvationGuard: true}} {
			for _, spec := range []sdk.DeviceSpec{hpetSpec, lapicSpec} {
				fast, ff := newDevice(spec, 2000, opts)
				slow, fs := newDevice(spec, 2000, opts)
				var in []byte // the -ETIME answers still to give, one bit a write
				etime := func(n, _ int, _ ktime.Time, _ uint64) bool {
					if n/8 >= len(in) {
						return false
					}
					return in[n/8]>>(n%8)&1 != 0
				}
				ff.etime, fs.etime = etime, etime
				now := ktime.Time(ktime.Millisecond)
				for i := 0; i+3 < len(ops); i += 4 {
					op, a, b, e := ops[i], ops[i+1], ops[i+2], ops[i+3]
					ch := int(a) % spec.Channels
					in = []byte{e}
					ff.writes, fs.writes = ff.writes[:0], fs.writes[:0]
					switch op % 5 {
					case 0, 1: // a programming, future or past, forced or not
						expires := now.Add(int64(b)*int64(b)*97 - 2000)
						if op%5 == 1 && b == 255 {
							expires = ktime.Max
						}
						var rf, rs ProgramResult
						if e&0x80 != 0 {
							rf = fast.Program(ch, now, expires, a&1 != 0)
						} else {
							cost, fireAt, full := fast.Reprogram(ch, now, expires, a&1 != 0)
							if full != nil {
								rf = *full
								if cost != rf.Cost || fireAt != rf.FireAt {
									t.Fatalf("op %d: Reprogram = %d, %d, %+v: cost and fire time differ from the outcome's", i, cost, fireAt, rf)
								}
							} else {
								m := fast.ch[ch].minDeltaNs
								rf = ProgramResult{FireAt: fireAt, Cost: cost, Writes: 1, MinDeltaFrom: m, MinDeltaNs: m}
							}
						}
						slow.program(&rs, ch, now, expires, a&1 != 0)
						if rf != rs {
							t.Fatalf("op %d: Program(ch %d, now %d, expires %d) = %+v, general path %+v", i, ch, now, expires, rf, rs)
						}
					case 2:
						fast.Ack(ch, now)
						slow.Ack(ch, now)
					case 3:
						st := sdk.DeviceState(b % 5)
						fast.SetState(ch, now, st, 1_000_000)
						slow.SetState(ch, now, st, 1_000_000)
					case 4:
						fast.Shutdown(ch, now)
						slow.Shutdown(ch, now)
					}
					for c := range fast.ch {
						if fast.ch[c] != slow.ch[c] {
							t.Fatalf("op %d: channel %d is %+v, general path %+v", i, c, fast.ch[c], slow.ch[c])
						}
					}
					now = now.Add(int64(b) * 1000)
				}
			}
		}
	})
}
