package sdktest_test

import (
	"sync/atomic"
	"testing"

	"github.com/tickemu/tickemu/framework/internal/shimtest"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

func TestGRPCPair(t *testing.T) {
	var made atomic.Int64 // New runs on the server's goroutine
	f := sdk.Factory{Kind: sdk.KindClockEvent, Name: "dev", New: func() sdk.Plugin {
		made.Add(1)
		return &shimtest.ClockEventDevice{
			Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindClockEvent, Name: "dev", Version: "9"}},
			SetNextEventFn: func(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
				return sdk.ProgramResult{FireAt: now.Add(int64(ticks) * 2), Cost: int64(ch)}
			},
		}
	}}
	p := sdktest.GRPCPair(t, f)
	d, ok := p.(sdk.ClockEventDevice)
	if !ok {
		t.Fatalf("GRPCPair(clockevent) = %T, want a sdk.ClockEventDevice", p)
	}
	if _, local := p.(*shimtest.ClockEventDevice); local {
		t.Fatal("GRPCPair returned the plugin itself, want a client over gRPC")
	}
	if got, want := d.SetNextEvent(3, 100, 10), (sdk.ProgramResult{FireAt: 120, Cost: 3}); got != want {
		t.Errorf("SetNextEvent(3, 100, 10) = %+v, want %+v", got, want)
	}
	if got := d.Info().Version; got != "9" {
		t.Errorf("Info().Version = %q, want 9", got)
	}
	// Each pair is a fresh value: a second pair makes a second plugin.
	sdktest.GRPCPair(t, f)
	if n := made.Load(); n != 2 {
		t.Errorf("two GRPCPairs made %d plugins, want 2", n)
	}
}
