package hrtimer

import (
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/simrand"
)

// TestTimerQueueVsSorted checks the heap against a sorted slice under random
// inserts and removals (remove, and popFirst for half the removals of the
// first timer), in short queues and in a long one: first() and second() are the two smallest by (expires, seq),
// and push reports leftmost-ness as timerqueue_add() does.
func TestTimerQueueVsSorted(t *testing.T) {
	rng := simrand.New(7, "queue")
	var q timerQueue
	var ref []*timer
	var seq uint64
	cmp := func(a, b *timer) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	}
	for i := range 40000 {
		// The first half keeps the queue at most three timers long (the
		// in-line paths of push and popFirst); then it grows.
		if len(ref) == 0 || (i >= 20000 || len(ref) < 3) && rng.Int63n(3) != 0 {
			seq++
			tm := &timer{expires: ktime.Time(rng.Int63n(50)), seq: seq, idx: -1}
			wantFirst := len(ref) == 0 || less(tm, ref[0])
			if got := q.push(tm); got != wantFirst {
				t.Fatalf("op %d: push(%v) leftmost = %v, want %v", i, tm.expires, got, wantFirst)
			}
			ref = append(ref, tm)
			slices.SortFunc(ref, cmp)
		} else {
			k := int(rng.Int63n(int64(len(ref))))
			if rng.Int63n(4) == 0 {
				k = 0
			}
			tm := ref[k]
			ref = slices.Delete(ref, k, k+1)
			if k == 0 && rng.Int63n(2) == 0 {
				if got := q.popFirst(); got != (len(ref) > 0) || tm.idx != -1 {
					t.Fatalf("op %d: popFirst returned %v with %d left, idx %d", i, got, len(ref), tm.idx)
				}
			} else if got := q.remove(tm); got != (len(ref) > 0) {
				t.Fatalf("op %d: remove returned %v with %d left", i, got, len(ref))
			}
		}
		var want1, want2 *timer
		if len(ref) > 0 {
			want1 = ref[0]
		}
		if len(ref) > 1 {
			want2 = ref[1]
		}
		if q.first() != want1 || q.second() != want2 || q.len() != len(ref) {
			t.Fatalf("op %d: first/second/len = %p/%p/%d, want %p/%p/%d", i, q.first(), q.second(), q.len(), want1, want2, len(ref))
		}
	}
}
