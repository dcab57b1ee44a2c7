package shim_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/tickemu/tickemu/framework/internal/shimtest"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// policyBase is an hrtimer fake that takes hang policies: its Interrupt asks
// the policy it was handed twice (two decisions in one call), and reports
// the sum of the delays.
type policyBase struct {
	*shimtest.HRTimerBase
	mu   sync.Mutex
	hang sdk.HangPolicy
	// lie keeps the policy but answers UsePolicy false.
	lie bool
}

func (b *policyBase) UsePolicy(k sdk.Kind, p sdk.Plugin) bool {
	h, ok := p.(sdk.HangPolicy)
	if k != sdk.KindHangPolicy || !ok {
		return false
	}
	b.mu.Lock()
	b.hang = h
	b.mu.Unlock()
	return !b.lie
}

func newPolicyBase() *policyBase {
	b := &policyBase{HRTimerBase: &shimtest.HRTimerBase{Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindHRTimer, Name: "fake"}}}}
	b.InterruptFn = func(cpu int, now ktime.Time) sdk.InterruptResult {
		b.mu.Lock()
		h := b.hang
		b.mu.Unlock()
		if h == nil {
			return sdk.InterruptResult{End: now}
		}
		d1 := h.Hang(sdk.HangRequest{CPU: cpu, Now: now, Entry: now - 10, NrHangs: 1, MaxHangTime: 7})
		d2 := h.Hang(sdk.HangRequest{CPU: cpu, Now: now + 1, Entry: now - 20, NrHangs: 2, MaxHangTime: 9})
		return sdk.InterruptResult{End: now, Hang: true, HangDelay: d1.Delay + d2.Delay, TryProgram: d1.KeepDetected && !d2.KeepDetected}
	}
	return b
}

// hostHang is the host's policy: it records what it was asked.
type hostHang struct {
	shimtest.Base
	mu    sync.Mutex
	asked []sdk.HangRequest
	fail  error
}

func (h *hostHang) Hang(r sdk.HangRequest) sdk.HangDecision {
	if h.fail != nil {
		panic(h.fail)
	}
	h.mu.Lock()
	h.asked = append(h.asked, r)
	h.mu.Unlock()
	return sdk.HangDecision{Delay: r.MaxHangTime * 100, KeepDetected: r.NrHangs == 1}
}

// TestBaseInProcessAsksHostPolicy: a base in its own process asks the policy
// the host handed it over its session, on the socket and on the gRPC stream,
// and each decision costs the session one round trip.
func TestBaseInProcessAsksHostPolicy(t *testing.T) {
	for _, grpcOnly := range []bool{false, true} {
		name := "socket"
		if grpcOnly {
			name = "grpc"
		}
		t.Run(name, func(t *testing.T) {
			c, _ := pair(t, factory(sdk.KindHRTimer, "fake", newPolicyBase()))
			hb := open(t, c, sdk.KindHRTimer, "fake", shim.Options{GRPCOnly: grpcOnly}).(sdk.HRTimerBase)
			u, ok := hb.(sdk.PolicyUser)
			if !ok {
				t.Fatalf("%T does not implement sdk.PolicyUser", hb)
			}
			if u.UsePolicy(sdk.KindCatchupPolicy, &hostHang{}) {
				t.Errorf("UsePolicy(catchup_policy) = true from a base that asks only hang policies")
			}
			pol := &hostHang{}
			if !u.UsePolicy(sdk.KindHangPolicy, pol) {
				t.Fatalf("UsePolicy(hang_policy) = false")
			}
			trips := hb.(interface{ SessionRoundTrips() uint64 })
			before := trips.SessionRoundTrips()
			r := hb.Interrupt(3, 5000)
			if got := trips.SessionRoundTrips() - before; got != 3 {
				t.Errorf("Interrupt with two decisions took %d round trips, want 3", got)
			}
			want := sdk.InterruptResult{End: 5000, Hang: true, HangDelay: 700 + 900, TryProgram: true}
			if r.End != want.End || r.Hang != want.Hang || r.HangDelay != want.HangDelay || r.TryProgram != want.TryProgram {
				t.Errorf("Interrupt = %+v, want %+v", r, want)
			}
			wantAsked := []sdk.HangRequest{
				{CPU: 3, Now: 5000, Entry: 4990, NrHangs: 1, MaxHangTime: 7},
				{CPU: 3, Now: 5001, Entry: 4980, NrHangs: 2, MaxHangTime: 9},
			}
			if len(pol.asked) != 2 || pol.asked[0] != wantAsked[0] || pol.asked[1] != wantAsked[1] {
				t.Errorf("the host's policy was asked %+v, want %+v", pol.asked, wantAsked)
			}
			// The session goes on as before.
			before = trips.SessionRoundTrips()
			hb.Interrupt(3, 6000)
			if got := trips.SessionRoundTrips() - before; got != 3 {
				t.Errorf("second Interrupt took %d round trips, want 3", got)
			}
		})
	}
}

// TestBaseInProcessPolicyFailure: the host's policy failing in the middle
// of the base's call (a contract violation, or its own process gone) ends
// the run with that failure, and the base's session with it.
func TestBaseInProcessPolicyFailure(t *testing.T) {
	c, _ := pair(t, factory(sdk.KindHRTimer, "fake", newPolicyBase()))
	hb := open(t, c, sdk.KindHRTimer, "fake", shim.Options{}).(sdk.HRTimerBase)
	violation := &sdk.ContractError{Kind: sdk.KindHangPolicy, Name: "liar", Call: "Hang", Problem: "delay -1 < 0"}
	if !hb.(sdk.PolicyUser).UsePolicy(sdk.KindHangPolicy, &hostHang{fail: violation}) {
		t.Fatal("UsePolicy(hang_policy) = false")
	}
	func() {
		defer func() {
			if v := recover(); v != violation {
				t.Errorf("Interrupt panicked with %v, want the policy's violation", v)
			}
		}()
		hb.Interrupt(0, 100)
	}()
	te := catchTransport(t, func() { hb.Interrupt(0, 200) })
	if te == nil || !strings.Contains(te.Error(), "the policy it asked failed") {
		t.Errorf("the next call = %v, want the session failed by the policy", te)
	}
}

// TestBaseAsksPolicyNotHanded: a base that asks a decision of a kind it
// did not take (UsePolicy answered false) breaks the protocol.
func TestBaseAsksPolicyNotHanded(t *testing.T) {
	b := newPolicyBase()
	b.lie = true
	c, _ := pair(t, factory(sdk.KindHRTimer, "fake", b))
	hb := open(t, c, sdk.KindHRTimer, "fake", shim.Options{}).(sdk.HRTimerBase)
	if hb.(sdk.PolicyUser).UsePolicy(sdk.KindHangPolicy, &hostHang{}) {
		t.Fatal("UsePolicy(hang_policy) = true from a base that answers false")
	}
	te := catchTransport(t, func() { hb.Interrupt(0, 100) })
	if te == nil || !strings.Contains(te.Error(), "no hang_policy was handed to it") {
		t.Errorf("Interrupt = %v, want a protocol error naming the kind", te)
	}
}
