package wheel

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

// newWheel returns a configured wheel; kv are attribute name/value pairs
// overriding the schema defaults.
func newWheel(t testing.TB, hz, cpus int, kv ...string) *Wheel {
	t.Helper()
	return newWheelSetup(t, sdk.Setup{CPUs: cpus, HZ: hz, Seed: 1}, kv...)
}

// newWheelSetup is newWheel on machine s.
func newWheelSetup(t testing.TB, s sdk.Setup, kv ...string) *Wheel {
	t.Helper()
	over := sdk.Config{}
	for i := 0; i+1 < len(kv); i += 2 {
		over[kv[i]] = kv[i+1]
	}
	return sdktest.Configure(t, New().(*Wheel), s, over)
}

// defaults is the host's Config for a wheel block that sets nothing, with
// over on top.
func defaults(t testing.TB, over sdk.Config) sdk.Config {
	t.Helper()
	c, err := sdktest.Defaults(New().Schema(), over)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// combos lists every layout/catch-up combination.
var combos = []struct{ layout, catchup string }{
	{"levels", "per_jiffy"}, {"levels", "skip_empty"}, {"levels", "next_expiry"},
	{"cascade", "per_jiffy"}, {"cascade", "skip_empty"}, {"cascade", "next_expiry"},
}

// ids returns the IDs of expiries in order.
func ids(ex []sdk.WheelExpiry) []sdk.TimerID {
	var out []sdk.TimerID
	for _, e := range ex {
		out = append(out, e.ID)
	}
	return out
}

// cascadeBucket reports the bucket number a queued timer sits in (cascade layout).
func cascadeBucket(w *Wheel, id sdk.TimerID) int {
	n, ok := w.c.timers.lookup(id)
	if !ok {
		return -1
	}
	return int(w.c.timers.nodes[n].bucket)
}

// pinned is a timer without slack: mod_timer_pinned() on the cascade layout.
func pinned(id sdk.TimerID, expires uint64) sdk.WheelTimer {
	return sdk.WheelTimer{ID: id, Expires: expires, Flags: sdk.TimerPinned}
}
