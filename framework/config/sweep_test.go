package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

const sweepBase = `variable "catchup" { default = "per_jiffy" }
variable "d" { default = "1s" }
machine {
  cpus = 4
  hz   = 1000
}
wheel {
  catchup = var.catchup
}
clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}
workload "cyclictest" "rt" {
  interval = "1ms"
}
run {
  duration = var.d
  seed     = 3
}
variant "next" {
  vars = { catchup = "next_expiry" }
}
`

func mustSweeps(t *testing.T, flags ...string) []Sweep {
	t.Helper()
	s, diags := ParseSweepFlags(flags)
	if diags.HasErrors() {
		t.Fatalf("ParseSweepFlags(%q): %s", flags, diagsString(diags))
	}
	return s
}

// attrText is the literal an attribute of a top-level block evaluates to in
// the loaded file.
func attrText(t *testing.T, s *Spec, body hcl.Body, name string) string {
	t.Helper()
	attrs, diags := body.JustAttributes()
	if diags.HasErrors() {
		t.Fatalf("JustAttributes: %s", diagsString(diags))
	}
	a := attrs[name]
	if a == nil {
		return ""
	}
	v, diags := a.Expr.Value(s.EvalContext())
	if diags.HasErrors() {
		t.Fatalf("%s: %s", name, diagsString(diags))
	}
	return ctyText(v)
}

func TestSweepPoints(t *testing.T) {
	src := sweepBase + `sweep "hz" {
  values = [100, 250]
}
`
	flags := mustSweeps(t, "wheel.catchup=per_jiffy,next_expiry,skip_empty", "clockevent.local.mode=oneshot")
	base, diags := LoadBytes("s.hcl", []byte(src), Options{Sweeps: flags})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diagsString(diags))
	}
	sweeps := base.Sweeps()
	if len(sweeps) != 3 || sweeps[0].Key != "hz" || sweeps[1].Key != "catchup" || sweeps[2].Key != "mode" {
		t.Fatalf("Sweeps() = %+v, want hz, catchup, mode", sweeps)
	}
	points := Points(sweeps)
	if len(points) != 6 {
		t.Fatalf("%d points, want 2*3*1", len(points))
	}
	if got := points[4].Key(); got != "hz=250/catchup=next_expiry/mode=oneshot" {
		t.Errorf("points[4].Key() = %q", got)
	}
	hashes := map[string]bool{base.Hash(): true}
	for i, p := range points {
		s, diags := LoadBytes("s.hcl", []byte(src), Options{Sweeps: flags, Point: PointIndex(sweeps, i)})
		if diags.HasErrors() {
			t.Fatalf("point %s: %s", p.Key(), diagsString(diags))
		}
		if s.Point().Key() != p.Key() {
			t.Errorf("point %d: Spec.Point() = %q, want %q", i, s.Point().Key(), p.Key())
		}
		if want := p[0].Text; s.Machine.HZ != map[string]int{"100": 100, "250": 250}[want] {
			t.Errorf("point %s: HZ = %d", p.Key(), s.Machine.HZ)
		}
		wheel, _ := s.Plugin("wheel", "")
		if got := attrText(t, s, wheel.Body, "catchup"); got != `"`+p[1].Text+`"` {
			t.Errorf("point %s: wheel.catchup = %s", p.Key(), got)
		}
		local, _ := s.Plugin("clockevent", "local")
		if got := attrText(t, s, local.Body, "mode"); got != `"oneshot"` {
			t.Errorf("point %s: clockevent.local.mode = %s", p.Key(), got)
		}
		hashes[s.Hash()] = true
		seed := uint64(99)
		s2, _ := LoadBytes("s.hcl", []byte(src), Options{Sweeps: flags, Point: PointIndex(sweeps, i), Seed: &seed})
		hashes[s2.Hash()] = true
	}
	if len(hashes) != 1 {
		t.Errorf("%d distinct hashes over the points and seeds, want 1: swept values and seeds are keys", len(hashes))
	}
	plain, _ := LoadBytes("s.hcl", []byte(sweepBase), Options{})
	if hashes[plain.Hash()] {
		t.Error("the file without sweeps hashes like the swept experiment")
	}
	// A variant changes what is not swept, so it is another configuration.
	v, diags := LoadBytes("s.hcl", []byte(sweepBase+`sweep "hz" {
  values = [100]
}
`), Options{Variant: "next", Point: []int{0}})
	if diags.HasErrors() {
		t.Fatalf("variant: %s", diagsString(diags))
	}
	if hashes[v.Hash()] {
		t.Error("variant next hashes like the base")
	}
}

func TestSweepVariable(t *testing.T) {
	flags := mustSweeps(t, "d=10ms,20ms")
	base, diags := LoadBytes("s.hcl", []byte(sweepBase), Options{Sweeps: flags})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diagsString(diags))
	}
	var hash string
	for i := range 2 {
		s, diags := LoadBytes("s.hcl", []byte(sweepBase), Options{Sweeps: flags, Point: []int{i}})
		if diags.HasErrors() {
			t.Fatalf("point %d: %s", i, diags)
		}
		if want := int64(i+1) * 10e6; s.Run.Duration != want {
			t.Errorf("point %d: duration %d, want %d", i, s.Run.Duration, want)
		}
		if hash != "" && s.Hash() != hash {
			t.Errorf("point %d: hash %s, point 0 %s", i, s.Hash(), hash)
		}
		hash = s.Hash()
		if s.Vars[1].Source != VarFromSweep {
			t.Errorf("var d source %s, want sweep", s.Vars[1].Source)
		}
	}
	if base.Hash() != hash {
		t.Errorf("unswept load hash %s, points %s", base.Hash(), hash)
	}
}

func TestSweepErrors(t *testing.T) {
	tests := []struct {
		name  string
		src   string // added to sweepBase
		flags []string
		opts  Options
		want  []string
	}{
		{"bad hz from the file", "sweep \"hz\" {\n  values = [100, 123]\n}\n", nil, Options{Point: []int{1}},
			[]string{"s.hcl:25,18-21", `Invalid value for "hz"`, "got 123"}},
		{"bad hz from a flag", "", []string{"cpus=2", "hz=100,123"}, Options{Point: []int{0, 1}},
			[]string{"--sweep:2,8-11", `Invalid value for "hz"`, "got 123"}},
		{"unknown name", "", []string{"hx=100"}, Options{},
			[]string{"--sweep:1,1-3", "Invalid sweep name", `Did you mean "hz"?`}},
		{"unknown block", "", []string{"wheeel.catchup=x"}, Options{},
			[]string{"--sweep:1,1-15", `no block "wheeel"`, `Did you mean "wheel"?`}},
		{"labelled kind without role", "", []string{"clockevent.mode=oneshot"}, Options{},
			[]string{"--sweep:1,", "ROLE one of local, broadcast"}},
		{"missing workload", "", []string{"workload.cyclictest.other.interval=1ms"}, Options{},
			[]string{`no workload "cyclictest" "other" block`}},
		{"seed", "", []string{"run.seed=1,2"}, Options{},
			[]string{"seeds are an axis of their own"}},
		{"same key twice", "", []string{"machine.cpus=1,2", "workload.cyclictest.rt.cpus=0"}, Options{},
			[]string{"--sweep:2,", "both be the benchmark key /cpus"}},
		{"same setting twice", "", []string{"hz=100", "machine.hz=250"}, Options{},
			[]string{"--sweep:2,", "Duplicate sweep"}},
		{"reserved key", "", []string{"workload.cyclictest.rt.name=x"}, Options{},
			[]string{"benchmark key /name="}},
		{"value with a slash", "", []string{"clockevent.local.mode=a/b"}, Options{},
			[]string{"--sweep:1,23-26", "cannot be a benchmark key value"}},
		{"duplicate value", "", []string{"hz=100,250,100"}, Options{},
			[]string{"--sweep:1,12-15", "lists 100 twice"}},
		{"list value", "sweep \"hz\" {\n  values = [[1]]\n}\n", nil, Options{},
			[]string{"s.hcl:25,13-16", "a string, a number or a bool"}},
		{"empty list", "sweep \"hz\" {\n  values = []\n}\n", nil, Options{},
			[]string{"s.hcl:25,12-14", "at least one value"}},
		{"not a list", "sweep \"hz\" {\n  values = 100\n}\n", nil, Options{},
			[]string{"s.hcl:25,12-15", "want a list of values"}},
		{"flag without values", "", []string{"hz="}, Options{},
			[]string{"--sweep:1,1-4", "want NAME=VALUE1,VALUE2"}},
		{"variant sets the swept variable", "", []string{"catchup=per_jiffy"}, Options{Variant: "next", Point: []int{0}},
			[]string{"--sweep:1,9-18", "which variant \"next\" sets too"}},
		{"variant sets a variable the swept attribute reads", "", []string{"wheel.catchup=per_jiffy"}, Options{Variant: "next", Point: []int{0}},
			[]string{"--sweep:1,15-24", "replaces the file's setting at s.hcl:8,3-24, which reads var.catchup, which variant \"next\" sets", "compare --no-variants"}},
		{"--var sets the swept variable", "", []string{"catchup=per_jiffy"}, Options{Vars: map[string]string{"catchup": "x"}, Point: []int{0}},
			[]string{"--var catchup=x", "a sweep sets at every point"}},
	}
	for _, tt := range tests {
		opts := tt.opts
		if tt.flags != nil {
			sw, diags := ParseSweepFlags(tt.flags)
			opts.Sweeps = sw
			if diags.HasErrors() {
				checkDiag(t, tt.name, diags, tt.want)
				continue
			}
		}
		s, diags := LoadBytes("s.hcl", []byte(sweepBase+tt.src), opts)
		if !diags.HasErrors() {
			t.Errorf("%s: no error, want %q", tt.name, tt.want)
			continue
		}
		checkDiag(t, tt.name, diags, tt.want)
		// Every diagnostic prints with its source, the flags' too.
		var b strings.Builder
		if err := WriteDiagnostics(&b, diags, s.Files(), false); err != nil {
			t.Fatal(err)
		}
		if tt.flags != nil && strings.HasPrefix(tt.want[0], "--sweep:") && !strings.Contains(b.String(), tt.flags[len(tt.flags)-1]) {
			t.Errorf("%s: the printed diagnostic does not quote the flag:\n%s", tt.name, b.String())
		}
	}
}

func checkDiag(t *testing.T, name string, diags hcl.Diagnostics, want []string) {
	t.Helper()
	for _, d := range diags {
		s := diagString(d)
		ok := d.Severity == hcl.DiagError
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return
		}
	}
	t.Errorf("%s: diagnostics\n%swant one error containing %q", name, diagsString(diags), want)
}

func TestSplitValues(t *testing.T) {
	for in, want := range map[string][]string{
		`100,250,1000`:        {"100", "250", "1000"},
		`"1,2","3-4"`:         {`"1,2"`, `"3-4"`},
		`[1, 2],[3]`:          {"[1, 2]", "[3]"},
		`"a\",b",c`:           {`"a\",b"`, "c"},
		`per_jiffy`:           {"per_jiffy"},
		`a,`:                  {"a", ""},
		`{x = 1, y = 2},10ms`: {"{x = 1, y = 2}", "10ms"},
	} {
		var got []string
		for _, p := range splitValues(in) {
			got = append(got, p.text)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("splitValues(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSweepFlags loads sweepBase with arbitrary --sweep flags: nothing may
// panic, every diagnostic about a flag points inside the flags' pseudo file,
// and every point of sweeps that load loads with the point's values.
func FuzzSweepFlags(f *testing.F) {
	f.Add("hz=100,250,1000", "wheel.catchup=per_jiffy,next_expiry")
	f.Add(`clockevent.local.mode="a,b",[1]`, "d=10ms")
	f.Add("var.catchup=x", "workload.cyclictest.rt.interval=1ms,2ms")
	f.Add("=,", `"`)
	f.Fuzz(func(t *testing.T, a, b string) {
		flags := []string{a, b}
		sweeps, diags := ParseSweepFlags(flags)
		src := strings.Join(flags, "\n") + "\n"
		check := func(diags hcl.Diagnostics) {
			for _, d := range diags {
				if d.Subject == nil || d.Subject.Filename != sweepFlagFile {
					continue
				}
				if d.Subject.Start.Byte < 0 || d.Subject.End.Byte > len(src) || d.Subject.Start.Byte > d.Subject.End.Byte {
					t.Fatalf("diagnostic %q at bytes %d..%d of %d", d.Summary, d.Subject.Start.Byte, d.Subject.End.Byte, len(src))
				}
			}
		}
		check(diags)
		if diags.HasErrors() {
			return
		}
		s, diags := LoadBytes("s.hcl", []byte(sweepBase), Options{Sweeps: sweeps})
		check(diags)
		if diags.HasErrors() {
			return
		}
		all := s.Sweeps()
		points := Points(all)
		if len(points) > 64 {
			points = points[:64]
		}
		for i, p := range points {
			ps, diags := LoadBytes("s.hcl", []byte(sweepBase), Options{Sweeps: sweeps, Point: PointIndex(all, i)})
			check(diags)
			if !diags.HasErrors() && ps.Point().Key() != p.Key() {
				t.Fatalf("point %d: loaded %q, want %q", i, ps.Point().Key(), p.Key())
			}
		}
	})
}
