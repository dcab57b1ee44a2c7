package bisect_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/bisect"
	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// options bisects configs/FILE in process with 4 seeds.
func options(t *testing.T, file, good, bad, metric string, few int) bisect.Options {
	t.Helper()
	path := filepath.Join("..", "..", "configs", file)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	op := experiment.InProcess(builtin.Factories())
	spec, diags := config.LoadBytes(path, src, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tb, err := experiment.ScenarioTable(spec, op)
	if err != nil {
		t.Fatal(err)
	}
	return bisect.Options{File: file, Table: tb, Good: good, Bad: bad, Metric: metric, Seeds: []uint64{1, 2, 3, 4}, Jobs: 2, Few: few,
		Load: func(p map[kernelversion.Key]string, seed uint64) (*config.Spec, error) {
			s, diags := config.LoadBytes(path, src, config.Options{Presets: p, Seed: &seed})
			if diags.HasErrors() {
				return nil, diags
			}
			return s, nil
		},
		Overrides: func(s *config.Spec) ([]config.Override, error) { return experiment.Overrides(s, op) },
		Run:       experiment.Options{Opener: op},
	}
}

// TestSearch: with more changes than --each, the binary search walks the
// path 5.10 -> 5.15 of the NCM scenario (46eb1701c046, a5183862e76f,
// 627ef5ae2df8, 1e7f7fbcd40c) and stops at the first change after which Gbps is closer
// to 5.15's than to 5.10's: 46eb1701c046, the double reprogramming.
func TestSearch(t *testing.T) {
	rep, err := bisect.Run(options(t, "ncm-restart.hcl", "5.10", "5.15", "Gbps", 1))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "search" || len(rep.Changes) != 4 || len(rep.Probes) == 0 {
		t.Fatalf("mode %s, %d changes, %d probes: want a search over 4", rep.Mode, len(rep.Changes), len(rep.Probes))
	}
	if !rep.Explained() || rep.Culprits[0].Change.Era.Commit != "46eb1701c046" || rep.Culprits[0].How != "search" {
		t.Fatalf("culprits %+v, want 46eb1701c046 found by the search", rep.Culprits)
	}
	if d := rep.Culprits[0].Step.Delta(); d > -0.3 {
		t.Errorf("46eb1701c046 moves Gbps by %.1f%%, want a loss of more than 30%%", 100*d)
	}
	var a, b bytes.Buffer
	if err := bisect.WriteText(&a, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.String(), "binary search over the path") || !strings.Contains(a.String(), "verdict: 46eb1701c046") {
		t.Errorf("report:\n%s", a.String())
	}
	// The same bisection again: the same bytes (every state is a
	// deterministic run), whatever the job count.
	o := options(t, "ncm-restart.hcl", "5.10", "5.15", "Gbps", 1)
	o.Jobs = 1
	rep2, err := bisect.Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := bisect.WriteText(&b, rep2); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("two bisections differ:\n%s\n----\n%s", a.String(), b.String())
	}
}

// TestEach: the same range measured change by change finds 46eb1701c046
// (the loss) and 627ef5ae2df8 (its partial fix); 1e7f7fbcd40c, about
// clock_was_set(), does nothing here.
func TestEach(t *testing.T) {
	rep, err := bisect.Run(options(t, "ncm-restart.hcl", "5.10", "5.15", "Gbps", 4))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range rep.Culprits {
		got = append(got, c.Change.Era.Commit)
	}
	if strings.Join(got, " ") != "46eb1701c046 627ef5ae2df8" {
		t.Errorf("culprits %v, want 46eb1701c046 then 627ef5ae2df8", got)
	}
}

// TestNothingInRange: no modelled change between two releases applies, or
// the metric does not move: "no modelled change explains it".
func TestNothingInRange(t *testing.T) {
	rep, err := bisect.Run(options(t, "ncm-restart.hcl", "6.1", "6.6", "Gbps", 4))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := bisect.WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	if rep.Explained() || rep.Mode != "none" || !strings.Contains(b.String(), "verdict: no modelled change explains it") {
		t.Errorf("6.1..6.6: %s", b.String())
	}
	if _, err := bisect.Run(options(t, "ncm-restart.hcl", "6.1", "6.6", "no-such-metric", 4)); err != nil {
		t.Errorf("a metric is only looked up when something runs: %v", err)
	}
	if _, err := bisect.Run(options(t, "ncm-restart.hcl", "5.10", "5.12", "no-such-metric", 4)); err == nil || !strings.Contains(err.Error(), "no run reports it") {
		t.Errorf("unknown metric: %v", err)
	}
}
