package config

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/tickemu/tickemu/framework/ktime"
	"github.com/tickemu/tickemu/framework/sdk"
)

// Attribute types the host adds to sdk's for the schemas it declares itself
// (machine, run, kernel, workloads). A plugin may use them too: sdk.AttrType is
// a string and the host decodes whatever type name it knows.
const (
	// TypeInteger is a whole number from -2^63 to 2^64-1 (so a uint64 seed
	// fits), in canonical form as a decimal integer.
	TypeInteger sdk.AttrType = "integer"
	// TypeCPUList is a set of CPUs: a list of numbers ([4, 5]), one number, or
	// a kernel cpulist string ("4-7,10"). Canonical form is FormatCPUList's.
	TypeCPUList sdk.AttrType = "cpulist"
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
func (s *Spec) DecodePlugin(p PluginBlock, schema sdk.Schema) (sdk.Config, hcl.Diagnostics) {
	d := decoder{ctx: s.EvalContext(), nrCPUs: s.Machine.CPUs, hostAttrs: pluginHostAttrs}
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

// Diagnostics converts a plugin's diagnostics (from Configure) into HCL ones
// pointing into this block: at the named attribute's value, at the plugin
// attribute, or at the block header when no attribute is named or it is not
// written (a default the plugin rejected).
func (p PluginBlock) Diagnostics(ds sdk.Diagnostics) hcl.Diagnostics {
	out := make(hcl.Diagnostics, 0, len(ds))
	for _, d := range ds {
		r := p.DefRange
		switch d.Attribute {
		case "":
		case "plugin":
			r = p.PluginRange
		default:
			if ar, ok := attributeRange(p.Body, d.Attribute); ok {
				r = ar
			}
		}
		out = append(out, pluginDiag(d, r, p.What()))
	}
	return out
}

// AttributeRange returns the source range of attribute name's value in body, or
// body.MissingItemRange() when the body does not set it.
func AttributeRange(body hcl.Body, name string) hcl.Range {
	if r, ok := attributeRange(body, name); ok {
		return r
	}
	return body.MissingItemRange()
}

// PluginDiagnostics converts a plugin's diagnostics into HCL ones pointing at
// the attributes they name in body (see AttributeRange). PluginBlock.Diagnostics
// does better for plugin blocks: it points block-level complaints at the header.
func PluginDiagnostics(body hcl.Body, ds sdk.Diagnostics) hcl.Diagnostics {
	out := make(hcl.Diagnostics, 0, len(ds))
	for _, d := range ds {
		r := body.MissingItemRange()
		if d.Attribute != "" {
			r = AttributeRange(body, d.Attribute)
		}
		out = append(out, pluginDiag(d, r, ""))
	}
	return out
}

func pluginDiag(d sdk.Diagnostic, r hcl.Range, what string) *hcl.Diagnostic {
	sev := hcl.DiagError
	if d.Severity == sdk.SeverityWarning {
		sev = hcl.DiagWarning
	}
	detail := d.Detail
	if d.Attribute != "" {
		detail = strings.TrimSpace(fmt.Sprintf("Attribute %q. %s", d.Attribute, detail))
	}
	if what != "" {
		detail = strings.TrimSpace(fmt.Sprintf("In the %s: %s", what, detail))
	}
	return &hcl.Diagnostic{Severity: sev, Summary: d.Summary, Detail: detail, Subject: r.Ptr()}
}

func attributeRange(body hcl.Body, name string) (hcl.Range, bool) {
	if body == nil {
		return hcl.Range{}, false
	}
	c, _, _ := body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: name}}})
	if a, ok := c.Attributes[name]; ok {
		return a.Expr.Range(), true
	}
	return hcl.Range{}, false
}

// pluginHostAttrs are the attributes the host takes from every plugin block.
var pluginHostAttrs = []string{"plugin", "isolation"}

// decoder decodes attribute-only bodies against an sdk.Schema.
type decoder struct {
	ctx *hcl.EvalContext
	// nrCPUs bounds cpulist values; 0 means MaxCPUs without "N" and "all".
	nrCPUs int
	// hostAttrs and hostBlocks were taken from the body before (they are hidden
	// in it); they count as allowed in suggestions and messages.
	hostAttrs  []string
	hostBlocks []hcl.BlockHeaderSchema
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
	return cfg, diags
}

// attribute decodes one written attribute. ok is false for null (treated as
// absent) and on error.
func (d decoder) attribute(attr *hcl.Attribute, a sdk.Attribute, what string) (v string, ok bool, diags hcl.Diagnostics) {
	val, diags := evalExpr(attr.Expr, d.ctx)
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
	var val cty.Value
	switch a.Type {
	case sdk.TypeNumber, TypeInteger:
		n, err := cty.ParseNumberVal(a.Default)
		if err != nil {
			return "", fmt.Errorf("not a number")
		}
		val = n
	case sdk.TypeBool:
		switch a.Default {
		case "true":
			val = cty.True
		case "false":
			val = cty.False
		default:
			return "", fmt.Errorf("not true or false")
		}
	default:
		val = cty.StringVal(a.Default)
	}
	return d.canonical(val, a)
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
func (d decoder) canonical(val cty.Value, a sdk.Attribute) (string, error) {
	v, err := d.convert(val, a)
	if err != nil {
		return "", err
	}
	if len(a.OneOf) > 0 && !containsString(a.OneOf, v) {
		return "", fmt.Errorf("%q is not one of %s.%s", v, quoteList(a.OneOf), didYouMean(v, a.OneOf))
	}
	return v, nil
}

func (d decoder) convert(val cty.Value, a sdk.Attribute) (string, error) {
	switch a.Type {
	case sdk.TypeString:
		s, err := convert.Convert(val, cty.String)
		if err != nil {
			return "", fmt.Errorf("a string is required, got %s", val.Type().FriendlyName())
		}
		return s.AsString(), nil
	case sdk.TypeBool:
		b, err := convert.Convert(val, cty.Bool)
		if err != nil {
			return "", fmt.Errorf("true or false is required, got %s", describe(val))
		}
		return strconv.FormatBool(b.True()), nil
	case sdk.TypeNumber:
		f, err := toBigFloat(val)
		if err != nil {
			return "", err
		}
		x, _ := f.Float64()
		if math.IsInf(x, 0) {
			return "", fmt.Errorf("%s is too large", f.Text('g', 10))
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case TypeInteger:
		f, err := toBigFloat(val)
		if err != nil {
			return "", err
		}
		i, err := wholeNumber(f)
		if err != nil {
			return "", err
		}
		return i.String(), nil
	case sdk.TypeDuration:
		s, err := unitString(val, "duration", "us")
		if err != nil {
			return "", err
		}
		ns, err := ktime.ParseDuration(s)
		if err != nil {
			return "", unitError(err)
		}
		return strconv.FormatInt(ns, 10), nil
	case sdk.TypeFrequency:
		s, err := unitString(val, "frequency", "MHz")
		if err != nil {
			return "", err
		}
		hz, err := ktime.ParseFrequency(s)
		if err != nil {
			return "", unitError(err)
		}
		return strconv.FormatFloat(hz, 'g', -1, 64), nil
	case TypeCPUList:
		cpus, err := d.cpuList(val)
		if err != nil {
			return "", err
		}
		return FormatCPUList(cpus), nil
	}
	return "", fmt.Errorf("the schema declares unknown type %q", a.Type)
}

// cpuList reads a list of CPU numbers, one number, or a cpulist string.
func (d decoder) cpuList(val cty.Value) ([]int, error) {
	bound, dynamic := d.nrCPUs, true
	if bound <= 0 {
		bound, dynamic = MaxCPUs, false
	}
	ty := val.Type()
	switch {
	case ty == cty.String:
		if dynamic {
			return ParseCPUListFor(val.AsString(), bound)
		}
		return ParseCPUList(val.AsString())
	case ty == cty.Number:
		c, err := cpuNumber(val, bound)
		if err != nil {
			return nil, err
		}
		return []int{c}, nil
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		var cpus []int
		for it := val.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			if ev.IsNull() {
				return nil, fmt.Errorf("a CPU list must not hold null")
			}
			n, err := convert.Convert(ev, cty.Number)
			if err != nil {
				return nil, fmt.Errorf("a CPU list holds CPU numbers, got %s", ev.Type().FriendlyName())
			}
			c, err := cpuNumber(n, bound)
			if err != nil {
				return nil, err
			}
			cpus = append(cpus, c)
		}
		return cpus, nil
	}
	return nil, fmt.Errorf("a CPU list ([4, 5] or \"4-5\") is required, got %s", ty.FriendlyName())
}

func cpuNumber(val cty.Value, nrCPUs int) (int, error) {
	i, err := wholeNumber(val.AsBigFloat())
	if err != nil {
		return 0, err
	}
	if i.Sign() < 0 || !i.IsInt64() || i.Int64() >= int64(nrCPUs) {
		return 0, fmt.Errorf("%w: CPU %s does not exist (CPUs are 0-%d)", ErrCPUListRange, i, nrCPUs-1)
	}
	return int(i.Int64()), nil
}

var (
	minInteger = new(big.Int).SetInt64(math.MinInt64)
	maxInteger = new(big.Int).SetUint64(math.MaxUint64)
)

func wholeNumber(f *big.Float) (*big.Int, error) {
	if f.IsInf() || !f.IsInt() {
		return nil, fmt.Errorf("a whole number is required, got %s", f.Text('g', 10))
	}
	i, _ := f.Int(nil)
	if i.Cmp(minInteger) < 0 || i.Cmp(maxInteger) > 0 {
		return nil, fmt.Errorf("%s is out of range", i)
	}
	return i, nil
}

func toBigFloat(val cty.Value) (*big.Float, error) {
	n, err := convert.Convert(val, cty.Number)
	if err != nil {
		return nil, fmt.Errorf("a number is required, got %s", describe(val))
	}
	return n.AsBigFloat(), nil
}

// unitString insists on a string: a bare number has no unit, and guessing one
// would silently change an experiment.
func unitString(val cty.Value, kind, unit string) (string, error) {
	if val.Type() == cty.Number {
		return "", fmt.Errorf("a %s needs a unit: write it as a string, e.g. \"%s%s\"", kind, val.AsBigFloat().Text('g', -1), unit)
	}
	if val.Type() != cty.String {
		return "", fmt.Errorf("a %s is a string with a unit, got %s", kind, val.Type().FriendlyName())
	}
	return val.AsString(), nil
}

// unitError drops ktime's package prefix: the diagnostic already says where.
func unitError(err error) error {
	return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "ktime: "))
}

func describe(val cty.Value) string {
	if val.Type() == cty.String {
		return strconv.Quote(val.AsString())
	}
	return val.Type().FriendlyName()
}

func valueError(attr *hcl.Attribute, name, what, msg string) *hcl.Diagnostic {
	in := ""
	if what != "" {
		in = " in the " + what
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Invalid value for %q", name),
		Detail:   fmt.Sprintf("%q%s: %s", name, in, sentence(msg)),
		Subject:  attr.Expr.Range().Ptr(),
		Context:  attr.Range.Ptr(),
	}
}

// sentence ends msg with a full stop unless it has one.
func sentence(msg string) string {
	if strings.HasSuffix(msg, ".") || strings.HasSuffix(msg, "?") {
		return msg
	}
	return msg + "."
}
