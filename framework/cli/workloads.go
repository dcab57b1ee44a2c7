package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/workload"
)

// cmdWorkloads lists every workload type and the kernel block with each
// attribute's type, default, allowed values and doc, so that a config can be
// written without provoking errors to discover them.
func (a *App) cmdWorkloads(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("workloads", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text or json")
	if wantsHelp(fs, "tickemu workloads [--format text|json]", "list every workload type (and the kernel block) with its attributes", args, stdout) {
		return 0
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) > 0 {
		fmt.Fprintln(stderr, "usage: tickemu workloads [--format text|json]")
		return 2
	}
	type block struct {
		Block      string     `json:"block"`
		Type       string     `json:"type,omitempty"`
		Doc        string     `json:"doc"`
		Attributes []attrJSON `json:"attributes"`
		schema     sdk.Schema
	}
	var blocks []block
	for _, t := range workload.Types() {
		blocks = append(blocks, block{Block: "workload", Type: t.Name, Doc: t.Doc, Attributes: attrsJSON(t.Schema), schema: t.Schema})
	}
	ks := kernel.KernelSchema()
	blocks = append(blocks, block{Block: "kernel", Doc: "kernel settings: framework costs and behaviour switches", Attributes: attrsJSON(ks), schema: ks})
	switch *format {
	case "json":
		return writeJSON(stdout, stderr, blocks)
	case "text":
	default:
		fmt.Fprintf(stderr, "tickemu: --format %q: want text or json\n", *format)
		return 2
	}
	var b strings.Builder
	for i, bl := range blocks {
		if i > 0 {
			b.WriteString("\n")
		}
		if bl.Type != "" {
			fmt.Fprintf(&b, "workload %q \"NAME\"\n", bl.Type)
		} else {
			fmt.Fprintf(&b, "%s\n", bl.Block)
		}
		fmt.Fprintf(&b, "  %s\n", bl.Doc)
		writeAttrs(&b, bl.schema)
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	return 0
}

// writeAttrs prints a schema's attributes with type, default, allowed
// values and doc, one per line.
func writeAttrs(w io.Writer, s sdk.Schema) {
	for _, a := range s.Attributes {
		def := a.Default
		if def == "" {
			def = `""`
		}
		if a.Required {
			def = "(required)"
		}
		fmt.Fprintf(w, "  %-16s %-8s default %-16s %s", a.Name, a.Type, def, a.Doc)
		if len(a.OneOf) > 0 {
			fmt.Fprintf(w, " [one of %s]", strings.Join(a.OneOf, ", "))
		}
		fmt.Fprintln(w)
	}
}
