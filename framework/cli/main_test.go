package cli

import (
	"io"
	"os"
	"testing"
)

// mainWith runs the command line with the builtins, as cmd/tickemu does.
func mainWith(args []string, stdout, stderr io.Writer) int {
	return New(testExtras...).Run(args, stdout, stderr)
}

// builtins are the linked-in plugins of tests that bypass the command line.
var builtins = New().factories

// TestMain lets the test binary act as a plugin process: the loader
// re-executes os.Executable() (this test binary) as `plugin serve KIND NAME`
// to run a plugin with isolation = "process".
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == "plugin" {
		os.Exit(mainWith(os.Args[1:], os.Stdout, os.Stderr))
	}
	if os.Getenv(hostEnv) == "1" {
		// The test binary as the tickemu command (liveness_test.go).
		os.Exit(Main())
	}
	os.Exit(m.Run())
}
