package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/sdk"
)

var (
	pluginAttr    = sdk.Attribute{Name: "plugin", Type: sdk.TypeString}
	isolationAttr = sdk.Attribute{Name: "isolation", Type: sdk.TypeString, OneOf: []string{IsolationInProcess, IsolationProcess}}
	pluginHost    = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "plugin"}, {Name: "isolation"}}}
)

// decodePlugins matches plugin blocks to slots and takes the host's attributes
// (plugin, isolation) out of each; the rest of the body is the plugin's.
func (l *loader) decodePlugins(byType map[string]hcl.Blocks) {
	if !l.checkSlots() {
		return
	}
	found := make([]*hcl.Block, len(l.slots))
	for _, k := range l.kinds() {
		for _, b := range byType[string(k)] {
			role := ""
			if l.labelled(k) {
				role = b.Labels[0]
			}
			i := slices.IndexFunc(l.slots, func(s PluginSlot) bool { return s.Kind == k && s.Role == role })
			if i < 0 {
				roles := l.roles(k)
				l.diags = append(l.diags, errorAt(b.LabelRanges[0], fmt.Sprintf("Unknown %s role", k),
					"%s %q: the role must be one of %s.%s", k, role, quoteList(roles), didYouMean(role, roles)))
				continue
			}
			if prev := found[i]; prev != nil {
				l.diags = append(l.diags, errorAt(b.DefRange, fmt.Sprintf("Duplicate %s block", k),
					"%s is already configured at %s.", strings.TrimSpace(string(k)+" "+quoteRole(role)), prev.DefRange))
				continue
			}
			found[i] = b
		}
	}
	for i, s := range l.slots {
		b := found[i]
		if b == nil && !s.Required {
			continue
		}
		p := PluginBlock{Kind: s.Kind, Role: s.Role, Plugin: l.defaultPlugin(s), Isolation: IsolationDefault}
		if b == nil {
			r := l.fileStart()
			p.Body, p.DefRange, p.PluginRange = emptyBody(r), r, r
			l.applyProfile(&p)
			l.spec.Plugins = append(l.spec.Plugins, p)
			continue
		}
		content, remain, diags := b.Body.PartialContent(pluginHost)
		l.diags = append(l.diags, diags...)
		p.Body, p.DefRange, p.PluginRange = remain, b.DefRange, b.DefRange
		what := strings.TrimSpace(string(s.Kind)+" "+quoteRole(s.Role)) + " block"
		d := decoder{ctx: l.ctx, budget: l.budget}
		if a := content.Attributes["plugin"]; a != nil {
			if v, ok, diags := d.attribute(a, pluginAttr, what); ok {
				if validPluginName(v) {
					p.Plugin, p.PluginRange = v, a.Expr.Range()
				} else {
					l.diags = append(l.diags, errorAt(a.Expr.Range(), `Invalid value for "plugin"`,
						`"plugin" in the %s: %q is not a plugin name (letters, digits, '.', '_' and '-', starting with a letter or digit).`, what, v))
				}
			} else {
				l.diags = append(l.diags, diags...)
			}
		}
		if a := content.Attributes["isolation"]; a != nil {
			if v, ok, diags := d.attribute(a, isolationAttr, what); ok {
				p.Isolation = v
			} else {
				l.diags = append(l.diags, diags...)
			}
		}
		l.applyProfile(&p)
		l.spec.Plugins = append(l.spec.Plugins, p)
	}
}

// defaultPlugin is the plugin a slot's block without `plugin` selects: the
// version's, for a slot whose default follows the release.
func (l *loader) defaultPlugin(s PluginSlot) string {
	if len(s.DefaultEras) == 0 {
		return s.Default
	}
	a := SlotSchema(s).Attributes[0]
	if v, ok := l.spec.preset(kernelversion.Key{Kind: string(s.Kind), Attr: a.Name}, a); ok {
		return v
	}
	return s.Default
}

// checkSlots rejects slot lists the loader cannot serve; they come from the
// program, not the user, but a diagnostic beats a panic in a CLI.
func (l *loader) checkSlots() bool {
	reserved := []string{blockVariable, blockVariant, blockSweep, blockMachine, blockKernel, blockWorkload, blockRun}
	for i, s := range l.slots {
		bad := ""
		switch {
		case s.Kind == "" || slices.Contains(reserved, string(s.Kind)):
			bad = fmt.Sprintf("kind %q is empty or a host block", s.Kind)
		case !validPluginName(s.Default):
			bad = fmt.Sprintf("default plugin %q is not a plugin name", s.Default)
		case l.labelled(s.Kind) && s.Role == "":
			bad = fmt.Sprintf("kind %q mixes labelled and unlabelled slots", s.Kind)
		case slices.ContainsFunc(l.slots[:i], func(o PluginSlot) bool { return o.Kind == s.Kind && o.Role == s.Role }):
			bad = fmt.Sprintf("slot %s %q is listed twice", s.Kind, s.Role)
		}
		if bad != "" {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid plugin slots",
				Detail: "The program's plugin slot list is wrong: " + bad + "."})
			return false
		}
	}
	return true
}

func (l *loader) roles(k sdk.Kind) []string {
	var rs []string
	for _, s := range l.slots {
		if s.Kind == k {
			rs = append(rs, s.Role)
		}
	}
	return rs
}

func quoteRole(role string) string {
	if role == "" {
		return ""
	}
	return fmt.Sprintf("%q", role)
}

// validPluginName accepts names that are safe in a binary name
// (tickemu-plugin-NAME): no path separators, no leading dot or dash.
func validPluginName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}
