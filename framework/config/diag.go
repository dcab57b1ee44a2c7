package config

import (
	"cmp"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// WriteDiagnostics prints diags with source snippets from files (Spec.Files),
// unwrapped (width 0), in color when color is set (only for a terminal).
func WriteDiagnostics(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File, color bool) error {
	return hcl.NewDiagnosticTextWriter(w, files, 0, color).WriteDiagnostics(diags)
}

// explainUnsupported appends the allowed names to HCL's "Unsupported argument"
// and "Unsupported block type" diagnostics, which already carry a "Did you
// mean" hint when a name is close.
func explainUnsupported(diags hcl.Diagnostics, schema *hcl.BodySchema, what string) hcl.Diagnostics {
	for _, d := range diags {
		switch d.Summary {
		case "Unsupported argument", "Unsupported block type":
			d.Detail += " " + allowedNames(schema, what)
		}
	}
	return diags
}

func allowedNames(schema *hcl.BodySchema, what string) string {
	var attrs, blocks []string
	for _, a := range schema.Attributes {
		attrs = append(attrs, a.Name)
	}
	for _, b := range schema.Blocks {
		if !containsString(blocks, b.Type) {
			blocks = append(blocks, b.Type)
		}
	}
	slices.Sort(attrs)
	var parts []string
	if len(attrs) > 0 {
		parts = append(parts, "arguments: "+strings.Join(attrs, ", "))
	} else {
		parts = append(parts, "no arguments")
	}
	if len(blocks) > 0 {
		parts = append(parts, "blocks: "+strings.Join(blocks, ", "))
	}
	return fmt.Sprintf("The %s allows %s.", what, strings.Join(parts, "; "))
}

// UnknownNameError reports a name that matches nothing known, such as a
// workload type or a plugin name, at r (a label or attribute value), with the
// nearest known name and the full list. what says what the name should be
// ("workload type", "clockevent plugin").
func UnknownNameError(r hcl.Range, what, name string, known []string) *hcl.Diagnostic {
	list := "none"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	return errorAt(r, "Unknown "+what, "There is no %s %q.%s Known: %s.", what, name, didYouMean(name, known), list)
}

// didYouMean returns ` Did you mean "x"?` for the candidate nearest to given
// (edit distance below 3, HCL's own threshold), or "".
func didYouMean(given string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(given, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" Did you mean %q?", best)
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

func containsString(xs []string, x string) bool { return slices.Contains(xs, x) }

// sortDiags orders diagnostics by source position (those without one first)
// so output does not depend on map iteration inside HCL. The sort is stable.
func sortDiags(diags hcl.Diagnostics) hcl.Diagnostics {
	slices.SortStableFunc(diags, func(a, b *hcl.Diagnostic) int {
		switch {
		case a.Subject == nil && b.Subject == nil:
			return 0
		case a.Subject == nil:
			return -1
		case b.Subject == nil:
			return 1
		}
		return cmp.Or(
			cmp.Compare(a.Subject.Filename, b.Subject.Filename),
			cmp.Compare(a.Subject.Start.Byte, b.Subject.Start.Byte),
		)
	})
	return diags
}

func errorAt(r hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: r.Ptr()}
}

func warningAt(r hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: r.Ptr()}
}

// evalExpr evaluates expr after checking its var.NAME references against the
// declared variables, so a misspelt name gets a suggestion and the list of
// declared names instead of HCL's bare "no attribute" message.
//
// It also refuses numbers of extreme magnitude, in literals before evaluation
// and in the result after it; see maxNumberExp.
func evalExpr(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	diags := checkLiterals(expr)
	diags = append(diags, checkVarRefs(expr, ctx)...)
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return v, diags
	}
	if hugeValue(v) {
		return cty.DynamicVal, append(diags, hugeNumberError(expr.Range()))
	}
	return v, diags
}

// maxNumberExp bounds the binary exponent of numbers in a configuration, about
// 10^±1233. Go's big.Float prints a number in time and space proportional to
// its decimal exponent, so a literal like 1e99999999 would stall HCL's own
// number-to-string conversions and every message quoting it. No emulator
// parameter comes anywhere near the bound.
const maxNumberExp = 4096

func hugeNumber(f *big.Float) bool {
	if f.IsInf() || f.Sign() == 0 {
		return false
	}
	e := f.MantExp(nil)
	return e > maxNumberExp || e < -maxNumberExp
}

func hugeValue(v cty.Value) bool {
	huge := false
	_ = cty.Walk(v, func(_ cty.Path, x cty.Value) (bool, error) {
		if x.IsKnown() && !x.IsNull() && x.Type() == cty.Number && hugeNumber(x.AsBigFloat()) {
			huge = true
		}
		return !huge, nil
	})
	return huge
}

func hugeNumberError(r hcl.Range) *hcl.Diagnostic {
	return errorAt(r, "Number out of range",
		"Numbers in a configuration must lie between 1e-1233 and 1e1233 in magnitude (or be 0).")
}

func checkLiterals(expr hcl.Expression) hcl.Diagnostics {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return nil
	}
	var diags hcl.Diagnostics
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		if lit, ok := n.(*hclsyntax.LiteralValueExpr); ok && lit.Val.Type() == cty.Number && !lit.Val.IsNull() && hugeNumber(lit.Val.AsBigFloat()) {
			diags = append(diags, hugeNumberError(lit.SrcRange))
		}
		return nil
	})
	return diags
}

func checkVarRefs(expr hcl.Expression, ctx *hcl.EvalContext) hcl.Diagnostics {
	vars, ok := lookupVar(ctx)
	if !ok || !vars.Type().IsObjectType() {
		return nil
	}
	var diags hcl.Diagnostics
	for _, tr := range expr.Variables() {
		if tr.RootName() != "var" || len(tr) < 2 {
			continue
		}
		step, ok := tr[1].(hcl.TraverseAttr)
		if !ok || vars.Type().HasAttribute(step.Name) {
			continue
		}
		var names []string
		for n := range vars.Type().AttributeTypes() {
			names = append(names, n)
		}
		slices.Sort(names)
		declared := "No variables are declared."
		if len(names) > 0 {
			declared = "Declared variables: " + strings.Join(names, ", ") + "."
		}
		diags = append(diags, errorAt(tr.SourceRange(), "Undeclared variable",
			"No variable %q is declared.%s %s", step.Name, didYouMean(step.Name, names), declared))
	}
	return diags
}

func lookupVar(ctx *hcl.EvalContext) (cty.Value, bool) {
	for c := ctx; c != nil; c = c.Parent() {
		if v, ok := c.Variables["var"]; ok {
			return v, true
		}
	}
	return cty.NilVal, false
}
