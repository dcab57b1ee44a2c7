package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/sdk"
)

// Lister is implemented by openers that can list the plugins of a kind; it
// enables per-plugin settings blocks.
type Lister interface {
	Names(kind sdk.Kind) []string
}

// pluginBody picks the settings for the chosen plugin out of a plugin block:
// the attributes written directly in it, plus those of a nested block named
// after the plugin, so that a variable can choose the plugin and each
// candidate keeps its own settings:
//
//	clockevent "local" {
//	  plugin = var.local
//	  lapic { mode = "tsc_deadline"  arat = false }
//	  archtimer { freq = "19.2MHz" }
//	}
//
// Nested blocks for the plugins not chosen are decoded against their own
// plugin's schema, so a typo is caught whichever plugin a variant selects.
func pluginBody(spec *config.Spec, pb config.PluginBlock, o Options) (config.PluginBlock, hcl.Diagnostics) {
	l, ok := o.Opener.(Lister)
	if !ok {
		return pb, nil
	}
	names := l.Names(pb.Kind)
	schema := &hcl.BodySchema{}
	for _, n := range names {
		schema.Blocks = append(schema.Blocks, hcl.BlockHeaderSchema{Type: n})
	}
	content, remain, diags := pb.Body.PartialContent(schema)
	if diags.HasErrors() {
		return pb, diags
	}
	var chosen *hcl.Block
	for _, b := range content.Blocks {
		if b.Type == pb.Plugin {
			if chosen != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate settings block",
					Detail: fmt.Sprintf("%s has two %q settings blocks.", pb.What(), b.Type), Subject: b.DefRange.Ptr()})
				continue
			}
			chosen = b
			continue
		}
		// A candidate that this run does not use: check it all the same.
		_, schema, err := o.Opener.Describe(pb.Kind, b.Type)
		if err != nil {
			continue
		}
		other := pb
		other.Plugin, other.Body = b.Type, b.Body
		_, d := spec.DecodePlugin(other, schema)
		diags = append(diags, d...)
	}
	if chosen != nil {
		pb.Body = hcl.MergeBodies([]hcl.Body{remain, chosen.Body})
	} else {
		pb.Body = remain
	}
	return pb, diags
}

// explainMissingPlugin adds to HCL's "Unsupported block type" diagnostic of a
// nested block in plugin block pb (as written, before pluginBody) that names
// no plugin of its kind the hint that it may be the settings block of a
// plugin this tickemu does not have: the usual cause is a plugin binary not
// on the search path, or a custom build without the plugin.
func explainMissingPlugin(pb config.PluginBlock, o Options, diags hcl.Diagnostics) hcl.Diagnostics {
	sb, ok := pb.Body.(*hclsyntax.Body)
	if !ok {
		return diags
	}
	var names []string
	if l, ok := o.Opener.(Lister); ok {
		names = l.Names(pb.Kind)
	}
	for _, d := range diags {
		if d.Summary != "Unsupported block type" || d.Subject == nil {
			continue
		}
		for _, b := range sb.Blocks {
			if b.TypeRange != *d.Subject || slices.Contains(names, b.Type) {
				continue
			}
			known := "none"
			if len(names) > 0 {
				known = strings.Join(names, ", ")
			}
			d.Detail += fmt.Sprintf(" If %q is the settings block of a %s plugin, this tickemu has no %s plugin of that name (it has: %s):"+
				" give the directory of its tickemu-plugin-%s binary with --plugin-dir or $TICKEMU_PLUGIN_PATH, or link it in with tickemu build --with MODULE (docs/plugins.md).",
				b.Type, pb.Kind, pb.Kind, known, b.Type)
		}
	}
	return diags
}
