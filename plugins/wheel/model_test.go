package wheel

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

// TestNextTimerModelDeclared: both layouts declare what their next
// get_next_timer_interrupt() answers once the CPU's base exists, except the
// levels wheel under the 4.8-5.8 raise rule; the declaration is the answer.
func TestNextTimerModelDeclared(t *testing.T) {
	for _, tc := range []struct {
		kv    []string
		valid bool
	}{
		{[]string{"layout", "levels", "softirq_raise", "next_expiry"}, true},
		{[]string{"layout", "levels", "softirq_raise", "every_tick"}, false},
		{[]string{"layout", "cascade", "catchup", "per_jiffy"}, true},
	} {
		w := newWheel(t, 1000, 2, tc.kv...)
		if w.NextTimerModel(0).Valid {
			t.Errorf("%v: a model before the base exists", tc.kv)
		}
		w.ModTimer(0, 100, sdk.WheelTimer{ID: 1, Expires: 150})
		m := w.NextTimerModel(0)
		if m.Valid != tc.valid {
			t.Fatalf("%v: Valid = %v, want %v", tc.kv, m.Valid, tc.valid)
		}
		if !m.Valid {
			continue
		}
		r := w.NextTimerInterrupt(0, 120)
		if !m.Pending || r.Next != m.Expiry || r.Cost != m.Cost || r.State != m.State {
			t.Errorf("%v: model %+v, answer %+v", tc.kv, m, r)
		}
	}
}
