package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/tickemu/tickemu/framework/termtext"
)

// variable is a declared `variable "NAME"` block.
type variable struct {
	name       string
	def        cty.Value // cty.NilVal: no default
	defRange   hcl.Range
	nameRange  hcl.Range
	hasDefault bool
}

// variant is a `variant "NAME"` block.
type variant struct {
	name string
	vars map[string]cty.Value
	keys []string // file order
}

var (
	variableSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "default"}, {Name: "description"}}}
	variantSchema  = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "vars"}, {Name: "description"}}}
)

// decodeVariables reads the variable blocks. Defaults are literals: they are
// evaluated without variables or functions, as Terraform does.
func (l *loader) decodeVariables(blocks hcl.Blocks) {
	for _, b := range blocks {
		name := b.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			l.diags = append(l.diags, errorAt(b.LabelRanges[0], "Invalid variable name",
				"%q is not a valid identifier: use letters, digits, underscores and dashes, not starting with a digit or dash.", name))
			continue
		}
		if prev, ok := l.varIndex[name]; ok {
			l.diags = append(l.diags, errorAt(b.LabelRanges[0], "Duplicate variable",
				"Variable %q was already declared at %s.", name, l.vars[prev].defRange))
			continue
		}
		content, diags := b.Body.Content(variableSchema)
		l.diags = append(l.diags, explainUnsupported(diags, variableSchema, fmt.Sprintf("variable %q block", name))...)
		v := variable{name: name, defRange: b.DefRange, nameRange: b.LabelRanges[0]}
		if a := content.Attributes["default"]; a != nil {
			val, diags := evalExpr(a.Expr, nil, l.budget)
			l.diags = append(l.diags, diags...)
			if !diags.HasErrors() {
				// default = null is a value: an attribute set to the
				// variable is then unset (its default, or the kernel
				// version's value), as in Terraform.
				v.def, v.hasDefault = val, true
			}
		}
		if a := content.Attributes["description"]; a != nil {
			l.stringAttr(a, "description")
		}
		l.varIndex[name] = len(l.vars)
		l.vars = append(l.vars, v)
	}
}

// decodeVariants reads the variant blocks; each is checked even when not
// selected, so `compare` finds a typo in any of them.
func (l *loader) decodeVariants(blocks hcl.Blocks) {
	seen := map[string]hcl.Range{}
	for _, b := range blocks {
		name := b.Labels[0]
		if name == "" || strings.ContainsAny(name, ", \t\n") || !termtext.Clean(name) {
			// The name is printed in every table and benchmark line: a
			// control character would reach the terminal (termtext).
			l.diags = append(l.diags, errorAt(b.LabelRanges[0], "Invalid variant name",
				"%q is not a valid variant name: it must be non-empty, without commas, spaces or control characters (--variants takes a comma list).", name))
			continue
		}
		if prev, ok := seen[name]; ok {
			l.diags = append(l.diags, errorAt(b.LabelRanges[0], "Duplicate variant",
				"Variant %q was already defined at %s.", name, prev))
			continue
		}
		seen[name] = b.DefRange
		what := fmt.Sprintf("variant %q block", name)
		content, diags := b.Body.Content(variantSchema)
		l.diags = append(l.diags, explainUnsupported(diags, variantSchema, what)...)
		vt := variant{name: name, vars: map[string]cty.Value{}}
		if a := content.Attributes["vars"]; a != nil {
			l.variantVars(a, &vt)
		}
		if a := content.Attributes["description"]; a != nil {
			l.stringAttr(a, "description")
		}
		l.variants = append(l.variants, vt)
	}
}

func (l *loader) variantVars(a *hcl.Attribute, vt *variant) {
	pairs, diags := hcl.ExprMap(a.Expr)
	if diags.HasErrors() {
		l.diags = append(l.diags, errorAt(a.Expr.Range(), "Invalid vars",
			"vars in variant %q must be an object of variable values: vars = { name = value }.", vt.name))
		return
	}
	for _, kv := range pairs {
		kval, diags := evalExpr(kv.Key, nil, l.budget)
		if diags.HasErrors() || kval.IsNull() || kval.Type() != cty.String {
			l.diags = append(l.diags, errorAt(kv.Key.Range(), "Invalid variable name",
				"Keys of vars in variant %q are variable names.", vt.name))
			continue
		}
		key := kval.AsString()
		if _, ok := l.varIndex[key]; !ok {
			l.diags = append(l.diags, l.undeclared(kv.Key.Range(), key, fmt.Sprintf("variant %q sets", vt.name)))
			continue
		}
		if _, dup := vt.vars[key]; dup {
			l.diags = append(l.diags, errorAt(kv.Key.Range(), "Duplicate variable in variant",
				"Variant %q sets %q twice.", vt.name, key))
			continue
		}
		val, diags := evalExpr(kv.Value, nil, l.budget)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		vt.vars[key] = val
		vt.keys = append(vt.keys, key)
	}
}

// undeclared reports a reference to a variable no block declares.
func (l *loader) undeclared(r hcl.Range, name, who string) *hcl.Diagnostic {
	d := errorAt(r, "Undeclared variable", "%s %q, but no variable %q block declares it.%s %s",
		who, name, name, didYouMean(name, l.varNames()), l.declaredList())
	if r == (hcl.Range{}) {
		d.Subject = nil
	}
	return d
}

func (l *loader) varNames() []string {
	names := make([]string, len(l.vars))
	for i, v := range l.vars {
		names[i] = v.name
	}
	return names
}

func (l *loader) declaredList() string {
	if len(l.vars) == 0 {
		return "The file declares no variables."
	}
	return "Declared variables: " + strings.Join(l.varNames(), ", ") + "."
}

// resolveVariables applies the precedence default < variant < --var and
// builds the evaluation context.
func (l *loader) resolveVariables(swept map[string]SweepValue) {
	vals := make([]cty.Value, len(l.vars))
	src := make([]VarSource, len(l.vars))
	for i, v := range l.vars {
		if v.hasDefault {
			vals[i], src[i] = v.def, VarFromDefault
		}
	}
	if name := l.opts.Variant; name != "" {
		i := slices.IndexFunc(l.variants, func(v variant) bool { return v.name == name })
		if i < 0 {
			names := make([]string, len(l.variants))
			for j, v := range l.variants {
				names[j] = v.name
			}
			known := "The file defines no variants."
			if len(names) > 0 {
				known = "Known variants: " + strings.Join(names, ", ") + "."
			}
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown variant",
				Detail: fmt.Sprintf("No variant %q is defined.%s %s", name, didYouMean(name, names), known)})
		} else {
			vt := l.variants[i]
			for _, k := range vt.keys {
				j := l.varIndex[k]
				vals[j], src[j] = vt.vars[k], VarFromVariant
			}
			l.spec.Variant = name
		}
	}
	for _, name := range slices.Sorted(maps.Keys(swept)) {
		i, sv := l.varIndex[name], swept[name]
		if src[i] == VarFromVariant {
			l.diags = append(l.diags, errorAt(sv.Range, "Sweep of a variable the variant sets",
				"The sweep sets %q, which variant %q sets too: the sweep would hide the variant's value. Sweep another setting, or compare without that variant.", name, l.opts.Variant))
			continue
		}
		vals[i], src[i] = sv.Value, VarFromSweep
	}
	for _, h := range l.hiddenVars {
		if i, ok := l.varIndex[h.name]; ok && src[i] == VarFromVariant {
			l.diags = append(l.diags, errorAt(h.at, "Sweep of a setting the variant sets",
				"The sweep %s replaces the file's setting at %s, which reads var.%s, which variant %q sets: the sweep would hide the variant's value (every variant would run alike). Either compare the variants without this sweep, or sweep it without the variants (compare --no-variants).",
				h.sweep, h.attr, h.name, l.opts.Variant))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(l.opts.Vars)) {
		i, ok := l.varIndex[name]
		if !ok {
			l.diags = append(l.diags, l.undeclared(hcl.Range{}, name, "--var sets"))
			continue
		}
		if src[i] == VarFromSweep {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "--var sets a swept variable",
				Detail: fmt.Sprintf("--var %s=%s sets %q, which a sweep sets at every point; drop one of them.", name, l.opts.Vars[name], name)})
			continue
		}
		if src[i] == VarFromVariant {
			// Not an error (it is how one tries a value on top of a
			// variant), but never silent: the variant no longer says what ran.
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "--var overrides the variant",
				Detail: fmt.Sprintf("--var %s=%s replaces the value %s that variant %q sets for %q.", name, l.opts.Vars[name], ctyText(vals[i]), l.opts.Variant, name)})
		}
		vals[i], src[i] = ParseVarValue(l.opts.Vars[name]), VarFromCLI
	}
	obj := make(map[string]cty.Value, len(l.vars))
	for i, v := range l.vars {
		if vals[i] == cty.NilVal {
			l.diags = append(l.diags, errorAt(v.nameRange, "No value for variable",
				"Variable %q has no default; set it in the selected variant or with --var %s=VALUE.", v.name, v.name))
			vals[i] = cty.DynamicVal
			continue
		}
		obj[v.name] = vals[i]
		l.spec.Vars = append(l.spec.Vars, Var{Name: v.name, Value: vals[i], Source: src[i]})
	}
	l.ctx = &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(obj)},
		Functions: Functions(),
	}
}

// ParseVarValue reads a --var value: an HCL expression without variables or
// function calls (8, 1.5, true, [4, 5], "quoted", {a = 1}) gives its value;
// anything else, such as max_hang_time or 250us, is taken as the string itself.
func ParseVarValue(s string) cty.Value {
	if len(s) > MaxFileBytes || checkNesting([]byte(s), "--var", hcl.InitialPos).HasErrors() {
		return cty.StringVal(s)
	}
	expr, diags := hclsyntax.ParseExpression([]byte(s), "--var", hcl.InitialPos)
	if !diags.HasErrors() {
		instrument(expr)
		v, diags := evalExpr(expr, nil, nil)
		if !diags.HasErrors() && !v.IsNull() && v.IsWhollyKnown() {
			return v
		}
	}
	return cty.StringVal(s)
}

// Functions returns the functions a config file may call: deterministic ones
// from go-cty's stdlib, plus try and can. Nothing reads the clock, the
// environment or files, so a file evaluates the same everywhere.
func Functions() map[string]function.Function {
	return map[string]function.Function{
		"abs":       stdlib.AbsoluteFunc,
		"can":       tryfunc.CanFunc,
		"ceil":      stdlib.CeilFunc,
		"coalesce":  stdlib.CoalesceFunc,
		"concat":    stdlib.ConcatFunc,
		"contains":  stdlib.ContainsFunc,
		"distinct":  stdlib.DistinctFunc,
		"element":   stdlib.ElementFunc,
		"flatten":   stdlib.FlattenFunc,
		"floor":     stdlib.FloorFunc,
		"join":      stdlib.JoinFunc,
		"length":    stdlib.LengthFunc,
		"log":       stdlib.LogFunc,
		"lookup":    stdlib.LookupFunc,
		"lower":     stdlib.LowerFunc,
		"max":       stdlib.MaxFunc,
		"merge":     stdlib.MergeFunc,
		"min":       stdlib.MinFunc,
		"parseint":  stdlib.ParseIntFunc,
		"pow":       stdlib.PowFunc,
		"range":     stdlib.RangeFunc,
		"replace":   stdlib.ReplaceFunc,
		"reverse":   stdlib.ReverseListFunc,
		"signum":    stdlib.SignumFunc,
		"slice":     stdlib.SliceFunc,
		"sort":      stdlib.SortFunc,
		"split":     stdlib.SplitFunc,
		"strlen":    stdlib.StrlenFunc,
		"substr":    stdlib.SubstrFunc,
		"tobool":    stdlib.MakeToFunc(cty.Bool),
		"tonumber":  stdlib.MakeToFunc(cty.Number),
		"tostring":  stdlib.MakeToFunc(cty.String),
		"trimspace": stdlib.TrimSpaceFunc,
		"try":       tryfunc.TryFunc,
		"upper":     stdlib.UpperFunc,
	}
}

// ctyText prints a variable value for a message.
func ctyText(v cty.Value) string {
	if !v.IsKnown() || v.IsNull() {
		return "null"
	}
	if v.Type() == cty.String {
		return strconv.Quote(v.AsString())
	}
	if v.Type() == cty.Number {
		return v.AsBigFloat().Text('g', -1)
	}
	if v.Type() == cty.Bool {
		return strconv.FormatBool(v.True())
	}
	return v.GoString()
}
