//go:build unix

package loader_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

// BenchmarkRoundTrip measures one plugin call (a clockevent SetNextEvent, a
// typical hot-path call with a small request and answer) through each
// transport: the builtin's value called directly, tickemu's session over an
// in-process go-plugin pair, and a plugin process (tickemu re-executed) on its
// session socket, on its gRPC stream (GRPCOnly), and on the socket with
// GOMAXPROCS=1 in the plugin. us/call is the figure to quote.
func BenchmarkRoundTrip(b *testing.B) {
	echo, _ := findFactory(sdk.KindClockEvent, "echo")
	cases := []struct {
		name string
		open func(b *testing.B) sdk.ClockEventDevice
	}{
		{"inprocess", func(b *testing.B) sdk.ClockEventDevice {
			c, _ := newCatalog(b, loader.Options{})
			return open(b, c, sdk.KindClockEvent, "echo", loader.InProcess).ClockEventDevice()
		}},
		{"grpc-pair", func(b *testing.B) sdk.ClockEventDevice {
			return sdktest.GRPCPair(b, echo).(sdk.ClockEventDevice)
		}},
		{"process", func(b *testing.B) sdk.ClockEventDevice {
			c, _ := newCatalog(b, loader.Options{})
			return open(b, c, sdk.KindClockEvent, "echo", loader.Process).ClockEventDevice()
		}},
		{"process-grpc", func(b *testing.B) sdk.ClockEventDevice {
			c, _ := newCatalog(b, loader.Options{GRPCOnly: true})
			return open(b, c, sdk.KindClockEvent, "echo", loader.Process).ClockEventDevice()
		}},
		{"process-gomaxprocs1", func(b *testing.B) sdk.ClockEventDevice {
			c, _ := newCatalog(b, loader.Options{Env: []string{"GOMAXPROCS=1"}})
			return open(b, c, sdk.KindClockEvent, "echo", loader.Process).ClockEventDevice()
		}},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			d := bc.open(b)
			var now ktime.Time
			b.ReportAllocs()
			for b.Loop() {
				now += 1000
				if r := d.SetNextEvent(0, now, 100); r.FireAt != now+1000 {
					b.Fatalf("SetNextEvent(0, %v, 100) = %+v, want FireAt %v", now, r, now+1000)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/call")
		})
	}
}

// BenchmarkOpenProcess measures starting a plugin process (tickemu
// re-executed), the go-plugin handshake, opening its session and killing it:
// what isolation = "process" adds to each run per plugin.
func BenchmarkOpenProcess(b *testing.B) {
	c, _ := newCatalog(b, loader.Options{})
	for b.Loop() {
		inst, err := c.Open(sdk.KindClockEvent, "echo", loader.Process)
		if err != nil {
			b.Fatal(err)
		}
		inst.Kill()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/open")
}
