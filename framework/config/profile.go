package config

import (
	"fmt"
	"github.com/tickemu/tickemu/framework/internal/limitio"
	"maps"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tickemu/tickemu/framework/sdk"
)

// A machine profile is an HCL file of defaults for one machine's costs, as
// `tickemu calibrate` writes it (docs/config.md): a kernel block
// and plugin blocks holding attributes only. A scenario includes it with
//
//	machine { profile = "profiles/kvm-guest.hcl" }
//
// (a path relative to the including file's directory). Each attribute the
// profile sets is a default: the scenario's own kernel and plugin blocks
// override it attribute by attribute. A profile's plugin block applies only
// when the scenario's block of that kind and role selects the same plugin
// (a lapic profile says nothing about an arch timer); a profile adds no
// optional plugin block the scenario lacks. The attributes keep their place
// in the profile file, so an unknown or bad one is reported there.

// ProfileAttr is the machine block's attribute that names a profile.
const ProfileAttr = "profile"

var profileAttr = sdk.Attribute{Name: ProfileAttr, Type: sdk.TypeString}

// profile is a loaded machine profile.
type profile struct {
	path   string
	kernel *hclsyntax.Body
	// plugins by slot (kind and role): the block's attributes less
	// `plugin`, and the plugin they are for.
	plugins map[[2]string]profilePlugin
}

type profilePlugin struct {
	plugin string
	body   *hclsyntax.Body
}

// loadProfile reads the profile the machine block's profile attribute names.
func (l *loader) loadProfile(a *hcl.Attribute) {
	const what = "machine block"
	v, ok, diags := decoder{ctx: l.ctx, budget: l.budget}.attribute(a, profileAttr, what)
	l.diags = append(l.diags, diags...)
	if !ok {
		return // an error, or null: no profile
	}
	if v == "" {
		l.diags = append(l.diags, errorAt(a.Expr.Range(), `Invalid value for "profile"`,
			`"profile" in the %s: give the path of a machine profile file.`, what))
		return
	}
	path := v
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(a.Expr.Range().Filename), path)
	}
	src, err := limitio.ReadFile(path, MaxFileBytes, "a machine profile")
	if err != nil {
		l.diags = append(l.diags, errorAt(a.Expr.Range(), "Cannot read machine profile",
			"%q in the %s: %v.", v, what, err))
		return
	}
	if diags := checkSize(path, src); diags.HasErrors() {
		l.diags = append(l.diags, diags...)
		return
	}
	if diags := checkNesting(src, path, hcl.InitialPos); diags.HasErrors() {
		l.diags = append(l.diags, diags...)
		return
	}
	file, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if file != nil {
		l.spec.files[path] = file
	}
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() {
		return
	}
	instrument(file.Body.(*hclsyntax.Body))
	schema := &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: blockKernel}}}
	for _, k := range l.kinds() {
		h := hcl.BlockHeaderSchema{Type: string(k)}
		if l.labelled(k) {
			h.LabelNames = []string{"role"}
		}
		schema.Blocks = append(schema.Blocks, h)
	}
	content, diags := file.Body.Content(schema)
	l.diags = append(l.diags, explainUnsupported(diags, schema, "machine profile "+path)...)
	p := &profile{path: path, plugins: map[[2]string]profilePlugin{}}
	seen := map[[2]string]hcl.Range{}
	for _, b := range content.Blocks {
		key := [2]string{b.Type, ""}
		if len(b.Labels) > 0 {
			key[1] = b.Labels[0]
		}
		if prev, dup := seen[key]; dup {
			l.diags = append(l.diags, errorAt(b.DefRange, fmt.Sprintf("Duplicate %s block", b.Type),
				"The machine profile already has this block at %s.", prev))
			continue
		}
		seen[key] = b.DefRange
		body := b.Body.(*hclsyntax.Body)
		if len(body.Blocks) > 0 {
			l.diags = append(l.diags, errorAt(body.Blocks[0].DefRange(), "Unsupported block in a machine profile",
				"A machine profile's %s block holds attributes only.", b.Type))
			continue
		}
		if b.Type == blockKernel {
			p.kernel = body
			continue
		}
		i := -1
		for j, s := range l.slots {
			if string(s.Kind) == key[0] && s.Role == key[1] {
				i = j
			}
		}
		if i < 0 {
			roles := l.roles(sdk.Kind(b.Type))
			l.diags = append(l.diags, errorAt(b.LabelRanges[0], fmt.Sprintf("Unknown %s role", b.Type),
				"%s %q: the role must be one of %s.%s", b.Type, key[1], quoteList(roles), didYouMean(key[1], roles)))
			continue
		}
		pp := profilePlugin{plugin: l.slots[i].Default, body: body}
		if pa := body.Attributes["plugin"]; pa != nil {
			v, ok, diags := decoder{ctx: l.ctx, budget: l.budget}.attribute(pa.AsHCLAttribute(), pluginAttr, "machine profile's "+b.Type+" block")
			l.diags = append(l.diags, diags...)
			if !ok {
				continue
			}
			pp.plugin = v
			nb := *body
			nb.Attributes = maps.Clone(body.Attributes)
			delete(nb.Attributes, "plugin")
			pp.body = &nb
		}
		p.plugins[key] = pp
	}
	l.profile = p
}

// withProfile returns body with every attribute of def that body lacks
// added: the scenario's block over the profile's defaults. body is not
// modified; a body that is not native syntax is returned as it is.
func withProfile(body hcl.Body, def *hclsyntax.Body) hcl.Body {
	sb, ok := body.(*hclsyntax.Body)
	if !ok || def == nil || len(def.Attributes) == 0 {
		return body
	}
	nb := *sb
	nb.Attributes = maps.Clone(sb.Attributes)
	if nb.Attributes == nil {
		nb.Attributes = hclsyntax.Attributes{}
	}
	for name, a := range def.Attributes {
		if _, set := nb.Attributes[name]; !set {
			nb.Attributes[name] = a
		}
	}
	return &nb
}

// profileKernel applies the profile's kernel block to the spec's.
func (l *loader) profileKernel() {
	if l.profile == nil || l.profile.kernel == nil {
		return
	}
	l.spec.Kernel = withProfile(l.spec.Kernel, l.profile.kernel)
}

// applyProfile applies the profile's block for p's slot when it is for
// p's plugin.
func (l *loader) applyProfile(p *PluginBlock) {
	if l.profile == nil {
		return
	}
	pp, ok := l.profile.plugins[[2]string{string(p.Kind), p.Role}]
	if !ok || pp.plugin != p.Plugin {
		return
	}
	p.Body = withProfile(p.Body, pp.body)
}
