package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/bundle"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/sidebyside"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// testBundle is framework/sidebyside's committed bundle (cyclictest -t2 -a
// -i 1000 -l 100 -m -q -h 100 -p 80 on a 2-CPU KVM guest).
var testBundle = filepath.Join("..", "..", "framework", "sidebyside", "testdata", "cyclictest-t2-h.tcap")

// recapture writes a copy of the bundle at src to dst whose cyclictest
// output differs: thread 0's Max 131 us becomes 262 us, as a second run
// of the same workload might print.
func recapture(t *testing.T, src, dst string) {
	t.Helper()
	b, err := bundle.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	out, err := b.File(bundle.StdoutName)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(out), "# Max Latencies: 00131", "# Max Latencies: 00262", 1)
	if changed == string(out) {
		t.Fatal("the test bundle's output has no thread 0 Max of 131 us")
	}
	tr, err := b.File(bundle.TraceName)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Manifest
	if err := bundle.Write(dst, &m, []bundle.Entry{{Name: bundle.TraceName, Data: tr}, {Name: bundle.StdoutName, Data: []byte(changed)}}); err != nil {
		t.Fatal(err)
	}
}

func check(path string) (*sidebyside.Table, error) {
	return sidebyside.Check(path, sidebyside.Options{Experiment: experiment.Options{Opener: experiment.InProcess(builtin.Factories())}})
}

// TestGenerate: a suite of two bundles, one recaptured (NAME.2.tcap), and a
// reasons file: the summary counts, each row's mark, the noise column (0%
// where both captures agree, the changed Max beyond its tolerance, n/a
// without a recapture), reasons matched by pattern, rows outside without a
// reason named, a reason that matches nothing listed; and the same output
// twice.
func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(testBundle)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ct.tcap", "plain.tcap"} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recapture(t, filepath.Join(dir, "ct.tcap"), filepath.Join(dir, "ct.2.tcap"))
	reasons := filepath.Join(dir, "reasons.txt")
	if err := os.WriteFile(reasons, []byte(`# test reasons
ct | callbacks | timer:* | background kernel timers of other processes: the scenario runs cyclictest only
* | cpu time | user* | the machine was busy with other jobs
ct | tick | no such row | stale
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var a, b strings.Builder
	if err := generate(&a, dir, reasons, "", check); err != nil {
		t.Fatal(err)
	}
	if err := generate(&b, dir, reasons, "", check); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("two generations differ")
	}
	out := a.String()
	tbl, err := check(filepath.Join(dir, "ct.tcap"))
	if err != nil {
		t.Fatal(err)
	}
	within, marked := tbl.Within()
	for _, want := range []string{
		"| [ct](#ct) | `cyclictest -t2 -a -i 1000 -l 100 -m -q -h 100 -p 80` | " + itoa(within) + " of " + itoa(marked) + " |",
		"| [plain](#plain) |",
		"recaptured: " + filepath.Join(dir, "ct.2.tcap"),
		"| cyclictest T:0 | max latency | 131us | 2us | -98.5% | 25% | OUTSIDE | 100.0% (> tolerance) | **no reason given** |",
		"| cyclictest T:1 | max latency | 112us | 2us | -98.2% | 25% | OUTSIDE | 0% | **no reason given** |",
		"| callbacks | timer:process_timeout starts | 15 | 0 | -100.0% | 5% | OUTSIDE | 0% | background kernel timers of other processes: the scenario runs cyclictest only |",
		"| cpu time | user (user + nice) | 72.2% | 0.0% | -72.2pt | 2pt | OUTSIDE | 0.0pt | the machine was busy with other jobs |",
		"| cyclictest T:0 | cycles | 100 | 100 | = | 5% | ok | n/a |  |", // plain: no recapture
		"- line 4: ct | tick | no such row",
		"Outside without a reason: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "ct.2") && strings.Contains(out, "[ct.2]") {
		t.Error("the recapture is listed as a bundle of its own")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestSuiteErrors: a recapture without its bundle, and a malformed reason,
// are errors naming the file.
func TestSuiteErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.2.tcap"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := suite(dir); err == nil || !strings.Contains(err.Error(), "x.tcap is missing") {
		t.Errorf("suite: %v, want the missing x.tcap named", err)
	}
	if _, err := readReasons(strings.NewReader("# c\nct | tick | only three\n"), "reasons.txt"); err == nil || !strings.Contains(err.Error(), "reasons.txt:2") {
		t.Errorf("readReasons: %v, want reasons.txt:2", err)
	}
	if _, err := readReasons(strings.NewReader("ct |  | x | y\n"), "r"); err == nil || !strings.Contains(err.Error(), "empty section") {
		t.Errorf("readReasons: %v, want empty section", err)
	}
}
