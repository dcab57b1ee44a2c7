package wheel

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// FuzzTimerBaseVsReference decodes the input into a sequence of mod_timer,
// del_timer, softirq, idle-entry and time-advance operations on a 2-CPU
// machine, and runs it through all three catch-up strategies of both
// layouts and through a naive reference model (a slice of pending timers
// sorted by due jiffy). It checks, after every operation:
//
//   - the same timers expire in the same softirq as in the reference, each
//     no earlier than its expiry; per_jiffy and next_expiry also agree on
//     the collected jiffy and the order, skip_empty on the set;
//   - cascade: a timer is collected exactly at its (slack'ed) expiry, or at
//     the next jiffy the base processes if it was armed in the past;
//   - levels: a timer is collected exactly at its bucket expiry, which lies
//     in (expires, expires + LVL_GRAN(level)] for the level its delta from
//     the base clock selects, the clock being bounded below by the last
//     softirq's jiffies (or jiffies+1 for one armed in the past);
//   - WasPending, State.Pending, State.NextExpiry and NextTimerInterrupt
//     match the reference.
//
// Input layout: byte 0 picks HZ (100, 250, 1000), byte 1 the start jiffies;
// then 5-byte operations [op a b c d], see decodeOp.
func FuzzTimerBaseVsReference(f *testing.F) {
	f.Add([]byte{2, 0, 0, 1, 0, 100, 0, 4, 0, 255, 255, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		hz := []int{100, 250, 1000}[int(data[0])%3]
		j0 := []uint64{0, ktime.InitialJiffies(hz), 1<<32 - 3000, 12345}[int(data[1])%4]
		var ops []fuzzOp
		for i := 2; i+5 <= len(data) && len(ops) < 300; i += 5 {
			ops = append(ops, decodeOp(data[i:i+5]))
		}
		for _, layout := range []string{"levels", "cascade"} {
			h := newHarness(t, hz, j0, layout)
			for i, op := range ops {
				h.apply(i, op)
			}
			h.drain()
		}
	})
}

// fuzzOp is one decoded operation.
type fuzzOp struct {
	kind    byte // 'm' mod_timer, 'd' del_timer, 'r' advance and run, 'i' advance only, 'n' next timer
	cpu     int
	mask    int // 'r': bit per CPU to run (0: all)
	id      sdk.TimerID
	delta   uint64 // mod: expiry distance; r/i: jiffies to advance
	past    bool   // mod: expires = jiffies - delta%300
	flags   sdk.TimerFlags
	period  uint64
	cbCost  int64
	advance uint64
}

// decodeOp maps 5 bytes to an operation: op%8 in 0-2 is mod_timer, 3 is
// del_timer, 4-5 advance and run, 6 NextTimerInterrupt, 7 advance without
// running (an idle CPU). Bits 4 and 5 of op make a mod_timer deferrable or
// pinned.
func decodeOp(b []byte) fuzzOp {
	op, a, x, y, z := b[0], b[1], b[2], b[3], b[4]
	o := fuzzOp{cpu: int(a>>4) & 1, id: sdk.TimerID(a%12 + 1), mask: int(a & 3)}
	switch op % 8 {
	case 0, 1, 2:
		o.kind = 'm'
		switch x % 4 {
		case 0:
			o.delta = uint64(y % 70)
		case 1:
			o.delta = uint64(y)*8 + uint64(x>>2)
		case 2:
			o.delta = (uint64(y)<<8 | uint64(x)) * 4
		case 3:
			o.delta = (uint64(y)<<8 | uint64(x)) * 64 // up to tv4 and level 6
		}
		o.past = z&1 != 0 && z&8 != 0
		if op&0x10 != 0 {
			o.flags |= sdk.TimerDeferrable
		}
		if op&0x20 != 0 {
			o.flags |= sdk.TimerPinned
		}
		if z&6 == 6 {
			o.period = uint64(z >> 4) // 0..15, 0 = none
		}
		o.cbCost = int64(z) * 3
	case 3:
		o.kind = 'd'
	case 4, 5:
		o.kind = 'r'
		switch y % 4 {
		case 0, 1:
			o.advance = uint64(x % 40)
		case 2:
			o.advance = uint64(x) * 64
		case 3:
			o.advance = (uint64(z)<<8 | uint64(x)) * 4
		}
	case 6:
		o.kind = 'n'
	case 7:
		o.kind = 'i'
		o.advance = uint64(x) * uint64(y%16)
	}
	return o
}

const fuzzCPUs = 2

// refTimer is a pending timer in the reference model.
type refTimer struct {
	id      sdk.TimerID
	cpu     int
	expires uint64 // after slack (cascade)
	due     uint64 // jiffy it is collected at
	flags   sdk.TimerFlags
	period  uint64
}

// refModel is the naive reference: pending timers in a slice kept sorted by
// (due, id), and the jiffies of each CPU's last softirq.
type refModel struct {
	pending []refTimer
	lastRun [fuzzCPUs]uint64
}

func (m *refModel) find(id sdk.TimerID) int {
	for i := range m.pending {
		if m.pending[i].id == id {
			return i
		}
	}
	return -1
}

func (m *refModel) remove(id sdk.TimerID) (refTimer, bool) {
	i := m.find(id)
	if i < 0 {
		return refTimer{}, false
	}
	t := m.pending[i]
	m.pending = slices.Delete(m.pending, i, i+1)
	return t, true
}

func (m *refModel) insert(t refTimer) {
	i, _ := slices.BinarySearchFunc(m.pending, t, func(a, b refTimer) int {
		return cmp.Or(cmp.Compare(a.due, b.due), cmp.Compare(a.id, b.id))
	})
	m.pending = slices.Insert(m.pending, i, t)
}

// count and minDue describe one CPU's pending timers.
func (m *refModel) count(cpu int) int {
	n := 0
	for _, t := range m.pending {
		if t.cpu == cpu {
			n++
		}
	}
	return n
}

func (m *refModel) minNonDeferrable(cpu int, key func(refTimer) uint64) (uint64, bool) {
	best, ok := uint64(0), false
	for _, t := range m.pending {
		if t.cpu == cpu && t.flags&sdk.TimerDeferrable == 0 && (!ok || before(key(t), best)) {
			best, ok = key(t), true
		}
	}
	return best, ok
}

// jmax is the later of two jiffies, compared wrap-safely.
func jmax(a, b uint64) uint64 {
	if after(a, b) {
		return a
	}
	return b
}

// jmin is the earlier of two jiffies, compared wrap-safely.
func jmin(a, b uint64) uint64 {
	if before(a, b) {
		return a
	}
	return b
}

// refSlack restates apply_slack() (3.10, slack -1) as a search: the value in
// (expires, expires + delta/256] with the most trailing zero bits.
func refSlack(expires, jiffies uint64) uint64 {
	d := int64(expires - jiffies)
	if d < 256 {
		return expires
	}
	limit := expires + uint64(d/256)
	for k := 63; k >= 0; k-- {
		if c := limit &^ (uint64(1)<<uint(k) - 1); c > expires {
			return c
		}
	}
	return expires
}

// harness drives the three strategies of one layout and the reference.
type harness struct {
	t        *testing.T
	hz       int
	layout   string
	j        uint64
	advanced uint64    // jiffies advanced so far
	ws       [3]*Wheel // per_jiffy, skip_empty, next_expiry
	ref      refModel
	geo      geometry
	trace    []string // operations so far, for failure messages
}

var strategies = [3]string{"per_jiffy", "skip_empty", "next_expiry"}

func newHarness(t *testing.T, hz int, j0 uint64, layout string) *harness {
	h := &harness{t: t, hz: hz, layout: layout, j: j0, geo: newGeometry(hz)}
	for i, s := range strategies {
		h.ws[i] = newWheel(t, hz, fuzzCPUs, "layout", layout, "catchup", s)
		for cpu := 0; cpu < fuzzCPUs; cpu++ {
			h.ws[i].NextTimerInterrupt(cpu, j0) // bring every base up at j0
		}
	}
	for cpu := range h.ref.lastRun {
		h.ref.lastRun[cpu] = j0 - 1
	}
	return h
}

func (h *harness) fail(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("%s HZ=%d: %s\nops:\n%s", h.layout, h.hz, fmt.Sprintf(format, args...), joinLines(h.trace))
}

func joinLines(s []string) string {
	out := ""
	for i, l := range s {
		out += fmt.Sprintf("  %3d %s\n", i, l)
	}
	return out
}

// levelBound is the latest bucket expiry the levels wheel may give expires
// when its base clock is at least clkLow and at most hi.
func (h *harness) levelBound(expires, clkLow, hi uint64) uint64 {
	if before(expires, clkLow) {
		return hi
	}
	delta := expires - clkLow
	lvl := 0
	for lvl < h.geo.depth-1 && delta >= lvlStart(lvl+1) {
		lvl++
	}
	return jmax(expires+lvlGran(lvl), hi)
}

// checkLevelsPlacement reads a queued timer's bucket from every strategy
// (they must agree) and checks it against the granularity bound.
func (h *harness) checkLevelsPlacement(id sdk.TimerID, expires, clkLow, hi uint64) (int, uint64) {
	h.t.Helper()
	cpu, _, due, ok := h.ws[0].c.placement(id)
	if !ok {
		h.fail("timer %d not queued", id)
	}
	for i := 1; i < 3; i++ {
		c, _, d, _ := h.ws[i].c.placement(id)
		if c != cpu || d != due {
			h.fail("timer %d: %s places it at (cpu %d, %d), per_jiffy at (cpu %d, %d)", id, strategies[i], c, d, cpu, due)
		}
	}
	if !after(due, expires) || after(due, h.levelBound(expires, clkLow, hi)) {
		h.fail("timer %d expires %d: bucket expiry %d outside (%d, %d] (clk >= %d)",
			id, expires, due, expires, h.levelBound(expires, clkLow, hi), clkLow)
	}
	return cpu, due
}

func (h *harness) apply(i int, op fuzzOp) {
	h.t.Helper()
	switch op.kind {
	case 'm':
		h.mod(op)
	case 'd':
		h.trace = append(h.trace, fmt.Sprintf("del cpu=%d j=%d id=%d", op.cpu, h.j, op.id))
		_, was := h.ref.remove(op.id)
		for k, w := range h.ws {
			r := w.DelTimer(op.cpu, h.j, op.id)
			if r.WasPending != was {
				h.fail("%s: DelTimer(%d).WasPending = %v, want %v", strategies[k], op.id, r.WasPending, was)
			}
		}
		h.checkState()
	case 'r':
		h.j += h.budget(op.advance)
		for cpu := 0; cpu < fuzzCPUs; cpu++ {
			if op.mask == 0 || op.mask&(1<<cpu) != 0 {
				h.run(cpu)
			}
		}
	case 'i':
		h.j += h.budget(op.advance)
		h.trace = append(h.trace, fmt.Sprintf("advance to j=%d", h.j))
	case 'n':
		h.trace = append(h.trace, fmt.Sprintf("next cpu=%d j=%d", op.cpu, h.j))
		h.next(op.cpu)
	}
}

// maxAdvance bounds the jiffies one input may advance, drain included, so
// that the per-jiffy walks stay fast enough to fuzz.
const maxAdvance = 1 << 17

// budget returns how far the clock may still advance, up to d.
func (h *harness) budget(d uint64) uint64 {
	d = min(d, maxAdvance-min(h.advanced, maxAdvance))
	h.advanced += d
	return d
}

func (h *harness) mod(op fuzzOp) {
	h.t.Helper()
	expires := h.j + op.delta
	if op.past {
		expires = h.j - op.delta%300
	}
	t := sdk.WheelTimer{ID: op.id, Expires: expires, Flags: op.flags, CallbackCost: op.cbCost, Period: op.period}
	h.trace = append(h.trace, fmt.Sprintf("mod cpu=%d j=%d %+v", op.cpu, h.j, t))
	old, was := h.ref.remove(op.id)
	for k, w := range h.ws {
		if r := w.ModTimer(op.cpu, h.j, t); r.WasPending != was {
			h.fail("%s: ModTimer(%+v).WasPending = %v, want %v", strategies[k], t, r.WasPending, was)
		}
	}
	nt := refTimer{id: op.id, cpu: op.cpu, expires: expires, flags: op.flags, period: op.period}
	switch h.layout {
	case "cascade":
		if op.flags&sdk.TimerPinned == 0 {
			nt.expires = refSlack(expires, h.j)
		}
		if was && old.cpu == op.cpu && old.flags == op.flags && old.expires == nt.expires {
			nt.due = old.due // mod_timer()'s fast path
		} else {
			nt.due = jmax(nt.expires, h.ref.lastRun[op.cpu]+1)
		}
	default:
		// After a softirq at R every bucket is at R or later (a timer armed
		// in the past at R gets bucket clk = R), so an enqueue's forward
		// leaves clk >= min(jiffies, R).
		clkLow := jmin(h.j, h.ref.lastRun[op.cpu])
		cpu, due := h.checkLevelsPlacement(op.id, expires, clkLow, h.j+1)
		if cpu != op.cpu {
			h.fail("timer %d queued on CPU %d, want %d", op.id, cpu, op.cpu)
		}
		nt.due = due
	}
	h.ref.insert(nt)
	h.checkState()
}

// expiry is an expiry without its cost-dependent offset.
type expiry struct {
	id         sdk.TimerID
	jiffy      uint64
	rearmed    bool
	newExpires uint64
}

func strip(ex []sdk.WheelExpiry) []expiry {
	out := make([]expiry, len(ex))
	for i, e := range ex {
		out[i] = expiry{e.ID, e.Jiffy, e.Rearmed, e.NewExpires}
	}
	return out
}

func sortExpiries(ex []expiry) []expiry {
	s := slices.Clone(ex)
	slices.SortStableFunc(s, func(a, b expiry) int {
		return cmp.Or(cmp.Compare(a.jiffy, b.jiffy), cmp.Compare(a.id, b.id), cmp.Compare(a.newExpires, b.newExpires))
	})
	return s
}

// refRun is run_timer_softirq() on the reference: timers on cpu whose due
// jiffy is at most jiffies expire in due order; a declared Period re-arms.
func (h *harness) refRun(cpu int) []expiry {
	h.t.Helper()
	j := h.j
	var out []expiry
	if h.layout == "cascade" && before(j, h.ref.lastRun[cpu]+1) {
		return nil // run_timer_softirq(): nothing before timer_jiffies
	}
	for {
		i := slices.IndexFunc(h.ref.pending, func(t refTimer) bool { return t.cpu == cpu && !after(t.due, j) })
		if i < 0 {
			break
		}
		t := h.ref.pending[i]
		h.ref.pending = slices.Delete(h.ref.pending, i, i+1)
		e := expiry{id: t.id, jiffy: t.due}
		if t.period > 0 {
			e.rearmed = true
			nt := t
			nt.expires = j + t.period
			if h.layout == "cascade" {
				if t.flags&sdk.TimerPinned == 0 {
					nt.expires = refSlack(nt.expires, j)
				}
				nt.due = jmax(nt.expires, t.due+1)
			} else {
				// Read back from the wheel after the softirq; the bucket is
				// after jiffies, so it cannot run again in this one.
				nt.due = j + 1
			}
			e.newExpires = nt.expires
			h.ref.insert(nt)
		}
		out = append(out, e)
	}
	h.ref.lastRun[cpu] = j
	return out
}

func (h *harness) run(cpu int) {
	h.t.Helper()
	h.trace = append(h.trace, fmt.Sprintf("run cpu=%d j=%d", cpu, h.j))
	prevRun := h.ref.lastRun[cpu]
	// The levels layout runs BASE_STD, then BASE_DEF: collected jiffies
	// only increase within each base.
	deferrable := map[sdk.TimerID]bool{}
	for _, t := range h.ref.pending {
		deferrable[t.id] = h.layout == "levels" && t.flags&sdk.TimerDeferrable != 0
	}
	want := sortExpiries(h.refRun(cpu))
	var got [3][]expiry
	for k, w := range h.ws {
		r := w.RunTimers(cpu, h.j)
		got[k] = strip(r.Expired)
		var last [2]uint64
		for _, e := range got[k] {
			b := 0
			if deferrable[e.id] {
				b = 1
			}
			if e.jiffy < last[b] {
				h.fail("%s: RunTimers(%d, %d) collected out of order: %+v", strategies[k], cpu, h.j, got[k])
			}
			last[b] = e.jiffy
		}
	}
	if !slices.Equal(got[0], got[2]) {
		h.fail("RunTimers(%d, %d): per_jiffy %+v, next_expiry %+v", cpu, h.j, got[0], got[2])
	}
	if g := sortExpiries(got[0]); !slices.Equal(g, want) {
		h.fail("RunTimers(%d, %d) = %+v, reference %+v", cpu, h.j, g, want)
	}
	// skip_empty: same timers, collected no earlier than the reference says.
	g, w := sortByID(got[1]), sortByID(want)
	if len(g) != len(w) {
		h.fail("skip_empty RunTimers(%d, %d) = %+v, reference %+v", cpu, h.j, got[1], want)
	}
	for x := range g {
		if g[x].id != w[x].id || g[x].rearmed != w[x].rearmed || g[x].newExpires != w[x].newExpires ||
			g[x].jiffy < w[x].jiffy || g[x].jiffy > h.j {
			h.fail("skip_empty RunTimers(%d, %d) = %+v, reference %+v", cpu, h.j, got[1], want)
		}
	}
	if h.layout == "levels" {
		for _, e := range want {
			if e.rearmed {
				i := h.ref.find(e.id)
				// clk is past the collected bucket, which is at or after the
				// previous softirq's jiffies.
				_, due := h.checkLevelsPlacement(e.id, e.newExpires, jmin(prevRun+1, h.j), h.j+1)
				h.ref.pending[i].due = due
			}
		}
		slices.SortFunc(h.ref.pending, func(a, b refTimer) int {
			return cmp.Or(cmp.Compare(a.due, b.due), cmp.Compare(a.id, b.id))
		})
	}
	h.checkState()
}

func sortByID(ex []expiry) []expiry {
	s := slices.Clone(ex)
	slices.SortStableFunc(s, func(a, b expiry) int {
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.newExpires, b.newExpires), cmp.Compare(a.jiffy, b.jiffy))
	})
	return s
}

// refNext is what State.NextExpiry must be for cpu.
func (h *harness) refNext(cpu int) uint64 {
	if d, ok := h.ref.minNonDeferrable(cpu, func(t refTimer) uint64 { return t.due }); ok {
		return d
	}
	return sdk.NoExpiry
}

func (h *harness) checkState() {
	h.t.Helper()
	for cpu := 0; cpu < fuzzCPUs; cpu++ {
		want := h.refNext(cpu)
		for k, w := range h.ws {
			st := w.eng.state(cpu)
			if st.Pending != h.ref.count(cpu) {
				h.fail("%s: CPU %d Pending = %d, want %d", strategies[k], cpu, st.Pending, h.ref.count(cpu))
			}
			got, wnt := st.NextExpiry, want
			if k == 1 && got != sdk.NoExpiry && wnt != sdk.NoExpiry {
				got, wnt = jmax(got, h.j), jmax(wnt, h.j) // skip_empty's clock may be ahead
			}
			if got != wnt {
				h.fail("%s: CPU %d NextExpiry = %d, want %d (j=%d)", strategies[k], cpu, st.NextExpiry, want, h.j)
			}
		}
	}
}

// next checks get_next_timer_interrupt(): the earliest due jiffy, or
// jiffies when that is due. 3.10's __next_timer_interrupt() answers the
// first timer->expires in slot order, which is the earliest expiry except
// when a timer armed in the past shares the current slot with one due at
// timer_jiffies: either may come first in the FIFO, so either answer is the
// kernel's (both mean "due at the next jiffy").
func (h *harness) next(cpu int) {
	h.t.Helper()
	want, alt := sdk.NoExpiry, sdk.NoExpiry
	if d, ok := h.ref.minNonDeferrable(cpu, func(t refTimer) uint64 { return t.due }); ok {
		want, alt = jmax(d, h.j), jmax(d, h.j)
		if h.layout == "cascade" {
			e, _ := h.ref.minNonDeferrable(cpu, func(t refTimer) uint64 { return t.expires })
			alt = jmax(e, h.j)
		}
	}
	for k, w := range h.ws {
		if got := w.NextTimerInterrupt(cpu, h.j); got.Next != want && got.Next != alt {
			h.fail("%s: NextTimerInterrupt(%d, %d).Next = %d, want %d (or %d)", strategies[k], cpu, h.j, got.Next, want, alt)
		}
	}
	h.checkState()
}

// drain deletes periodic timers and those due beyond the advance budget,
// then runs every CPU past the last due jiffy: nothing may be left.
func (h *harness) drain() {
	h.t.Helper()
	last, limit := h.j, h.j+h.budget(maxAdvance)
	for _, t := range slices.Clone(h.ref.pending) {
		if t.period > 0 || after(t.due, limit) {
			h.apply(0, fuzzOp{kind: 'd', cpu: t.cpu, id: t.id})
			continue
		}
		last = jmax(last, t.due)
	}
	h.j = last
	for cpu := 0; cpu < fuzzCPUs; cpu++ {
		h.run(cpu)
	}
	if len(h.ref.pending) != 0 {
		h.fail("reference still has %d timers after the drain", len(h.ref.pending))
	}
}
