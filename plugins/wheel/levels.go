package wheel

import (
	"math/bits"

	"github.com/tickemu/tickemu/framework/sdk"
)

// Geometry of the non-cascading wheel (kernel/time/timer.c, identical 4.8-6.x).
const (
	lvlClkShift = 3                  // LVL_CLK_SHIFT
	lvlClkMask  = 1<<lvlClkShift - 1 // LVL_CLK_MASK
	lvlBits     = 6                  // LVL_BITS
	lvlSize     = 1 << lvlBits       // LVL_SIZE: buckets per level
	lvlMask     = lvlSize - 1        // LVL_MASK
	maxDepth    = 9                  // LVL_DEPTH at HZ > 100
	wheelSize   = lvlSize * maxDepth
)

func lvlShift(n int) uint       { return uint(n * lvlClkShift) }    // LVL_SHIFT(n)
func lvlGran(n int) uint64      { return 1 << lvlShift(n) }         // LVL_GRAN(n)
func lvlStart(n int) uint64     { return lvlMask << lvlShift(n-1) } // LVL_START(n) = 63 * 8^(n-1)
func lvlOffs(n int) int         { return n * lvlSize }              // LVL_OFFS(n)
func levelOfBucket(idx int) int { return idx / lvlSize }

// geometry holds the HZ-dependent wheel constants.
type geometry struct {
	depth      int    // LVL_DEPTH: 9, or 8 when HZ <= 100
	cutoff     uint64 // WHEEL_TIMEOUT_CUTOFF = LVL_START(LVL_DEPTH)
	timeoutMax uint64 // WHEEL_TIMEOUT_MAX = cutoff - LVL_GRAN(LVL_DEPTH-1)
}

func newGeometry(hz int) geometry {
	d := maxDepth
	if hz <= 100 {
		d = 8
	}
	cut := lvlStart(d)
	return geometry{depth: d, cutoff: cut, timeoutMax: cut - lvlGran(d-1)}
}

// calcIndex models kernel/time/timer.c:calc_index() as of 5.9: the expiry is
// always rounded up by one granule of the level, so the bucket is processed
// strictly after expires.
func calcIndex(expires uint64, lvl int) (idx int, bucketExpiry uint64) {
	e := (expires >> lvlShift(lvl)) + 1
	return lvlOffs(lvl) + int(e&lvlMask), e << lvlShift(lvl)
}

// calcWheelIndex models kernel/time/timer.c:calc_wheel_index() as of 5.9+:
// the level is chosen by the delta from the base clock with the code's
// thresholds LVL_START(n) = 63*8^(n-1); an expiry in the past goes to the
// current level-0 bucket with bucket_expiry = clk; a delta at or beyond the
// cutoff is clamped to clk + WHEEL_TIMEOUT_MAX (the e2a71bdea816 fix, 5.8).
func (g geometry) calcWheelIndex(expires, clk uint64) (idx int, bucketExpiry uint64) {
	delta := expires - clk
	for lvl := 0; lvl < g.depth-1; lvl++ {
		if delta < lvlStart(lvl+1) {
			return calcIndex(expires, lvl)
		}
	}
	if int64(delta) < 0 {
		return int(clk & lvlMask), clk
	}
	if delta >= g.cutoff {
		expires = clk + g.timeoutMax
	}
	return calcIndex(expires, g.depth-1)
}

// levelBase models struct timer_base (kernel/time/timer.c, 5.14-6.8 layout:
// clk, next_expiry, next_expiry_recalc, timers_pending, pending_map, vectors).
// Each CPU has two: BASE_STD and BASE_DEF (deferrable timers, NO_HZ_COMMON).
//
// Invariant: bit i of pending[l] is set exactly when vectors[l][i] is not
// empty. next_expiry is never later than the earliest bucket expiry; it is
// stale-early after a dequeue emptied a bucket (recalc is then set).
type levelBase struct {
	init          bool
	clk           uint64
	nextExpiry    uint64
	recalc        bool // next_expiry_recalc
	timersPending bool // timers_pending
	pending       [maxDepth]uint64
	// vectors[l] is level l's buckets, nil until the level's first timer:
	// a base's 576 buckets are 4.6 kB, and many bases never hold a timer
	// (BASE_GLOBAL outside the pull model, often BASE_STD) or hold a few
	// on one or two levels (a CPU's vmstat timer). No pending bit of a
	// level is set while its buckets are nil.
	vectors [maxDepth]*[lvlSize]bucketList
	count   int
	// walk is where a one-jiffy-per-iteration loop would resume: the cost
	// model of the per_jiffy and skip_empty strategies (see runTimers).
	walk uint64
}

// Base kinds of a CPU: BASE_STD (BASE_LOCAL in the pull model), BASE_DEF,
// and BASE_GLOBAL, which only the pull model uses.
const (
	kindStd    = 0
	kindDef    = 1
	kindGlobal = 2
	nrKinds    = 3
)

// levelWheel is the levels layout: per CPU, bases[3*cpu] is BASE_STD
// (BASE_LOCAL in the pull model), bases[3*cpu+1] BASE_DEF and bases[3*cpu+2]
// BASE_GLOBAL (pull model only).
type levelWheel struct {
	c     *common
	g     geometry
	bases []levelBase
}

func newLevelWheel(c *common, cpus, hz int) *levelWheel {
	return &levelWheel{c: c, g: newGeometry(hz), bases: make([]levelBase, nrKinds*cpus)}
}

// kindOf is the base index of get_timer_cpu_base(): BASE_DEF for deferrable
// timers; in the pull model (6.9+) BASE_LOCAL for pinned and BASE_GLOBAL for
// the other timers; BASE_STD before.
func (w *levelWheel) kindOf(f sdk.TimerFlags) int {
	switch {
	case f&sdk.TimerDeferrable != 0:
		return kindDef
	case w.c.opt.migr == MigrationPull && f&sdk.TimerPinned == 0:
		return kindGlobal
	}
	return kindStd
}

// base returns cpu's base of kind, initialising the CPU's bases at their
// first use (timers_prepare_cpu(): clk = jiffies, next_expiry = clk +
// NEXT_TIMER_MAX_DELTA).
func (w *levelWheel) base(cpu, kind int, j uint64) *levelBase {
	std := &w.bases[nrKinds*cpu]
	if !std.init {
		for i := 0; i < nrKinds; i++ {
			b := &w.bases[nrKinds*cpu+i]
			b.init, b.clk, b.nextExpiry, b.walk = true, j, j+nextTimerMaxDelta, j
		}
	}
	return &w.bases[nrKinds*cpu+kind]
}

// forward models kernel/time/timer.c:forward_timer_base() as of 5.9+
// (threshold 1 jiffy, unconditional): move clk up to jiffies, but never past
// a pending expired bucket, whose position is relative to the old clock.
func (b *levelBase) forward(j uint64) {
	if int64(j-b.clk) < 1 {
		return
	}
	if after(b.nextExpiry, j) {
		b.clk = j
		return
	}
	if before(b.nextExpiry, b.clk) { // the kernel WARNs and gives up
		return
	}
	b.clk = b.nextExpiry
}

// enqueue models kernel/time/timer.c:enqueue_timer() as of 5.9+:
// hlist_add_head() (LIFO buckets), set the pending bit, and lower
// next_expiry to the timer's bucket expiry.
func (w *levelWheel) enqueue(b *levelBase, n int32, idx int, bucketExpiry uint64) {
	s := &w.c.timers
	lvl := levelOfBucket(idx)
	lv := b.vectors[lvl]
	if lv == nil {
		lv = new([lvlSize]bucketList)
		for k := range lv {
			lv[k] = emptyList
		}
		b.vectors[lvl] = lv
	}
	s.pushFront(&lv[idx&lvlMask], n)
	b.pending[lvl] |= 1 << uint(idx&lvlMask)
	nd := &s.nodes[n]
	nd.bucket, nd.bucketExpiry = int32(idx), bucketExpiry
	b.count++
	if before(bucketExpiry, b.nextExpiry) {
		b.nextExpiry, b.timersPending, b.recalc = bucketExpiry, true, false
	}
}

// internalAdd models kernel/time/timer.c:internal_add_timer().
func (w *levelWheel) internalAdd(b *levelBase, n int32) {
	idx, be := w.g.calcWheelIndex(w.c.timers.nodes[n].expires, b.clk)
	w.enqueue(b, n, idx, be)
}

// detach models kernel/time/timer.c:detach_if_pending(): emptying a bucket
// clears its bit and only marks next_expiry for lazy recalculation.
func (w *levelWheel) detach(b *levelBase, n int32) {
	s := &w.c.timers
	idx := int(s.nodes[n].bucket)
	lvl := levelOfBucket(idx)
	l := &b.vectors[lvl][idx&lvlMask]
	if l.head == n && l.tail == n {
		b.pending[lvl] &^= 1 << uint(idx&lvlMask)
		b.recalc = true
	}
	s.unlink(l, n)
	s.nodes[n].bucket = nilNode
	b.count--
}

// nextPendingBucket models kernel/time/timer.c:next_pending_bucket(): the
// distance from slot clk of level lvl to its next pending bucket, searching
// cyclically, or -1.
func (b *levelBase) nextPendingBucket(lvl int, clk uint64) int {
	r := bits.RotateLeft64(b.pending[lvl], -int(clk&lvlMask))
	if r == 0 {
		return -1
	}
	return bits.TrailingZeros64(r)
}

// computeNext models kernel/time/timer.c:__next_timer_interrupt() (5.9-6.8;
// timer_recalc_next_expiry() in later 6.x): the bucket expiry of the earliest
// pending bucket, or clk + NEXT_TIMER_MAX_DELTA. It also returns how many
// levels it examined, for the scan cost.
func (w *levelWheel) computeNext(b *levelBase) (next uint64, levels int) {
	next = b.clk + nextTimerMaxDelta
	clk := b.clk
	for lvl := 0; lvl < w.g.depth; lvl++ {
		levels++
		pos := b.nextPendingBucket(lvl, clk)
		lvlClk := clk & lvlClkMask
		if pos >= 0 {
			tmp := (clk + uint64(pos)) << lvlShift(lvl)
			if before(tmp, next) {
				next = tmp
			}
			// Found before the next level can tick: no need to look further
			// ("timers: Optimize _next_timer_interrupt() level iteration", 5.9).
			if uint64(pos) <= (lvlClkMask+1-lvlClk)&lvlClkMask {
				break
			}
		}
		// The next level's next bucket: one further on if this level's
		// clock is not at a level boundary.
		adj := uint64(0)
		if lvlClk != 0 {
			adj = 1
		}
		clk = clk>>lvlClkShift + adj
	}
	return next, levels
}

// recalcNext stores a fresh next_expiry and timers_pending.
func (w *levelWheel) recalcNext(b *levelBase, m *meter) {
	next, levels := w.computeNext(b)
	m.addN(w.c.opt.cost.scan, int64(levels))
	b.nextExpiry, b.recalc = next, false
	b.timersPending = next != b.clk+nextTimerMaxDelta
}

// freshNext is next_expiry as a reader that recalculates would see it,
// without storing anything.
func (w *levelWheel) freshNext(b *levelBase) (uint64, bool) {
	if !b.recalc {
		return b.nextExpiry, b.timersPending
	}
	next, _ := w.computeNext(b)
	return next, next != b.clk+nextTimerMaxDelta
}

// catchupWalk is the skip_empty strategy's catchup_timer_jiffies() applied to
// the walk position when a base becomes empty or gets its first timer.
func (w *levelWheel) catchupWalk(b *levelBase, j uint64) {
	if w.c.opt.catchup == CatchupSkipEmpty && b.count == 0 && after(j, b.walk) {
		b.walk = j
	}
}

// modTimer models kernel/time/timer.c:__mod_timer(timer, expires, 0) as of
// 5.9+ (mod_timer()) called on cpu: a pending timer with the same expiry, or
// one that would land in the bucket it sits in, stays where it is, on
// whichever CPU (the networking shortcut); otherwise it is detached and
// queued on the target base: get_target_base() (push model: the timer
// migration target, see common.targetCPU) or get_timer_this_cpu_base()
// (6.9+ pull model: cpu). A timer whose flags change while queued is
// re-queued (the kernel fixes flags at timer_setup()).
//
// Divergence: a timer whose callback is running is not kept on its old base
// (base->running_timer): a declared re-arm runs inside the softirq, and the
// host does not start timers from a callback on another CPU.
func (w *levelWheel) modTimer(cpu int, j uint64, t sdk.WheelTimer, m *meter) bool {
	s := &w.c.timers
	kind := w.kindOf(t.Flags)
	n, pending := s.lookup(t.ID)
	if pending {
		nd := &s.nodes[n]
		sameFlags := nd.flags == t.Flags
		nd.cbCost, nd.period = t.CallbackCost, t.Period
		if sameFlags && nd.expires == t.Expires {
			return true // the networking fast path: no lock taken
		}
		old := w.base(int(nd.cpu), w.kindOf(nd.flags), j)
		m.add(w.c.opt.cost.enqueue)
		old.forward(j)
		clk := old.clk
		idx, be := w.g.calcWheelIndex(t.Expires, clk)
		if sameFlags && idx == int(nd.bucket) {
			nd.expires = t.Expires // the old bucket expiry stays in force
			return true
		}
		m.add(w.c.opt.cost.dequeue)
		w.detach(old, n)
		w.catchupWalk(old, j)
		tcpu := w.c.targetCPU(cpu, t)
		target := w.base(tcpu, kind, j)
		nd = &s.nodes[n]
		nd.expires, nd.flags, nd.cpu = t.Expires, t.Flags, int32(tcpu)
		if target != old {
			target.forward(j)
		}
		w.catchupWalk(target, j)
		if target == old && clk == target.clk {
			w.enqueue(target, n, idx, be)
		} else {
			w.internalAdd(target, n)
		}
		w.c.stats[tcpu].starts++
		return true
	}
	tcpu := w.c.targetCPU(cpu, t)
	target := w.base(tcpu, kind, j)
	n = s.alloc(t.ID)
	nd := &s.nodes[n]
	nd.expires, nd.flags, nd.cpu, nd.cbCost, nd.period = t.Expires, t.Flags, int32(tcpu), t.CallbackCost, t.Period
	m.add(w.c.opt.cost.enqueue)
	target.forward(j)
	w.catchupWalk(target, j)
	w.internalAdd(target, n)
	w.c.stats[tcpu].starts++
	return false
}

// delTimer models kernel/time/timer.c:del_timer() / timer_delete().
func (w *levelWheel) delTimer(cpu int, j uint64, id sdk.TimerID, m *meter) bool {
	s := &w.c.timers
	n, pending := s.lookup(id)
	if !pending {
		return false
	}
	nd := &s.nodes[n]
	owner := int(nd.cpu)
	b := w.base(owner, w.kindOf(nd.flags), j)
	m.add(w.c.opt.cost.dequeue)
	w.detach(b, n)
	w.catchupWalk(b, j)
	s.release(n)
	w.c.stats[owner].stops++
	return true
}

// runOrder is the order run_timer_softirq() runs a CPU's bases: BASE_STD
// then BASE_DEF (5.9-6.8); BASE_LOCAL, BASE_GLOBAL, BASE_DEF (6.9+).
var runOrder = [2][]int{{kindStd, kindDef}, {kindStd, kindGlobal, kindDef}}

// runTimers models kernel/time/timer.c:run_timer_softirq(): __run_timers()
// on each of the CPU's bases (__run_timer_base() in 6.9+).
func (w *levelWheel) runTimers(r *run) {
	w.base(r.cpu, kindStd, r.jiffies)
	for _, k := range runOrder[w.c.opt.migr] {
		w.runBase(&w.bases[nrKinds*r.cpu+k], k, r)
	}
}

// expireRemote models kernel/time/timer.c:timer_expire_remote() (6.9+):
// __run_timer_base() of r.cpu's BASE_GLOBAL, run by the migrator.
func (w *levelWheel) expireRemote(r *run) {
	w.runBase(w.base(r.cpu, kindGlobal, r.jiffies), kindGlobal, r)
}

// runBase models kernel/time/timer.c:__run_timers() as of 5.9+:
//
//	while jiffies >= clk && jiffies >= next_expiry:
//	    collect the buckets due at next_expiry (clk = next_expiry)
//	    clk++; recalculate next_expiry
//	    expire the collected buckets, highest level first
//
// The state changes are the same under every catch-up strategy; only what is
// charged differs. next_expiry charges one iteration per collect pass plus
// the level scans of the recalculation. per_jiffy charges one iteration for
// every jiffy since the previous softirq (or the CPU's first call), what the
// 4.8 development loop (one jiffy per iteration, before 236968383cf5) did;
// skip_empty does the same but charges nothing when the base is empty, and
// its walk position jumps to jiffies when the base becomes empty or gets its
// first timer (catchup_timer_jiffies(), 3.15).
//
// Divergence: the 4.8-5.8 loops left clk at jiffies+1 after a run, while 5.9+
// leaves it at the last processed bucket + 1; keeping the 5.9+ state for
// every strategy keeps expiries identical across strategies.
//
// The catch-up policy is asked on every call (k is the base's index); under
// next_expiry the walk position follows too, so that a policy may change
// its mode from one softirq to the next.
func (w *levelWheel) runBase(b *levelBase, k int, r *run) {
	j := r.jiffies
	cost := &w.c.opt.cost
	mode := w.c.catchupMode(r.cpu, k, j, b.walk, b.count)
	switch mode {
	case CatchupNextExpiry:
		if afterEq(j, b.clk) {
			r.gap = max(r.gap, j-b.clk)
		}
		if afterEq(j, b.walk) {
			b.walk = j + 1
		}
	default:
		pos := b.walk
		if afterEq(j, pos) {
			r.gap = max(r.gap, j-pos)
			if !(mode == CatchupSkipEmpty && b.count == 0) {
				r.iterations += j + 1 - pos
				r.m.addN(cost.iteration, int64(j+1-pos))
			}
			b.walk = j + 1
		}
	}
	if before(j, b.nextExpiry) {
		return
	}
	var heads [maxDepth]bucketList
	for afterEq(j, b.clk) && afterEq(j, b.nextExpiry) {
		levels := w.collect(b, &heads)
		collected := b.clk
		b.clk++
		if mode == CatchupNextExpiry {
			r.iterations++
			r.m.add(cost.iteration)
			w.recalcNext(b, &r.m)
		} else {
			var free meter // per_jiffy/skip_empty do not charge the 5.9+ recalculation
			w.recalcNext(b, &free)
		}
		for levels--; levels >= 0; levels-- {
			w.expireList(b, &heads[levels], collected, r)
		}
	}
}

// collect models kernel/time/timer.c:collect_expired_timers() as of 5.9+:
// set clk to next_expiry and take the bucket of each level whose clock ticks
// at clk; level n ticks only when the low 3n bits of clk are zero.
func (w *levelWheel) collect(b *levelBase, heads *[maxDepth]bucketList) int {
	b.clk = b.nextExpiry
	clk := b.clk
	levels := 0
	for i := 0; i < w.g.depth; i++ {
		j := int(clk & lvlMask) // the bucket's index in its level
		bit := uint64(1) << uint(j)
		if b.pending[i]&bit != 0 {
			b.pending[i] &^= bit
			heads[levels] = b.vectors[i][j]
			b.vectors[i][j] = emptyList
			levels++
		}
		if clk&lvlClkMask != 0 {
			break
		}
		clk >>= lvlClkShift
	}
	return levels
}

// expireList models kernel/time/timer.c:expire_timers(): run a collected
// bucket head first. A declared Period re-arms the timer as its callback's
// mod_timer(timer, jiffies + Period) would: the base is forwarded and the
// timer re-queued relative to it.
//
// Divergence: the kernel derives the traced baseclk from base->clk - 1 at
// each expire_timers() call, so after a re-arm has forwarded the base during
// a catch-up, the lower levels of the same pass trace a wrong clock; here
// every timer of a pass reports the jiffy it was collected at.
func (w *levelWheel) expireList(b *levelBase, head *bucketList, baseclk uint64, r *run) {
	s := &w.c.timers
	for !head.empty() {
		n := head.head
		s.unlink(head, n)
		nd := &s.nodes[n]
		nd.bucket = nilNode
		b.count--
		w.c.expire(r, nd, baseclk)
		if nd.period == 0 {
			w.catchupWalk(b, r.jiffies)
			s.release(n)
			continue
		}
		nd.expires = r.jiffies + nd.period
		r.m.add(w.c.opt.cost.enqueue)
		b.forward(r.jiffies)
		w.internalAdd(b, n)
		w.c.stats[r.cpu].starts++
		r.rearmed(s.nodes[n].expires)
	}
}

// nextTimerInterrupt models kernel/time/timer.c:get_next_timer_interrupt() as
// of 5.9-6.8 on BASE_STD, or fetch_next_timer_interrupt() over BASE_LOCAL and
// BASE_GLOBAL (6.9+), in jiffies (deferrable timers never limit the sleep):
// recalculate next_expiry if needed, forward clk towards jiffies without
// passing it, and answer jiffies when the next bucket is already due.
// Marking the base idle (is_idle) only matters for remote-enqueue IPIs, which
// the host models.
func (w *levelWheel) nextTimerInterrupt(cpu int, j uint64, m *meter) uint64 {
	next, pending := sdk.NoExpiry, false
	for _, k := range runOrder[w.c.opt.migr] {
		if k == kindDef {
			continue
		}
		n, p := w.nextOfBase(w.base(cpu, k, j), j, m)
		if p && (!pending || before(n, next)) {
			next, pending = n, true
		}
	}
	switch {
	case !pending:
		return sdk.NoExpiry
	case beforeEq(next, j):
		return j
	}
	return next
}

// nextOfBase is next_timer_interrupt() and forward_base_clk() for one base:
// its next_expiry, recalculated if needed, and whether a timer is pending;
// the clock moves towards jiffies without passing next_expiry.
func (w *levelWheel) nextOfBase(b *levelBase, j uint64, m *meter) (uint64, bool) {
	if b.recalc {
		w.recalcNext(b, m)
	}
	// 6.9+ next_timer_interrupt() (6.12 kernel/time/timer.c; 6.1's
	// get_next_timer_interrupt() does not): an empty base's next_expiry
	// moves to jiffies + NEXT_TIMER_MAX_DELTA, which both bases of
	// fetch_next_timer_interrupt() are compared by. Left at clk +
	// NEXT_TIMER_MAX_DELTA from a long-past clock, it was below the
	// bucket expiry of a timer clamped to WHEEL_TIMEOUT_MAX, which enqueue
	// then did not record: the base kept timers_pending false with the
	// timer queued (found by oracle/wheeldiff against 6.12's timer.c).
	if w.c.opt.migr == MigrationPull && !b.timersPending {
		b.nextExpiry = j + nextTimerMaxDelta
	}
	next := b.nextExpiry
	if after(j, b.clk) {
		if after(next, j) {
			b.clk = j
		} else if after(next, b.clk) {
			b.clk = next
		}
	}
	return next, b.timersPending
}

// state reports cpu's WheelState.
func (w *levelWheel) state(cpu int) sdk.WheelState {
	std, def, glob := &w.bases[nrKinds*cpu], &w.bases[nrKinds*cpu+kindDef], &w.bases[nrKinds*cpu+kindGlobal]
	if !std.init {
		return sdk.WheelState{RaiseAt: sdk.NoExpiry, NextExpiry: sdk.NoExpiry,
			Split: w.c.opt.migr == MigrationPull, LocalNext: sdk.NoExpiry, GlobalNext: sdk.NoExpiry}
	}
	st := sdk.WheelState{NextExpiry: sdk.NoExpiry, Pending: std.count + def.count + glob.count}
	if next, ok := w.freshNext(std); ok {
		st.NextExpiry = next
	}
	if w.c.opt.migr == MigrationPull {
		st.Split, st.LocalNext, st.GlobalNext = true, st.NextExpiry, sdk.NoExpiry
		if next, ok := w.freshNext(glob); ok {
			st.GlobalNext = next
			if st.NextExpiry == sdk.NoExpiry || before(next, st.NextExpiry) {
				st.NextExpiry = next
			}
		}
	}
	switch w.c.opt.raise {
	case RaiseEveryTick:
		// 4.8-5.8 run_local_timers(): raise unless jiffies < clk. With
		// the pull model's bases (a hybrid no release had) the test is
		// made on every base, as 6.9+ run_local_timers() loops over
		// them: BASE_GLOBAL's clock can lag BASE_LOCAL's by a jiffy
		// after a softirq (found by oracle/wheeldiff against 6.12's
		// timer.c with d4f7dae87096 reverted).
		st.RaiseAt = std.clk
		if before(def.clk, st.RaiseAt) {
			st.RaiseAt = def.clk
		}
		if w.c.opt.migr == MigrationPull && before(glob.clk, st.RaiseAt) {
			st.RaiseAt = glob.clk
		}
	default:
		// 5.9+ run_local_timers(): jiffies >= next_expiry of BASE_STD, or of
		// BASE_DEF since the CPU is awake (of any base in 6.9+). A
		// stale-early value raises a spurious softirq, as in the kernel.
		st.RaiseAt = std.nextExpiry
		if before(def.nextExpiry, st.RaiseAt) {
			st.RaiseAt = def.nextExpiry
		}
		if w.c.opt.migr == MigrationPull && before(glob.nextExpiry, st.RaiseAt) {
			st.RaiseAt = glob.nextExpiry
		}
	}
	return st
}
