// Package tmigr models the timer-migration hierarchy of Linux 6.9+
// (kernel/time/timer_migration.c, 7ee988770326 "timers: Implement the
// hierarchical pull model"): CPUs in groups of TMIGR_CHILDREN_PER_GROUP,
// groups of groups up to one top group; a CPU that stops its tick hands its
// first global timer to its group (tmigr_cpu_deactivate()); an active CPU
// that is its group's migrator expires the idle CPUs' global timers from its
// timer softirq (tmigr_handle_remote()). docs/reference/migration.md P5 has
// the rules.
//
// The model keeps the kernel's state (active masks, migrators, each group's
// first event) but recomputes a group's first event from its children's
// events instead of keeping a timerqueue with ignore flags; the events a
// migrator sees, and in which order, are the same. It is a pure data
// structure: the host calls it at the kernel's hook points and applies the
// remote expiries.
package tmigr

import "github.com/tickemu/tickemu/framework/sdk/ktime"

// ChildrenPerGroup is TMIGR_CHILDREN_PER_GROUP.
const ChildrenPerGroup = 8

// none is TMIGR_NONE: a group without migrator.
const none = -1

// group is struct tmigr_group.
type group struct {
	level    int
	parent   *group
	slot     int // the child bit in the parent (groupmask)
	children int
	active   uint8 // the active children (migr_state.active)
	migrator int   // the migrator child, or none
	// Per child slot: its event (the child's first global expiry while it is
	// idle, ktime.Max when it has none or is active) and the CPU it belongs
	// to (tmigr_event.cpu).
	evt    [ChildrenPerGroup]ktime.Time
	evtCPU [ChildrenPerGroup]int
	// next and nextCPU: the first event of the group (next_expiry).
	next    ktime.Time
	nextCPU int
}

// cpu is struct tmigr_cpu.
type cpu struct {
	g      *group
	slot   int
	idle   bool
	global ktime.Time // cpuevt.nextevt.expires while idle (ktime.Max: ignore)
	wakeup ktime.Time // tmc->wakeup
}

// Hierarchy is the machine's timer-migration hierarchy.
type Hierarchy struct {
	cpus   []cpu
	levels [][]*group
	// Walks counts the group levels every activate, deactivate and
	// remote-expiry update touched: the unit of WalkCost.
	Walks int64
}

// New builds the hierarchy of n CPUs as tmigr_setup_groups() does for one
// NUMA node with CPUs coming up in order: CPU i is child i%8 of level-0
// group i/8, group j of a level child j%8 of group j/8 of the next, up to a
// single top group. Every CPU starts active (tmigr_cpu_online() of a CPU
// whose timer base is not idle) and the lowest child of each group is its
// migrator.
func New(n int) *Hierarchy {
	h := &Hierarchy{cpus: make([]cpu, n)}
	width := n
	for lvl := 0; ; lvl++ {
		count := (width + ChildrenPerGroup - 1) / ChildrenPerGroup
		gs := make([]*group, count)
		for i := range gs {
			g := &group{level: lvl, migrator: none, next: ktime.Max, nextCPU: -1}
			for s := range g.evt {
				g.evt[s], g.evtCPU[s] = ktime.Max, -1
			}
			gs[i] = g
		}
		h.levels = append(h.levels, gs)
		if lvl == 0 {
			for c := range h.cpus {
				g := gs[c/ChildrenPerGroup]
				h.cpus[c] = cpu{g: g, slot: c % ChildrenPerGroup, global: ktime.Max, wakeup: ktime.Max}
				g.children++
			}
		} else {
			for j, child := range h.levels[lvl-1] {
				child.parent, child.slot = gs[j/ChildrenPerGroup], j%ChildrenPerGroup
				gs[j/ChildrenPerGroup].children++
			}
		}
		if count == 1 {
			break
		}
		width = count
	}
	for c := range h.cpus {
		h.Activate(c)
	}
	h.Walks = 0
	return h
}

// Levels is the number of levels (1 for up to 8 CPUs, 2 for up to 64).
func (h *Hierarchy) Levels() int { return len(h.levels) }

// Idle reports whether cpu is inactive in the hierarchy.
func (h *Hierarchy) Idle(c int) bool { return h.cpus[c].idle }

// Migrator reports the CPU that handles cpu's group at level 0: the
// migrator child's CPU number, or -1 when the group has none.
func (h *Hierarchy) Migrator(c int) int {
	g := h.cpus[c].g
	if g.migrator == none {
		return -1
	}
	return c - c%ChildrenPerGroup + g.migrator
}

// top is the top-level group.
func (h *Hierarchy) top() *group { return h.levels[len(h.levels)-1][0] }

// refresh recomputes g's first event from its children's slots
// (tmigr_next_groupevt()).
func (g *group) refresh() {
	g.next, g.nextCPU = ktime.Max, -1
	for s := 0; s < g.children; s++ {
		if g.evt[s] < g.next {
			g.next, g.nextCPU = g.evt[s], g.evtCPU[s]
		}
	}
}

// propagate is tmigr_update_events() from g upward: each group's event in
// its parent is its first event while it is inactive, none while it has an
// active child (its own migrator handles it).
func (h *Hierarchy) propagate(g *group) {
	for ; g != nil; g = g.parent {
		h.Walks++
		g.refresh()
		p := g.parent
		if p == nil {
			return
		}
		if g.active != 0 {
			p.evt[g.slot], p.evtCPU[g.slot] = ktime.Max, -1
		} else {
			p.evt[g.slot], p.evtCPU[g.slot] = g.next, g.nextCPU
		}
	}
}

// Activate is tmigr_cpu_activate() (timer_clear_idle(), when the CPU
// restarts its tick): the CPU's event is ignored from now on; each group on
// the way up gets the child's active bit, and a group without migrator takes
// the child as migrator and goes active in its parent (tmigr_active_up()).
func (h *Hierarchy) Activate(c int) {
	tc := &h.cpus[c]
	tc.idle, tc.global, tc.wakeup = false, ktime.Max, ktime.Max
	g, slot := tc.g, tc.slot
	g.evt[slot], g.evtCPU[slot] = ktime.Max, -1
	for g != nil {
		h.Walks++
		wasNone := g.migrator == none
		g.active |= 1 << uint(slot)
		if wasNone {
			g.migrator = slot
		}
		g.refresh()
		if !wasNone || g.parent == nil {
			break
		}
		// The group is active again: its event in the parent is ignored.
		g.parent.evt[g.slot], g.parent.evtCPU[g.slot] = ktime.Max, -1
		slot, g = g.slot, g.parent
	}
}

// Deactivate is tmigr_cpu_deactivate(global) (the tick-stop path:
// timer_base_try_to_set_idle()), and tmigr_cpu_new_timer(global) when cpu
// is idle already: global is the CPU's first global timer (ktime.Max: none,
// or a local timer comes first). The CPU's active bit is cleared up the
// hierarchy; a group whose migrator it was takes its lowest active child,
// or none, which propagates (tmigr_inactive_up()). The event is queued. The
// answer is the first event of the whole hierarchy when no CPU is active
// any more (this CPU must wake for it), else ktime.Max.
func (h *Hierarchy) Deactivate(c int, global ktime.Time) ktime.Time {
	tc := &h.cpus[c]
	tc.global = global
	g, slot := tc.g, tc.slot
	g.evt[slot], g.evtCPU[slot] = global, c
	if !tc.idle {
		tc.idle = true
		for cg, cs := g, slot; cg != nil; cg, cs = cg.parent, cg.slot {
			cg.active &^= 1 << uint(cs)
			if cg.migrator == cs {
				cg.migrator = lowest(cg.active)
			}
			if cg.active != 0 {
				break // the group stays active: nothing changes above
			}
		}
	}
	h.propagate(g)
	first := ktime.Max
	if top := h.top(); top.migrator == none {
		first = top.next
	}
	tc.wakeup = first
	return first
}

func lowest(m uint8) int {
	for s := 0; s < ChildrenPerGroup; s++ {
		if m&(1<<uint(s)) != 0 {
			return s
		}
	}
	return none
}

// handles reports whether the child at slot handles g: it is g's migrator
// or g has none (tmigr_check_migrator()).
func (g *group) handles(slot int) bool { return g.migrator == slot || g.migrator == none }

// RequiresHandleRemote is tmigr_requires_handle_remote(), from
// run_local_timers() on cpu at now (the jiffies-based time): an active CPU
// walks up the groups it handles and answers whether one has an event due;
// an idle CPU (woken for the hierarchy) compares its wakeup.
func (h *Hierarchy) RequiresHandleRemote(c int, now ktime.Time) bool {
	tc := &h.cpus[c]
	if tc.idle {
		return now >= tc.wakeup
	}
	for g, slot := tc.g, tc.slot; g != nil; g, slot = g.parent, g.slot {
		if !g.handles(slot) {
			return false
		}
		if g.next <= now {
			return true
		}
	}
	return false
}

// Remote is the host's part of one remote expiry: timer_expire_remote(cpu)
// on the calling CPU (nothing when cpu is the calling CPU), then
// fetch_next_timer_interrupt_remote(): it returns cpu's first global timer
// afterwards (ktime.Max: none, or a local one comes first).
type Remote func(cpu int) (global ktime.Time)

// HandleRemote is tmigr_handle_remote() on cpu at now, from its timer
// softirq: walk up the groups cpu handles; in each, take every event due,
// run expire for its CPU (tmigr_handle_remote_cpu(): only while that CPU is
// still idle with that event due; cpu's own timers ran in its softirq) and
// requeue that CPU's next global event. It returns the CPUs expired, in
// order, and leaves cpu's wakeup at the next event of the last group it
// handled.
func (h *Hierarchy) HandleRemote(c int, now ktime.Time, expire Remote) []int {
	tc := &h.cpus[c]
	if !tc.g.handles(tc.slot) && tc.wakeup == ktime.Max {
		return nil
	}
	var done []int
	first := ktime.Max
	for g, slot := tc.g, tc.slot; g != nil; g, slot = g.parent, g.slot {
		if !g.handles(slot) {
			break
		}
		// Each CPU's event is taken at most once per walk: expire returns
		// its next one, later than now (a plugin that kept a due timer
		// would otherwise loop here).
		for taken := 0; g.next <= now && g.nextCPU >= 0 && taken <= len(h.cpus); taken++ {
			rc := g.nextCPU
			r := &h.cpus[rc]
			if !r.idle || r.global > now {
				// Stale (the CPU woke up or its event moved): drop it.
				h.requeue(rc, r.global)
				continue
			}
			// For cpu itself (the last CPU, woken for the hierarchy) its
			// softirq ran its timers: expire only reads its next event.
			global := expire(rc)
			if rc != c {
				done = append(done, rc)
			}
			h.requeue(rc, global)
		}
		first = g.next
	}
	tc.wakeup = first
	return done
}

// requeue is the tmigr_new_timer_up() walk after a remote expiry: the idle
// CPU's new first global event replaces the old one up the hierarchy.
func (h *Hierarchy) requeue(c int, global ktime.Time) {
	r := &h.cpus[c]
	if !r.idle {
		global = ktime.Max
	}
	r.global = global
	r.g.evt[r.slot], r.g.evtCPU[r.slot] = global, c
	if !r.idle {
		r.g.evtCPU[r.slot] = -1
	}
	h.propagate(r.g)
}
