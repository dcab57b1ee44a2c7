package config

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/sdk"
)

// fuzzSchema has one attribute of every type, so any body decodes through
// every conversion path.
var fuzzSchema = sdk.Schema{Attributes: []sdk.Attribute{
	{Name: "s", Type: sdk.TypeString, OneOf: []string{"a", "b"}, Default: "a"},
	{Name: "n", Type: sdk.TypeNumber},
	{Name: "i", Type: TypeInteger},
	{Name: "count", Type: TypeInteger, Default: "1", Min: "1", Max: "4096"},
	{Name: "wait", Type: sdk.TypeDuration, Min: "0s", Max: "10s"},
	{Name: "b", Type: sdk.TypeBool},
	{Name: "d", Type: sdk.TypeDuration},
	{Name: "f", Type: sdk.TypeFrequency},
	{Name: "cpus", Type: TypeCPUList},
}}

// FuzzConfigDecode loads arbitrary files, evaluating every expression, and
// decodes every body they leave to the engine. Nothing may panic, every error
// must point inside the source, the printed diagnostics hold no control
// character, and a file that loads must hash the same twice. The seed corpus
// (testdata/fuzz/FuzzConfigDecode) holds the scenarios of configs/ and the
// hostile files of issue 19 (infinity, deep nesting, nested for, NUL bytes).
func FuzzConfigDecode(f *testing.F) {
	f.Add([]byte(precedenceSrc))
	f.Add([]byte(hashBase))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, diags := LoadBytes("f.hcl", src, Options{})
		checkSubjects(t, src, diags)
		var out bytes.Buffer
		if err := WriteDiagnostics(&out, diags, s.Files(), false); err != nil {
			t.Fatalf("WriteDiagnostics: %v", err)
		}
		if i := strings.IndexFunc(out.String(), isControl); i >= 0 {
			t.Fatalf("WriteDiagnostics printed a control character at byte %d:\n%q", i, out.String())
		}
		if diags.HasErrors() {
			return
		}
		for _, p := range s.Plugins {
			_, diags := s.DecodePlugin(p, fuzzSchema)
			checkSubjects(t, src, diags)
		}
		_, diags = s.DecodeBody(s.Kernel, fuzzSchema, "kernel block")
		checkSubjects(t, src, diags)
		for _, w := range s.Workloads {
			_, diags := DecodeBody(w.Body, s.EvalContext(), fuzzSchema, "workload")
			checkSubjects(t, src, diags)
		}
		again, _ := LoadBytes("f.hcl", src, Options{})
		if again.Hash() != s.Hash() {
			t.Errorf("Hash() = %s then %s for the same source", s.Hash(), again.Hash())
		}
	})
}

func checkSubjects(t *testing.T, src []byte, diags hcl.Diagnostics) {
	t.Helper()
	for _, d := range diags {
		if d.Severity != hcl.DiagError && d.Subject == nil {
			continue
		}
		r := d.Subject
		if r == nil {
			t.Errorf("error %q (%s) has no Subject", d.Summary, d.Detail)
			continue
		}
		if r.Filename != "f.hcl" || r.Start.Byte < 0 || r.Start.Byte > r.End.Byte || r.End.Byte > len(src) || r.Start.Line < 1 || r.Start.Column < 1 {
			t.Errorf("diagnostic %q (%s) has Subject %s (bytes %d-%d) outside the %d-byte source", d.Summary, d.Detail, r, r.Start.Byte, r.End.Byte, len(src))
		}
	}
}
