package kernel

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestDoUpdateJiffies encodes tick_do_update_jiffies64() (kernel/time/tick-sched.c)
// with vector V12 of docs/reference/wheel-tick.md: the whole ticks since last_jiffies_update
// are added in one step and the remainder carries over.
func TestDoUpdateJiffies(t *testing.T) {
	ms := ktime.Time(ktime.Millisecond)
	for _, tc := range []struct {
		now          ktime.Time
		wantJiffies  uint64
		wantLast     ktime.Time
		wantNextTick ktime.Time
	}{
		{1300*ms + 500*ktime.Time(ktime.Microsecond), 5300, 1300 * ms, 1301 * ms},
		{1000*ms + 900*ktime.Time(ktime.Microsecond), 5000, 1000 * ms, 1001 * ms}, // before tick_next_period: nothing
		{1001 * ms, 5001, 1001 * ms, 1002 * ms},
	} {
		k := &Kernel{kernelConfig: kernelConfig{tickNsec: 1000000}, tk: timekeeping{jiffies: 5000, lastJiffiesUpdate: 1000 * ms, tickNextPeriod: 1001 * ms}}
		k.doUpdateJiffies(tc.now)
		if k.tk.jiffies != tc.wantJiffies || k.tk.lastJiffiesUpdate != tc.wantLast || k.tk.tickNextPeriod != tc.wantNextTick {
			t.Errorf("doUpdateJiffies(%v) = jiffies %d, last %v, next %v; want %d, %v, %v",
				tc.now, k.tk.jiffies, k.tk.lastJiffiesUpdate, k.tk.tickNextPeriod, tc.wantJiffies, tc.wantLast, tc.wantNextTick)
		}
	}
}

// TestJiffyTime: an absolute jiffy maps onto the jiffies grid as
// tick_nohz_next_event() computes it (basemono + (j - basejiff) * TICK_NSEC).
func TestJiffyTime(t *testing.T) {
	k := &Kernel{kernelConfig: kernelConfig{tickNsec: 1000000}, tk: timekeeping{jiffies: 5000, lastJiffiesUpdate: 5000 * ktime.Time(ktime.Millisecond)}}
	for _, tc := range []struct {
		j    uint64
		want ktime.Time
	}{{5104, 5104 * ktime.Time(ktime.Millisecond)}, {4990, 5000 * ktime.Time(ktime.Millisecond)}, {^uint64(0), ktime.Max}} {
		if got := k.jiffyTime(tc.j); got != tc.want {
			t.Errorf("jiffyTime(%d) = %v, want %v", tc.j, got, tc.want)
		}
	}
}

func TestRunqueueOrder(t *testing.T) {
	var q runqueue
	a := &Task{Comm: "a", Policy: SchedFIFO, RTPrio: 50}
	b := &Task{Comm: "b", Policy: SchedFIFO, RTPrio: 99}
	c := &Task{Comm: "c", Policy: SchedOther}
	d := &Task{Comm: "d", Policy: SchedFIFO, RTPrio: 50}
	for _, x := range []*Task{c, a, b, d} {
		q.push(x, false)
	}
	var order []string
	for x := q.peek(); x != nil; x = q.peek() {
		order = append(order, x.Comm)
		q.remove(x)
	}
	if got := order[0] + order[1] + order[2] + order[3]; got != "badc" {
		t.Errorf("runqueue order = %v, want b a d c (RT by priority, FIFO within, then fair)", order)
	}
	if !higher(b, a) || higher(a, d) || !higher(a, c) || higher(c, a) {
		t.Error("higher(): want RT over fair and higher RT priority over lower, FIFO peers not preempting")
	}
}

// TestRunqueueModel runs random pushes (head and tail) and removals (any
// position, including the last and the only task) against a model that
// keeps RT tasks sorted by (priority descending, push key) with head pushes
// keyed before every earlier push, then fair tasks the same way.
func TestRunqueueModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 2000; round++ {
		var q runqueue
		var tasks []*Task
		for i := 0; i < 6; i++ {
			x := &Task{Pid: i, Policy: SchedOther}
			if p := rng.IntN(4); p > 0 {
				x.Policy, x.RTPrio = SchedFIFO, []int{10, 50, 99}[p-1]
			}
			tasks = append(tasks, x)
		}
		key := map[*Task]int{}
		in := map[*Task]bool{}
		next, first := 0, 0
		for op := 0; op < 30; op++ {
			x := tasks[rng.IntN(len(tasks))]
			if in[x] {
				q.remove(x)
				delete(in, x)
			} else {
				head := rng.IntN(3) == 0
				q.push(x, head)
				in[x] = true
				if head {
					first--
					key[x] = first
				} else {
					next++
					key[x] = next
				}
			}
			var want []*Task
			for x := range in {
				want = append(want, x)
			}
			slices.SortFunc(want, func(a, b *Task) int {
				ra, rb := a.RTPrio, b.RTPrio
				if a.Policy != SchedFIFO {
					ra = -1
				}
				if b.Policy != SchedFIFO {
					rb = -1
				}
				if ra != rb {
					return rb - ra
				}
				return key[a] - key[b]
			})
			got := append(append([]*Task{}, q.rt...), q.fair...)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d op %d: runqueue %v, want %v", round, op, pids(got), pids(want))
			}
		}
	}
}

func pids(ts []*Task) []int {
	var out []int
	for _, x := range ts {
		out = append(out, x.Pid)
	}
	return out
}
