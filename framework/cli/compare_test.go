package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const compareSrc = `
variable "mode" { default = "tsc_deadline" }
machine {
  cpus = 2
  hz   = 1000
}
clockevent "local" { mode = var.mode }
workload "timermix" "tm" { instances = 2 }
workload "cyclictest" "rt" {
  threads  = 2
  interval = "250us"
  priority = 99
}
run {
  duration = "5ms"
  seed     = 4
}
variant "oneshot"      { vars = { mode = "oneshot" } }
variant "tsc_deadline" { vars = { mode = "tsc_deadline" } }
`

func benchLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			out = append(out, l)
		}
	}
	return out
}

// TestCompareEqualsRun checks, through the command line, that the runs of
// `tickemu compare` are the runs of `tickemu run --variant V --seed S`: the
// bench output of compare is the concatenation, seed by seed and variant by
// variant, of the bench lines of the single runs. Seeds start at run.seed.
func TestCompareEqualsRun(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cmp.hcl")
	if err := os.WriteFile(file, []byte(compareSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := mainWith([]string{"compare", file, "--seeds", "3", "--jobs", "2", "--format", "bench"}, &out, &errb); code != 0 {
		t.Fatalf("tickemu compare = exit %d, stderr:\n%s", code, errb.String())
	}
	var want []string
	for seed := 4; seed <= 6; seed++ {
		for _, v := range []string{"oneshot", "tsc_deadline"} {
			var o, e bytes.Buffer
			args := []string{"run", file, "--variant", v, "--seed", fmt.Sprint(seed), "--format", "bench"}
			if code := mainWith(args, &o, &e); code != 0 {
				t.Fatalf("tickemu %s = exit %d, stderr:\n%s", strings.Join(args, " "), code, e.String())
			}
			want = append(want, benchLines(o.String())...)
		}
	}
	if got := benchLines(out.String()); !slices.Equal(got, want) {
		t.Errorf("compare bench lines =\n%s\nwant (tickemu run):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPickVariants(t *testing.T) {
	file := []string{"a", "b", "c"}
	tests := []struct {
		list    string
		want    []string
		wantErr string
	}{
		{"", []string{"a", "b", "c"}, ""},
		{"c,a", []string{"c", "a"}, ""},
		{" b , c ", []string{"b", "c"}, ""},
		{"b", []string{"b"}, ""},
		{"a,x", nil, `no variant "x" (the file has a, b, c)`},
		{"a,a", nil, `"a" listed twice`},
		{"a,,b", nil, "empty name"},
	}
	for _, tt := range tests {
		got, err := pickVariants(file, tt.list)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("pickVariants(%q) error = %v, want %q", tt.list, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("pickVariants(%q) = %v, %v; want %v", tt.list, got, err, tt.want)
		}
	}
	if _, err := pickVariants(nil, ""); err == nil || !strings.Contains(err.Error(), "no variant blocks") {
		t.Errorf("pickVariants(no variants) error = %v, want no variant blocks", err)
	}
}

// TestProgressBar checks that nothing is drawn unless stderr is a terminal,
// and what a terminal gets.
func TestProgressBar(t *testing.T) {
	if p := newProgressBar(&bytes.Buffer{}, "compare"); p != nil {
		t.Errorf("newProgressBar(buffer) = %v, want nil", p)
	}
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := newProgressBar(f, "compare"); p != nil {
		t.Errorf("newProgressBar(regular file) = %v, want nil", p)
	}
	var nilBar *progressBar
	nilBar.finish() // must not panic
	// The bar with its rate, elapsed time and what is left: 3 runs in
	// 6 s is 0.5 runs/s, so 9 more take about 18 s.
	var b bytes.Buffer
	wall := time.Unix(1000, 0)
	p := newProgressBarTo(&b, "compare", func() time.Time { return wall })
	p.width = 10
	wall = wall.Add(6 * time.Second)
	p.update(3, 12)
	p.finish()
	if want := "\rcompare [==        ] 3/12 runs, 0.5 runs/s, 6s elapsed, about 18s left\033[K\r\033[K"; b.String() != want {
		t.Errorf("progress output = %q, want %q", b.String(), want)
	}
	// A slow grid: runs per minute; the last run: nothing left.
	b.Reset()
	p = newProgressBarTo(&b, "sweep", func() time.Time { return wall })
	p.width = 4
	wall = wall.Add(20 * time.Minute)
	p.update(4, 4)
	if want := "\rsweep [====] 4/4 runs, 0.2 runs/min, 20m0s elapsed\033[K"; b.String() != want {
		t.Errorf("progress output = %q, want %q", b.String(), want)
	}
}
