// Command kernelchanges writes docs/kernel-changes.md: the modelled kernel
// changes of the builtin plugins and of the host, from the eras their schemas
// declare (sdk.Attribute.Eras). `make generate` runs it; `make
// verify-generate` fails when the committed file differs.
package main

//go:generate go run . -o ../../docs/kernel-changes.md

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/plugins/builtin"
)

func main() {
	out := flag.String("o", "", "file to write (default: stdout)")
	flag.Parse()
	t, err := experiment.TableOf(builtin.Factories())
	if err == nil && len(t.Undeclared) > 0 {
		err = fmt.Errorf("builtin strategy attributes with neither eras nor a reason: %v", t.Undeclared)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kernelchanges:", err)
		os.Exit(1)
	}
	var b bytes.Buffer
	kernelversion.WriteMarkdown(&b, t)
	if *out == "" {
		os.Stdout.Write(b.Bytes())
		return
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "kernelchanges:", err)
		os.Exit(1)
	}
}
