package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/workload"
	"github.com/tickemu/tickemu/internal/suggest"
)

// schemaBlock is one block `tickemu workloads` lists: a workload type, the
// machine block (and its idle_state blocks) or the kernel block.
type schemaBlock struct {
	Block      string     `json:"block"`
	Type       string     `json:"type,omitempty"`
	Doc        string     `json:"doc"`
	Attributes []attrJSON `json:"attributes"`
	schema     sdk.Schema
}

// schemaBlocks lists every block the config language has besides the
// plugin blocks (`tickemu plugins` lists those): workload types in their
// order, then machine, idle_state and kernel.
func schemaBlocks() []schemaBlock {
	var blocks []schemaBlock
	add := func(block, typ, doc string, s sdk.Schema) {
		blocks = append(blocks, schemaBlock{Block: block, Type: typ, Doc: doc, Attributes: attrsJSON(s), schema: s})
	}
	for _, t := range workload.Types() {
		add("workload", t.Name, t.Doc, t.Schema)
	}
	add("machine", "", "the emulated machine: CPUs, HZ, tick mode, CPU isolation (a profile = \"FILE\" sets its costs, docs/calibration-fit.md)", config.MachineSchema)
	add("idle_state", "", "one idle state of the machine (machine { idle_state \"C1\" { ... } }), shallowest first: cpuidle_state", config.IdleStateSchema)
	add("kernel", "", "kernel settings: framework costs and behaviour switches", kernel.KernelSchema())
	return blocks
}

// cmdWorkloads lists every workload type, the machine block and the kernel
// block with each attribute's type, default, allowed values and doc, so
// that a config can be written without provoking errors to discover them.
// As `tickemu schema BLOCK` it lists one of them.
func (a *App) cmdWorkloads(name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text or json")
	use := "tickemu workloads [--format text|json]"
	if name == "schema" {
		use = "tickemu schema BLOCK [--format text|json] (BLOCK: machine, idle_state, kernel or a workload type)"
	}
	if wantsHelp(fs, use, "list every workload type, the machine and the kernel block with their attributes", args, stdout) {
		return 0
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if (name == "schema") != (len(pos) == 1) || len(pos) > 1 {
		fmt.Fprintf(stderr, "usage: %s\n", use)
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "tickemu: --format %q: want text or json\n", *format)
		return 2
	}
	blocks := schemaBlocks()
	if name == "schema" {
		if blocks = pickBlock(blocks, pos[0]); blocks == nil {
			return unknownBlock(stderr, pos[0])
		}
	}
	if *format == "json" {
		return writeJSON(stdout, stderr, blocks)
	}
	var b strings.Builder
	for i, bl := range blocks {
		if i > 0 {
			b.WriteString("\n")
		}
		switch bl.Block {
		case "workload":
			fmt.Fprintf(&b, "workload %q \"NAME\"\n", bl.Type)
		case "idle_state":
			fmt.Fprintf(&b, "idle_state \"NAME\" (in machine)\n")
		default:
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

// pickBlock returns the block named name (a block or a workload type), or nil.
func pickBlock(blocks []schemaBlock, name string) []schemaBlock {
	for _, bl := range blocks {
		if bl.Type == name || (bl.Type == "" && bl.Block == name) {
			return []schemaBlock{bl}
		}
	}
	return nil
}

func unknownBlock(stderr io.Writer, name string) int {
	known := []string{"machine", "idle_state", "kernel"}
	known = append(known, workload.Names()...)
	hint := ""
	if s := suggest.Nearest(name, known); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	fmt.Fprintf(stderr, "tickemu schema: no block %q%s; known: %s (plugin blocks: tickemu plugins)\n", name, hint, strings.Join(known, ", "))
	return 2
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
