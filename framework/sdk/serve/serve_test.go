package serve

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/internal/shimtest"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// TestWatchParent runs in a synctest bubble: the ticker's time is fake, so
// "not reported for 20 ms" and "reported within one period" are exact.
func TestWatchParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ppid atomic.Int64
		ppid.Store(100)
		gone := make(chan int, 1)
		go watchParent(100, func() int { return int(ppid.Load()) }, time.Millisecond, func(p int) { gone <- p })
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		select {
		case p := <-gone:
			t.Fatalf("watchParent reported parent %d gone while it lives", p)
		default:
		}
		ppid.Store(1) // re-parented to init
		time.Sleep(time.Millisecond)
		synctest.Wait()
		select {
		case p := <-gone:
			if p != 100 {
				t.Errorf("watchParent reported parent %d gone, want 100", p)
			}
		default:
			t.Fatal("watchParent did not notice within one period that its parent went away")
		}
	})
}

func TestConfig(t *testing.T) {
	f := sdk.Factory{Kind: sdk.KindClockEvent, Name: "d", New: func() sdk.Plugin { return &shimtest.ClockEventDevice{} }}
	sets, err := shim.ServerPlugins([]sdk.Factory{f}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	c := config(sets, zerolog.Nop())
	if c.MagicCookieKey != shim.Handshake.MagicCookieKey || c.ProtocolVersion != sdk.ProtocolVersion {
		t.Errorf("config handshake = %+v, want shim.Handshake", c.HandshakeConfig)
	}
	set, ok := c.VersionedPlugins[sdk.ProtocolVersion]
	if !ok {
		t.Fatalf("config VersionedPlugins has no version %d", sdk.ProtocolVersion)
	}
	for _, name := range []string{shim.CatalogName, string(sdk.KindClockEvent)} {
		if _, ok := set[name]; !ok {
			t.Errorf("config serves no %q plugin", name)
		}
	}
	if c.GRPCServer == nil || c.Logger == nil {
		t.Error("config has no GRPCServer or Logger; want tickemu's")
	}
}
