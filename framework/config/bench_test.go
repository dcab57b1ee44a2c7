package config

import (
	"os"
	"testing"
)

// BenchmarkLoadDesign measures loading the design sketch; config loading runs
// once per run (or per variant), never per simulated event.
func BenchmarkLoadDesign(b *testing.B) {
	src, err := os.ReadFile("testdata/design.hcl")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, diags := LoadBytes("design.hcl", src, Options{Variant: "fixed"}); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}
