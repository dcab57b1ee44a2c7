package hrtimer

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/simrand"
)

// refTimer is the reference model's timer.
type refTimer struct {
	id      sdk.TimerID
	cpu     int
	base    int   // 0..7 as in the plugin
	exp     int64 // in the base's clock; slack is always 0 here
	seq     uint64
	period  int64
	pending bool
}

// refModel is a deliberately naive model of the hrtimer core with zero costs
// and zero slack: an unsorted slice scanned in full. In high-res mode each CPU
// runs an interrupt at its earliest monotonic expiry (or at once if that is
// already past); in low-res mode at every tick. An interrupt at T runs the due
// hard timers base by base (index order), each base in (expiry, enqueue
// order), then the due soft timers the same way.
type refModel struct {
	highRes bool
	res     int64 // hrtimer_resolution
	tickNs  int64
	cpus    int
	off     [4]int64 // MONO, REAL, BOOT, TAI
	timers  []*refTimer
	seq     uint64
	now     ktime.Time
	tick    []ktime.Time
	out     []string
}

func (m *refModel) find(id sdk.TimerID) *refTimer {
	for _, t := range m.timers {
		if t.id == id {
			return t
		}
	}
	return nil
}

func (m *refModel) mono(t *refTimer) int64 { return t.exp - m.off[t.base&3] }

func (m *refModel) fireTime(cpu int) ktime.Time {
	if !m.highRes {
		return m.tick[cpu]
	}
	next := int64(ktime.Max)
	for _, t := range m.timers {
		if t.pending && t.cpu == cpu && m.mono(t) < next {
			next = m.mono(t)
		}
	}
	if next == int64(ktime.Max) {
		return ktime.Max
	}
	return max(ktime.Time(next), m.now)
}

func (m *refModel) advance(to ktime.Time) {
	for {
		cpu, when := -1, ktime.Max
		for c := range m.cpus {
			if f := m.fireTime(c); f < when {
				cpu, when = c, f
			}
		}
		if cpu < 0 || when > to {
			return
		}
		m.now = when
		if !m.highRes {
			m.tick[cpu] = m.tick[cpu].Add(m.tickNs)
		}
		for base := range maxClockBases {
			var due []*refTimer
			for _, t := range m.timers {
				if t.pending && t.cpu == cpu && t.base == base && t.exp <= int64(when)+m.off[base&3] {
					due = append(due, t)
				}
			}
			slices.SortFunc(due, func(a, b *refTimer) int {
				if a.exp != b.exp {
					return int(a.exp - b.exp)
				}
				return int(a.seq) - int(b.seq)
			})
			for _, t := range due {
				m.out = append(m.out, fmt.Sprintf("cpu%d T%d @%v", cpu, t.id, when))
				if t.period == 0 {
					t.pending = false
					continue
				}
				now := int64(when) + m.off[base&3]
				interval := max(t.period, m.res)
				n := int64(1)
				if d := now - t.exp; d >= interval {
					n = d/interval + 1
				}
				t.exp += n * interval
				m.seq++
				t.seq = m.seq
			}
		}
	}
}

// at runs everything due by now and moves the model's clock there.
func (m *refModel) at(now ktime.Time) {
	m.advance(now)
	m.now = max(m.now, now)
}

func (m *refModel) start(cpu int, ht sdk.HRTimer, expires int64) int {
	t := m.find(ht.ID)
	if t == nil {
		t = &refTimer{id: ht.ID}
		m.timers = append(m.timers, t)
	}
	ret := 0
	if t.pending {
		ret = 1
	}
	t.cpu, t.base, t.period, t.pending = cpu, baseIndex(ht.Clock, ht.Mode), ht.Period, true
	t.exp = expires
	if ht.Mode&sdk.HRModeRel != 0 {
		t.exp += int64(m.now) + m.off[t.base&3]
	}
	m.seq++
	t.seq = m.seq
	return ret
}

func (m *refModel) cancel(id sdk.TimerID) int {
	if t := m.find(id); t != nil && t.pending {
		t.pending = false
		return 1
	}
	return 0
}

// fuzzHarness runs the plugin (through the test rig) and the reference side
// by side on one decoded input and returns the first difference.
func fuzzHarness(t *testing.T, data []byte) {
	if len(data) < 1 {
		return
	}
	cfg := data[0]
	data = data[1:]
	over := merge(zeroCosts(), map[string]string{"restart": restartNames[cfg>>1&1], "clock_was_set_ipi": ipiNames[cfg>>2&1]})
	setup := highRes(2)
	if cfg&1 == 0 {
		setup = lowRes(2, 250)
	}
	p := configure(t, setup, over)
	r := newRig(t, p)
	r.maxIRQs = 100000
	ref := &refModel{highRes: setup.HighRes, res: p.resolution, tickNs: ktime.TickNsec(setup.HZ), cpus: 2,
		tick: []ktime.Time{ktime.Time(ktime.TickNsec(setup.HZ)), ktime.Time(ktime.TickNsec(setup.HZ))}}
	off := sdk.ClockOffsets{Real: 1000 * ktime.Second, Boot: 5 * ktime.Second, TAI: 1037 * ktime.Second}
	setOffsets := func(now ktime.Time) {
		ref.at(now)
		ref.off = [4]int64{0, off.Real, off.Boot, off.TAI}
		r.clockWasSet(now, off)
	}
	now := ktime.Time(0)
	setOffsets(now)
	clocks := []sdk.ClockID{sdk.ClockMonotonic, sdk.ClockRealtime, sdk.ClockBoottime, sdk.ClockTAI}
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	for ops := 0; len(data) > 0 && ops < 300; ops++ {
		switch op := next(); op % 4 {
		case 0:
			a, e, per := next(), next(), next()
			cpu := int(a & 1)
			ht := sdk.HRTimer{ID: sdk.TimerID(1 + a>>1&7), Clock: clocks[a>>4&3]}
			if a&0x40 != 0 {
				ht.Mode |= sdk.HRModeSoft
			}
			if a&0x80 != 0 {
				ht.Mode |= sdk.HRModeRel
			}
			if per >= 160 {
				ht.Period = int64(per%8+1) * 50 * us
			}
			ref.at(now)
			exp := int64(e) * 10 * us
			if ht.Mode&sdk.HRModeRel == 0 {
				exp += int64(now) + ref.off[baseIndex(ht.Clock, ht.Mode)&3]
			}
			want := ref.start(cpu, ht, exp)
			if got := r.start(cpu, now, ht, ktime.Time(exp), 0).Ret; got != want {
				t.Fatalf("Start(cpu%d, %+v, %d) at %v Ret = %d, reference %d", cpu, ht, exp, now, got, want)
			}
		case 1:
			a := next()
			ref.at(now)
			id := sdk.TimerID(1 + a>>1&7)
			want := ref.cancel(id)
			if got := r.cancel(int(a&1), now, id).Ret; got != want {
				t.Fatalf("Cancel(cpu%d, T%d) at %v = %d, reference %d", a&1, id, now, got, want)
			}
		case 2:
			now = now.Add(int64(next()) * 10 * us)
		case 3:
			d := int64(next()) * 10 * us
			off.Real += d
			off.TAI += d
			setOffsets(now)
		}
	}
	// Stop the periodic timers, then let everything else run.
	for _, rt := range ref.timers {
		if rt.pending && rt.period > 0 {
			ref.at(now)
			ref.cancel(rt.id)
			r.cancel(rt.cpu, now, rt.id)
		}
	}
	end := now.Add(1000 * ms)
	ref.advance(end)
	r.advance(end)
	var got []string
	for _, e := range r.expired {
		got = append(got, fmt.Sprintf("cpu%d T%d @%v", e.cpu, e.ID, e.Now))
	}
	if !slices.Equal(got, ref.out) {
		t.Fatalf("expiries differ from the reference\n got: %v\nwant: %v", got, ref.out)
	}
	for _, rt := range ref.timers {
		if rt.pending {
			t.Errorf("reference timer T%d still pending at the end", rt.id)
		}
	}
}

// FuzzHRTimerVsReference decodes the input into starts (any clock, hard or
// soft, ABS or REL, one-shot or periodic), cancels, waits and REALTIME clock
// jumps on two CPUs, runs them against the plugin (zero costs, both restart
// strategies, both clock_was_set modes, high- and low-res) and against
// refModel, and requires the same expiries at the same times in the same
// order; the rig's own checks catch early expiries.
func FuzzHRTimerVsReference(f *testing.F) {
	f.Add([]byte{1, 0, 0x02, 10, 0, 0, 0x04, 20, 0, 2, 50})
	f.Add([]byte{3, 0, 0x92, 5, 200, 0, 0x45, 7, 0, 1, 0x02, 2, 255})
	f.Add([]byte{0, 0, 0x32, 1, 0, 3, 30, 0, 0x22, 1, 0, 2, 255, 2, 255})
	f.Add([]byte{5, 0, 0xd3, 40, 170, 0, 0x13, 40, 0, 3, 20, 2, 100})
	f.Fuzz(func(t *testing.T, data []byte) { fuzzHarness(t, data) })
}

// TestVsReference runs the differential harness over many seeded inputs so
// that plain `go test` covers it without -fuzz.
func TestVsReference(t *testing.T) {
	rng := simrand.New(42, "vsref")
	for i := range 400 {
		data := make([]byte, 1+rng.Int63n(240))
		for j := range data {
			data[j] = byte(rng.Uint64())
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { fuzzHarness(t, data) })
	}
}
