// Package wheel is tickemu's timer wheel plugin: the per-CPU timer bases of
// kernel/time/timer.c (kernel/timer.c before 3.16), implementing
// [sdk.TimerBase]. Start with [New] and the schema's attributes.
//
// # Model
//
// Two layouts (attribute "layout"):
//
//   - "levels", the non-cascading wheel of 4.8+ (500462a9de65), followed as of
//     5.9-6.8: LVL_DEPTH levels (9, or 8 at HZ <= 100) of 64 buckets, each 8x
//     coarser than the one below. calc_wheel_index() picks the level from the
//     delta to the base clock (thresholds 63*8^(n-1)), rounds the expiry up by
//     one granule (bucket_expiry, so a timer always fires strictly after its
//     expiry, even at level 0), sends past expiries to the current level-0
//     slot and clamps deltas beyond the cutoff. Buckets are LIFO. Each CPU has
//     BASE_STD and BASE_DEF (deferrable timers), each with clk, next_expiry
//     (lazily recalculated after a dequeue empties a bucket) and a pending
//     bitmap; forward_timer_base() runs on every enqueue (5.9+ rule, threshold
//     one jiffy). A timer is never moved once queued.
//   - "cascade", the tv1..tv5 wheel of <= 4.7, followed as of 3.10: tv1 has
//     256 one-jiffy slots, tv2..tv5 64 slots each; timers are placed by the
//     delta to timer_jiffies, refilled into lower vectors by cascade() every
//     256 jiffies and expire exactly at their expiry, in FIFO order;
//     mod_timer() applies apply_slack() (delay/256, rounded to the value with
//     most trailing zeros). Deferrable timers share the base and are only
//     skipped by the next-event search.
//
// Catch-up strategies (attribute "catchup") change how __run_timers() brings
// the base up to jiffies, never which timers expire in which softirq. The
// attribute names a builtin catchup_policy (plugins/policy); a
// catchup_policy block puts another in its place, asked at every softirq's
// walk (UsePolicy), while skip_empty's catch-up on enqueue and dequeue stays
// with the attribute:
//
//   - "per_jiffy": one loop iteration per jiffy (3.10). On the cascade layout
//     this is the literal loop, cascades included; on the levels layout it is
//     a cost model (the 4.8 development loop) over the 5.9+ state.
//   - "skip_empty": the same, but an empty wheel jumps to jiffies
//     (catchup_timer_jiffies(), 3.15): on add-to-empty, delete-of-last and at
//     softirq entry.
//   - "next_expiry": jump to the next jiffy with work: the 5.9+ loop on the
//     levels layout; on the cascade layout, only the jiffies where a tv1 slot
//     is non-empty or a cascade moves timers are iterated, which gives exactly
//     the per_jiffy expiries, order and state at O(events) cost.
//
// The softirq raise rule (attribute "softirq_raise") only feeds
// [sdk.WheelState].RaiseAt: the base clock (every tick, 3.10-4.7) or the
// earliest bucket expiry including deferrable timers (5.9+).
//
// # Placement
//
// With kernel.timer_migration on (sdk.Setup.TimerMigration), attribute
// "migration" picks the era (docs/reference/migration.md P3): "push"
// (2.6.x-6.8) queues a timer that is not pinned on
// sdk.NohzTimerTarget()'s CPU, the 3.10 rule on the cascade layout; "pull"
// (6.9+) queues every timer locally, in BASE_LOCAL (pinned), BASE_GLOBAL or
// BASE_DEF, reports BASE_LOCAL's and BASE_GLOBAL's next expiry apart
// (sdk.WheelState.Split) and lets the host's timer-migration hierarchy run
// an idle CPU's BASE_GLOBAL (ExpireRemote, timer_expire_remote()). A pending
// timer whose expiry or bucket does not change stays on its CPU, as in
// __mod_timer(). ModTimer says where the timer went (Moved, CPU).
//
// # Costs
//
// Every call returns its simulated cost, computed from the *_cost_ns
// attributes (fractions allowed; accumulated in picoseconds and rounded half
// up to ns once per returned value): iteration (per catch-up iteration;
// default 1.7 ns, from the 3.10 report of ~300000 jiffies caught up in
// 461-566 us), cascade and cascade_timer (per cascade() call and per timer it
// moves), expiry (per expired timer, before its declared callback cost),
// enqueue (per locked mod_timer(), callback re-arms included), dequeue and
// scan (per bucket or level bitmap examined by the next-event search).
//
// # Divergences
//
// Each is marked "Divergence:" at the code it concerns. In short: on the
// levels layout all strategies keep the 5.9+ state; skip_empty never moves
// timer_jiffies backwards and leaves it at jiffies+1 after a softirq on an
// empty wheel; a timer whose callback runs is not kept on its base by
// __mod_timer(); the collected jiffy reported for each expiry is the pass's
// clock even where the kernel's trace point would show a forwarded one;
// mod_timer() of a timer that is not queued does not forward the base the
// timer was last queued on (the kernel's lock_timer_base() base), which only
// leaves that base's clock behind until its next forward (oracle/wheeldiff
// checks that nothing else differs, docs/kernel-oracle.md). NextExpiry of the cascade layout is
// the exact earliest expiry (the kernel computes it only at idle entry),
// cached and recomputed from per-bucket bitmaps when its timer leaves.
//
// # Tests
//
// levels_test.go, cascade_test.go and the data-driven timelines in
// testdata/timeline (timeline_test.go) check the geometry and the vectors
// V1-V13 (docs/reference/wheel-tick.md) at HZ 100/250/1000;
// FuzzTimerBaseVsReference runs every strategy of both layouts against a
// sorted-slice reference model; the sdktest.RunTimerBase suite runs for every
// combination. oracle/wheeldiff (`make test-oracle`) runs random operation
// sequences through the kernel's own timer.c and the 6.12 configuration.
package wheel
