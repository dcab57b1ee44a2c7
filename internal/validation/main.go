// Command validation writes docs/validation.md: the model against the real
// kernel for every capture bundle of the agreement suite
// (the bundles under validation/captures/, recorded by make capture), each row with its
// tolerance, its within/outside mark, how noisy the real value is (from a
// recapture of the same workload) and why it is outside when it is (the
// reasons file, validation/reasons.txt). It runs `tickemu check` on each
// bundle (framework/sidebyside) with the builtin plugins and prints
// Markdown.
//
//	go run ./internal/validation > docs/validation.md   (make validation)
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tickemu/tickemu/framework/bundle"
	"github.com/tickemu/tickemu/framework/bundlescenario"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/sidebyside"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// recaptureSuffix marks a recapture: NAME.2.tcap is the same workload as
// NAME.tcap recorded again, whose real values give each row's noise.
const recaptureSuffix = ".2"

func main() {
	dir := flag.String("dir", "validation/captures", "directory of the suite's bundles (*.tcap)")
	reasons := flag.String("reasons", "validation/reasons.txt", "the reasons file: why rows are outside their tolerance")
	profile := flag.String("profile", "", "machine profile the model runs with (machine { profile })")
	noBackground := flag.Bool("no-background", false, "run each bundle's command alone, without the capture's background replayed beside it (tickemu check --no-background; a measurement: the introduction still describes the background replay)")
	flag.Parse()
	check := func(path string) (*sidebyside.Table, error) {
		p := *profile
		if p != "" {
			abs, err := filepath.Abs(p)
			if err != nil {
				return nil, err
			}
			p = abs
		}
		return sidebyside.Check(path, sidebyside.Options{
			Scenario:     bundlescenario.Options{Profile: p},
			Experiment:   experiment.Options{Opener: experiment.InProcess(builtin.Factories())},
			NoBackground: *noBackground,
		})
	}
	if err := generate(os.Stdout, *dir, *reasons, *profile, check); err != nil {
		fmt.Fprintf(os.Stderr, "validation: %v\n", err)
		os.Exit(1)
	}
}

// pair is one workload of the suite: its bundle and, when recorded, its
// recapture.
type pair struct {
	name, path, recapture string
}

// suite lists dir's bundles: NAME.tcap with NAME.2.tcap as its recapture,
// sorted by name.
func suite(dir string) ([]pair, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"+bundle.Ext))
	if err != nil {
		return nil, err
	}
	byName := map[string]*pair{}
	var re []string
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), bundle.Ext)
		if base, ok := strings.CutSuffix(name, recaptureSuffix); ok {
			re = append(re, base)
			continue
		}
		byName[name] = &pair{name: name, path: p}
	}
	for _, base := range re {
		pr := byName[base]
		if pr == nil {
			return nil, fmt.Errorf("%s: a recapture (%s%s) of no bundle: %s is missing", filepath.Join(dir, base+recaptureSuffix+bundle.Ext), recaptureSuffix, bundle.Ext, filepath.Join(dir, base+bundle.Ext))
		}
		pr.recapture = filepath.Join(dir, base+recaptureSuffix+bundle.Ext)
	}
	out := make([]pair, 0, len(byName))
	for _, p := range byName {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// checked is one workload's tables.
type checked struct {
	pair
	t, again *sidebyside.Table
}

func generate(w io.Writer, dir, reasonsPath, profile string, check func(string) (*sidebyside.Table, error)) error {
	var rs []*reason
	if f, err := os.Open(reasonsPath); err == nil {
		rs, err = readReasons(f, reasonsPath)
		f.Close()
		if err != nil {
			return err
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	pairs, err := suite(dir)
	if err != nil {
		return err
	}
	var all []checked
	for _, p := range pairs {
		c := checked{pair: p}
		if c.t, err = check(p.path); err != nil {
			return err
		}
		if p.recapture != "" {
			if c.again, err = check(p.recapture); err != nil {
				return err
			}
		}
		all = append(all, c)
	}

	var b strings.Builder
	intro(&b, dir, reasonsPath, profile)
	summary(&b, all, rs)
	if err := migration(&b, all); err != nil {
		return err
	}
	for _, c := range all {
		section(&b, c, rs)
	}
	var stale []*reason
	for _, r := range rs {
		if !r.used {
			stale = append(stale, r)
		}
	}
	if len(stale) > 0 {
		fmt.Fprintf(&b, "## Reasons that match no row outside its tolerance\n\n")
		fmt.Fprintf(&b, "Lines of %s that no row outside its tolerance used (the row is within now, or gone):\n\n", reasonsPath)
		for _, r := range stale {
			fmt.Fprintf(&b, "- line %d: %s | %s | %s\n", r.line, r.bundle, r.section, r.figure)
		}
		b.WriteString("\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func intro(b *strings.Builder, dir, reasonsPath, profile string) {
	fmt.Fprintf(b, `# Validation: the model against the real kernel

<!-- Generated by make validation (go run ./internal/validation); do not edit. -->

Every capture bundle of the agreement suite (%s, recorded by make capture on
one machine, docs/capture.md) is run through tickemu check: the bundle's own
command (cyclictest or stress-ng with the same flags) runs as a scenario on
the bundle's machine (CPUs, HZ, NO_HZ mode, high-resolution timers, cpuidle
states, clockevent device, kernel release, timer_migration), and the model's
figures are set against the real ones. The real machine ran more than the
command: the kernel's own timers, other processes, the capturing tickemu's
threads. So beside the modelled command the scenario replays the capture's
background (a replay workload of the same bundle with exclude = "workload",
docs/replay.md): everything outside the command's process tree (its pid
and what it forked, threads included), and the kernel's timers started
while the command ran. Each of the capture's timers then comes from one
side only: the command's own (its sleeps, POSIX timers, itimers) from the
model of the command, the rest from the replay; cyclictest's main thread,
which the model of cyclictest does not run, is replayed. Rows compare the
whole machine on both sides:

- per callback, starts, expiries, re-arms, cancels and expiry lateness, from
  the capture's trace and from the model's own trace, scored by the same
  rules (docs/replay.md); rows that are 0 on both sides are left out. The
  callbacks section holds the callbacks of the command's timers (and those
  only the model has: the replay makes only the capture's), the background
  section the others;
- the tick: expiries, starts more than one tick ahead, stops, idle ticks kept;
- local timer interrupts (the LOC row of /proc/interrupts, before and after)
  and context switches (sched_switch events in each trace);
- CPU time by context: shares of /proc/stat's machine line (idle and iowait;
  user, nice and system; irq; softirq) against the model's idle, task, irq
  and softirq times;
- the workload's own figures: cyclictest's cycles, Min, Avg and Max per thread
  (and the p99 from its -h histogram when it printed one), and from each
  trace the lateness p50 and p99 of each thread's sleep timer (its
  hrtimer_wakeup expiry against the time it asked for); stress-ng's bogo
  ops/s (real time) per stressor, and the stressor's own metrics the model
  reports too (--nanosleep's sleep overrun).

The model runs with %s.

## Tolerances

| class | rows | within when |
|---|---|---|
| count | per-callback starts, expiries, re-arms, cancels; cyclictest cycles; interrupts; context switches | the model is within 5%% of the real value |
| tick | tick expiries, far arms, stops, idle ticks kept | within 10%% |
| throughput | stress-ng bogo ops/s | within 15%% |
| latency | expiry lateness p50 and p99; cyclictest Min, Avg, Max, p99, sleep timer lateness; stress-ng sleep overrun | within 25%% |
| share | CPU time by context | within 2 percentage points |

A real value of 0 is met only by 0. A row without both values (n/a) is shown
and not judged.

## Noise

The real kernel does not give the same figure twice. A workload recorded a
second time is committed beside the first as NAME%s%s (NAME%s being the
first): its real values, set against the first's, are the noise column, the
relative difference (for shares, the difference in points). A row whose noise
is larger than its tolerance is marked so: the model cannot be held to it on
this machine. A bundle without a recapture shows no noise.

## Reasons

Why a row is outside its tolerance is written by hand in %s, one line
per reason: BUNDLE | SECTION | FIGURE | REASON (lines starting with # are
comments). A field is matched exactly, or is * (anything), or ends in *
(anything starting with what precedes it). A row outside its tolerance
without a reason is marked **no reason given**; a reason that matches no row
outside is listed at the end.

`, dir, profileText(profile), recaptureSuffix, bundle.Ext, bundle.Ext, reasonsPath)
}

func profileText(profile string) string {
	if profile == "" {
		return "the model's default costs (no machine profile)"
	}
	return "the machine profile " + profile
}

// outside counts a table's rows outside tolerance, with and without a
// reason (looking the reasons up).
func outside(name string, t *sidebyside.Table, rs []*reason) (withReason, without int) {
	for _, r := range t.Rows {
		if in, ok := r.Within(); ok && !in {
			if lookup(rs, name, r.Section, r.Name) != nil {
				withReason++
			} else {
				without++
			}
		}
	}
	return
}

func summary(b *strings.Builder, all []checked, rs []*reason) {
	b.WriteString("## Summary\n\n")
	if len(all) == 0 {
		b.WriteString("No bundles are committed yet: make capture records the suite.\n\n")
		return
	}
	b.WriteString("| bundle | command | within tolerance | outside, with a reason | outside, no reason | recaptured |\n|---|---|---|---|---|---|\n")
	var tw, tm, twr, tnr int
	for _, c := range all {
		within, marked := c.t.Within()
		wr, nr := outside(c.name, c.t, rs)
		tw, tm, twr, tnr = tw+within, tm+marked, twr+wr, tnr+nr
		re := "no"
		if c.again != nil {
			re = "yes"
		}
		fmt.Fprintf(b, "| [%s](#%s) | `%s` | %d of %d | %d | %d | %s |\n", c.name, anchor(c.name), c.t.Command, within, marked, wr, nr, re)
	}
	fmt.Fprintf(b, "| all | | %d of %d | %d | %d | |\n\n", tw, tm, twr, tnr)
}

// anchor is the heading anchor GitHub and most renderers make of a name.
func anchor(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func section(b *strings.Builder, c checked, rs []*reason) {
	t := c.t
	fmt.Fprintf(b, "## %s\n\n`%s` (%s", c.name, t.Command, c.path)
	if c.again != nil {
		fmt.Fprintf(b, "; recaptured: %s", c.recapture)
	}
	b.WriteString(")\n\n")
	for _, h := range t.Header {
		fmt.Fprintf(b, "- %s\n", h)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(b, "- note: %s\n", n)
	}
	b.WriteString("\n| section | figure | real | model | diff | tolerance | mark | noise | reason |\n|---|---|---|---|---|---|---|---|---|\n")
	again := map[string]sidebyside.Row{}
	if c.again != nil {
		for _, r := range c.again.Rows {
			again[r.Section+"\x00"+r.Name] = r
		}
	}
	var without []string
	for _, r := range t.Rows {
		reasonText := ""
		if in, ok := r.Within(); ok && !in {
			if rr := lookup(rs, c.name, r.Section, r.Name); rr != nil {
				reasonText = cell(rr.text)
			} else {
				reasonText = "**no reason given**"
				without = append(without, r.Section+" / "+r.Name)
			}
		}
		noise := "n/a"
		if c.again != nil {
			noise = noiseText(r, again[r.Section+"\x00"+r.Name])
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(r.Section), cell(r.Name),
			r.Format(r.Real, r.HasReal), r.Format(r.Model, r.HasModel), r.DiffText(), r.Class.Text(), r.Mark(), noise, reasonText)
	}
	within, marked := t.Within()
	fmt.Fprintf(b, "\nWithin tolerance: %d of %d rows.", within, marked)
	if len(without) > 0 {
		fmt.Fprintf(b, " Outside without a reason: %d (%s).", len(without), strings.Join(without, "; "))
	}
	b.WriteString("\n\n")
}

// noiseText is how much the recapture's real value differs from the
// first's, relative (points for shares), and whether that is more than the
// row's tolerance.
func noiseText(r, again sidebyside.Row) string {
	if !r.HasReal || !again.HasReal {
		return "n/a"
	}
	var d float64
	var s string
	if r.Unit == sidebyside.UnitShare {
		d = math.Abs(again.Real - r.Real)
		s = fmt.Sprintf("%.1fpt", d)
	} else {
		switch {
		case r.Real == again.Real:
			return "0%"
		case r.Real == 0:
			return "new"
		}
		d = math.Abs(again.Real-r.Real) / math.Abs(r.Real)
		s = fmt.Sprintf("%.1f%%", 100*d)
	}
	if tol := r.Class.Tolerance(); !math.IsNaN(tol) && d > tol {
		s += " (> tolerance)"
	}
	return s
}

// cell escapes a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
