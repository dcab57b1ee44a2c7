package policy

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestHang: each builtin's delay and flag from kernel/time/hrtimer.c's
// hrtimer_interrupt() of its era.
func TestHang(t *testing.T) {
	short := sdk.HangRequest{Now: 5000, Entry: 1000, NrHangs: 1, MaxHangTime: 7000}
	long := sdk.HangRequest{Now: ktime.Time(300 * ktime.Millisecond), Entry: 0, NrHangs: 2, MaxHangTime: 300 * ktime.Millisecond}
	tests := []struct {
		name string
		req  sdk.HangRequest
		want sdk.HangDecision
	}{
		{"proportional", short, sdk.HangDecision{Delay: 4000, KeepDetected: true}},
		{"proportional", long, sdk.HangDecision{Delay: HangCap, KeepDetected: true}},
		{"fixed_100ms", short, sdk.HangDecision{Delay: HangCap}},
		{"max_hang_time", short, sdk.HangDecision{Delay: 7000, KeepDetected: true}},
		{"max_hang_time", long, sdk.HangDecision{Delay: HangCap, KeepDetected: true}},
	}
	for _, tt := range tests {
		p := New(sdk.KindHangPolicy, tt.name).(sdk.HangPolicy)
		if got := p.Hang(tt.req); got != tt.want {
			t.Errorf("%s.Hang(%+v) = %+v, want %+v", tt.name, tt.req, got, tt.want)
		}
		if c := p.Counters(); len(c) != 1 || c[0].Value != 1 {
			t.Errorf("%s counters = %+v, want one decision", tt.name, c)
		}
	}
}

// TestFactories: every builtin is of its kind, named as its factory, and
// answers its constant.
func TestFactories(t *testing.T) {
	modes := map[string]sdk.CatchupMode{"per_jiffy": sdk.CatchupWalk, "skip_empty": sdk.CatchupSkipEmpty, "next_expiry": sdk.CatchupNextExpiry}
	for _, f := range Factories() {
		p := f.New()
		if i := p.Info(); i.Kind != f.Kind || i.Name != f.Name || i.Version == "" || i.Description == "" {
			t.Errorf("%s/%s: Info %+v", f.Kind, f.Name, i)
		}
		switch q := p.(type) {
		case sdk.CatchupPolicy:
			if got := q.Catchup(sdk.CatchupRequest{}).Mode; got != modes[f.Name] {
				t.Errorf("%s: mode %d, want %d", f.Name, got, modes[f.Name])
			}
		case sdk.RestartPolicy:
			if got := q.Restart(sdk.RestartRequest{}).Deferred; got != (f.Name == "deferred") {
				t.Errorf("%s: deferred %v", f.Name, got)
			}
		case sdk.HangPolicy:
		default:
			t.Errorf("%s/%s implements no policy kind", f.Kind, f.Name)
		}
	}
	if New(sdk.KindHangPolicy, "per_jiffy") != nil {
		t.Error("New found a policy under the wrong kind")
	}
}
