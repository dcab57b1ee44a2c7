package config

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/sdk"
)

// runBlock makes a file valid; error cases put it last so their own lines
// keep small numbers.
const runBlock = "\nrun { duration = \"1s\" }\n"

func diagString(d *hcl.Diagnostic) string {
	at := "<no source>"
	if d.Subject != nil {
		at = d.Subject.String()
	}
	sev := "error"
	if d.Severity == hcl.DiagWarning {
		sev = "warning"
	}
	return fmt.Sprintf("%s: %s: %s; %s", at, sev, d.Summary, d.Detail)
}

func diagsString(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString(diagString(d) + "\n")
	}
	return b.String()
}

func TestLoadDesignSketch(t *testing.T) {
	s, diags := Load("testdata/design.hcl", Options{})
	if len(diags) > 0 {
		t.Fatalf("Load(design.hcl) diagnostics:\n%s", diagsString(diags))
	}
	m := s.Machine
	if m.CPUs != 8 || m.HZ != 1000 || m.NoHZ != NoHZModeIdle || !m.HighRes || len(m.NoHZFull) != 0 {
		t.Errorf("Load(design.hcl).Machine = %+v, want 8 CPUs, HZ 1000, nohz idle, highres", m)
	}
	wantStates := []IdleState{{Name: "C1", ExitLatency: 2000, TargetResidency: 2000}, {Name: "C6", ExitLatency: 133000, TargetResidency: 600000, StopsLocalTimer: true}}
	if !slices.EqualFunc(m.IdleStates, wantStates, func(a, b IdleState) bool { a.DefRange = hcl.Range{}; return a == b }) {
		t.Errorf("Load(design.hcl).Machine.IdleStates = %+v, want %+v", m.IdleStates, wantStates)
	}
	var got []string
	for _, p := range s.Plugins {
		got = append(got, fmt.Sprintf("%s/%s=%s:%s", p.Kind, p.Role, p.Plugin, p.Isolation))
	}
	want := []string{"wheel/=wheel:", "hrtimer/=hrtimer:", "clockevent/local=lapic:", "clockevent/broadcast=hpet:", "governor/=menu:"}
	if !slices.Equal(got, want) {
		t.Errorf("Load(design.hcl).Plugins = %v, want %v", got, want)
	}
	if len(s.Workloads) != 1 || s.Workloads[0].Type != "cyclictest" || s.Workloads[0].Name != "rt" {
		t.Errorf("Load(design.hcl).Workloads = %+v, want cyclictest rt", s.Workloads)
	}
	if s.Run.Duration != 2e9 || s.Run.Warmup != 0 || s.Run.Seed != 1 {
		t.Errorf("Load(design.hcl).Run = %+v, want 2s, no warm-up, seed 1", s.Run)
	}
	if got := s.Variants(); !slices.Equal(got, []string{"fixed", "capped"}) {
		t.Errorf("Load(design.hcl).Variants() = %v, want [fixed capped]", got)
	}
	if _, ok := s.Files()["testdata/design.hcl"]; !ok {
		t.Errorf("Load(design.hcl).Files() lacks the file")
	}
	hr, _ := s.Plugin(sdk.KindHRTimer, "")
	cfg, diags := s.DecodePlugin(hr, sdk.Schema{Attributes: []sdk.Attribute{{Name: "hang_delay", Type: sdk.TypeString}}})
	if len(diags) > 0 || cfg["hang_delay"] != "max_hang_time" {
		t.Errorf("DecodePlugin(hrtimer) = %v, %s; want hang_delay = max_hang_time", cfg, diagsString(diags))
	}
	kcfg, diags := s.DecodeBody(s.Kernel, sdk.Schema{Attributes: []sdk.Attribute{{Name: "posix_timer_signals", Type: sdk.TypeString, OneOf: []string{"legacy", "consistent"}}}}, "kernel block")
	if len(diags) > 0 || kcfg["posix_timer_signals"] != "consistent" {
		t.Errorf("DecodeBody(kernel) = %v, %s; want posix_timer_signals = consistent", kcfg, diagsString(diags))
	}
	wcfg, diags := s.DecodeBody(s.Workloads[0].Body, sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "threads", Type: TypeInteger}, {Name: "cpus", Type: TypeCPUList}, {Name: "interval", Type: sdk.TypeDuration},
		{Name: "distance", Type: sdk.TypeDuration}, {Name: "priority", Type: TypeInteger},
	}}, "workload")
	wantW := sdk.Config{"threads": "4", "cpus": "4-7", "interval": "1000000", "distance": "500000", "priority": "99"}
	if len(diags) > 0 || fmt.Sprint(wcfg) != fmt.Sprint(wantW) {
		t.Errorf("DecodeBody(workload) = %v, %s; want %v", wcfg, diagsString(diags), wantW)
	}
}

func TestLoadDefaults(t *testing.T) {
	s, diags := LoadBytes("t.hcl", []byte(`run { duration = "10ms" }`), Options{})
	if len(diags) > 0 {
		t.Fatalf("LoadBytes(minimal) diagnostics:\n%s", diagsString(diags))
	}
	m := s.Machine
	if m.CPUs != 1 || m.HZ != 1000 || m.NoHZ != NoHZModeIdle || !m.HighRes || len(m.IdleStates) != 0 {
		t.Errorf("LoadBytes(minimal).Machine = %+v, want 1 CPU, HZ 1000, nohz idle, highres, no idle states", m)
	}
	if len(s.Plugins) != 4 {
		t.Fatalf("LoadBytes(minimal).Plugins has %d blocks, want 4 (wheel, hrtimer, local, governor)", len(s.Plugins))
	}
	for _, p := range s.Plugins {
		if p.DefRange.Filename != "t.hcl" || p.Isolation != IsolationDefault {
			t.Errorf("default plugin block %+v: want DefRange in t.hcl and no isolation (the loader decides)", p)
		}
		cfg, diags := s.DecodePlugin(p, sdk.Schema{Attributes: []sdk.Attribute{{Name: "x", Type: sdk.TypeNumber, Default: "3"}}})
		if len(diags) > 0 || cfg["x"] != "3" {
			t.Errorf("DecodePlugin(default %s) = %v, %s; want x = 3", p.Kind, cfg, diagsString(diags))
		}
	}
	if s.Run.Seed != 1 || s.Run.Duration != 10e6 {
		t.Errorf("LoadBytes(minimal).Run = %+v, want 10ms, seed 1", s.Run)
	}
	if s.Kernel == nil || s.KernelRange.Filename != "t.hcl" {
		t.Errorf("LoadBytes(minimal).Kernel = %v at %v, want an empty body in t.hcl", s.Kernel, s.KernelRange)
	}
}

func TestLoadValues(t *testing.T) {
	seven := uint64(7)
	tests := []struct {
		name  string
		src   string
		opts  Options
		check func(*Spec) string
	}{
		{"cpulist string", `machine {
  cpus = 16
  nohz = "full"
  nohz_full = "2-5,8"
  isolcpus = [9, 9, 10]
}`, Options{}, func(s *Spec) string {
			return fmt.Sprint(s.Machine.NoHZFull, s.Machine.IsolCPUs)
		}},
		{"cpulist N", `machine {
  cpus = 8
  nohz = "full"
  nohz_full = "4-N"
}`, Options{}, func(s *Spec) string { return fmt.Sprint(s.Machine.NoHZFull) }},
		{"hz and highres", `machine {
  hz = 250
  highres = false
  nohz = "off"
}`, Options{}, func(s *Spec) string {
			return fmt.Sprintf("%d %t %s", s.Machine.HZ, s.Machine.HighRes, s.Machine.NoHZ)
		}},
		{"zero-latency idle state", `machine {
  idle_state "C1E" {
    exit_latency = "0ns"
    target_residency = "0ns"
  }
}`, Options{}, func(s *Spec) string { return fmt.Sprintf("%+v", s.Machine.IdleStates[0].ExitLatency) }},
		{"run warmup and large seed", `run {
  duration = "1.5ms"
  warmup = "250us"
  seed = 18446744073709551615
}`, Options{}, func(s *Spec) string { return fmt.Sprint(s.Run.Duration, s.Run.Warmup, s.Run.Seed) }},
		{"seed override", `run {
  duration = "1ms"
  seed = 3
}`, Options{Seed: &seven}, func(s *Spec) string { return fmt.Sprint(s.Run.Seed) }},
		{"plugin and isolation", `clockevent "local" {
  plugin = "archtimer"
  isolation = "process"
  rate = "24MHz"
}
clockevent "broadcast" {}`, Options{}, func(s *Spec) string {
			var out []string
			for _, p := range s.Plugins {
				out = append(out, p.Plugin+":"+p.Isolation)
			}
			return strings.Join(out, " ")
		}},
		{"workloads in file order", `workload "stress" "b" {}
workload "cyclictest" "a" {}
workload "stress" "a" {}`, Options{}, func(s *Spec) string {
			var out []string
			for _, w := range s.Workloads {
				out = append(out, w.Type+"/"+w.Name)
			}
			return strings.Join(out, " ")
		}},
		{"functions and templates", `variable "n" { default = 4 }
machine {
  cpus = max(var.n * 2, 2)
  nohz = "full"
  nohz_full = "1-${var.n * 2 - 1}"
}`, Options{}, func(s *Spec) string { return fmt.Sprint(s.Machine.CPUs, s.Machine.NoHZFull) }},
	}
	want := map[string]string{
		"cpulist string":            "[2 3 4 5 8] [9 10]",
		"cpulist N":                 "[4 5 6 7]",
		"hz and highres":            "250 false off",
		"zero-latency idle state":   "0",
		"run warmup and large seed": "1500000 250000 18446744073709551615",
		"seed override":             "7",
		"plugin and isolation":      "wheel: hrtimer: archtimer:process hpet: menu:",
		"workloads in file order":   "stress/b cyclictest/a stress/a",
		"functions and templates":   "8 [1 2 3 4 5 6 7]",
	}
	for _, tt := range tests {
		src := tt.src
		if !strings.Contains(src, "run {") {
			src += runBlock
		}
		s, diags := LoadBytes("t.hcl", []byte(src), tt.opts)
		if diags.HasErrors() {
			t.Errorf("%s: LoadBytes diagnostics:\n%s", tt.name, diagsString(diags))
			continue
		}
		if got := tt.check(s); got != want[tt.name] {
			t.Errorf("%s: LoadBytes(...) = %s, want %s", tt.name, got, want[tt.name])
		}
	}
}

// TestLoadErrors checks that each mistake is an error naming the file, line
// and field, with the hint the user needs.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string // runBlock is appended unless src has its own run block
		opts Options
		want []string // substrings of one diagnostic, as diagString prints it
	}{
		{"unknown block", `machin {}`, Options{}, []string{"t.hcl:1,1-", "Unsupported block type", `Did you mean "machine"?`, "top level allows no arguments; blocks: variable, variant, sweep, machine, wheel, hrtimer, clockevent, governor, hang_policy, catchup_policy, restart_policy, kernel, workload, run"}},
		{"top-level attribute", `cpus = 8`, Options{}, []string{"t.hcl:1,1-5", "Unsupported argument", `"cpus"`}},
		{"misspelt machine attribute", "machine {\n  cpu = 8\n}", Options{}, []string{"t.hcl:2,3-6", "Unsupported argument", `Did you mean "cpus"?`, "arguments: cpus, highres, hz, isolcpus, nohz, nohz_full, profile; blocks: idle_state"}},
		{"unknown machine block", "machine {\n  cstate \"C1\" {}\n}", Options{}, []string{"t.hcl:2,3-9", "Unsupported block type", "blocks: idle_state"}},
		{"wrong type", "machine {\n  cpus = \"eight\"\n}", Options{}, []string{"t.hcl:2,10-17", `Invalid value for "cpus"`, `a number is required, got "eight"`}},
		{"fractional cpus", "machine {\n  cpus = 2.5\n}", Options{}, []string{"t.hcl:2,10-13", `"cpus"`, "whole number"}},
		{"too many cpus", "machine {\n  cpus = 5000\n}", Options{}, []string{"t.hcl:2,10-14", `"cpus"`, "1 to 4096 CPUs; got 5000"}},
		{"zero cpus", "machine {\n  cpus = 0\n}", Options{}, []string{"t.hcl:2,10-11", `"cpus"`, "got 0"}},
		{"bad hz", "machine {\n  hz = 500\n}", Options{}, []string{"t.hcl:2,8-11", `"hz"`, "CONFIG_HZ is 100, 250, 300 or 1000; got 500"}},
		{"bad nohz", "machine {\n  nohz = \"ful\"\n}", Options{}, []string{"t.hcl:2,10-15", `"nohz"`, `"off", "idle", "full"`, `Did you mean "full"?`}},
		{"nohz_full without nohz full", "machine {\n  cpus = 4\n  nohz_full = [1]\n}", Options{}, []string{"t.hcl:3,15-18", `"nohz_full"`, `need nohz = "full"`}},
		{"nohz_full cpu out of range", "machine {\n  cpus = 8\n  nohz = \"full\"\n  nohz_full = [8]\n}", Options{}, []string{"t.hcl:4,15-18", `"nohz_full"`, "CPU 8 does not exist (CPUs are 0-7)"}},
		{"isolcpus cpulist out of range", "machine {\n  cpus = 8\n  isolcpus = \"6-9\"\n}", Options{}, []string{"t.hcl:3,14-19", `"isolcpus"`, "CPU 9"}},
		{"bad cpulist syntax", "machine {\n  cpus = 8\n  isolcpus = \"1..3\"\n}", Options{}, []string{"t.hcl:3,14-20", `"isolcpus"`, "malformed cpulist"}},
		{"negative cpu", "machine {\n  cpus = 8\n  isolcpus = [-1]\n}", Options{}, []string{"t.hcl:3,14-18", "CPU -1 does not exist"}},
		{"idle state bad unit", "machine {\n  idle_state \"C1\" {\n    exit_latency = \"2 usec\"\n    target_residency = \"2us\"\n  }\n}", Options{}, []string{"t.hcl:3,20-28", `"exit_latency" in the idle_state "C1" block`, "unknown unit"}},
		{"idle state bare number", "machine {\n  idle_state \"C1\" {\n    exit_latency = 2\n    target_residency = \"2us\"\n  }\n}", Options{}, []string{"t.hcl:3,20-21", `"exit_latency"`, `needs a unit`, `"2us"`}},
		{"idle state negative", "machine {\n  idle_state \"C1\" {\n    exit_latency = \"-2us\"\n    target_residency = \"2us\"\n  }\n}", Options{}, []string{"t.hcl:3,20-26", "must not be negative"}},
		{"idle state missing attribute", "machine {\n  idle_state \"C1\" {\n    exit_latency = \"2us\"\n  }\n}", Options{}, []string{"t.hcl:2,", "Missing required argument", `"target_residency"`}},
		{"duplicate idle state", "machine {\n  idle_state \"C1\" {\n    exit_latency = \"1us\"\n    target_residency = \"1us\"\n  }\n  idle_state \"C1\" {\n    exit_latency = \"1us\"\n    target_residency = \"1us\"\n  }\n}", Options{}, []string{"t.hcl:6,14-18", "Duplicate idle state", "t.hcl:2,"}},
		{"too many idle states", "machine {\n" + strings.Repeat("  idle_state \"C%d\" {\n    exit_latency = \"1us\"\n    target_residency = \"1us\"\n  }\n", 10) + "}", Options{}, []string{"t.hcl:38,3-", "Too many idle states", "CPUIDLE_STATE_MAX"}},
		{"duplicate machine", "machine {}\nmachine {}", Options{}, []string{"t.hcl:2,1-8", "Duplicate machine block", "t.hcl:1,1-8"}},
		{"missing run", `machine {}`, Options{}, []string{"t.hcl:1,1-1", "Missing run block"}},
		{"run without duration", "run {\n  seed = 2\n}", Options{}, []string{"t.hcl:1,", "Missing required argument", `"duration"`}},
		{"run zero duration", "run {\n  duration = \"0s\"\n}", Options{}, []string{"t.hcl:2,14-18", `"duration"`, "longer than 0ns"}},
		{"run duration bad unit", "run {\n  duration = \"2 sec\"\n}", Options{}, []string{"t.hcl:2,14-21", `"duration" in the run block`, "unknown unit"}},
		{"run duration number", "run {\n  duration = 2\n}", Options{}, []string{"t.hcl:2,14-15", `"duration"`, `needs a unit`}},
		{"negative seed", "run {\n  duration = \"1s\"\n  seed = -1\n}", Options{}, []string{"t.hcl:3,10-12", `"seed"`, "0 to 18446744073709551615"}},
		{"fractional seed", "run {\n  duration = \"1s\"\n  seed = 1.5\n}", Options{}, []string{"t.hcl:3,10-13", `"seed"`, "whole number"}},
		{"misspelt run attribute", "run {\n  duration = \"1s\"\n  sed = 1\n}", Options{}, []string{"t.hcl:3,3-6", `Did you mean "seed"?`, "arguments: duration, max_wall, seed, warmup"}},
		{"unknown clockevent role", `clockevent "lokal" {}`, Options{}, []string{"t.hcl:1,12-19", "Unknown clockevent role", `Did you mean "local"?`, `"local", "broadcast"`}},
		{"clockevent without role", `clockevent {}`, Options{}, []string{"t.hcl:1,", "Missing role for clockevent"}},
		{"wheel with label", `wheel "x" {}`, Options{}, []string{"t.hcl:1,7-10", "Extraneous label for wheel"}},
		{"duplicate clockevent", "clockevent \"local\" {}\nclockevent \"local\" {}", Options{}, []string{"t.hcl:2,1-", "Duplicate clockevent block", `clockevent "local" is already configured at t.hcl:1,`}},
		{"bad isolation", "wheel {\n  isolation = \"remote\"\n}", Options{}, []string{"t.hcl:2,15-23", `"isolation" in the wheel block`, `"inprocess", "process"`}},
		{"bad plugin name", "hrtimer {\n  plugin = \"../evil\"\n}", Options{}, []string{"t.hcl:2,12-21", `"plugin"`, "not a plugin name"}},
		{"plugin not a string", "hrtimer {\n  plugin = [1]\n}", Options{}, []string{"t.hcl:2,12-15", `"plugin"`, "a string is required"}},
		{"duplicate workload", "workload \"stress\" \"a\" {}\nworkload \"stress\" \"a\" {}", Options{}, []string{"t.hcl:2,1-", "Duplicate workload", "t.hcl:1,"}},
		{"duplicate kernel", "kernel {}\nkernel {}", Options{}, []string{"t.hcl:2,1-7", "Duplicate kernel block"}},
		{"duplicate variable", "variable \"a\" { default = 1 }\nvariable \"a\" { default = 2 }", Options{}, []string{"t.hcl:2,10-13", "Duplicate variable", "t.hcl:1,"}},
		{"invalid variable name", `variable "1a" { default = 1 }`, Options{}, []string{"t.hcl:1,10-14", "Invalid variable name"}},
		{"variable default uses var", "variable \"a\" { default = 1 }\nvariable \"b\" { default = var.a }", Options{}, []string{"t.hcl:2,", "Variables not allowed"}},
		{"variable attribute misspelt", `variable "a" { defualt = 1 }`, Options{}, []string{"t.hcl:1,16-23", `Did you mean "default"?`, "arguments: default, description"}},
		{"variable without value", `variable "a" {}`, Options{}, []string{"t.hcl:1,10-13", "No value for variable", "--var a=VALUE"}},
		{"undeclared var reference", "variable \"hang_delay\" { default = \"x\" }\nhrtimer {\n  hang_delay = var.hang_dely\n}", Options{}, []string{"t.hcl:3,16-", "Undeclared variable", `Did you mean "hang_delay"?`, "Declared variables: hang_delay"}},
		{"undeclared var in machine", "machine {\n  cpus = var.n\n}", Options{}, []string{"t.hcl:2,10-", "Undeclared variable", "No variables are declared"}},
		{"variant sets undeclared", "variable \"a\" { default = 1 }\nvariant \"v\" { vars = { b = 2 } }", Options{}, []string{"t.hcl:2,24-25", "Undeclared variable", `variant "v" sets "b"`, "Declared variables: a"}},
		{"variant vars not an object", "variable \"a\" { default = 1 }\nvariant \"v\" { vars = 3 }", Options{}, []string{"t.hcl:2,22-23", "Invalid vars"}},
		{"duplicate variant", "variant \"v\" {}\nvariant \"v\" {}", Options{}, []string{"t.hcl:2,9-12", "Duplicate variant"}},
		{"variant name with comma", `variant "a,b" {}`, Options{}, []string{"t.hcl:1,9-14", "Invalid variant name"}},
		{"unknown variant", "variant \"fixed\" {}\nvariant \"capped\" {}", Options{Variant: "fixd"}, []string{"<no source>", "Unknown variant", `Did you mean "fixed"?`, "Known variants: fixed, capped"}},
		{"no variants", "", Options{Variant: "x"}, []string{"<no source>", "Unknown variant", "defines no variants"}},
		{"undeclared --var", `variable "hz" { default = 100 }`, Options{Vars: map[string]string{"hx": "250"}}, []string{"<no source>", "Undeclared variable", `--var sets "hx"`, `Did you mean "hz"?`}},
		{"--var with wrong type", "variable \"hz\" { default = 100 }\nmachine {\n  hz = var.hz\n}", Options{Vars: map[string]string{"hz": "fast"}}, []string{"t.hcl:3,8-14", `"hz"`, `a number is required, got "fast"`}},
		{"syntax error", "machine {\n  cpus = \n}", Options{}, []string{"t.hcl:2,", "Invalid expression"}},
		{"single-line block with two arguments", `wheel { layout = "levels" catchup = "x" }`, Options{}, []string{"t.hcl:1,", "Invalid single-argument block definition"}},
		{"huge literal", "kernel {\n  x = 1e99999999\n}", Options{}, []string{"t.hcl:2,7-17", "Number out of range"}},
		{"tiny literal in variable", `variable "x" { default = [1e-5000] }`, Options{}, []string{"t.hcl:1,27-34", "Number out of range"}},
		{"huge product", "kernel {\n  x = 1e1000 * 1e1000\n}", Options{}, []string{"t.hcl:2,7-22", "Number out of range"}},
		{"undeclared var in workload", "workload \"stress\" \"a\" {\n  ops = var.ops\n}", Options{}, []string{"t.hcl:2,9-", "Undeclared variable", `"ops"`}},
	}
	for _, tt := range tests {
		src := tt.src
		if tt.name == "too many idle states" {
			var b strings.Builder
			for i, part := range strings.SplitAfter(src, "%d") {
				b.WriteString(strings.Replace(part, "%d", fmt.Sprint(i), 1))
			}
			src = b.String()
		}
		if !strings.Contains(src, "run {") && tt.name != "missing run" {
			src += runBlock
		}
		_, diags := LoadBytes("t.hcl", []byte(src), tt.opts)
		if !diags.HasErrors() {
			t.Errorf("%s: LoadBytes(%q) has no errors, want %q", tt.name, src, tt.want)
			continue
		}
		found := false
		for _, d := range diags {
			s := diagString(d)
			ok := d.Severity == hcl.DiagError
			for _, w := range tt.want {
				ok = ok && strings.Contains(s, w)
			}
			found = found || ok
		}
		if !found {
			t.Errorf("%s: LoadBytes(%q) =\n%s want one error containing %q", tt.name, src, diagsString(diags), tt.want)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	s, diags := Load("testdata/does-not-exist.hcl", Options{})
	if !diags.HasErrors() || s == nil || !strings.Contains(diags[0].Summary, "Cannot read") {
		t.Errorf("Load(missing) = %v, %v; want a Spec and a read error", s, diags)
	}
}

// TestDiagnosticsSorted checks that several errors in one body come out in
// source order although HCL finds them by map iteration.
func TestDiagnosticsSorted(t *testing.T) {
	src := "machine {\n  a = 1\n  b = 2\n  c = 3\n  d = 4\n  e = 5\n}\n" + runBlock
	for range 5 {
		_, diags := LoadBytes("t.hcl", []byte(src), Options{})
		var lines []int
		for _, d := range diags {
			lines = append(lines, d.Subject.Start.Line)
		}
		if !slices.Equal(lines, []int{2, 3, 4, 5, 6}) {
			t.Fatalf("LoadBytes(5 unknown attributes) lines = %v, want [2 3 4 5 6]", lines)
		}
	}
}

func TestWriteDiagnostics(t *testing.T) {
	s, diags := LoadBytes("t.hcl", []byte("machine {\n  hz = 500\n}\n"+runBlock), Options{})
	var b bytes.Buffer
	if err := WriteDiagnostics(&b, diags, s.Files(), false); err != nil {
		t.Fatalf("WriteDiagnostics() = %v", err)
	}
	out := b.String()
	for _, w := range []string{"Error: Invalid value for \"hz\"", "on t.hcl line 2, in machine:", "2:   hz = 500", "CONFIG_HZ"} {
		if !strings.Contains(out, w) {
			t.Errorf("WriteDiagnostics() =\n%s\nwant it to contain %q", out, w)
		}
	}
}
