package clockevents

import "math/bits"

// cpumask is a fixed-size set of CPUs (struct cpumask), iterated in CPU order.
type cpumask []uint64

func newCPUMask(n int) cpumask { return make(cpumask, (n+63)/64) }

func (m cpumask) has(c int) bool { return m[c/64]&(1<<(c%64)) != 0 }
func (m cpumask) set(c int)      { m[c/64] |= 1 << (c % 64) }
func (m cpumask) clear(c int)    { m[c/64] &^= 1 << (c % 64) }

// testAndSet sets c and reports whether it was set before.
func (m cpumask) testAndSet(c int) bool {
	was := m.has(c)
	m.set(c)
	return was
}

// testAndClear clears c and reports whether it was set before.
func (m cpumask) testAndClear(c int) bool {
	was := m.has(c)
	m.clear(c)
	return was
}

func (m cpumask) or(o cpumask) {
	for i := range m {
		m[i] |= o[i]
	}
}

func (m cpumask) zero() {
	for i := range m {
		m[i] = 0
	}
}

// appendCPUs appends the members of m to dst in ascending order.
func (m cpumask) appendCPUs(dst []int) []int {
	for i, w := range m {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			dst = append(dst, i*64+b)
			w &^= 1 << b
		}
	}
	return dst
}
