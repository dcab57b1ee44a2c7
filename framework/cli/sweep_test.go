package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/experiment"
)

// run runs the command line and fails the test unless it exits with want.
func runCLI(t *testing.T, want int, args ...string) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := mainWith(args, &stdout, &stderr); code != want {
		t.Fatalf("tickemu %s: exit %d, want %d\nstderr:\n%s", strings.Join(args, " "), code, want, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// TestSweepBenchstat sweeps HZ and the wheel's catch-up strategy over
// configs/nohz-catchup.hcl (6 s measured: the first MCE poll on CPU 10
// falls in it) and feeds the bench output to the real benchstat with
// -col /catchup -row /hz: one table per unit (the config hash is the same at
// every point and seed), a row per HZ, a column per strategy, and the
// figures tickemu's own statistics give.
func TestSweepBenchstat(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building benchstat needs the go command: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "benchstat")
	if out, err := exec.Command(gobin, "build", "-o", bin, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Fatalf("go build benchstat: %v\n%s", err, out)
	}
	args := []string{"compare", nohzCatchup, "--no-variants", "--sweep", "hz=100,250,1000", "--sweep", "wheel.catchup=per_jiffy,next_expiry",
		"--seeds", "4", "--var", "duration=6s", "--jobs", "2"}
	bench, _ := runCLI(t, 0, append(args, "--format", "bench")...)
	if n := strings.Count(bench, "tickemu-config: "); n != 1 {
		t.Errorf("%d tickemu-config lines, want 1: every point and seed is one experiment", n)
	}
	file := filepath.Join(dir, "sweep.bench")
	if err := os.WriteFile(file, []byte(bench), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-col", "/catchup", "-row", "/hz", "-filter", ".unit:wheel-iterations", file).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	// Every metric, as README projects them: a row per line, thread and
	// point pools nothing (benchstat would say "benchmarks vary in").
	all, err := exec.Command(bin, "-col", "/catchup", "-row", ".name,/thread,/hz", file).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, all)
	}
	if strings.Contains(string(all), "benchmarks vary in") || !regexp.MustCompile(`(?m)^Cyclictest 0 1000 `).Match(all) ||
		!regexp.MustCompile(`(?m)^Kernel 1000 `).Match(all) {
		t.Errorf("benchstat -row .name,/thread,/hz does not give a row per line, thread and point:\n%s", all)
	}
	text := string(out)
	if strings.Count(text, "per_jiffy") != 1 {
		t.Fatalf("benchstat printed not exactly one wheel-iterations table:\n%s", text)
	}
	if !regexp.MustCompile(`│\s+per_jiffy\s+│\s+next_expiry\s+│`).MatchString(text) {
		t.Errorf("benchstat's columns are not per_jiffy, next_expiry:\n%s", text)
	}
	// tickemu's own medians of the same runs, from its JSON report.
	js, _ := runCLI(t, 0, append(args, "--format", "json")...)
	var doc struct {
		Metrics []struct {
			Bench, Unit string
			Variants    []struct{ Summary struct{ Median float64 } }
		}
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	median := map[string]float64{}
	for _, m := range doc.Metrics {
		if m.Unit == "wheel-iterations" {
			median[m.Bench] = m.Variants[0].Summary.Median
		}
	}
	row := regexp.MustCompile(`(?m)^(\d+)\s+(\S+) ± ∞ ¹\s+(\S+) ± ∞ ¹\s+(\S+) \(p=0\.029 n=4\)$`)
	rows := row.FindAllStringSubmatch(text, -1)
	if len(rows) != 3 {
		t.Fatalf("want rows 100, 250 and 1000 with a significant delta, benchstat printed:\n%s", text)
	}
	for i, hz := range []string{"100", "250", "1000"} {
		r := rows[i]
		if r[1] != hz {
			t.Errorf("row %d is %s, want %s", i, r[1], hz)
		}
		per, next := median["Kernel/hz="+hz+"/catchup=per_jiffy"], median["Kernel/hz="+hz+"/catchup=next_expiry"]
		if got := benchstatNumber(r[2]); !near(got, per) {
			t.Errorf("hz=%s per_jiffy: benchstat %s, tickemu median %v", hz, r[2], per)
		}
		if got := benchstatNumber(r[3]); !near(got, next) {
			t.Errorf("hz=%s next_expiry: benchstat %s, tickemu median %v", hz, r[3], next)
		}
		// Catching up one jiffy at a time costs HZ x the idle span.
		if per < 50*next || !strings.HasPrefix(r[4], "-9") {
			t.Errorf("hz=%s: per_jiffy %v vs next_expiry %v iterations (%s): want the per-jiffy walk far longer", hz, per, next, r[4])
		}
	}
}

// benchstatNumber reads a benchstat cell such as 60080.0, 600.785k or 1.196k.
func benchstatNumber(s string) float64 {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1e3, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -1
	}
	return v * mult
}

// near is equality to benchstat's four significant digits.
func near(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 0.0005*max(a, b, 1)
}

const shardSrc = `
variable "mode" { default = "tsc_deadline" }
machine {
  cpus = 2
  hz   = 1000
}
clockevent "local" { mode = var.mode }
workload "cyclictest" "rt" {
  threads  = 2
  interval = "250us"
}
run {
  duration = "5ms"
  seed     = 4
}
sweep "run.duration" {
  values = ["3ms", "5ms"]
}
variant "oneshot"      { vars = { mode = "oneshot" } }
variant "tsc_deadline" { vars = { mode = "tsc_deadline" } }
`

// TestShardMerge: the shards of a comparison, merged, print byte for byte
// what the comparison run at once prints, in every format, whichever order
// the shard files are given in; cells that fail (hz=123 is no CONFIG_HZ) are
// reported alike.
func TestShardMerge(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "shard.hcl")
	if err := os.WriteFile(file, []byte(shardSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"compare", file, "--seeds", "3", "--jobs", "2", "--sweep", "hz=250,123"}
	const n = 4
	var shards []string
	for i := n; i >= 1; i-- {
		// A shard whose runs failed still exits 0: the failures are in its
		// file, and the merge reports them (so a cluster's merge job runs).
		out, _ := runCLI(t, 0, append(common, "--shard", fmt.Sprintf("%d/%d", i, n))...)
		name := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		if err := os.WriteFile(name, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, name)
	}
	for _, format := range []string{"text", "json", "bench", "csv"} {
		want, _ := runCLI(t, 1, append(common, "--format", format)...)
		got, _ := runCLI(t, 1, append([]string{"merge", "--format", format}, shards...)...)
		if got != want {
			t.Errorf("--format %s: merge of %d shards differs from the comparison\nmerge:\n%s\ncompare:\n%s", format, n, got, want)
		}
		if format == "text" && !strings.Contains(want, "duration=3ms/hz=123 variant oneshot seed 4: ") {
			t.Errorf("the failed cells at hz=123 are not in the report:\n%s", want)
		}
	}

	// What merge refuses.
	read := func(name string) *experiment.ShardFile {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := experiment.ReadShardFile(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	write := func(f *experiment.ShardFile) string {
		var b bytes.Buffer
		if err := f.Write(&b); err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, fmt.Sprintf("edited-%d.json", len(b.Bytes())))
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	other, _ := runCLI(t, 0, "compare", file, "--seeds", "2", "--jobs", "2", "--sweep", "hz=250,123", "--shard", "1/4")
	otherFile := filepath.Join(dir, "other.json")
	os.WriteFile(otherFile, []byte(other), 0o644)
	versioned := read(shards[0])
	versioned.Experiment.Tickemu = "0.0.1"
	versioned.ID = versioned.Experiment.ID()
	lost := read(shards[1])
	lost.Cells = lost.Cells[1:]
	tampered := read(shards[2])
	tampered.Experiment.ConfigHashes[0] = "0"
	notJSON := filepath.Join(dir, "bad.json")
	os.WriteFile(notJSON, []byte("BenchmarkX 1 2 ns/op\n"), 0o644)
	for _, tt := range []struct {
		name  string
		files []string
		want  string
	}{
		{"missing shard", shards[:3], "shards 1 of 4 are missing"},
		{"repeated shard", append([]string{shards[0]}, shards...), "are both shard 4 of 4"},
		{"another experiment", append([]string{otherFile}, shards[:3]...), "is not of the experiment of " + otherFile + ": seeds"},
		{"another tickemu", append([]string{write(versioned)}, shards[1:]...), "by tickemu 0.0.1: shards of one experiment come from one tickemu"},
		{"missing cell", append([]string{shards[0], write(lost)}, shards[2:]...), "lacks the cell"},
		{"edited experiment", []string{write(tampered)}, "experiment_id does not match"},
		{"not a shard file", []string{notJSON}, "not a shard file"},
	} {
		_, stderr := runCLI(t, 2, append([]string{"merge"}, tt.files...)...)
		if !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: merge stderr %q, want %q", tt.name, stderr, tt.want)
		}
	}
}
