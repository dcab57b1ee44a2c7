package config

import (
	"fmt"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/tickemu/tickemu/framework/sdk"
)

const precedenceSrc = `
variable "a" { default = "default-a" }
variable "b" { default = "default-b" }
variable "c" { default = "default-c" }
variable "n" { default = 1 }
variant "v1" {
  description = "sets a and b"
  vars = { a = "v1-a", b = "v1-b" }
}
variant "v2" { vars = { n = 8 } }
kernel {
  a = var.a
  b = var.b
  c = var.c
  n = var.n
}
run { duration = "1s" }
`

// TestVariablePrecedence checks default < variant < --var.
func TestVariablePrecedence(t *testing.T) {
	tests := []struct {
		variant string
		vars    map[string]string
		want    string // a b c n, then the sources
	}{
		{"", nil, "default-a default-b default-c 1 [default default default default]"},
		{"v1", nil, "v1-a v1-b default-c 1 [variant variant default default]"},
		{"v2", nil, "default-a default-b default-c 8 [default default default variant]"},
		{"v1", map[string]string{"b": "cli-b"}, "v1-a cli-b default-c 1 [variant cli default default]"},
		{"", map[string]string{"c": "cli-c", "n": "16"}, "default-a default-b cli-c 16 [default default cli cli]"},
		{"v2", map[string]string{"n": "2"}, "default-a default-b default-c 2 [default default default cli]"},
	}
	schema := sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "a", Type: sdk.TypeString}, {Name: "b", Type: sdk.TypeString},
		{Name: "c", Type: sdk.TypeString}, {Name: "n", Type: TypeInteger},
	}}
	for _, tt := range tests {
		s, diags := LoadBytes("t.hcl", []byte(precedenceSrc), Options{Variant: tt.variant, Vars: tt.vars})
		if diags.HasErrors() {
			t.Errorf("LoadBytes(variant %q, vars %v):\n%s", tt.variant, tt.vars, diagsString(diags))
			continue
		}
		cfg, diags := s.DecodeBody(s.Kernel, schema, "kernel block")
		if diags.HasErrors() {
			t.Errorf("DecodeBody(kernel) with variant %q:\n%s", tt.variant, diagsString(diags))
			continue
		}
		var src []VarSource
		for _, v := range s.Vars {
			src = append(src, v.Source)
		}
		got := fmt.Sprintf("%s %s %s %s %v", cfg["a"], cfg["b"], cfg["c"], cfg["n"], src)
		if got != tt.want {
			t.Errorf("LoadBytes(variant %q, vars %v) evaluates to %q, want %q", tt.variant, tt.vars, got, tt.want)
		}
		if s.Variant != tt.variant {
			t.Errorf("LoadBytes(variant %q).Variant = %q", tt.variant, s.Variant)
		}
	}
}

func TestParseVarValue(t *testing.T) {
	tests := []struct {
		in   string
		want cty.Value
	}{
		{"8", cty.NumberIntVal(8)},
		{"1.5", cty.NumberFloatVal(1.5)},
		{"true", cty.True},
		{"[4, 5]", cty.TupleVal([]cty.Value{cty.NumberIntVal(4), cty.NumberIntVal(5)})},
		{`"quoted"`, cty.StringVal("quoted")},
		{"{a = 1}", cty.ObjectVal(map[string]cty.Value{"a": cty.NumberIntVal(1)})},
		{"max_hang_time", cty.StringVal("max_hang_time")}, // a traversal: not a literal
		{"250us", cty.StringVal("250us")},
		{"4-7,10", cty.StringVal("4-7,10")},
		{"", cty.StringVal("")},
		{"null", cty.StringVal("null")},
		{"upper(x)", cty.StringVal("upper(x)")}, // no functions on the command line
		{"1 +", cty.StringVal("1 +")},
		{"1e99999999", cty.StringVal("1e99999999")}, // out of range: kept as text
	}
	for _, tt := range tests {
		if got := ParseVarValue(tt.in); !got.RawEquals(tt.want) {
			t.Errorf("ParseVarValue(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

// A variable that is used only through a list (cpus) shows that --var values
// parse as HCL literals, not strings.
func TestVarListValue(t *testing.T) {
	src := "variable \"cpus\" { default = [1] }\nmachine {\n  cpus = 8\n  nohz = \"full\"\n  nohz_full = var.cpus\n}\n" + runBlock
	s, diags := LoadBytes("t.hcl", []byte(src), Options{Vars: map[string]string{"cpus": "[2, 3]"}})
	if diags.HasErrors() {
		t.Fatalf("LoadBytes(--var cpus=[2, 3]):\n%s", diagsString(diags))
	}
	if got := fmt.Sprint(s.Machine.NoHZFull); got != "[2 3]" {
		t.Errorf("LoadBytes(--var cpus=[2, 3]).Machine.NoHZFull = %s, want [2 3]", got)
	}
}
