package wheel

import "github.com/tickemu/tickemu/framework/sdk"

// meter accumulates the simulated cost of one plugin call in picoseconds, so
// that fractional per-operation costs (1.7 ns per jiffy) add up exactly; it is
// rounded to whole nanoseconds (half up) only where a value leaves the plugin.
type meter struct{ ps int64 }

func (m *meter) add(ps int64)     { m.ps += ps }
func (m *meter) addN(ps, n int64) { m.ps += ps * n }
func (m *meter) addNS(ns int64)   { m.ps += ns * 1000 }
func (m *meter) ns() int64        { return (m.ps + 500) / 1000 }

// run carries the per-call results of RunTimers while the loop works.
type run struct {
	cpu        int
	jiffies    uint64
	m          meter
	expired    []sdk.WheelExpiry // scratch, owned by the Wheel
	iterations uint64
	cascades   uint64
	moved      uint64 // timers moved by cascade()
	gap        uint64
}
