package wheel

import (
	"math/bits"

	"github.com/tickemu/tickemu/framework/sdk"
)

// Geometry of the legacy wheel (kernel/timer.c as of 3.10, CONFIG_BASE_SMALL=0).
const (
	tvrBits       = 8                          // TVR_BITS
	tvnBits       = 6                          // TVN_BITS
	tvrSize       = 1 << tvrBits               // TVR_SIZE: slots in tv1
	tvnSize       = 1 << tvnBits               // TVN_SIZE: slots in tv2..tv5
	tvrMask       = tvrSize - 1                // TVR_MASK
	tvnMask       = tvnSize - 1                // TVN_MASK
	maxTval       = 1<<(tvrBits+4*tvnBits) - 1 // MAX_TVAL = 2^32-1
	tvSlots       = tvrSize + 4*tvnSize        // all buckets: tv1, then tv2..tv5
	slackMinDelta = 256                        // apply_slack(): no slack below 256 jiffies
)

// tvBucket numbers slot of tv(lvl+2), lvl 0..3, after the 256 tv1 slots.
func tvBucket(lvl int, slot uint64) int { return tvrSize + lvl*tvnSize + int(slot&tvnMask) }

// applySlack models kernel/timer.c:apply_slack() as of 3.10 with the default
// slack of -1: a timer at least 256 jiffies away may fire up to 1/256 of its
// delay late, at the value in (expires, expires + delta/256] with the most
// trailing zero bits, so that timers batch.
func applySlack(expires, jiffies uint64) uint64 {
	delta := int64(expires - jiffies)
	if delta < slackMinDelta {
		return expires
	}
	limit := expires + uint64(delta/256)
	mask := expires ^ limit
	if mask == 0 {
		return expires
	}
	bit := 63 - bits.LeadingZeros64(mask)
	return limit &^ (uint64(1)<<uint(bit) - 1)
}

// cascadeBase models struct tvec_base (kernel/timer.c, 3.10; all_timers from
// 3.15). There is one per CPU; deferrable timers share it and are only
// skipped by the next-event search.
//
// Invariant: a bit of the all maps is set exactly when the bucket is not
// empty, a bit of the nd maps exactly when ndCount of the bucket (its
// non-deferrable timers) is not zero. ndEarliest/allEarliest, when valid,
// are the earliest effective expiry (see effective) of the non-deferrable
// and of all queued timers, NoExpiry if none.
type cascadeBase struct {
	init         bool
	timerJiffies uint64 // timer_jiffies: the next jiffy to process
	nextTimer    uint64 // next_timer: cached earliest expiry, stale when <= timer_jiffies
	activeTimers int    // active_timers: queued non-deferrable timers
	allTimers    int    // all_timers (3.15): every queued timer
	lists        [tvSlots]bucketList
	ndCount      [tvSlots]int32
	all, nd      wheelMaps
	// The exact earliest expiry after every call, which the kernel only
	// computes on demand (__next_timer_interrupt()): cached, and recomputed
	// from the maps when the timer that held it leaves.
	ndEarliest, allEarliest uint64
	ndValid, allValid       bool
}

// wheelMaps has one bit per bucket: tv1's 256 slots, then tv2..tv5's 64.
type wheelMaps struct {
	tv1 [tvrSize / 64]uint64
	tvn [4]uint64
}

func (m *wheelMaps) set(bkt int) {
	if bkt < tvrSize {
		m.tv1[bkt>>6] |= 1 << uint(bkt&63)
	} else {
		m.tvn[(bkt-tvrSize)>>tvnBits] |= 1 << uint(bkt&tvnMask)
	}
}

func (m *wheelMaps) clear(bkt int) {
	if bkt < tvrSize {
		m.tv1[bkt>>6] &^= 1 << uint(bkt&63)
	} else {
		m.tvn[(bkt-tvrSize)>>tvnBits] &^= 1 << uint(bkt&tvnMask)
	}
}

// nextSet returns the first set tv1 bit at or after from, or -1.
func (m *wheelMaps) nextSet(from int) int {
	for i := from >> 6; i < len(m.tv1); i++ {
		word := m.tv1[i]
		if i == from>>6 {
			word &= ^uint64(0) << uint(from&63)
		}
		if word != 0 {
			return i<<6 + bits.TrailingZeros64(word)
		}
	}
	return -1
}

// nextCascade returns the first non-empty bucket of tv(lvl+2) to cascade at
// or after tj, with the jiffy it cascades at, or false. tv(L+2) cascades
// exactly at the multiples of 2^(8+6L), where the lower indices are zero.
func (m *wheelMaps) nextCascade(lvl int, tj uint64) (bkt int, at uint64, ok bool) {
	word := m.tvn[lvl]
	if word == 0 {
		return 0, 0, false
	}
	sh := uint(tvrBits + lvl*tvnBits)
	u := (tj + (1<<sh - 1)) >> sh // first cascade point, in the vector's units
	u += uint64(bits.TrailingZeros64(bits.RotateLeft64(word, -int(u&tvnMask))))
	return tvBucket(lvl, u), u << sh, true
}

// add appends n to bucket bkt (list_add_tail: FIFO).
func (w *cascadeWheel) add(b *cascadeBase, bkt int, n int32) {
	nd := &w.c.timers.nodes[n]
	nd.bucket = int32(bkt)
	w.c.timers.pushBack(&b.lists[bkt], n)
	b.all.set(bkt)
	if !nd.deferrable() {
		b.ndCount[bkt]++
		b.nd.set(bkt)
	}
}

// unlink removes a queued n from its bucket.
func (w *cascadeWheel) unlink(b *cascadeBase, n int32) {
	nd := &w.c.timers.nodes[n]
	bkt := int(nd.bucket)
	w.c.timers.unlink(&b.lists[bkt], n)
	nd.bucket = nilNode
	if b.lists[bkt].empty() {
		b.all.clear(bkt)
	}
	if !nd.deferrable() {
		if b.ndCount[bkt]--; b.ndCount[bkt] == 0 {
			b.nd.clear(bkt)
		}
	}
}

// take empties bucket bkt and returns its list (list_replace_init).
func (w *cascadeWheel) take(b *cascadeBase, bkt int) bucketList {
	l := b.lists[bkt]
	b.lists[bkt] = emptyList
	b.ndCount[bkt] = 0
	b.all.clear(bkt)
	b.nd.clear(bkt)
	return l
}

// effective is the jiffy at which a timer with this expiry runs: its expiry,
// or the next jiffy to process if that is already past.
func (b *cascadeBase) effective(expires uint64) uint64 {
	if before(expires, b.timerJiffies) {
		return b.timerJiffies
	}
	return expires
}

// earlier reports whether jiffy a comes before b, NoExpiry being latest.
func earlier(a, b uint64) bool {
	return a != sdk.NoExpiry && (b == sdk.NoExpiry || before(a, b))
}

// earliest computes the earliest effective expiry of the timers the maps
// cover (non-deferrable ones only if nd). A tv1 slot in the current window
// beats everything else: a tv1 slot holds one expiry (or timers already
// due) and every upper-vector timer is at or after the next cascade point.
// Otherwise it is the least of the first wrapped tv1 slot and of the first
// bucket to cascade in each upper vector, whose timers are ordered by bucket
// within a lap.
func (w *cascadeWheel) earliest(b *cascadeBase, m *wheelMaps, nd bool) uint64 {
	tj := b.timerJiffies
	index := int(tj & tvrMask)
	if s := m.nextSet(index); s >= 0 {
		return tj + uint64(s-index)
	}
	best := sdk.NoExpiry
	if s := m.nextSet(0); s >= 0 {
		best = tj - uint64(index) + tvrSize + uint64(s)
	}
	s := &w.c.timers
	for lvl := 0; lvl < 4; lvl++ {
		bkt, _, ok := m.nextCascade(lvl, tj)
		if !ok {
			continue
		}
		for n := b.lists[bkt].head; n != nilNode; n = s.nodes[n].next {
			if nd && s.nodes[n].deferrable() {
				continue
			}
			if e := s.nodes[n].expires; earlier(e, best) {
				best = e
			}
		}
	}
	return best
}

// noteAdded and noteRemoved keep the earliest-expiry caches.
func (b *cascadeBase) noteAdded(n *timerNode) {
	e := b.effective(n.expires)
	if b.allValid && earlier(e, b.allEarliest) {
		b.allEarliest = e
	}
	if !n.deferrable() && b.ndValid && earlier(e, b.ndEarliest) {
		b.ndEarliest = e
	}
}

func (b *cascadeBase) noteRemoved(n *timerNode) {
	e := b.effective(n.expires)
	if e == b.allEarliest {
		b.allValid = false
	}
	if !n.deferrable() && e == b.ndEarliest {
		b.ndValid = false
	}
}

// cascadeWheel is the cascade layout.
type cascadeWheel struct {
	c     *common
	bases []cascadeBase
}

func newCascadeWheel(c *common, cpus int) *cascadeWheel {
	return &cascadeWheel{c: c, bases: make([]cascadeBase, cpus)}
}

// base returns cpu's base, initialising it at first use as init_timers_cpu()
// does (timer_jiffies = jiffies, next_timer = timer_jiffies).
func (w *cascadeWheel) base(cpu int, j uint64) *cascadeBase {
	b := &w.bases[cpu]
	if !b.init {
		b.init, b.timerJiffies, b.nextTimer = true, j, j
		for i := range b.lists {
			b.lists[i] = emptyList
		}
		b.ndEarliest, b.allEarliest, b.ndValid, b.allValid = sdk.NoExpiry, sdk.NoExpiry, true, true
	}
	return b
}

// place models kernel/timer.c:__internal_add_timer() as of 3.10: the vector
// is chosen by the delta from timer_jiffies, the slot by the absolute expiry
// bits; an expiry in the past goes to the slot processed next; a delta above
// MAX_TVAL is clamped. Buckets are FIFO (list_add_tail).
func (w *cascadeWheel) place(b *cascadeBase, n int32) {
	nd := &w.c.timers.nodes[n]
	expires := nd.expires
	idx := expires - b.timerJiffies
	var bkt int
	switch {
	case idx < tvrSize:
		bkt = int(expires & tvrMask)
	case idx < 1<<(tvrBits+tvnBits):
		bkt = tvBucket(0, expires>>tvrBits)
	case idx < 1<<(tvrBits+2*tvnBits):
		bkt = tvBucket(1, expires>>(tvrBits+tvnBits))
	case idx < 1<<(tvrBits+3*tvnBits):
		bkt = tvBucket(2, expires>>(tvrBits+2*tvnBits))
	case int64(idx) < 0:
		bkt = int(b.timerJiffies & tvrMask)
	default:
		if idx > maxTval {
			expires = b.timerJiffies + maxTval
		}
		bkt = tvBucket(3, expires>>(tvrBits+3*tvnBits))
	}
	w.add(b, bkt, n)
}

// catchup models kernel/timer.c:catchup_timer_jiffies() (3.15, d550e81dc0dd,
// 18d8cb64c9c0, 16d937f88031) for the skip_empty strategy: an empty wheel's
// clock jumps to jiffies.
//
// Divergence: the kernel writes timer_jiffies = jiffies even when the base
// has already processed jiffies (timer_jiffies = jiffies+1), moving it back
// by one; here it never moves back, so that a timer armed in the past cannot
// run in a second softirq of the same jiffy, which per_jiffy would not do.
func (w *cascadeWheel) catchup(b *cascadeBase, j uint64) {
	if w.c.opt.catchup == CatchupSkipEmpty && b.allTimers == 0 && after(j, b.timerJiffies) {
		b.timerJiffies = j
	}
}

// internalAdd models kernel/timer.c:internal_add_timer() (3.10; with the 3.15
// empty-wheel catch-up and active_timers rule under skip_empty).
func (w *cascadeWheel) internalAdd(b *cascadeBase, n int32, j uint64) {
	w.catchup(b, j)
	w.place(b, n)
	nd := &w.c.timers.nodes[n]
	nd.bucketExpiry = nd.expires
	if before(nd.expires, b.timerJiffies) {
		nd.bucketExpiry = b.timerJiffies
	}
	if !nd.deferrable() {
		if before(nd.expires, b.nextTimer) ||
			(w.c.opt.catchup == CatchupSkipEmpty && b.activeTimers == 0) {
			b.nextTimer = nd.expires
		}
		b.activeTimers++
	}
	b.allTimers++
	b.noteAdded(nd)
}

// account removes a timer from the base's counts (detach_expired_timer(),
// and the accounting half of detach_if_pending()).
func (w *cascadeWheel) account(b *cascadeBase, n int32, j uint64) {
	nd := &w.c.timers.nodes[n]
	b.noteRemoved(nd)
	if !nd.deferrable() {
		b.activeTimers--
	}
	b.allTimers--
	w.catchup(b, j)
}

// detach models kernel/timer.c:detach_if_pending() for a queued timer.
// Deleting the cached earliest timer makes next_timer stale.
func (w *cascadeWheel) detach(b *cascadeBase, n int32, j uint64) {
	w.unlink(b, n)
	nd := &w.c.timers.nodes[n]
	if !nd.deferrable() && nd.expires == b.nextTimer {
		b.nextTimer = b.timerJiffies
	}
	w.account(b, n, j)
}

// modTimer models kernel/timer.c:mod_timer() as of 3.10: apply_slack(), the
// "same expiry" fast path, then __mod_timer(). A pinned timer is started as
// mod_timer_pinned() would, without slack.
//
// Divergence: the fast path is taken only when the timer is already on cpu;
// the host, not the plugin, models placement.
func (w *cascadeWheel) modTimer(cpu int, j uint64, t sdk.WheelTimer, m *meter) bool {
	s := &w.c.timers
	expires := t.Expires
	if t.Flags&sdk.TimerPinned == 0 {
		expires = applySlack(expires, j)
	}
	n, pending := s.lookup(t.ID)
	if pending {
		nd := &s.nodes[n]
		nd.cbCost, nd.period = t.CallbackCost, t.Period
		if nd.expires == expires && nd.flags == t.Flags {
			return true // mod_timer(): pending with this expiry, wherever it is
		}
		m.add(w.c.opt.cost.dequeue)
		w.detach(w.base(int(nd.cpu), j), n, j)
	} else {
		n = s.alloc(t.ID)
		s.nodes[n].cbCost, s.nodes[n].period = t.CallbackCost, t.Period
	}
	// 3.10 __mod_timer(): if !pinned && timer_migration && idle_cpu(cpu),
	// cpu = get_nohz_timer_target().
	cpu = w.c.targetCPU(cpu, t)
	target := w.base(cpu, j)
	nd := &s.nodes[n]
	nd.expires, nd.flags, nd.cpu = expires, t.Flags, int32(cpu)
	m.add(w.c.opt.cost.enqueue)
	w.internalAdd(target, n, j)
	w.c.stats[cpu].starts++
	return pending
}

// delTimer models kernel/timer.c:del_timer().
func (w *cascadeWheel) delTimer(cpu int, j uint64, id sdk.TimerID, m *meter) bool {
	s := &w.c.timers
	n, pending := s.lookup(id)
	if !pending {
		return false
	}
	owner := int(s.nodes[n].cpu)
	m.add(w.c.opt.cost.dequeue)
	w.detach(w.base(owner, j), n, j)
	s.release(n)
	w.c.stats[owner].stops++
	return true
}

// cascade models kernel/timer.c:cascade(): empty bucket index of tv(lvl+2)
// and re-insert each timer, in list order, relative to timer_jiffies.
func (w *cascadeWheel) cascade(b *cascadeBase, lvl int, index uint64, r *run) uint64 {
	s := &w.c.timers
	l := w.take(b, tvBucket(lvl, index))
	r.cascades++
	r.m.add(w.c.opt.cost.cascade)
	for !l.empty() {
		n := l.head
		s.unlink(&l, n)
		w.place(b, n)
		r.moved++
		r.m.add(w.c.opt.cost.cascadeTimer)
	}
	return index
}

// tvIndex is the INDEX(N) macro: the current slot of tv(N+2).
func (b *cascadeBase) tvIndex(n int) uint64 {
	return (b.timerJiffies >> uint(tvrBits+n*tvnBits)) & tvnMask
}

// iterate is one pass of the kernel/timer.c:__run_timers() loop (3.10):
// refill tv1 from the upper vectors when it wraps, advance timer_jiffies and
// run the slot's timers in FIFO order.
func (w *cascadeWheel) iterate(b *cascadeBase, r *run) {
	s := &w.c.timers
	index := int(b.timerJiffies & tvrMask)
	if index == 0 &&
		w.cascade(b, 0, b.tvIndex(0), r) == 0 &&
		w.cascade(b, 1, b.tvIndex(1), r) == 0 &&
		w.cascade(b, 2, b.tvIndex(2), r) == 0 {
		w.cascade(b, 3, b.tvIndex(3), r)
	}
	b.timerJiffies++
	jiffy := b.timerJiffies - 1
	r.iterations++
	r.m.add(w.c.opt.cost.iteration)
	if b.lists[index].empty() {
		return
	}
	work := w.take(b, index)
	b.ndValid, b.allValid = false, false // the earliest timer may be among them
	for !work.empty() {
		n := work.head
		s.unlink(&work, n)
		nd := &s.nodes[n]
		nd.bucket = nilNode
		w.account(b, n, r.jiffies)
		w.c.expire(r, nd, jiffy)
		if nd.period == 0 {
			s.release(n)
			continue
		}
		// The callback's mod_timer(timer, jiffies + period) on this CPU.
		e := r.jiffies + nd.period
		if nd.flags&sdk.TimerPinned == 0 {
			e = applySlack(e, r.jiffies)
		}
		nd.expires = e
		r.m.add(w.c.opt.cost.enqueue)
		w.internalAdd(b, n, r.jiffies)
		w.c.stats[r.cpu].starts++
		r.rearmed(e)
	}
}

// nextEvent is the first jiffy at or after timer_jiffies at which an
// iteration of __run_timers() does anything: runs a non-empty tv1 slot, or
// reaches a cascade point whose chain of cascade() calls finds a non-empty
// bucket. tv(L+2) cascades exactly at the multiples of 2^(8+6L), where the
// lower indices are all zero. Every iteration before it would only advance
// timer_jiffies.
func (b *cascadeBase) nextEvent() (uint64, bool) {
	tj := b.timerJiffies
	index := int(tj & tvrMask)
	var best uint64
	ok := false
	if s := b.all.nextSet(index); s >= 0 {
		best, ok = tj+uint64(s-index), true
	} else if s := b.all.nextSet(0); s >= 0 {
		// A slot behind index: processed after tv1 wraps.
		best, ok = tj-uint64(index)+tvrSize+uint64(s), true
	}
	for lvl := 0; lvl < 4; lvl++ {
		if _, c, found := b.all.nextCascade(lvl, tj); found && (!ok || c < best) {
			best, ok = c, true
		}
	}
	return best, ok
}

// runTimers models kernel/timer.c:run_timer_softirq() and __run_timers() as
// of 3.10: nothing unless jiffies >= timer_jiffies, then one iteration per
// jiffy up to and including jiffies.
//
// skip_empty first applies catchup_timer_jiffies() (3.15): an empty wheel
// does no iteration. Divergence: timer_jiffies is set to jiffies+1 there (the
// kernel writes jiffies), the position the per-jiffy walk would reach.
//
// next_expiry runs the same iterations, but only at the jiffies nextEvent
// finds, and then sets timer_jiffies to jiffies+1: the skipped iterations
// would only have advanced timer_jiffies, so expiries, their order and the
// base state are exactly those of per_jiffy, at O(events) cost.
func (w *cascadeWheel) runTimers(r *run) {
	b := w.base(r.cpu, r.jiffies)
	j := r.jiffies
	if before(j, b.timerJiffies) {
		return
	}
	r.gap = j - b.timerJiffies
	mode := w.c.catchupMode(r.cpu, 0, j, b.timerJiffies, b.allTimers)
	switch mode {
	case CatchupNextExpiry:
		for afterEq(j, b.timerJiffies) {
			next, ok := b.nextEvent()
			if !ok || after(next, j) {
				b.timerJiffies = j + 1
				break
			}
			b.timerJiffies = next
			w.iterate(b, r)
		}
	default:
		if mode == CatchupSkipEmpty && b.allTimers == 0 {
			b.timerJiffies = j + 1
			return
		}
		for afterEq(j, b.timerJiffies) {
			w.iterate(b, r)
		}
	}
}

// scan models kernel/timer.c:__next_timer_interrupt() as of 3.10: search tv1
// from the current slot for the first non-deferrable timer, then the next
// cascade buckets of tv2..tv5, and return the earliest expiry found (or
// timer_jiffies + NEXT_TIMER_MAX_DELTA) with the number of buckets examined.
func (w *cascadeWheel) scan(b *cascadeBase) (expires uint64, buckets int) {
	s := &w.c.timers
	tj := b.timerJiffies
	expires = tj + nextTimerMaxDelta
	found := false
	index := int(tj & tvrMask)
	slot := index
	lookUpper := false
	for !lookUpper {
		buckets++
		for n := b.lists[slot].head; n != nilNode; n = s.nodes[n].next {
			nd := &s.nodes[n]
			if nd.deferrable() {
				continue
			}
			found, expires = true, nd.expires
			// A hit in the wrapped part of tv1 (or a scan from slot 0) may be
			// beaten by a cascade bucket: look there too.
			if index == 0 || slot < index {
				lookUpper = true
				break
			}
			return expires, buckets
		}
		if lookUpper {
			break
		}
		slot = (slot + 1) & tvrMask
		if slot == index {
			break
		}
	}
	// The next cascade event, in the units of tv2.
	if index != 0 {
		tj += uint64(tvrSize - index)
	}
	tj >>= tvrBits
	for lvl := 0; lvl < 4; lvl++ {
		index = int(tj & tvnMask)
		slot = index
		for {
			buckets++
			for n := b.lists[tvBucket(lvl, uint64(slot))].head; n != nilNode; n = s.nodes[n].next {
				nd := &s.nodes[n]
				if nd.deferrable() {
					continue
				}
				found = true
				if before(nd.expires, expires) {
					expires = nd.expires
				}
			}
			if found {
				if index == 0 || slot < index {
					break
				}
				return expires, buckets
			}
			slot = (slot + 1) & tvnMask
			if slot == index {
				break
			}
		}
		if index != 0 {
			tj += uint64(tvnSize - index)
		}
		tj >>= tvnBits
	}
	return expires, buckets
}

// nextTimerInterrupt models kernel/timer.c:get_next_timer_interrupt() as of
// 3.10 (jiffies in, jiffies out): rescan only when next_timer is stale, and
// answer jiffies when the earliest timer is already due.
func (w *cascadeWheel) nextTimerInterrupt(cpu int, j uint64, m *meter) uint64 {
	b := w.base(cpu, j)
	if b.activeTimers == 0 {
		return sdk.NoExpiry
	}
	if beforeEq(b.nextTimer, b.timerJiffies) {
		next, buckets := w.scan(b)
		m.addN(w.c.opt.cost.scan, int64(buckets))
		b.nextTimer = next
	}
	if beforeEq(b.nextTimer, j) {
		return j
	}
	return b.nextTimer
}

// state reports cpu's WheelState. NextExpiry is the exact earliest
// non-deferrable expiry (what __next_timer_interrupt() computes), raised to
// timer_jiffies for a timer armed in the past; the cached value is
// recomputed here when the timer that held it has left.
func (w *cascadeWheel) state(cpu int) sdk.WheelState {
	b := &w.bases[cpu]
	st := sdk.WheelState{RaiseAt: sdk.NoExpiry, NextExpiry: sdk.NoExpiry, Pending: b.allTimers}
	if !b.init {
		return st
	}
	if !b.ndValid {
		b.ndEarliest, b.ndValid = w.earliest(b, &b.nd, true), true
	}
	st.NextExpiry = b.ndEarliest
	switch w.c.opt.raise {
	case RaiseEveryTick:
		// 3.10 run_local_timers() raises on every tick; run_timer_softirq()
		// then does nothing before timer_jiffies.
		st.RaiseAt = b.timerJiffies
	default:
		// Earliest expiry of any timer: the CPU is awake when it ticks, so
		// deferrable timers count (as 5.9+ checks BASE_DEF).
		if !b.allValid {
			b.allEarliest, b.allValid = w.earliest(b, &b.all, false), true
		}
		st.RaiseAt = b.allEarliest
	}
	return st
}
