package cli

import (
	"path/filepath"
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

// scenarioBenchDuration is the simulated span BenchmarkScenarios measures of
// each shipped scenario (configs/*.hcl): short enough that the out-of-process
// run takes a second or two, long enough that its steady state dominates the
// plugin processes' start-up. 0 keeps the file's own duration (softirq-storm's
// clock jump falls inside its 12 ms).
var scenarioBenchDuration = map[string]time.Duration{
	"default.hcl":         200 * time.Millisecond,
	"devices.hcl":         200 * time.Millisecond,
	"hang-timermix.hcl":   20 * time.Millisecond,
	"ncm-restart.hcl":     10 * time.Millisecond,
	"nohz-catchup.hcl":    500 * time.Millisecond,
	"nohz-full.hcl":       200 * time.Millisecond,
	"lkp-timer-64.hcl":    2 * time.Millisecond,
	"posix-signals.hcl":   20 * time.Millisecond,
	"softirq-storm.hcl":   0,
	"timer-migration.hcl": 100 * time.Millisecond,
}

// scenarioBenchVariants lists, for the scenarios whose round trips per
// cyclictest cycle issue 11 targets, every variant BenchmarkScenarios runs
// (default.hcl's governors differ most: menu and teo retain the tick, so an
// idle period costs the interrupt and the governor's answer each tick);
// the other scenarios run their default variant.
var scenarioBenchVariants = map[string][]string{
	"default.hcl":      {"menu", "teo", "always_stop"},
	"nohz-catchup.hcl": {"per_jiffy", "skip_empty", "next_expiry"},
}

// BenchmarkScenarios runs every shipped scenario (its default variant, or
// those of scenarioBenchVariants, over scenarioBenchDuration) once in process and twice with every plugin in its
// own process (on session sockets, and kept on the gRPC streams:
// $TICKEMU_PLUGIN_TRANSPORT=grpc), and reports the wall-time ratios
// ("x-process", "x-process-grpc"), the
// plugin round trips per simulated task wakeup ("roundtrips/wakeup", the
// kernel's wakeups counter: one per cyclictest cycle, nanosleep return or
// signal delivery), per local timer interrupt ("roundtrips/irq", for the
// scenarios whose load is timers, not sleeping tasks) and per run (start-up,
// configuration and the warm-up included). A round trip is a wait on the
// wire: the host sent a message and blocks until its answer; calls held and
// sent in front of a later call (answers computed from a declared model),
// and a call sent while another plugin's answer is awaited, add none. The
// in-process side is repeated until it has run for 50 ms, so its mean is
// not one scheduler hiccup.
func BenchmarkScenarios(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("..", "..", "configs", "*.hcl"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no configs: %v", err)
	}
	var c common
	op, closeOp, err := New().newOpener(&c, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	defer closeOp()
	for _, f := range files {
		name := filepath.Base(f)
		dur, ok := scenarioBenchDuration[name]
		if !ok {
			b.Fatalf("%s has no entry in scenarioBenchDuration", name)
		}
		variants := scenarioBenchVariants[name]
		if variants == nil {
			variants = []string{""}
		}
		for _, v := range variants {
			spec, diags := config.Load(f, config.Options{Variant: v})
			if diags.HasErrors() {
				b.Fatalf("%s: %v", f, diags)
			}
			if dur > 0 {
				spec.Run.Duration = dur.Nanoseconds()
			}
			sub := strings.TrimSuffix(name, ".hcl")
			if v != "" {
				sub += "/" + v
			}
			benchScenario(b, sub, spec, op)
		}
	}
}

// benchScenario is one sub-benchmark of BenchmarkScenarios.
func benchScenario(b *testing.B, name string, spec *config.Spec, op experiment.Opener) {
	b.Run(name, func(b *testing.B) {
		var inWall, outWall, grpcWall time.Duration
		var wakeups, irqs, trips int64
		for b.Loop() {
			var n int
			start := time.Now()
			for n == 0 || time.Since(start) < 50*time.Millisecond {
				if _, err := experiment.Run(spec, experiment.Options{Opener: op}); err != nil {
					b.Fatal(err)
				}
				n++
			}
			inWall += time.Since(start) / time.Duration(n)
			rt0 := loader.RoundTrips()
			start = time.Now()
			res, err := experiment.Run(spec, experiment.Options{Opener: op, Isolation: "process"})
			if err != nil {
				b.Fatal(err)
			}
			outWall += time.Since(start)
			trips += int64(loader.RoundTrips() - rt0)
			wakeups += res.Total("wakeups")
			irqs += res.Total("local_timer_interrupts")
			// The same run with the sessions kept on their gRPC streams.
			b.Setenv(loader.TransportEnv, "grpc")
			start = time.Now()
			if _, err := experiment.Run(spec, experiment.Options{Opener: op, Isolation: "process"}); err != nil {
				b.Fatal(err)
			}
			grpcWall += time.Since(start)
			b.Setenv(loader.TransportEnv, "")
		}
		b.ReportMetric(float64(inWall.Microseconds())/1e3/float64(b.N), "ms-inprocess")
		b.ReportMetric(float64(outWall.Microseconds())/1e3/float64(b.N), "ms-process")
		b.ReportMetric(float64(grpcWall.Microseconds())/1e3/float64(b.N), "ms-process-grpc")
		b.ReportMetric(float64(outWall)/float64(inWall), "x-process")
		b.ReportMetric(float64(grpcWall)/float64(inWall), "x-process-grpc")
		if wakeups > 0 {
			b.ReportMetric(float64(trips)/float64(wakeups), "roundtrips/wakeup")
		}
		if irqs > 0 {
			b.ReportMetric(float64(trips)/float64(irqs), "roundtrips/irq")
		}
		b.ReportMetric(float64(trips)/float64(b.N), "roundtrips/run")
		b.ReportMetric(0, "ns/op")
	})
}
