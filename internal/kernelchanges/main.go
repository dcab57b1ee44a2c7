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
	doc, err := render()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kernelchanges:", err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(doc)
		return
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "kernelchanges:", err)
		os.Exit(1)
	}
}

// render is docs/kernel-changes.md for the builtins and the host.
func render() ([]byte, error) {
	t, err := experiment.TableOf(builtin.Factories())
	if err == nil && len(t.Undeclared) > 0 {
		err = fmt.Errorf("builtin strategy attributes with neither eras nor a reason: %v", t.Undeclared)
	}
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	kernelversion.WriteMarkdown(&b, t)
	return b.Bytes(), nil
}
