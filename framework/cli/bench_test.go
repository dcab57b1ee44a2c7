package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/loader"
)

// benchTimerHeavy is the engine benchmark's load: 4 CPUs, each with 64
// periodic hrtimers of 100 us spread over the period (callbacks restart them),
// i.e. 2.56M simulated expiries per simulated second.
const benchTimerHeavy = `
machine {
  cpus = 4
  hz   = 1000
}
workload "hrtimer_load" "heavy" {
  count  = 64
  period = "100us"
  callback_cost = "50ns"
  stagger = false
}
run {
  duration = "%DUR%"
  seed     = 1
}
`

func benchSpec(b *testing.B, dur string) *config.Spec {
	src := []byte(strings.ReplaceAll(benchTimerHeavy, "%DUR%", dur))
	spec, diags := config.LoadBytes("bench.hcl", src, config.Options{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	return spec
}

// BenchmarkEngineInProcess reports simulated timer expiries per wall second
// with every plugin linked in process (issue floor: 2,000,000/s).
func BenchmarkEngineInProcess(b *testing.B) {
	spec := benchSpec(b, "200ms")
	var expiries int64
	start := time.Now()
	for b.Loop() {
		res, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtins)})
		if err != nil {
			b.Fatal(err)
		}
		expiries += res.Total("hrtimer_expire")
	}
	b.ReportMetric(float64(expiries)/time.Since(start).Seconds(), "expiries/s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkEngineProcess is the same load with every plugin in its own
// process over go-plugin gRPC (issue floor: 10,000 expiries/s); it also
// reports round trips per expiry.
func BenchmarkEngineProcess(b *testing.B) {
	spec := benchSpec(b, "20ms")
	var c common
	op, closeOp, err := New().newOpener(&c, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	defer closeOp()
	var expiries int64
	rt0 := loader.RoundTrips()
	start := time.Now()
	for b.Loop() {
		res, err := experiment.Run(spec, experiment.Options{Opener: op, Isolation: "process"})
		if err != nil {
			b.Fatal(err)
		}
		expiries += res.Total("hrtimer_expire")
	}
	el := time.Since(start).Seconds()
	b.ReportMetric(float64(expiries)/el, "expiries/s")
	b.ReportMetric(float64(loader.RoundTrips()-rt0)/float64(expiries), "roundtrips/expiry")
	b.ReportMetric(0, "ns/op")
}
