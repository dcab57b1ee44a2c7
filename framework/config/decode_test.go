package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/tickemu/tickemu/framework/sdk"
)

var sampleSchema = sdk.Schema{Attributes: []sdk.Attribute{
	{Name: "need", Type: sdk.TypeString, Required: true},
	{Name: "name", Type: sdk.TypeString, Default: "x"},
	{Name: "count", Type: sdk.TypeNumber, Default: "3"},
	{Name: "ratio", Type: sdk.TypeNumber},
	{Name: "enabled", Type: sdk.TypeBool, Default: "true"},
	{Name: "period", Type: sdk.TypeDuration, Default: "250us"},
	{Name: "rate", Type: sdk.TypeFrequency, Default: "14.318180MHz"},
	{Name: "mode", Type: sdk.TypeString, Default: "levels", OneOf: []string{"levels", "cascade"}},
	{Name: "n", Type: TypeInteger},
	{Name: "cpus", Type: TypeCPUList},
}}

func parseBody(t *testing.T, src string) hcl.Body {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(src), "b.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("ParseConfig(%q): %s", src, diags)
	}
	return f.Body
}

func testContext() *hcl.EvalContext {
	return &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{"period": cty.StringVal("1ms"), "n": cty.NumberIntVal(2)})},
		Functions: Functions(),
	}
}

func TestDecodeBody(t *testing.T) {
	defaults := "count=3 cpus= enabled=true mode=levels n=0 name=x need=y period=250000 rate=1.431818e+07 ratio=0"
	tests := []struct {
		src  string
		want string // the config as k=v, sorted
	}{
		{`need = "y"`, defaults},
		{"need = \"y\"\nname = \"z\"", strings.Replace(defaults, "name=x", "name=z", 1)},
		{"need = \"y\"\ncount = 1e6", strings.Replace(defaults, "count=3", "count=1e+06", 1)},
		{"need = \"y\"\nratio = 0.25", strings.Replace(defaults, "ratio=0", "ratio=0.25", 1)},
		{"need = \"y\"\ncount = \"7\"", strings.Replace(defaults, "count=3", "count=7", 1)}, // HCL converts "7"
		{"need = \"y\"\nenabled = false", strings.Replace(defaults, "enabled=true", "enabled=false", 1)},
		{"need = \"y\"\nperiod = \"1.5ms\"", strings.Replace(defaults, "period=250000", "period=1500000", 1)},
		{"need = \"y\"\nperiod = var.period", strings.Replace(defaults, "period=250000", "period=1000000", 1)},
		{"need = \"y\"\nrate = \"24MHz\"", strings.Replace(defaults, "rate=1.431818e+07", "rate=2.4e+07", 1)},
		{"need = \"y\"\nmode = \"cascade\"", strings.Replace(defaults, "mode=levels", "mode=cascade", 1)},
		{"need = \"y\"\nn = var.n * 3", strings.Replace(defaults, "n=0", "n=6", 1)},
		{"need = \"y\"\ncpus = [7, 4, 5, 6]", strings.Replace(defaults, "cpus=", "cpus=4-7", 1)},
		{"need = \"y\"\ncpus = \"1,3-4\"", strings.Replace(defaults, "cpus=", "cpus=1,3-4", 1)},
		{"need = \"y\"\ncpus = 2", strings.Replace(defaults, "cpus=", "cpus=2", 1)},
		{"need = \"y\"\nname = null", defaults}, // null is absent
		{"need = 5", strings.Replace(defaults, "need=y", "need=5", 1)},
	}
	for _, tt := range tests {
		cfg, diags := DecodeBody(parseBody(t, tt.src), testContext(), sampleSchema, "sample block")
		if diags.HasErrors() {
			t.Errorf("DecodeBody(%q):\n%s", tt.src, diagsString(diags))
			continue
		}
		if got := configString(cfg); got != tt.want {
			t.Errorf("DecodeBody(%q) = %s, want %s", tt.src, got, tt.want)
		}
	}
}

func configString(c sdk.Config) string {
	var parts []string
	for _, k := range c.Keys() {
		parts = append(parts, k+"="+c[k])
	}
	return strings.Join(parts, " ")
}

func TestDecodeBodyErrors(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"need = \"y\"\nmode = \"cascad\"", []string{"b.hcl:2,8-16", `Invalid value for "mode"`, `"mode" in the sample block`, `"levels", "cascade"`, `Did you mean "cascade"?`}},
		{"need = \"y\"\nmode = \"wheel\"", []string{"b.hcl:2,8-15", `"wheel" is not one of "levels", "cascade".`}},
		{"need = \"y\"\nmod = \"levels\"", []string{"b.hcl:2,1-4", "Unsupported argument", `Did you mean "mode"?`, "The sample block allows arguments: count, cpus, enabled, mode, n, name, need, period, rate, ratio."}},
		{"need = \"y\"\nnested {}", []string{"b.hcl:2,1-7", "Unsupported block type", "allows arguments:"}},
		{"name = \"z\"", []string{"b.hcl:1,", "Missing required argument", `"need"`}},
		{"need = null", []string{"b.hcl:1,8-12", "Missing required argument", "null does not count"}},
		{"need = \"y\"\nperiod = 250", []string{"b.hcl:2,10-13", `"period"`, "needs a unit", `"250us"`}},
		{"need = \"y\"\nperiod = \"250\"", []string{"b.hcl:2,10-15", `"period"`, "a unit is required"}},
		{"need = \"y\"\nperiod = \"250 parsecs\"", []string{"b.hcl:2,10-", "unknown unit"}},
		{"need = \"y\"\nperiod = true", []string{"b.hcl:2,10-14", "a duration is a string with a unit, got bool"}},
		{"need = \"y\"\nrate = 24", []string{"b.hcl:2,8-10", `"rate"`, "needs a unit", `"24MHz"`}},
		{"need = \"y\"\nrate = \"0Hz\"", []string{"b.hcl:2,8-13", `"rate"`, "must be positive"}},
		{"need = \"y\"\nrate = \"24 furlongs\"", []string{"b.hcl:2,8-", "unknown unit"}},
		{"need = \"y\"\ncount = \"many\"", []string{"b.hcl:2,9-15", `"count"`, `a number is required, got "many"`}},
		{"need = \"y\"\nenabled = \"yes\"", []string{"b.hcl:2,11-16", `"enabled"`, "true or false is required"}},
		{"need = [1]", []string{"b.hcl:1,8-11", `"need"`, "a string is required, got tuple"}},
		{"need = \"y\"\nn = 1.5", []string{"b.hcl:2,5-8", `"n"`, "a whole number is required, got 1.5"}},
		{"need = \"y\"\ncount = \"1e99999999\"", []string{"b.hcl:2,9-21", `"count"`, "between 1e-1233 and 1e1233"}},
		{"need = \"y\"\nn = \"-1e99999999\"", []string{"b.hcl:2,5-18", `"n"`, "between 1e-1233 and 1e1233"}},
		{"need = \"y\"\ncpus = [\"1e99999999\"]", []string{"b.hcl:2,8-22", `"cpus"`, "between 1e-1233 and 1e1233"}},
		{"need = \"y\"\nn = 1e30", []string{"b.hcl:2,5-9", "out of range"}},
		{"need = \"y\"\ncpus = \"N\"", []string{"b.hcl:2,8-11", `"cpus"`, "needs the machine size"}},
		{"need = \"y\"\ncpus = [4096]", []string{"b.hcl:2,8-14", "CPU 4096 does not exist"}},
		{"need = \"y\"\ncpus = [\"a\"]", []string{"b.hcl:2,8-13", "holds CPU numbers"}},
		{"need = \"y\"\ncpus = true", []string{"b.hcl:2,8-12", "a CPU list"}},
		{"need = var.nope", []string{"b.hcl:1,8-16", "Undeclared variable", "Declared variables: n, period"}},
		{"need = nope", []string{"b.hcl:1,8-12", "Unknown variable"}},
	}
	for _, tt := range tests {
		_, diags := DecodeBody(parseBody(t, tt.src), testContext(), sampleSchema, "sample block")
		if !containsDiag(diags, tt.want) {
			t.Errorf("DecodeBody(%q) =\n%s want one error containing %q", tt.src, diagsString(diags), tt.want)
		}
	}
}

func containsDiag(diags hcl.Diagnostics, want []string) bool {
	for _, d := range diags {
		s := diagString(d)
		ok := d.Severity == hcl.DiagError
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return true
		}
	}
	return false
}

// Schema mistakes are the declarer's bug; they are reported, not panicked on.
func TestDecodeBodyBadSchema(t *testing.T) {
	tests := []struct {
		schema sdk.Schema
		want   string
	}{
		{sdk.Schema{Attributes: []sdk.Attribute{{Name: "a", Type: sdk.TypeString}, {Name: "a", Type: sdk.TypeString}}}, "Invalid schema"},
		{sdk.Schema{Attributes: []sdk.Attribute{{Name: "", Type: sdk.TypeString}}}, "Invalid schema"},
		{sdk.Schema{Attributes: []sdk.Attribute{{Name: "a", Type: "vector"}}}, `unknown attribute type "vector"`},
		{sdk.Schema{Attributes: []sdk.Attribute{{Name: "a", Type: sdk.TypeDuration, Default: "250"}}}, "Invalid default in schema"},
		{sdk.Schema{Attributes: []sdk.Attribute{{Name: "a", Type: sdk.TypeString, Default: "c", OneOf: []string{"a", "b"}}}}, "Invalid default in schema"},
		{sdk.Schema{Attributes: []sdk.Attribute{{Name: "a", Type: sdk.TypeBool, Default: "yes"}}}, "not true or false"},
		{sdk.Schema{Attributes: []sdk.Attribute{{Name: "a", Type: sdk.TypeNumber, Default: "three"}}}, "not a number"},
	}
	for _, tt := range tests {
		_, diags := DecodeBody(parseBody(t, ""), nil, tt.schema, "x block")
		if !containsDiag(diags, []string{"b.hcl:1,1-1", tt.want}) {
			t.Errorf("DecodeBody(schema %+v) =\n%s want an error containing %q", tt.schema, diagsString(diags), tt.want)
		}
	}
}

func TestDecodePluginHostAttributes(t *testing.T) {
	src := "wheel {\n  plugin = \"wheel\"\n  plugn = \"x\"\n}\n" + runBlock
	s, diags := LoadBytes("t.hcl", []byte(src), Options{})
	if diags.HasErrors() {
		t.Fatalf("LoadBytes: %s", diagsString(diags))
	}
	p, _ := s.Plugin(sdk.KindTimerBase, "")
	_, diags = s.DecodePlugin(p, sdk.Schema{Attributes: []sdk.Attribute{{Name: "layout", Type: sdk.TypeString}}})
	want := []string{"t.hcl:3,3-8", `Did you mean "plugin"?`, `wheel block (plugin "wheel") allows arguments: isolation, layout, plugin.`}
	if !containsDiag(diags, want) {
		t.Errorf("DecodePlugin(plugn) =\n%s want %q", diagsString(diags), want)
	}
	// A plugin schema must not claim the host's attributes.
	_, diags = s.DecodePlugin(p, sdk.Schema{Attributes: []sdk.Attribute{{Name: "plugin", Type: sdk.TypeString}}})
	if !containsDiag(diags, []string{"Invalid schema", "reserved by the host"}) {
		t.Errorf("DecodePlugin(schema with plugin) =\n%s want an Invalid schema error", diagsString(diags))
	}
}

func TestPluginDiagnostics(t *testing.T) {
	src := "clockevent \"local\" {\n  plugin = \"lapic\"\n  min_delta = \"1ns\"\n}\n" + runBlock
	s, diags := LoadBytes("t.hcl", []byte(src), Options{})
	if diags.HasErrors() {
		t.Fatalf("LoadBytes: %s", diagsString(diags))
	}
	p, _ := s.Plugin(sdk.KindClockEvent, "local")
	ds := sdk.Diagnostics{
		{Severity: sdk.SeverityError, Summary: "delta below min_delta", Attribute: "min_delta"},
		{Severity: sdk.SeverityWarning, Summary: "no ARAT", Detail: "C3STOP"},
		{Severity: sdk.SeverityError, Summary: "unknown driver", Attribute: "plugin"},
		{Severity: sdk.SeverityError, Summary: "bad default", Attribute: "mode"},
	}
	var got []string
	for _, d := range p.Diagnostics(ds) {
		got = append(got, diagString(d))
	}
	want := []string{
		`t.hcl:3,15-20: error: delta below min_delta; In the clockevent "local" block (plugin "lapic"): Attribute "min_delta".`,
		`t.hcl:1,1-19: warning: no ARAT; In the clockevent "local" block (plugin "lapic"): C3STOP`,
		`t.hcl:2,12-19: error: unknown driver; In the clockevent "local" block (plugin "lapic"): Attribute "plugin".`,
		`t.hcl:1,1-19: error: bad default; In the clockevent "local" block (plugin "lapic"): Attribute "mode".`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("PluginBlock.Diagnostics() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = nil
	for _, d := range PluginDiagnostics(p.Body, ds[:2]) {
		got = append(got, diagString(d))
	}
	want = []string{
		`t.hcl:3,15-20: error: delta below min_delta; Attribute "min_delta".`,
		`t.hcl:1,20-20: warning: no ARAT; C3STOP`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("PluginDiagnostics() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r := AttributeRange(p.Body, "min_delta"); r.String() != "t.hcl:3,15-20" {
		t.Errorf("AttributeRange(min_delta) = %s, want t.hcl:3,15-20", r)
	}
	if r := AttributeRange(p.Body, "absent"); r.String() != "t.hcl:1,20-20" {
		t.Errorf("AttributeRange(absent) = %s, want the body's start t.hcl:1,20-20", r)
	}
}

// Spec.DecodeBody bounds CPU lists by the machine and resolves "N".
func TestSpecDecodeBodyCPUList(t *testing.T) {
	src := "machine {\n  cpus = 8\n}\nworkload \"w\" \"a\" {\n  cpus = \"4-N\"\n}\nworkload \"w\" \"b\" {\n  cpus = [8]\n}\n" + runBlock
	s, diags := LoadBytes("t.hcl", []byte(src), Options{})
	if diags.HasErrors() {
		t.Fatalf("LoadBytes: %s", diagsString(diags))
	}
	schema := sdk.Schema{Attributes: []sdk.Attribute{{Name: "cpus", Type: TypeCPUList}}}
	cfg, diags := s.DecodeBody(s.Workloads[0].Body, schema, `workload "w" "a"`)
	if diags.HasErrors() || cfg["cpus"] != "4-7" {
		t.Errorf("Spec.DecodeBody(cpus = \"4-N\") = %v, %s; want 4-7", cfg, diagsString(diags))
	}
	_, diags = s.DecodeBody(s.Workloads[1].Body, schema, `workload "w" "b"`)
	if !containsDiag(diags, []string{"t.hcl:8,10-13", "CPU 8 does not exist (CPUs are 0-7)"}) {
		t.Errorf("Spec.DecodeBody(cpus = [8]) =\n%s want a range error", diagsString(diags))
	}
}

func TestUnknownNameError(t *testing.T) {
	r := hcl.Range{Filename: "t.hcl", Start: hcl.Pos{Line: 3, Column: 10, Byte: 30}, End: hcl.Pos{Line: 3, Column: 20, Byte: 40}}
	tests := []struct {
		name  string
		known []string
		want  string
	}{
		{"cyclictst", []string{"cyclictest", "stress"}, `t.hcl:3,10-20: error: Unknown workload type; There is no workload type "cyclictst". Did you mean "cyclictest"? Known: cyclictest, stress.`},
		{"x", nil, `t.hcl:3,10-20: error: Unknown workload type; There is no workload type "x". Known: none.`},
	}
	for _, tt := range tests {
		if got := diagString(UnknownNameError(r, "workload type", tt.name, tt.known)); got != tt.want {
			t.Errorf("UnknownNameError(%q, %v) = %s, want %s", tt.name, tt.known, got, tt.want)
		}
	}
}

func TestDecodeWorkload(t *testing.T) {
	s, diags := LoadBytes("t.hcl", []byte("workload \"stress\" \"a\" {\n  ops = \"x\"\n}\n"+runBlock), Options{})
	if diags.HasErrors() {
		t.Fatalf("LoadBytes: %s", diagsString(diags))
	}
	_, diags = s.DecodeWorkload(s.Workloads[0], sdk.Schema{Attributes: []sdk.Attribute{{Name: "ops", Type: TypeInteger}}})
	if !containsDiag(diags, []string{"t.hcl:2,9-12", `"ops" in the workload "stress" "a" block`, "a number is required"}) {
		t.Errorf("DecodeWorkload(ops = \"x\") =\n%s want a type error", diagsString(diags))
	}
}

// Several unknown attributes come out in source order on every call, though
// HCL finds them by iterating a map.
func TestDecodeBodyDiagnosticOrder(t *testing.T) {
	body := parseBody(t, "need = \"y\"\na = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
	for range 5 {
		_, diags := DecodeBody(body, nil, sampleSchema, "sample block")
		var lines []int
		for _, d := range diags {
			lines = append(lines, d.Subject.Start.Line)
		}
		if fmt.Sprint(lines) != "[2 3 4 5 6]" {
			t.Fatalf("DecodeBody(5 unknown attributes) lines = %v, want [2 3 4 5 6]", lines)
		}
	}
}
