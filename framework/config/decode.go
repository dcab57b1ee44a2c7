package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/sdk"
)

// DecodeBody decodes a block body against schema, evaluating expressions in
// ctx (use Spec.EvalContext; nil allows literals only). what names the block in
// messages ("kernel block", `workload "cyclictest" "rt"`).
//
// The result holds every schema attribute in sdk.Config's canonical text form:
// the value written, else Default (validated like a written value), else the
// type's zero value ("", "0", "false", or an empty cpulist). Unknown attributes
// and blocks are errors that suggest the nearest name and list the allowed ones;
// every error about a value points at it. Durations and frequencies must be
// strings with units. CPU numbers are checked against MaxCPUs, and "N"/"all" are
// refused; Spec.DecodeBody checks them against the machine instead.
func DecodeBody(body hcl.Body, ctx *hcl.EvalContext, schema sdk.Schema, what string) (sdk.Config, hcl.Diagnostics) {
	d := decoder{ctx: ctx}
	return d.decode(body, schema, what)
}

// DecodeBody is the package-level DecodeBody with the Spec's variables, and CPU
// numbers checked against (and "N" meaning the last of) Machine.CPUs.
func (s *Spec) DecodeBody(body hcl.Body, schema sdk.Schema, what string) (sdk.Config, hcl.Diagnostics) {
	d := decoder{ctx: s.EvalContext(), nrCPUs: s.Machine.CPUs}
	return d.decode(body, schema, what)
}

// DecodePlugin decodes a plugin block's body with the plugin's schema. Messages
// about unknown attributes also offer the host's plugin and isolation.
//
// Versioned attributes the body leaves unset take the kernel version's value
// (kernel.version, --kernel-version) instead of their default.
func (s *Spec) DecodePlugin(p PluginBlock, schema sdk.Schema) (sdk.Config, hcl.Diagnostics) {
	d := decoder{ctx: s.EvalContext(), nrCPUs: s.Machine.CPUs, hostAttrs: pluginHostAttrs}
	d.preset = func(a sdk.Attribute) (string, bool) {
		return s.preset(kernelversion.Key{Kind: string(p.Kind), Plugin: p.Plugin, Attr: a.Name}, a)
	}
	return d.decode(p.Body, schema, p.What())
}

// DecodeWorkload decodes a workload block with the schema of its type.
func (s *Spec) DecodeWorkload(w WorkloadBlock, schema sdk.Schema) (sdk.Config, hcl.Diagnostics) {
	return s.DecodeBody(w.Body, schema, w.What())
}

// What names the block in messages: `workload "cyclictest" "rt" block`.
func (w WorkloadBlock) What() string {
	return fmt.Sprintf("workload %q %q block", w.Type, w.Name)
}

// What names the block in messages: `clockevent "local" block (plugin "lapic")`.
func (p PluginBlock) What() string {
	if p.Role != "" {
		return fmt.Sprintf("%s %q block (plugin %q)", p.Kind, p.Role, p.Plugin)
	}
	return fmt.Sprintf("%s block (plugin %q)", p.Kind, p.Plugin)
}

var pluginHostAttrs = []string{"plugin", "isolation"}

// decoder decodes attribute-only bodies against an sdk.Schema.
type decoder struct {
	ctx *hcl.EvalContext
	// budget is charged with what evaluation builds; nil: one per attribute.
	budget *budget
	// nrCPUs bounds cpulist values; 0 means MaxCPUs without "N" and "all".
	nrCPUs int
	// hostAttrs and hostBlocks were taken from the body before (they are hidden
	// in it); they count as allowed in suggestions and messages.
	hostAttrs  []string
	hostBlocks []hcl.BlockHeaderSchema
	// preset, when set, gives the value of an attribute the body leaves
	// unset ahead of its Default: the kernel version's (Spec.preset).
	preset func(a sdk.Attribute) (string, bool)
}

func (d decoder) decode(body hcl.Body, schema sdk.Schema, what string) (sdk.Config, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	if body == nil {
		body = hcl.EmptyBody()
	}
	bs := &hcl.BodySchema{Blocks: d.hostBlocks}
	seen := make(map[string]bool, len(schema.Attributes))
	for _, a := range schema.Attributes {
		if a.Name == "" || seen[a.Name] || containsString(d.hostAttrs, a.Name) {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid schema",
				Detail:   fmt.Sprintf("The schema of the %s declares attribute %q twice, empty, or reserved by the host (%s). This is a bug in whatever declared the schema.", what, a.Name, strings.Join(d.hostAttrs, ", ")),
				Subject:  body.MissingItemRange().Ptr(),
			})
			continue
		}
		seen[a.Name] = true
		bs.Attributes = append(bs.Attributes, hcl.AttributeSchema{Name: a.Name, Required: a.Required})
	}
	if diags.HasErrors() {
		return nil, diags
	}
	for _, n := range d.hostAttrs {
		bs.Attributes = append(bs.Attributes, hcl.AttributeSchema{Name: n})
	}
	content, cd := body.Content(bs)
	diags = append(diags, explainUnsupported(cd, bs, what)...)

	cfg := make(sdk.Config, len(schema.Attributes))
	for _, a := range schema.Attributes {
		attr := content.Attributes[a.Name]
		if attr != nil {
			v, ok, vd := d.attribute(attr, a, what)
			diags = append(diags, vd...)
			if ok {
				cfg[a.Name] = v
				continue
			}
			if vd.HasErrors() {
				continue
			}
			// null: fall through to the default, as if absent.
			if a.Required {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Missing required argument",
					Detail:   fmt.Sprintf("The %s needs %q; null does not count as a value.", what, a.Name),
					Subject:  attr.Expr.Range().Ptr(),
				})
				continue
			}
		}
		if a.Required {
			continue // Content has reported it
		}
		if d.preset != nil {
			if pv, ok := d.preset(a); ok {
				v, err := d.presetValue(a, pv)
				if err != nil {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Invalid kernel version value",
						Detail:   fmt.Sprintf("The %s's attribute %q takes %q at this kernel version: %v. This is a bug in whatever declared the schema's eras.", what, a.Name, pv, err),
						Subject:  body.MissingItemRange().Ptr(),
					})
					continue
				}
				cfg[a.Name] = v
				continue
			}
		}
		v, err := d.defaultValue(a)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid default in schema",
				Detail:   fmt.Sprintf("The %s's schema gives %q the default %q: %v. This is a bug in whatever declared the schema.", what, a.Name, a.Default, err),
				Subject:  body.MissingItemRange().Ptr(),
			})
			continue
		}
		cfg[a.Name] = v
	}
	return cfg, sortDiags(diags)
}

// attribute decodes one written attribute. ok is false for null (treated as
// absent) and on error.
func (d decoder) attribute(attr *hcl.Attribute, a sdk.Attribute, what string) (v string, ok bool, diags hcl.Diagnostics) {
	val, diags := evalExpr(attr.Expr, d.ctx, d.budget)
	if diags.HasErrors() {
		return "", false, diags
	}
	if val.IsNull() {
		return "", false, diags
	}
	if !val.IsWhollyKnown() {
		return "", false, append(diags, valueError(attr, a.Name, what, "its value is not known"))
	}
	val, _ = val.UnmarkDeep()
	v, err := d.canonical(val, a)
	if err != nil {
		return "", false, append(diags, valueError(attr, a.Name, what, err.Error()))
	}
	return v, true, diags
}

// defaultValue canonicalises a schema default, read as HCL source text without
// quotes.
func (d decoder) defaultValue(a sdk.Attribute) (string, error) {
	if a.Default == "" {
		return zeroValue(a.Type)
	}
	val, err := sourceValue(a.Type, a.Default)
	if err != nil {
		return "", err
	}
	return d.canonical(val, a)
}

// sourceValue reads a schema's default or bound: HCL source text without
// quotes.
func sourceValue(t sdk.AttrType, text string) (cty.Value, error) {
	switch t {
	case sdk.TypeNumber, TypeInteger:
		n, err := cty.ParseNumberVal(text)
		if err != nil {
			return cty.NilVal, fmt.Errorf("not a number")
		}
		return n, nil
	case sdk.TypeBool:
		switch text {
		case "true":
			return cty.True, nil
		case "false":
			return cty.False, nil
		}
		return cty.NilVal, fmt.Errorf("not true or false")
	}
	return cty.StringVal(text), nil
}

func zeroValue(t sdk.AttrType) (string, error) {
	switch t {
	case sdk.TypeString, TypeCPUList:
		return "", nil
	case sdk.TypeNumber, sdk.TypeDuration, sdk.TypeFrequency, TypeInteger:
		return "0", nil
	case sdk.TypeBool:
		return "false", nil
	}
	return "", fmt.Errorf("unknown attribute type %q", t)
}

// canonical converts val to a's type and its canonical text, then checks OneOf.
