// Package bisect finds which modelled kernel change moves a metric between
// two kernel versions of a scenario: `tickemu bisect FILE --good A --bad B
// --metric NAME`. The changes between the versions come from the scenario's
// version table (framework/kernelversion); each state on the way is the file
// with those changes' settings preset, run over the same seeds and compared
// with the statistics of `tickemu compare` (framework/experiment).
//
// With few changes every one is measured alone (the good version plus that
// change) and left out (the bad version without it), which also finds a
// change whose effect another one cancels (a regression and its fix). With
// many, a binary search over the path from good to bad finds the step where
// the metric turns bad, as git bisect does with commits.
package bisect

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/kernelversion"
)

// DefaultFew is the most changes measured one by one; more are searched.
const DefaultFew = 4

// Options configure a bisection.
type Options struct {
	// File names the scenario in reports.
	File string
	// Table is the scenario's version table (experiment.ScenarioTable).
	Table *kernelversion.Table
	// Good and Bad are releases or change commit ids (Table.ParsePoint).
	Good, Bad string
	// Metric is a unit ("bogo-ops/s") or BENCH.UNIT ("Timermix.bogo-ops/s").
	Metric string
	Seeds  []uint64
	Jobs   int
	Alpha  float64
	// Few is the most changes measured one by one (default DefaultFew).
	Few int
	// Load evaluates the file with the given presets and seed; it is called
	// from several goroutines.
	Load func(presets map[kernelversion.Key]string, seed uint64) (*config.Spec, error)
	// Overrides lists the settings the file itself sets at a preset state
	// (experiment.Overrides): those changes have no effect in the scenario.
	Overrides func(spec *config.Spec) ([]config.Override, error)
	// Run holds the options every run shares.
	Run experiment.Options
	// Progress, when set, is called after each run with the runs ended and
	// the runs planned so far.
	Progress func(done, total int)
}

// Step is one measured comparison of the metric: Base against Variant.
type Step struct {
	Base, Variant string
	// Change is the change the step measures (nil for the endpoints).
	Change *kernelversion.Change `json:"-"`
	// Metric holds the two variants' statistics, as compare reports them.
	Metric *experiment.MetricComparison
}

// Significant reports whether the step's change of the median passes the
// Mann-Whitney U test (or, with enough seeds, the paired test) at alpha;
// for a metric every seed gives the same value on both sides, whether it
// changed at all.
func (s *Step) Significant() bool {
	if s == nil || s.Metric == nil || len(s.Metric.Variants) < 2 || s.Metric.Variants[1].VsBase == nil {
		return false
	}
	vb := s.Metric.Variants[1].VsBase
	if vb.Exact {
		// Deterministic on both sides: any difference is the change's.
		return vb.Delta != "0.00%"
	}
	return vb.UTest.Significant() || (vb.Paired.Pairs > 0 && vb.Paired.P <= vb.UTest.Alpha)
}

// Delta is the relative change of the medians, Variant against Base
// (NaN without both).
func (s *Step) Delta() float64 {
	if s == nil || s.Metric == nil || len(s.Metric.Variants) < 2 {
		return math.NaN()
	}
	a, b := s.Metric.Variants[0].Summary.Median, s.Metric.Variants[1].Summary.Median
	if a == 0 {
		return math.NaN()
	}
	return (b - a) / math.Abs(a)
}

// Probe is one state of the binary search: the path's first K changes.
type Probe struct {
	K    int
	Name string
	Bad  bool // closer to the bad version's median than to the good's
	Step *Step
}

// Culprit is a change found to move the metric.
type Culprit struct {
	Change kernelversion.Change
	// Step measures it: alone or left out (few changes) or the search's
	// last step.
	Step *Step
	How  string // "alone", "left out", "search"
}

// Report is what a bisection found.
type Report struct {
	File, Good, Bad string
	Metric          string // BENCH.UNIT resolved
	Seeds           []uint64
	// Forward is true when good is the older point: the changes lead from
	// good to bad applied; false when they are reverted on the way.
	Forward bool
	// Changes lead from good to bad, in that order; Pinned are those the
	// file fixes by setting their attribute itself.
	Changes, Pinned []kernelversion.Change
	Endpoints       *Step
	Mode            string // "each", "search" or "none"
	Alone, LeftOut  []*Step
	Probes          []Probe
	Culprits        []Culprit
	Failures        []experiment.Failure
}

// Explained reports whether some change moves the metric.
func (r *Report) Explained() bool { return len(r.Culprits) > 0 }

// ErrMetric is a metric name no run reported (or several benches share).
var ErrMetric = errors.New("metric")

// bisector carries one bisection's state.
type bisector struct {
	o       Options
	earlier kernelversion.State
	all     []kernelversion.Change // between the points, oldest first
	path    []int                  // indices into all, in the order good -> bad
	forward bool
	states  map[string]kernelversion.State // by name
	runs    map[string][]experiment.RunOutcome
	done    int
	planned int
}

// Run bisects.
func Run(o Options) (*Report, error) {
	if o.Few <= 0 {
		o.Few = DefaultFew
	}
	if len(o.Seeds) == 0 {
		return nil, errors.New("bisect: no seeds")
	}
	good, err := o.Table.ParsePoint(o.Good)
	if err != nil {
		return nil, fmt.Errorf("--good: %w", err)
	}
	bad, err := o.Table.ParsePoint(o.Bad)
	if err != nil {
		return nil, fmt.Errorf("--bad: %w", err)
	}
	between, forward := o.Table.Between(good, bad)
	early := good
	if !forward {
		early = bad
	}
	b := &bisector{o: o, earlier: o.Table.StateOf(early), forward: forward,
		states: map[string]kernelversion.State{}, runs: map[string][]experiment.RunOutcome{}}
	rep := &Report{File: o.File, Good: good.Name, Bad: bad.Name, Seeds: o.Seeds, Forward: forward}

	// The settings the file writes itself take no part.
	pinned := map[kernelversion.Key]bool{}
	for _, p := range []kernelversion.Point{good, bad} {
		spec, err := o.Load(o.Table.StateOf(p), o.Seeds[0])
		if err != nil {
			return nil, err
		}
		ovs, err := o.Overrides(spec)
		if err != nil {
			return nil, err
		}
		for _, ov := range ovs {
			pinned[ov.Key] = true
		}
	}
	for _, c := range between {
		if pinned[c.Key] {
			rep.Pinned = append(rep.Pinned, c)
		} else {
			b.all = append(b.all, c)
		}
	}
	for i := range b.all {
		if forward {
			b.path = append(b.path, i)
		} else {
			b.path = append(b.path, len(b.all)-1-i)
		}
	}
	for _, i := range b.path {
		rep.Changes = append(rep.Changes, b.all[i])
	}
	if len(b.all) == 0 {
		rep.Mode = "none"
		return rep, nil
	}
	goodName, badName := "good "+good.Name, "bad "+bad.Name
	b.name(goodName, b.prefix(0))
	b.name(badName, b.prefix(len(b.path)))
	if len(b.path) <= o.Few {
		rep.Mode = "each"
		err = b.each(rep, goodName, badName)
	} else {
		rep.Mode = "search"
		err = b.search(rep, goodName, badName)
	}
	for _, name := range slices.Sorted(maps.Keys(b.runs)) {
		for _, r := range b.runs[name] {
			if r.Err != nil {
				rep.Failures = append(rep.Failures, experiment.Failure{Variant: name, Seed: r.Seed, Error: r.ErrorLine()})
			}
		}
	}
	return rep, err
}

// set is the state with the changes at the given indices of all applied,
// in their order.
func (b *bisector) set(idx []int) kernelversion.State {
	slices.Sort(idx)
	var cs []kernelversion.Change
	for _, i := range idx {
		cs = append(cs, b.all[i])
	}
	return b.earlier.Apply(cs...)
}

// toggled is the state of the path after its first k steps, with step j
// (>= 0) flipped as well: the good state plus change j (j >= k), or the bad
// state without it (j < k).
func (b *bisector) toggled(k, j int) kernelversion.State {
	on := map[int]bool{}
	for i := range b.all {
		on[i] = !b.forward // backward: good has every change applied
	}
	for s := 0; s < k; s++ {
		on[b.path[s]] = b.forward
	}
	if j >= 0 {
		on[b.path[j]] = !on[b.path[j]]
	}
	var idx []int
	for i, v := range on {
		if v {
			idx = append(idx, i)
		}
	}
	return b.set(idx)
}

func (b *bisector) prefix(k int) kernelversion.State { return b.toggled(k, -1) }

// name registers a state under a name, returning the name of an identical
// state registered before (so it runs once).
func (b *bisector) name(n string, st kernelversion.State) string {
	for prev, s := range b.states {
		if equalState(s, st) {
			return prev
		}
	}
	b.states[n] = st
	return n
}

func equalState(a, b kernelversion.State) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// measure runs every named state not run yet, all at once.
func (b *bisector) measure(names ...string) {
	var todo []string
	for _, n := range names {
		if _, ok := b.runs[n]; !ok && !slices.Contains(todo, n) {
			todo = append(todo, n)
		}
	}
	if len(todo) == 0 {
		return
	}
	b.planned += len(todo) * len(b.o.Seeds)
	co := experiment.CompareOptions{
		File: b.o.File, Variants: todo, Seeds: b.o.Seeds, Jobs: b.o.Jobs, Run: b.o.Run,
		Load: func(c experiment.Cell) (*config.Spec, error) {
			return b.o.Load(b.states[c.Variant], c.Seed)
		},
	}
	if b.o.Progress != nil {
		base := b.done
		co.Progress = func(done, _ int) { b.o.Progress(base+done, b.planned) }
	}
	runs := experiment.RunMatrix(co)
	b.done += len(runs)
	ns := len(b.o.Seeds)
	for v, n := range todo {
		b.runs[n] = runs[v*ns : (v+1)*ns]
	}
}

// compare measures base against variant on the metric.
func (b *bisector) compare(base, variant string) (*Step, error) {
	b.measure(base, variant)
	runs := append(slices.Clone(b.runs[base]), b.runs[variant]...)
	cmp := experiment.Analyze(b.o.File, []string{base, variant}, b.o.Seeds, runs, b.o.Alpha, 0)
	m, err := pickMetric(cmp, b.o.Metric)
	if err != nil {
		return nil, err
	}
	return &Step{Base: base, Variant: variant, Metric: m}, nil
}

// pickMetric finds the metric by BENCH.UNIT or by a unit only one bench has.
func pickMetric(c *experiment.Comparison, name string) (*experiment.MetricComparison, error) {
	var hits []*experiment.MetricComparison
	var units []string
	for i := range c.Metrics {
		m := &c.Metrics[i]
		if m.Key() == name {
			return m, nil
		}
		if m.Unit == name {
			hits = append(hits, m)
		}
		if !slices.Contains(units, m.Unit) {
			units = append(units, m.Unit)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		if len(c.Metrics) == 0 {
			return nil, fmt.Errorf("%w %q: no run finished (see the failures)", ErrMetric, name)
		}
		if keys := keysOfUnit(c, name[strings.LastIndex(name, ".")+1:]); len(keys) > 0 {
			// BENCH.UNIT with a known unit: the bench is misnamed (a
			// sweep point is part of its name, as in run's output).
			return nil, fmt.Errorf("%w %q: no run reports it; name one of the benches that report its unit: %s", ErrMetric, name, strings.Join(keys, ", "))
		}
		return nil, fmt.Errorf("%w %q: no run reports it; the runs report %s", ErrMetric, name, strings.Join(units, ", "))
	}
	return nil, fmt.Errorf("%w %q: several benches report it; name one: %s", ErrMetric, name, strings.Join(keysOfUnit(c, name), ", "))
}

// keysOfUnit lists the BENCH.UNIT keys of the metrics in unit.
func keysOfUnit(c *experiment.Comparison, unit string) []string {
	var keys []string
	for _, m := range c.Metrics {
		if m.Unit == unit {
			keys = append(keys, m.Key())
		}
	}
	return keys
}

// each measures every change alone and left out.
func (b *bisector) each(rep *Report, goodName, badName string) error {
	var alone, left []string
	with, without := "+", "-"
	if !b.forward {
		with, without = "-", "+"
	}
	for j := range b.path {
		c := b.all[b.path[j]]
		alone = append(alone, b.name(rep.Good+with+c.ID(), b.toggled(0, j)))
		left = append(left, b.name(rep.Bad+without+c.ID(), b.toggled(len(b.path), j)))
	}
	b.measure(append(append([]string{goodName, badName}, alone...), left...)...)
	var err error
	if rep.Endpoints, err = b.compare(goodName, badName); err != nil {
		return err
	}
	rep.Metric = rep.Endpoints.Metric.Key()
	for j := range b.path {
		c := b.all[b.path[j]]
		a, err := b.compare(goodName, alone[j])
		if err != nil {
			return err
		}
		l, err := b.compare(left[j], badName)
		if err != nil {
			return err
		}
		a.Change, l.Change = &c, &c
		rep.Alone, rep.LeftOut = append(rep.Alone, a), append(rep.LeftOut, l)
		switch {
		case a.Significant() && (!l.Significant() || math.Abs(a.Delta()) >= math.Abs(l.Delta())):
			rep.Culprits = append(rep.Culprits, Culprit{Change: c, Step: a, How: "alone"})
		case l.Significant():
			rep.Culprits = append(rep.Culprits, Culprit{Change: c, Step: l, How: "left out"})
		}
	}
	slices.SortStableFunc(rep.Culprits, func(x, y Culprit) int {
		return -cmp.Compare(math.Abs(x.Step.Delta()), math.Abs(y.Step.Delta()))
	})
	return nil
}

// search finds the first step on the path from good to bad after which the
// metric is closer to bad's than to good's.
func (b *bisector) search(rep *Report, goodName, badName string) error {
	var err error
	if rep.Endpoints, err = b.compare(goodName, badName); err != nil {
		return err
	}
	rep.Metric = rep.Endpoints.Metric.Key()
	if !rep.Endpoints.Significant() {
		return nil // nothing to search for: say so
	}
	gm := rep.Endpoints.Metric.Variants[0].Summary.Median
	bm := rep.Endpoints.Metric.Variants[1].Summary.Median
	names := map[int]string{0: goodName, len(b.path): badName}
	lo, hi := 0, len(b.path)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		c := b.all[b.path[mid-1]]
		n := b.name("@"+c.ID(), b.prefix(mid))
		names[mid] = n
		st, err := b.compare(goodName, n)
		if err != nil {
			return err
		}
		m := st.Metric.Variants[1].Summary.Median
		isBad := math.Abs(m-bm) < math.Abs(m-gm)
		rep.Probes = append(rep.Probes, Probe{K: mid, Name: n, Bad: isBad, Step: st})
		if isBad {
			hi = mid
		} else {
			lo = mid
		}
	}
	st, err := b.compare(names[lo], names[hi])
	if err != nil {
		return err
	}
	c := b.all[b.path[hi-1]]
	st.Change = &c
	if st.Significant() {
		rep.Culprits = append(rep.Culprits, Culprit{Change: c, Step: st, How: "search"})
	}
	return nil
}
