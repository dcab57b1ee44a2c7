package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/sdk"
)

// KernelVersionAttr is the kernel block's version attribute: the release
// whose strategy settings apply to every versioned attribute the file leaves
// unset (framework/kernelversion).
const KernelVersionAttr = "version"

var kernelVersionSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: KernelVersionAttr}}}

// decodeKernelVersion reads kernel.version (or --kernel-version, which wins)
// and checks it is a release the table covers.
func (l *loader) decodeKernelVersion() {
	s := l.spec
	s.KernelVersionRange = s.KernelRange
	text := ""
	content, _, diags := s.Kernel.PartialContent(kernelVersionSchema)
	if !diags.HasErrors() {
		if a := content.Attributes[KernelVersionAttr]; a != nil {
			s.KernelVersionRange = a.Expr.Range()
			v, ds := evalExpr(a.Expr, l.ctx, l.budget)
			l.diags = append(l.diags, ds...)
			switch {
			case ds.HasErrors():
				return
			case v.IsNull():
			case !v.IsWhollyKnown() || v.Type() != cty.String:
				l.diags = append(l.diags, errorAt(a.Expr.Range(), `Invalid value for "version"`,
					`"version" in the kernel block is a release, a string such as "6.13".`))
				return
			default:
				text = v.AsString()
			}
		}
	}
	if l.opts.KernelVersion != "" {
		r, err := kernelversion.ParseCovered(l.opts.KernelVersion)
		if err != nil {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid --kernel-version",
				Detail: fmt.Sprintf("--kernel-version %s", err)})
			return
		}
		s.KernelVersion = r
		return
	}
	if text == "" {
		return
	}
	r, err := kernelversion.ParseCovered(text)
	if err != nil {
		l.diags = append(l.diags, errorAt(s.KernelVersionRange, `Invalid value for "version"`,
			`"version" in the kernel block: %v.`, err))
		return
	}
	s.KernelVersion = r
}

// Preset is preset for callers outside the package: the value the attribute
// of key k takes when the file leaves it unset.
func (s *Spec) Preset(k kernelversion.Key, a sdk.Attribute) (string, bool) { return s.preset(k, a) }

// preset returns the value a versioned attribute takes when the file leaves
// it unset: the bisect preset for its key, else its era at the kernel
// version; false when neither applies (the schema default does).
func (s *Spec) preset(k kernelversion.Key, a sdk.Attribute) (string, bool) {
	if v, ok := s.presets[k]; ok {
		return v, true
	}
	if s.KernelVersion.IsZero() || len(a.Eras) == 0 {
		return "", false
	}
	return kernelversion.ValueAt(a.Eras, s.KernelVersion)
}

// Versioned reports whether a kernel version or a preset applies.
func (s *Spec) Versioned() bool { return !s.KernelVersion.IsZero() || len(s.presets) > 0 }

// Override is a versioned attribute the file sets to something else than
// what the kernel version (or bisect preset) gives: the file wins.
type Override struct {
	Key     kernelversion.Key `json:"-"`
	Setting string            `json:"setting"`
	Value   string            `json:"value"`   // the file's
	Version string            `json:"version"` // the version's
}

// Overrides lists the attributes of a decoded block (cfg, decoded with
// schema) whose value differs from the version's: the file set them.
func (s *Spec) Overrides(kind, plugin string, schema sdk.Schema, cfg sdk.Config) []Override {
	if !s.Versioned() {
		return nil
	}
	var out []Override
	d := decoder{}
	for _, a := range schema.Attributes {
		k := kernelversion.Key{Kind: kind, Plugin: plugin, Attr: a.Name}
		pv, ok := s.preset(k, a)
		if !ok {
			continue
		}
		if c, err := d.presetValue(a, pv); err == nil && c != cfg[a.Name] {
			out = append(out, Override{Key: k, Setting: k.String(), Value: cfg[a.Name], Version: c})
		}
	}
	return out
}

// presetValue canonicalises a preset value like a default.
func (d decoder) presetValue(a sdk.Attribute, v string) (string, error) {
	val, err := sourceValue(a.Type, v)
	if err != nil {
		return "", err
	}
	return d.canonical(val, a)
}

// DecodeKernel decodes the kernel block with the engine's schema; versioned
// attributes the file leaves unset take the kernel version's value.
func (s *Spec) DecodeKernel(schema sdk.Schema) (sdk.Config, hcl.Diagnostics) {
	d := decoder{ctx: s.EvalContext(), nrCPUs: s.Machine.CPUs}
	d.preset = func(a sdk.Attribute) (string, bool) {
		return s.preset(kernelversion.Key{Kind: blockKernel, Attr: a.Name}, a)
	}
	return d.decode(s.Kernel, schema, "kernel block")
}

// GovernorPluginKey is the versioned setting of the governor choice: the
// idle tick-retain rule (see PluginSlot.DefaultEras).
var GovernorPluginKey = kernelversion.Key{Kind: string(sdk.KindGovernor), Attr: "plugin"}

// SlotSchema is the schema of a slot's versioned default plugin, for the
// version table: one attribute "plugin" with the slot's eras.
func SlotSchema(s PluginSlot) sdk.Schema {
	if len(s.DefaultEras) == 0 {
		return sdk.Schema{}
	}
	return sdk.Schema{Attributes: []sdk.Attribute{{Name: "plugin", Type: sdk.TypeString, Default: s.Default,
		Doc: "the plugin a " + string(s.Kind) + " block without plugin selects", Eras: s.DefaultEras}}}
}
