package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/resultfmt"
)

// TestDocFigures regenerates the figures the documentation quotes from the
// shipped configs and checks they are what README.md and docs/compare.md
// say, so that the two cannot drift apart: README's "What they give" table
// (its result column; the other columns are the rows' fixed text below) and
// the compare report excerpts of docs/compare.md. After a change that moves a
// figure on purpose:
//
//	go test ./cmd/tickemu -run TestDocFigures -update
//
// rewrites them (review the diff). Under -short (make test, and make ci's
// run under the race detector, where the 45 runs take minutes) only the
// cheap rows are regenerated and compared; make ci runs the whole check
// without -short and without the race detector.
func TestDocFigures(t *testing.T) {
	root := repoRoot()
	readme := filepath.Join(root, "README.md")
	cheap := testing.Short()
	rows := resultRows(t, cheap)
	checkRegion(t, readme, "| scenario | variant | result | the report |\n|---|---|---|---|\n", "\n\n", func(old string) string {
		return mergeRows(t, old, rows, !cheap)
	})
	if cheap {
		return
	}
	compareMD := filepath.Join(root, "docs", "compare.md")
	hang := compareOutput(t, "hang-timermix.hcl", "fixed_100ms,max_hang_time")
	checkBlock(t, compareMD, "tickemu compare configs/hang-timermix.hcl --variants fixed_100ms,max_hang_time\n   ```\n\n   ```\n", "   ```",
		tableOf(hang, "bogo-ops/s"))
	nohz := compareOutput(t, "nohz-catchup.hcl", "per_jiffy,next_expiry")
	checkBlock(t, compareMD, "per_jiffy,next_expiry`:\n\n```\n", "```", tableOf(nohz, "max-latency-sec"))
	checkBlock(t, compareMD, "stats).\n\n```\n", "```", lkpExcerpt(hang, "Timermix.bogo-ops/s"))
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// runCache shares runs between the rows (several rows read one run).
var runCache sync.Map

func cachedRun(t *testing.T, file, variant string, seed uint64) *experiment.Result {
	t.Helper()
	key := fmt.Sprintf("%s/%s/%d", file, variant, seed)
	if r, ok := runCache.Load(key); ok {
		return r.(*experiment.Result)
	}
	spec, diags := config.Load(filepath.Join(repoRoot(), "configs", file), config.Options{Variant: variant, Seed: &seed})
	if diags.HasErrors() {
		t.Fatalf("load %s: %v", file, diags)
	}
	res, err := experiment.Run(spec, linkedIn())
	if err != nil {
		t.Fatalf("run %s --variant %s --seed %d: %v", file, variant, seed, err)
	}
	runCache.Store(key, res)
	return res
}

// benchValues returns unit's value on every bench line named name, in order.
func benchValues(r *experiment.Result, name, unit string) []float64 {
	var out []float64
	for _, w := range r.Workloads {
		for _, b := range w.Bench {
			if b.Name != name {
				continue
			}
			for _, m := range b.Metrics {
				if m.Name == unit {
					out = append(out, m.Value)
				}
			}
		}
	}
	return out
}

func cpuCounter(r *experiment.Result, name string, cpu int) int64 {
	for _, c := range r.Kernel.Counters {
		if c.Source == "kernel" && c.Name == name && c.CPU == cpu {
			return c.Value
		}
	}
	return 0
}

func join(vals []string) string { return strings.Join(vals, " / ") }

func each[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func us(ns float64) string { return fmt.Sprintf("%d", int64(ns)/1000) }

// kilo prints a rate as README does: 647k.
func kilo(v float64) string { return fmt.Sprintf("%.0fk", v/1000) }

// pct is a signed whole-number (or one-decimal below 1%) percent change.
func pct(from, to float64) string {
	d := 100 * (to - from) / from
	if math.Abs(d) < 1 {
		return fmt.Sprintf("%+.1f%%", d)
	}
	return fmt.Sprintf("%+.0f%%", d)
}

// row is one README row: its key (scenario and variant cells), its result
// cell made from the runs, and whether it is cheap enough for -short.
type row struct {
	key    string
	cheap  bool
	result func(t *testing.T) string
}

func resultRows(t *testing.T, short bool) map[string]string {
	cyclictest := func(r *experiment.Result) (max, min, avg []float64) {
		return benchValues(r, "Cyclictest", "max-latency-ns"), benchValues(r, "Cyclictest", "min-latency-ns"), benchValues(r, "Cyclictest", "avg-latency-ns")
	}
	same := func(xs []float64) (float64, bool) {
		for _, x := range xs {
			if int64(x)/1000 != int64(xs[0])/1000 {
				return 0, false
			}
		}
		return xs[0], len(xs) > 0
	}
	rows := []row{
		{"| default | as written (`menu`) |", true, func(t *testing.T) string {
			max, min, avg := cyclictest(cachedRun(t, "default.hcl", "", 1))
			span := func(xs []float64) string {
				lo, hi := xs[0], xs[0]
				for _, x := range xs {
					lo, hi = math.Min(lo, x), math.Max(hi, x)
				}
				if us(lo) == us(hi) {
					return us(lo)
				}
				return us(lo) + "-" + us(hi)
			}
			return fmt.Sprintf("cyclictest Min %s, Avg %s, Max %s us over its 4 threads (the KVM guest's calibrated costs and interrupt-latency spread, profiles/kvm-guest.hcl; 2 us flat without them)",
				span(min), span(avg), span(max))
		}},
		{"| nohz-catchup | `per_jiffy` |", true, func(t *testing.T) string {
			r := cachedRun(t, "nohz-catchup.hcl", "per_jiffy", 1)
			max, min, avg := cyclictest(r)
			lo, ok1 := same(min)
			a, ok2 := same(avg)
			extra := fmt.Sprintf("Min %s, Avg %s us", join(each(min, us)), join(each(avg, us)))
			if ok1 && ok2 && int64(lo)/1000 == int64(a)/1000 {
				extra = fmt.Sprintf("Min and Avg %s us", us(lo))
			}
			return fmt.Sprintf("cyclictest Max %s us (%s); catch-up gap up to %d jiffies", join(each(max, us)), extra, r.Kernel.CatchupGaps.Max)
		}},
		{"| | `skip_empty` |", true, func(t *testing.T) string {
			a, _, _ := cyclictest(cachedRun(t, "nohz-catchup.hcl", "per_jiffy", 1))
			b, _, _ := cyclictest(cachedRun(t, "nohz-catchup.hcl", "skip_empty", 1))
			if join(each(a, us)) == join(each(b, us)) {
				return "the same (the wheel is never empty: the MCE poll is queued)"
			}
			return fmt.Sprintf("cyclictest Max %s us", join(each(b, us)))
		}},
		{"| | `next_expiry` |", true, func(t *testing.T) string {
			max, _, _ := cyclictest(cachedRun(t, "nohz-catchup.hcl", "next_expiry", 1))
			if m, ok := same(max); ok {
				return fmt.Sprintf("Max %s us on every thread", us(m))
			}
			return fmt.Sprintf("Max %s us", join(each(max, us)))
		}},
		{"| hang-timermix | `proportional` / `fixed_100ms` / `max_hang_time` |", false, func(t *testing.T) string {
			var means []float64
			for _, v := range []string{"proportional", "fixed_100ms", "max_hang_time"} {
				sum := 0.0
				for seed := uint64(1); seed <= 5; seed++ {
					sum += benchValues(cachedRun(t, "hang-timermix.hcl", v, seed), "Timermix", "bogo-ops/s")[0]
				}
				means = append(means, sum/5)
			}
			return fmt.Sprintf("%s bogo ops/s on 2 CPUs (mean of seeds 1-5): %s and %s", join(each(means, kilo)), pct(means[0], means[1]), pct(means[0], means[2]))
		}},
		{"| softirq-storm | `stale` / `updated` |", true, func(t *testing.T) string {
			a := benchValues(cachedRun(t, "softirq-storm.hcl", "stale", 1), "ClockJump", "hrtimer-interrupts")[0]
			b := benchValues(cachedRun(t, "softirq-storm.hcl", "updated", 1), "ClockJump", "hrtimer-interrupts")[0]
			return fmt.Sprintf("%.0f / %.0f hrtimer interrupts after the jump (%.0fx)", a, b, a/b)
		}},
		{"| ncm-restart | `before_46eb` / `double` / `deferred` |", true, func(t *testing.T) string {
			var gbps, writes []string
			for _, v := range []string{"before_46eb", "double", "deferred"} {
				r := cachedRun(t, "ncm-restart.hcl", v, 1)
				gbps = append(gbps, fmt.Sprintf("%.2f", benchValues(r, "Ncm", "Gbps")[0]))
				writes = append(writes, fmt.Sprintf("%.2f", benchValues(r, "Ncm", "device-writes/packet")[0]))
			}
			return fmt.Sprintf("%s Gbps; %s device writes per packet", join(gbps), join(writes))
		}},
		{"| posix-signals | `legacy` / `consistent` |", false, func(t *testing.T) string {
			a := benchValues(cachedRun(t, "posix-signals.hcl", "legacy", 1), "StressNgTimer", "bogo-ops/s")[0]
			b := benchValues(cachedRun(t, "posix-signals.hcl", "consistent", 1), "StressNgTimer", "bogo-ops/s")[0]
			// The trace counts in the prose after these figures are checked by
			// run_posix_signals.txtar (their relations); a full trace is too
			// large to take here.
			return fmt.Sprintf("%s / %s bogo ops/s (%s)", kilo(a), kilo(b), pct(a, b))
		}},
		{"| lkp-timer-64 | `legacy` / `consistent` |", true, func(t *testing.T) string {
			// The file's 60 s is LKP's; 2 ms shows the same ratio cheaply.
			var ops []float64
			for _, v := range []string{"legacy", "consistent"} {
				spec, diags := config.Load(filepath.Join(repoRoot(), "configs", "lkp-timer-64.hcl"),
					config.Options{Variant: v, Vars: map[string]string{"duration": "2ms"}})
				if diags.HasErrors() {
					t.Fatalf("load lkp-timer-64.hcl: %v", diags)
				}
				r, err := experiment.Run(spec, linkedIn())
				if err != nil {
					t.Fatalf("run lkp-timer-64.hcl --variant %s: %v", v, err)
				}
				ops = append(ops, benchValues(r, "StressNgTimer", "bogo-ops/s")[0])
			}
			return fmt.Sprintf("%.1fM / %.1fM bogo ops/s over 64 instances (%s)", ops[0]/1e6, ops[1]/1e6, pct(ops[0], ops[1]))
		}},
		{"| timer-migration | `push` / `pull` / `off` / `push_off` |", true, func(t *testing.T) string {
			var avg, ipis, remote, irqs, ops []string
			for _, v := range []string{"push", "pull", "off", "push_off"} {
				r := cachedRun(t, "timer-migration.hcl", v, 1)
				ops = append(ops, fmt.Sprintf("%.0f", benchValues(r, "StressNgTimer", "bogo-ops/s")[0]))
				avg = append(avg, us(benchValues(r, "Cyclictest", "avg-latency-ns")[0]))
				ipis = append(ipis, fmt.Sprint(r.Total("ipi_sent")))
				remote = append(remote, fmt.Sprint(r.Total("remote_expiries")))
				irqs = append(irqs, fmt.Sprint(r.Total("hrtimer_interrupts")))
			}
			return fmt.Sprintf("8 CPUs: cyclictest thread 0 Avg %s us; %s IPIs; %s remote expiries; %s hrtimer interrupts in all; stress-ng %s bogo ops/s",
				join(avg), join(ipis), join(remote), join(irqs), join(ops))
		}},
		{"| nohz-full | `v4_9` / `v4_17` |", true, func(t *testing.T) string {
			a, b := cachedRun(t, "nohz-full.hcl", "v4_9", 1), cachedRun(t, "nohz-full.hcl", "v4_17", 1)
			stale := max(cpuCounter(a, "jiffies_max_stale_ns", -1), cpuCounter(b, "jiffies_max_stale_ns", -1))
			return fmt.Sprintf("jiffies at most %d ns stale; busy CPU 3 ticks %d / %d times in %.0f s; %d / %d `sched_tick_remote` runs",
				stale, cpuCounter(a, "ticks", 3), cpuCounter(b, "ticks", 3), float64(a.Config.DurationNS)/1e9, a.Total("sched_tick_remote"), b.Total("sched_tick_remote"))
		}},
		{"| devices | `lapic_deadline` / `lapic_c6_broadcast` / `hpet_only` / `archtimer` |", true, func(t *testing.T) string {
			var avg, perWrite []string
			for _, v := range []string{"lapic_deadline", "lapic_c6_broadcast", "hpet_only", "archtimer"} {
				r := cachedRun(t, "devices.hcl", v, 1)
				avg = append(avg, us(benchValues(r, "Cyclictest", "avg-latency-ns")[0]))
				perWrite = append(perWrite, fmt.Sprintf("%.0f", float64(r.Total("device_write_cost_ns"))/float64(r.Total("device_writes"))))
			}
			return fmt.Sprintf("cyclictest Avg %s us; %s ns per device write", join(avg), join(perWrite))
		}},
	}
	out := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, r := range rows {
		if short && !r.cheap {
			continue
		}
		wg.Go(func() {
			v := r.result(t)
			mu.Lock()
			out[r.key] = v
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// mergeRows puts the generated figures at the start of the result cell of
// every row of the table old: the cell must begin with them; what follows
// is prose (a helper may explain a figure further). A row with no generator
// is an error (add one).
func mergeRows(t *testing.T, old string, rows map[string]string, complete bool) string {
	lines := strings.Split(old, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "|") {
			continue
		}
		cells := strings.Split(l, " | ")
		if len(cells) != 4 {
			t.Errorf("README row with %d cells: %q", len(cells), l)
			continue
		}
		key := cells[0] + " | " + cells[1] + " |"
		v, ok := rows[key]
		if !ok {
			if complete {
				t.Errorf("README row %q has no generator in TestDocFigures", key)
			}
			continue
		}
		// The old figures: the cell's start that has the generated text's
		// shape (its numbers free).
		if m := shapeOf(v).FindString(cells[2]); m != "" {
			cells[2] = v + cells[2][len(m):]
		} else {
			cells[2] = v
		}
		lines[i] = strings.Join(cells, " | ")
	}
	return strings.Join(lines, "\n")
}

// checkRegion regenerates the text of file between the first start and the
// next end after it with gen, and compares (or rewrites it with -update).
func checkRegion(t *testing.T, file, start, end string, gen func(old string) string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, start)
	if i < 0 {
		t.Fatalf("%s: no %q", file, start)
	}
	i += len(start)
	j := strings.Index(s[i:], end)
	if j < 0 {
		t.Fatalf("%s: no end %q after %q", file, end, start)
	}
	old := s[i : i+j]
	fresh := gen(old)
	if fresh == old {
		return
	}
	if *update {
		if err := os.WriteFile(file, []byte(s[:i]+fresh+s[i+j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated %s", file)
		return
	}
	t.Errorf("%s is out of date (go test ./cmd/tickemu -run TestDocFigures -update rewrites it):\n--- now says\n%s\n--- the configs give\n%s", file, old, fresh)
}

func checkBlock(t *testing.T, file, start, end, fresh string) {
	t.Helper()
	checkRegion(t, file, start, end, func(string) string { return fresh })
}

// compareOutput is the text report of `tickemu compare configs/FILE
// --variants V` (10 seeds, the default), made from the cached runs.
func compareOutput(t *testing.T, file, variants string) string {
	t.Helper()
	vs := strings.Split(variants, ",")
	var seeds []uint64
	for s := uint64(1); s <= 10; s++ {
		seeds = append(seeds, s)
	}
	runs := make([]experiment.RunOutcome, len(vs)*len(seeds))
	var wg sync.WaitGroup
	for i := range runs {
		v, seed := vs[i/len(seeds)], seeds[i%len(seeds)]
		wg.Go(func() {
			res := cachedRun(t, file, v, seed)
			ms, err := experiment.BenchMetrics(res)
			if err != nil {
				t.Error(err)
			}
			runs[i] = experiment.RunOutcome{Variant: v, Seed: seed, Result: res, Metrics: ms}
		})
	}
	wg.Wait()
	var b bytes.Buffer
	if err := resultfmt.WriteCompareText(&b, experiment.Analyze("configs/"+file, vs, seeds, runs, 0, 0)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// tableOf returns the table of unit from a compare text report, with its
// footnotes.
func tableOf(report, unit string) string {
	blocks := strings.Split(report, "\n\n")
	for _, b := range blocks {
		lines := strings.Split(b, "\n")
		if len(lines) > 2 && regexp.MustCompile(`│ +`+regexp.QuoteMeta(unit)+` +│`).MatchString(lines[1]) {
			return strings.TrimRight(b, "\n") + "\n"
		}
	}
	return "no table of " + unit + "\n"
}

// lkpExcerpt keeps the header and the line of metric of the LKP table of a
// compare text report.
func lkpExcerpt(report, metric string) string {
	for _, b := range strings.Split(report, "\n\n") {
		lines := strings.Split(b, "\n")
		if len(lines) < 5 || !strings.Contains(lines[2], "%stddev") {
			continue
		}
		out := lines[:4:4]
		for _, l := range lines[4:] {
			if strings.HasSuffix(strings.TrimSpace(l), "  "+metric) {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n") + "\n"
	}
	return "no LKP table\n"
}

var number = regexp.MustCompile(`[-+]?[0-9]+(\.[0-9]+)?`)

// shapeOf matches text with any numbers in place of its own.
func shapeOf(text string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range number.FindAllStringIndex(text, -1) {
		b.WriteString(regexp.QuoteMeta(text[last:m[0]]))
		b.WriteString(`[-+]?[0-9]+(\.[0-9]+)?`)
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(text[last:]))
	return regexp.MustCompile(b.String())
}
