package calibrate

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestWriteProfile: the profile is HCL whose blocks hold the written,
// constrained parameters only, whatever a bundle's note holds.
func TestWriteProfile(t *testing.T) {
	params := []Param{
		{Block: "kernel", Attr: "irq_exit_cost", Value: 412.4, SE: 73, From: "irq_exit", Constrained: true, Written: true},
		{Block: "kernel", Attr: "wakeup_cost", From: "wakeup", Written: true, Why: "no wakeup interval"},
		{Block: "kernel", Attr: "rcu_core_cost", Value: 7690, Constrained: true, Note: "an upper bound"},
		{Block: `clockevent "local"`, Plugin: "lapic", Attr: "irq_latency", Value: 15300, SE: 728, From: "lateness_busy - irq_entry", Constrained: true, Written: true},
	}
	var b strings.Builder
	pv := Provenance{Tool: "test", Bundles: []string{"a.tcap: cyclictest (a note\nkernel { syscall_cost = \"1s\" }\n)"}, Host: "Linux\r6.18"}
	if err := WriteProfile(&b, pv, params); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	f, diags := hclsyntax.ParseConfig([]byte(text), "p.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("profile does not parse: %s\n%s", diags, text)
	}
	body := f.Body.(*hclsyntax.Body)
	var got []string
	for _, bl := range body.Blocks {
		for name, a := range bl.Body.Attributes {
			v, _ := a.Expr.Value(nil)
			got = append(got, bl.Type+"."+name+"="+v.AsString())
		}
	}
	want := map[string]bool{`kernel.irq_exit_cost=412ns`: true, `clockevent.plugin=lapic`: true, `clockevent.irq_latency=15300ns`: true}
	if len(got) != len(want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
	for _, g := range got {
		if !want[g] {
			t.Errorf("unexpected attribute %s in\n%s", g, text)
		}
	}
	if !strings.Contains(text, "#   kernel.wakeup_cost: not constrained: no wakeup interval") {
		t.Errorf("the unconstrained wakeup_cost is not named:\n%s", text)
	}
}
