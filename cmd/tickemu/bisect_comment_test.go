package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/plugins/builtin"
)

var bisectLine = regexp.MustCompile(`(?m)^#\s+tickemu bisect (configs/\S+\.hcl)((?: --\S+ \S+)+)`)

// TestConfigsNameTheirBisect: every scenario's header gives the command that
// bisects its regression, and the command holds: the file is its own, the
// versions are in the table, the metric is named, and at least one modelled
// change between the two versions is not set by the file itself (so the
// bisection has something to measure). The scenario tests and the bisect_*
// testscripts run some of them.
func TestConfigsNameTheirBisect(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "configs", "*.hcl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	op := experiment.InProcess(builtin.Factories())
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := bisectLine.FindSubmatch(src)
		if m == nil {
			t.Errorf("%s: no `#   tickemu bisect configs/...` line in its comments", f)
			continue
		}
		if string(m[1]) != "configs/"+filepath.Base(f) {
			t.Errorf("%s: the bisect line names %s", f, m[1])
		}
		flags := map[string]string{}
		vars := map[string]string{}
		fs := strings.Fields(string(m[2]))
		for i := 0; i+1 < len(fs); i += 2 {
			if fs[i] == "--var" {
				k, v, _ := strings.Cut(fs[i+1], "=")
				vars[k] = v
				continue
			}
			flags[fs[i]] = fs[i+1]
		}
		if flags["--good"] == "" || flags["--bad"] == "" || flags["--metric"] == "" {
			t.Errorf("%s: the bisect line lacks --good, --bad or --metric: %s", f, m[0])
			continue
		}
		spec, diags := config.LoadBytes(f, src, config.Options{Vars: vars})
		if diags.HasErrors() {
			t.Errorf("%s: %v", f, diags)
			continue
		}
		tb, err := experiment.ScenarioTable(spec, op)
		if err != nil {
			t.Fatal(err)
		}
		good, err1 := tb.ParsePoint(flags["--good"])
		bad, err2 := tb.ParsePoint(flags["--bad"])
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %v %v", f, err1, err2)
			continue
		}
		pinned := map[string]bool{}
		for _, p := range []string{flags["--good"], flags["--bad"]} {
			pt, _ := tb.ParsePoint(p)
			s, diags := config.LoadBytes(f, src, config.Options{Vars: vars, Presets: tb.StateOf(pt)})
			if diags.HasErrors() {
				t.Fatalf("%s at %s: %v", f, p, diags)
			}
			ovs, err := experiment.Overrides(s, op)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range ovs {
				pinned[o.Key.String()] = true
			}
		}
		cs, _ := tb.Between(good, bad)
		free := 0
		for _, c := range cs {
			if !pinned[c.Key.String()] {
				free++
			}
		}
		if free == 0 {
			t.Errorf("%s: between %s and %s every modelled change is set by the file (or there is none): the bisection measures nothing", f, good.Name, bad.Name)
		}
	}
}
