// Package simtest runs small scenarios written inline in HCL with the builtin
// plugins, for tests across the framework.
package simtest

import (
	"bytes"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// Run loads src (HCL) with opts and runs it in process; it fails the test on
// any error. trace, when non-nil, receives the ftrace-format trace.
func Run(t testing.TB, src string, opts config.Options, trace *bytes.Buffer) *experiment.Result {
	t.Helper()
	spec, diags := config.LoadBytes("test.hcl", []byte(src), opts)
	if diags.HasErrors() {
		t.Fatalf("config: %v", diags)
	}
	eo := experiment.Options{Opener: experiment.InProcess(builtin.Factories())}
	if trace != nil {
		eo.Trace = trace
	}
	res, err := experiment.Run(spec, eo)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}
