package replayrun_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/replayrun"
	"github.com/tickemu/tickemu/framework/workload"
	"github.com/tickemu/tickemu/plugins/builtin"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// captures are the committed captures: the real ones (with provenance in
// their README) and the hand-written ones of the workload's tests.
var captures = []string{
	"../replay/testdata/captures/kernel-doc-wakeup-rt-events.txt",
	"../replay/testdata/captures/lkml-nohz-tick-stop-6.11.txt",
	"../workload/testdata/replay-small.txt",
	"../traceimport/testdata/babeltrace.txt",
}

// TestGolden replays every committed capture with the default machine and
// plugins and compares `tickemu replay`'s output (capture and model side by
// side) with NAME.golden next to the capture; -update rewrites them. The
// same replay twice gives the same bytes.
func TestGolden(t *testing.T) {
	for _, c := range captures {
		t.Run(filepath.Base(c), func(t *testing.T) {
			got := replayOnce(t, c)
			if again := replayOnce(t, c); !bytes.Equal(got, again) {
				t.Fatalf("two replays differ:\n%s\n%s", got, again)
			}
			golden := strings.TrimSuffix(c, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("replay of %s differs from %s:\n%s", c, golden, got)
			}
		})
	}
}

func replayOnce(t *testing.T, path string) []byte {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := workload.ScanCapture(abs)
	if err != nil {
		t.Fatal(err)
	}
	src, name, err := replayrun.Config("", abs, cp)
	if err != nil {
		t.Fatal(err)
	}
	spec, diags := config.LoadBytes(name, src, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	out, err := replayrun.Run(abs, cp, spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := out.Write(&b, filepath.Base(path)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
