package config

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/tickemu/tickemu/internal/suggest"
)

// MaxDiagnostics bounds how many distinct diagnostics WriteDiagnostics prints;
// the rest are counted. A broken file can give thousands, and the first few
// are the ones to fix.
const MaxDiagnostics = 20

// WriteDiagnostics prints diags with source snippets from files (Spec.Files),
// unwrapped (width 0), in color when color is set (only for a terminal).
//
// Diagnostics with the same severity, summary and detail are printed once,
// followed by where the others are; at most MaxDiagnostics are printed, then
// how many more there are. Control characters from the source or in messages
// are escaped (\x00, \x1b), so a file cannot garble or forge the output.
func WriteDiagnostics(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File, color bool) error {
	type group struct {
		first  *hcl.Diagnostic
		others []*hcl.Diagnostic
	}
	var groups []*group
	index := map[[3]string]*group{}
	for _, d := range diags {
		key := [3]string{strconv.Itoa(int(d.Severity)), d.Summary, d.Detail}
		if g, ok := index[key]; ok {
			g.others = append(g.others, d)
			continue
		}
		g := &group{first: d}
		index[key] = g
		groups = append(groups, g)
	}
	ew := &escapingWriter{w: w}
	out := io.Writer(ew)
	if color {
		// The writer's own color sequences must pass; the source and the
		// messages are escaped before they reach it instead.
		out = w
	}
	printable := printableFiles(files)
	for i, g := range groups {
		if i == MaxDiagnostics {
			var errs, warns int
			for _, g := range groups[i:] {
				n := 1 + len(g.others)
				if g.first.Severity == hcl.DiagError {
					errs += n
				} else {
					warns += n
				}
			}
			_, err := fmt.Fprintf(out, "%s not shown (only the first %d distinct diagnostics are printed).\n", countMore(errs, warns), MaxDiagnostics)
			return cmp.Or(err, ew.err)
		}
		d := *g.first
		d.Summary, d.Detail = escapeControl(d.Summary), escapeControl(d.Detail)
		fs := printable
		if d.Subject != nil {
			if f := printable[d.Subject.Filename]; f != nil {
				if src, subj, ok := elideLongLine(f.Bytes, *d.Subject); ok {
					fs = maps.Clone(printable)
					fs[subj.Filename] = &hcl.File{Body: f.Body, Bytes: src, Nav: f.Nav}
					d.Subject, d.Context = &subj, nil
				}
			}
		}
		if err := hcl.NewDiagnosticTextWriter(out, fs, 0, color).WriteDiagnostic(&d); err != nil {
			return err
		}
		if len(g.others) > 0 {
			if _, err := fmt.Fprintf(out, "The same %s is reported at %d more places: %s.\n\n", severityWord(g.first.Severity), len(g.others), places(g.others)); err != nil {
				return err
			}
		}
	}
	return ew.err
}

func severityWord(s hcl.DiagnosticSeverity) string {
	if s == hcl.DiagError {
		return "error"
	}
	return "warning"
}

func countMore(errs, warns int) string {
	plural := func(n int, what string) string {
		if n == 1 {
			return "1 more " + what
		}
		return fmt.Sprintf("%d more %ss", n, what)
	}
	switch {
	case errs > 0 && warns > 0:
		return plural(errs, "error") + " and " + plural(warns, "warning")
	case errs > 0:
		return plural(errs, "error")
	}
	return plural(warns, "warning")
}

// places lists where ds are, the first few of them.
func places(ds []*hcl.Diagnostic) string {
	const shown = 5
	var ps []string
	for _, d := range ds[:min(len(ds), shown)] {
		if d.Subject == nil {
			ps = append(ps, "(no position)")
			continue
		}
		ps = append(ps, fmt.Sprintf("%s:%d,%d", escapeControl(d.Subject.Filename), d.Subject.Start.Line, d.Subject.Start.Column))
	}
	if len(ds) > shown {
		ps = append(ps, fmt.Sprintf("and %d more", len(ds)-shown))
	}
	return strings.Join(ps, ", ")
}

// isControl reports the runes that move the cursor, ring, erase or start an
// escape sequence on a terminal: C0 (but tab and newline), DEL and C1.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r <= 0x9f)
}

// escapeControl writes every control rune of s as \xNN (\u00NN for C1).
// Bytes that are not UTF-8 pass as they are.
func escapeControl(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r < 0x80 && isControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		case r != utf8.RuneError && isControl(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// printableFiles copies files with each control byte of the source replaced
// by '?', so snippets keep their byte offsets (which the highlighting uses)
// yet print nothing a terminal would act on.
func printableFiles(files map[string]*hcl.File) map[string]*hcl.File {
	out := make(map[string]*hcl.File, len(files))
	for name, f := range files {
		if f == nil || !bytes.ContainsFunc(f.Bytes, isControl) {
			out[name] = f
			continue
		}
		src := []byte(string(f.Bytes))
		for i := 0; i < len(src); {
			r, n := utf8.DecodeRune(src[i:])
			if isControl(r) {
				for j := range n {
					src[i+j] = '?'
				}
			}
			i += n
		}
		out[name] = &hcl.File{Body: f.Body, Bytes: src, Nav: f.Nav}
	}
	return out
}

// maxSnippetLine bounds the source line a diagnostic prints: a longer line
// (a minified or generated file, 100,000 brackets) is cut to a window around
// the place the diagnostic points at.
const maxSnippetLine = 160

// elideLongLine returns src with the line of subj's start cut to about
// maxSnippetLine bytes around subj, marked with "…", and subj moved to match;
// ok is false when the line is short enough.
func elideLongLine(src []byte, subj hcl.Range) (out []byte, moved hcl.Range, ok bool) {
	start, end := subj.Start.Byte, subj.End.Byte
	if start < 0 || start > len(src) || end < start {
		return nil, subj, false
	}
	ls := bytes.LastIndexByte(src[:start], '\n') + 1
	le := len(src)
	if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
		le = start + i
	}
	if le-ls <= maxSnippetLine {
		return nil, subj, false
	}
	const margin = maxSnippetLine / 4
	ws := max(ls, start-margin)
	we := min(le, max(min(end, le), start+1)+margin, ws+maxSnippetLine)
	// Cut on rune boundaries.
	for ws > ls && !utf8.RuneStart(src[ws]) {
		ws--
	}
	for we < le && !utf8.RuneStart(src[we]) {
		we++
	}
	const ellipsis = "…"
	var b bytes.Buffer
	b.Write(src[:ls])
	shift := ws - ls
	if ws > ls {
		b.WriteString(ellipsis)
		shift -= len(ellipsis)
	}
	b.Write(src[ws:we])
	if we < le {
		b.WriteString(ellipsis)
	}
	b.Write(src[le:])
	moved = subj
	moved.Start.Byte -= shift
	moved.Start.Column = utf8.RuneCount(b.Bytes()[ls:moved.Start.Byte]) + 1
	if end > we {
		end = we
	}
	moved.End = moved.Start
	moved.End.Byte = end - shift
	moved.End.Column = moved.Start.Column + utf8.RuneCount(src[start:end])
	return b.Bytes(), moved, true
}

// escapingWriter escapes control characters in what HCL's writer prints
// without color, where it prints none of its own but newlines; err keeps the
// first write error.
type escapingWriter struct {
	w   io.Writer
	err error
}

func (e *escapingWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if _, e.err = io.WriteString(e.w, escapeControl(string(p))); e.err != nil {
		return 0, e.err
	}
	return len(p), nil
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
	best := suggest.Nearest(given, candidates)
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
// declared names instead of HCL's bare "no attribute" message. What the
// evaluation builds is charged to b (nil: a budget of its own).
//
// It also refuses numbers of extreme magnitude, in literals before evaluation
// and in the result after it (see maxNumberExp), and infinite results.
func evalExpr(expr hcl.Expression, ctx *hcl.EvalContext, b *budget) (cty.Value, hcl.Diagnostics) {
	diags := checkLiterals(expr)
	diags = append(diags, checkVarRefs(expr, ctx)...)
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	if b == nil {
		b = &budget{}
	}
	ectx := budgetContext(ctx, b, expr)
	budgets.Store(ectx, b)
	v, diags := expr.Value(ectx)
	budgets.Delete(ectx)
	if diags.HasErrors() {
		return v, diags
	}
	if hugeValue(v) {
		return cty.DynamicVal, append(diags, hugeNumberError(expr.Range()))
	}
	if nonFinite(v) {
		return cty.DynamicVal, append(diags, nonFiniteError(expr.Range(), v))
	}
	// The value may share parts (a variable used twice) that the hash and
	// the decoders expand: charge it as expanded.
	if !b.spent {
		if err := b.charge(v); err != nil {
			b.spent = true
			return cty.DynamicVal, append(diags, tooLargeError(expr.Range()))
		}
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
	visitAll(node, func(n hclsyntax.Node) {
		if lit, ok := n.(*hclsyntax.LiteralValueExpr); ok && lit.Val.Type() == cty.Number && !lit.Val.IsNull() && hugeNumber(lit.Val.AsBigFloat()) {
			diags = append(diags, hugeNumberError(lit.SrcRange))
		}
	})
	return diags
}

func checkVarRefs(expr hcl.Expression, ctx *hcl.EvalContext) hcl.Diagnostics {
	vars, ok := lookupVar(ctx)
	if !ok || !vars.Type().IsObjectType() {
		return nil
	}
	var diags hcl.Diagnostics
	for _, tr := range traversals(expr) {
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

// traversals lists the variable references in expr, as expr.Variables does,
// through counted nodes too (which hide a reference they wrap from it). A name
// that a for expression declares is listed too; only var.NAME matters here.
func traversals(expr hcl.Expression) []hcl.Traversal {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return expr.Variables()
	}
	var out []hcl.Traversal
	visitAll(node, func(n hclsyntax.Node) {
		if st, ok := n.(*hclsyntax.ScopeTraversalExpr); ok {
			out = append(out, st.Traversal)
		}
	})
	return out
}

func lookupVar(ctx *hcl.EvalContext) (cty.Value, bool) {
	for c := ctx; c != nil; c = c.Parent() {
		if v, ok := c.Variables["var"]; ok {
			return v, true
		}
	}
	return cty.NilVal, false
}
