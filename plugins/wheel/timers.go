package wheel

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/sdk"
)

// nilNode marks the end of a bucket list and an unset link.
const nilNode int32 = -1

// timerNode is a struct timer_list as the plugin stores it. Nodes live in one
// slab shared by every CPU and are linked into bucket lists by index, so the
// hot path neither allocates nor chases Go pointers.
//
// Invariant: bucket >= 0 exactly while the timer is queued in base (cpu, def);
// prev/next are then its neighbours in that bucket. A node whose timer is not
// queued is released back to the slab.
type timerNode struct {
	id      sdk.TimerID
	expires uint64 // timer->expires after slack (the value the wheel sorts by)
	// bucketExpiry is the levels layout's effective expiry (calc_index()'s
	// bucket_expiry); unused by the cascade layout, which expires exactly.
	bucketExpiry uint64
	cbCost       int64
	period       uint64
	flags        sdk.TimerFlags
	cpu          int32
	bucket       int32
	prev, next   int32
}

func (n *timerNode) deferrable() bool { return n.flags&sdk.TimerDeferrable != 0 }

// timerSet is the slab plus the TimerID index.
type timerSet struct {
	nodes []timerNode
	free  []int32
	byID  map[sdk.TimerID]int32
}

func newTimerSet() timerSet {
	return timerSet{byID: make(map[sdk.TimerID]int32)}
}

// lookup returns the node of a queued timer.
func (s *timerSet) lookup(id sdk.TimerID) (int32, bool) {
	n, ok := s.byID[id]
	return n, ok
}

// alloc returns a fresh, unlinked node for id.
func (s *timerSet) alloc(id sdk.TimerID) int32 {
	var n int32
	if k := len(s.free); k > 0 {
		n = s.free[k-1]
		s.free = s.free[:k-1]
	} else {
		s.nodes = append(s.nodes, timerNode{})
		n = int32(len(s.nodes) - 1)
	}
	s.nodes[n] = timerNode{id: id, bucket: nilNode, prev: nilNode, next: nilNode}
	s.byID[id] = n
	return n
}

// release forgets a node whose timer is no longer queued.
func (s *timerSet) release(n int32) {
	nd := &s.nodes[n]
	if nd.bucket != nilNode {
		panic(fmt.Sprintf("wheel: releasing queued timer %d (bucket %d)", nd.id, nd.bucket))
	}
	delete(s.byID, nd.id)
	s.free = append(s.free, n)
}

// bucketList is a doubly linked list of nodes (an hlist_head or list_head).
type bucketList struct{ head, tail int32 }

var emptyList = bucketList{head: nilNode, tail: nilNode}

func (l bucketList) empty() bool { return l.head == nilNode }

// pushFront is hlist_add_head(): the new-wheel buckets are LIFO.
func (s *timerSet) pushFront(l *bucketList, n int32) {
	nd := &s.nodes[n]
	nd.prev, nd.next = nilNode, l.head
	if l.head != nilNode {
		s.nodes[l.head].prev = n
	} else {
		l.tail = n
	}
	l.head = n
}

// pushBack is list_add_tail(): the 3.10 buckets are FIFO.
func (s *timerSet) pushBack(l *bucketList, n int32) {
	nd := &s.nodes[n]
	nd.prev, nd.next = l.tail, nilNode
	if l.tail != nilNode {
		s.nodes[l.tail].next = n
	} else {
		l.head = n
	}
	l.tail = n
}

// unlink removes n from l.
func (s *timerSet) unlink(l *bucketList, n int32) {
	nd := &s.nodes[n]
	if nd.prev != nilNode {
		s.nodes[nd.prev].next = nd.next
	} else {
		l.head = nd.next
	}
	if nd.next != nilNode {
		s.nodes[nd.next].prev = nd.prev
	} else {
		l.tail = nd.prev
	}
	nd.prev, nd.next = nilNode, nilNode
}
