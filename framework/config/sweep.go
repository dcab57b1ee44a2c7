package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/tickemu/tickemu/framework/sdk"
)

// A sweep is one axis of an experiment: a setting of the file and the values
// it takes. The points of an experiment are the cartesian product of its
// sweeps (the first sweep varies slowest); each point is loaded as the file
// with every swept setting replaced by the point's value.
//
// A sweep's name addresses the setting:
//
//	NAME                          a declared variable, or else a machine attribute (hz, cpus, ...)
//	var.NAME                      a declared variable
//	machine.ATTR                  an attribute of the machine block
//	kernel.ATTR                   an attribute of the kernel block
//	run.duration, run.warmup      the run's spans (the seed is the seed axis: --seeds)
//	KIND.ATTR                     an attribute of the plugin block of an unlabelled kind (wheel.catchup, governor.plugin)
//	KIND.ROLE.ATTR                the same for a labelled kind (clockevent.local.mode)
//	KIND[.ROLE].PLUGIN.ATTR       an attribute of a plugin settings block (clockevent.local.lapic.arat)
//	workload.TYPE.NAME.ATTR       an attribute of a workload block
//
// The benchmark key of a sweep is its name's last element ("catchup" for
// wheel.catchup), so two sweeps may not end in the same element.
type Sweep struct {
	// Name addresses the setting, as written.
	Name string
	// Key is the benchmark name key the values are written under.
	Key    string
	Values []SweepValue
	// Range is where the sweep is defined: its block's label, or its
	// --sweep flag (file "--sweep", line N for the Nth flag).
	Range hcl.Range
	// FromFlag is set for a --sweep flag.
	FromFlag bool

	target sweepTarget
	src    *hcl.File // the --sweep pseudo file, for diagnostics' snippets
}

// SweepValue is one value of a sweep.
type SweepValue struct {
	// Text is the value in benchmark keys and messages: a string as it is,
	// a number or bool as HCL prints it.
	Text  string
	Value cty.Value
	// Range is where the value is written.
	Range hcl.Range
}

// PointValue is a sweep's value at one point.
type PointValue struct {
	Name, Key string
	SweepValue
}

// Point is one combination of sweep values, in sweep order.
type Point []PointValue

// Key is the point as benchmark name keys: "hz=250/catchup=per_jiffy".
func (p Point) Key() string {
	parts := make([]string, len(p))
	for i, v := range p {
		parts[i] = v.Key + "=" + v.Text
	}
	return strings.Join(parts, "/")
}

// Points returns the cartesian product of sweeps, the first sweep varying
// slowest; one empty point when there are no sweeps.
func Points(sweeps []Sweep) []Point {
	points := []Point{nil}
	for _, s := range sweeps {
		var next []Point
		for _, p := range points {
			for _, v := range s.Values {
				q := append(slices.Clip(p), PointValue{Name: s.Name, Key: s.Key, SweepValue: v})
				next = append(next, q)
			}
		}
		points = next
	}
	return points
}

// PointIndex returns the value index of every sweep at point i of
// Points(sweeps), for Options.Point.
func PointIndex(sweeps []Sweep, i int) []int {
	idx := make([]int, len(sweeps))
	for s := len(sweeps) - 1; s >= 0; s-- {
		n := len(sweeps[s].Values)
		idx[s] = i % n
		i /= n
	}
	return idx
}

// sweepFlagFile names the pseudo file of --sweep flags in diagnostics.
const sweepFlagFile = "--sweep"

// reservedKeys are benchmark name keys tickemu writes itself.
var reservedKeys = []string{"variant", "name", "thread", "seed"}

// ParseSweepFlags reads --sweep NAME=V1,V2,... flags. Values are split at
// commas outside quotes and brackets; each is read as --var reads a value
// (250 is a number, per_jiffy a string, "1,2" the quoted string). The names
// are checked against a file when it is loaded with the sweeps.
func ParseSweepFlags(flags []string) ([]Sweep, hcl.Diagnostics) {
	if len(flags) == 0 {
		return nil, nil
	}
	src := []byte(strings.Join(flags, "\n") + "\n")
	file := &hcl.File{Body: hcl.EmptyBody(), Bytes: src}
	var out []Sweep
	var diags hcl.Diagnostics
	offset := 0
	for i, f := range flags {
		line := i + 1
		at := func(from, to int) hcl.Range {
			return hcl.Range{Filename: sweepFlagFile,
				Start: hcl.Pos{Line: line, Column: from + 1, Byte: offset + from},
				End:   hcl.Pos{Line: line, Column: to + 1, Byte: offset + to}}
		}
		name, list, ok := strings.Cut(f, "=")
		s := Sweep{Name: strings.TrimSpace(name), Range: at(0, len(name)), FromFlag: true, src: file}
		if !ok || s.Name == "" || strings.TrimSpace(list) == "" {
			diags = append(diags, errorAt(at(0, len(f)), "Invalid --sweep",
				"--sweep %q: want NAME=VALUE1,VALUE2,... (for example --sweep hz=100,250,1000).", f))
			offset += len(f) + 1
			continue
		}
		start := len(name) + 1
		for _, part := range splitValues(list) {
			text := strings.TrimSpace(part.text)
			lead := len(part.text) - len(strings.TrimLeft(part.text, " \t"))
			r := at(start+part.at+lead, start+part.at+lead+len(text))
			if text == "" {
				diags = append(diags, errorAt(r, "Empty sweep value", "--sweep %s: a value between commas is empty.", s.Name))
				continue
			}
			s.Values = append(s.Values, SweepValue{Value: ParseVarValue(text), Range: r})
		}
		out = append(out, s)
		offset += len(f) + 1
	}
	return out, diags
}

type valuePart struct {
	text string
	at   int
}

// splitValues splits s at commas that are outside double quotes and
// brackets.
func splitValues(s string) []valuePart {
	var out []valuePart
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '[' || c == '{' || c == '(':
			depth++
		case c == ']' || c == '}' || c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, valuePart{s[start:i], start})
			start = i + 1
		}
	}
	return append(out, valuePart{s[start:], start})
}

var sweepSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "values", Required: true}, {Name: "description"}}}

// decodeSweeps reads the file's `sweep "NAME" { values = [...] }` blocks.
// Values are literals (functions allowed, variables not), as variable
// defaults are.
func (l *loader) decodeSweeps(blocks hcl.Blocks) []Sweep {
	var out []Sweep
	seen := map[string]hcl.Range{}
	for _, b := range blocks {
		name := b.Labels[0]
		if prev, ok := seen[name]; ok {
			l.diags = append(l.diags, errorAt(b.LabelRanges[0], "Duplicate sweep", "A sweep of %q is already defined at %s.", name, prev))
			continue
		}
		seen[name] = b.LabelRanges[0]
		content, diags := b.Body.Content(sweepSchema)
		l.diags = append(l.diags, explainUnsupported(diags, sweepSchema, fmt.Sprintf("sweep %q block", name))...)
		if a := content.Attributes["description"]; a != nil {
			l.stringAttr(a, "description")
		}
		a := content.Attributes["values"]
		if a == nil {
			continue
		}
		s := Sweep{Name: name, Range: b.LabelRanges[0]}
		val, diags := evalExpr(a.Expr, &hcl.EvalContext{Functions: Functions()}, l.budget)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		if val.IsNull() || !(val.Type().IsTupleType() || val.Type().IsListType()) {
			l.diags = append(l.diags, errorAt(a.Expr.Range(), `Invalid value for "values"`,
				`"values" in the sweep %q block: want a list of values, such as [100, 250, 1000].`, name))
			continue
		}
		var elems []hclsyntax.Expression
		if tc, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
			elems = tc.Exprs
		}
		i := 0
		for it := val.ElementIterator(); it.Next(); i++ {
			_, v := it.Element()
			r := a.Expr.Range()
			if i < len(elems) {
				r = elems[i].Range()
			}
			s.Values = append(s.Values, SweepValue{Value: v, Range: r})
		}
		if len(s.Values) == 0 {
			l.diags = append(l.diags, errorAt(a.Expr.Range(), `Invalid value for "values"`,
				`"values" in the sweep %q block: a sweep needs at least one value.`, name))
			continue
		}
		out = append(out, s)
	}
	return out
}

// sweepTarget is what a sweep sets: a variable, or an attribute of a block.
type sweepTarget struct {
	varName string
	// path is the block: its type and labels, then a settings block's type.
	path []string
	attr string
}

func (t sweepTarget) String() string {
	if t.varName != "" {
		return "var." + t.varName
	}
	return strings.Join(append(slices.Clone(t.path), t.attr), ".")
}

// sweepForms lists the names a sweep may have, for messages.
const sweepForms = "a sweep names a variable (NAME or var.NAME), machine.ATTR (or a bare machine attribute such as hz), kernel.ATTR, run.duration, run.warmup, a plugin attribute (wheel.catchup, clockevent.local.mode, clockevent.local.lapic.arat) or workload.TYPE.NAME.ATTR"

// resolveSweeps merges the file's sweeps with the flags' (a flag replaces
// the file's sweep of the same setting), resolves every name against the file
// and checks the values. It returns nil after an error.
func (l *loader) resolveSweeps(file, flags []Sweep) []Sweep {
	var out []Sweep
	ok := true
	add := func(s Sweep) {
		// Options.Sweeps are shared by concurrent loads: work on a copy.
		s.Values = slices.Clone(s.Values)
		t, good := l.resolveSweep(&s)
		if !good {
			ok = false
			return
		}
		s.target = t
		if i := slices.IndexFunc(out, func(o Sweep) bool { return o.target.String() == t.String() }); i >= 0 {
			if s.FromFlag && !out[i].FromFlag {
				out[i] = s // the flag replaces the file's sweep
				return
			}
			l.diags = append(l.diags, errorAt(s.Range, "Duplicate sweep", "%s sets %s, which the sweep %s at %s sets too.", s.Name, t, out[i].Name, out[i].Range))
			ok = false
			return
		}
		out = append(out, s)
	}
	for _, s := range file {
		add(s)
	}
	for _, s := range flags {
		add(s)
	}
	for i := range out {
		s := &out[i]
		for _, o := range out[:i] {
			if o.Key == s.Key {
				l.diags = append(l.diags, errorAt(s.Range, "Sweep key used twice",
					"%s and %s (%s) would both be the benchmark key /%s=...; sweep one of them only.", s.Name, o.Name, o.Range, s.Key))
				ok = false
			}
		}
		texts := map[string]bool{}
		for j := range s.Values {
			v := &s.Values[j]
			text, good := sweepText(v.Value)
			if !good {
				l.diags = append(l.diags, errorAt(v.Range, "Invalid sweep value",
					"%s: a swept value is a string, a number or a bool (it becomes the benchmark key /%s=VALUE); got %s.", s.Name, s.Key, jsonText(v.Value)))
				ok = false
				continue
			}
			if text == "" || strings.ContainsAny(text, "/ \t\n\r=") {
				l.diags = append(l.diags, errorAt(v.Range, "Invalid sweep value",
					"%s: %q cannot be a benchmark key value (/%s=VALUE): it must be non-empty, without '/', '=' or spaces.", s.Name, text, s.Key))
				ok = false
				continue
			}
			if texts[text] {
				l.diags = append(l.diags, errorAt(v.Range, "Duplicate sweep value", "%s lists %s twice.", s.Name, text))
				ok = false
			}
			texts[text] = true
			v.Text = text
		}
	}
	if !ok {
		return nil
	}
	return out
}

// sweepText prints a primitive value for a benchmark key.
func sweepText(v cty.Value) (string, bool) {
	if v.IsNull() || !v.IsWhollyKnown() {
		return "", false
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), true
	case cty.Number:
		return v.AsBigFloat().Text('g', -1), true
	case cty.Bool:
		return strconv.FormatBool(v.True()), true
	}
	return "", false
}

// resolveSweep finds what s.Name addresses in the file and sets s.Key.
func (l *loader) resolveSweep(s *Sweep) (sweepTarget, bool) {
	fail := func(format string, args ...any) (sweepTarget, bool) {
		l.diags = append(l.diags, errorAt(s.Range, "Invalid sweep name", format, args...))
		return sweepTarget{}, false
	}
	parts := strings.Split(s.Name, ".")
	if slices.Contains(parts, "") {
		return fail("%q: %s.", s.Name, sweepForms)
	}
	_, isVar := l.varIndex[parts[0]]
	machineAttr := func(a string) bool { _, ok := MachineSchema.Lookup(a); return ok }
	var machineNames []string
	for _, a := range MachineSchema.Attributes {
		machineNames = append(machineNames, a.Name)
	}
	var t sweepTarget
	switch head, rest := parts[0], parts[1:]; {
	case head == "var":
		if len(rest) != 1 {
			return fail("%q: var.NAME names one variable.", s.Name)
		}
		if _, ok := l.varIndex[rest[0]]; !ok {
			l.diags = append(l.diags, l.undeclared(s.Range, rest[0], "the sweep "+s.Name+" sets"))
			return sweepTarget{}, false
		}
		t.varName = rest[0]
	case len(parts) == 1 && isVar && machineAttr(head):
		return fail("%q is both a variable and a machine attribute: write var.%s or machine.%s.", head, head, head)
	case len(parts) == 1 && isVar:
		t.varName = head
	case len(parts) == 1 && machineAttr(head):
		t.path, t.attr = []string{blockMachine}, head
	case len(parts) == 1:
		names := append(l.varNames(), machineNames...)
		return fail("%q is neither a declared variable nor a machine attribute.%s A%s.", head, didYouMean(head, names), sweepForms[1:])
	case head == blockMachine:
		if len(rest) != 1 || !machineAttr(rest[0]) {
			return fail("%q: machine.ATTR takes one of %s.", s.Name, strings.Join(machineNames, ", "))
		}
		t.path, t.attr = []string{blockMachine}, rest[0]
	case head == blockKernel:
		if len(rest) != 1 {
			return fail("%q: kernel.ATTR names one attribute of the kernel block.", s.Name)
		}
		t.path, t.attr = []string{blockKernel}, rest[0]
	case head == blockRun:
		if len(rest) != 1 || (rest[0] != "duration" && rest[0] != "warmup") {
			what := "run.duration and run.warmup are the run settings a sweep may set"
			if len(rest) == 1 && rest[0] == "seed" {
				what = "seeds are an axis of their own: --seeds N and --seed FIRST"
			}
			return fail("%q: %s.", s.Name, what)
		}
		t.path, t.attr = []string{blockRun}, rest[0]
	case head == blockWorkload:
		if len(rest) != 3 {
			return fail("%q: workload.TYPE.NAME.ATTR names an attribute of one workload block.", s.Name)
		}
		found := false
		for _, b := range l.fileBlocks(blockWorkload) {
			found = found || b.Labels[0] == rest[0] && b.Labels[1] == rest[1]
		}
		if !found {
			return fail("%q: the file has no workload %q %q block.", s.Name, rest[0], rest[1])
		}
		t.path, t.attr = []string{blockWorkload, rest[0], rest[1]}, rest[2]
	default:
		kind := -1
		for i, k := range l.kinds() {
			if string(k) == head {
				kind = i
			}
		}
		if kind < 0 {
			var kinds []string
			for _, k := range l.kinds() {
				kinds = append(kinds, string(k))
			}
			return fail("%q: no block %q.%s A%s.", s.Name, head, didYouMean(head, append(kinds, blockMachine, blockKernel, blockRun, blockWorkload, "var")), sweepForms[1:])
		}
		k := l.kinds()[kind]
		t.path = []string{head}
		if l.labelled(k) {
			if len(rest) < 2 || !slices.Contains(l.roles(k), rest[0]) {
				return fail("%q: %s blocks are labelled: write %s.ROLE.ATTR with ROLE one of %s.", s.Name, head, head, strings.Join(l.roles(k), ", "))
			}
			t.path, rest = append(t.path, rest[0]), rest[1:]
		}
		switch len(rest) {
		case 1:
			t.attr = rest[0]
		case 2:
			t.path, t.attr = append(t.path, rest[0]), rest[1]
		default:
			return fail("%q: %s.", s.Name, sweepForms)
		}
	}
	if t.attr != "" && !hclsyntax.ValidIdentifier(t.attr) {
		return fail("%q: %q is not an attribute name.", s.Name, t.attr)
	}
	s.Key = parts[len(parts)-1]
	if slices.Contains(reservedKeys, s.Key) {
		return fail("%q: its benchmark key /%s=... is one tickemu writes itself (%s); sweep it through a variable of another name.", s.Name, s.Key, strings.Join(reservedKeys, ", "))
	}
	return t, true
}

// fileBlocks are the file's top-level blocks of a type.
func (l *loader) fileBlocks(typ string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range l.file.Body.(*hclsyntax.Body).Blocks {
		if b.Type == typ {
			out = append(out, b)
		}
	}
	return out
}

// applyPoint writes the point's attribute values into the parsed file, in
// place of what the file says (or in addition, for an attribute it omits;
// a block the file omits is added), and returns the variables it sets. The
// new expressions carry the range of the sweep value, so a bad value is
// reported where it is written.
func (l *loader) applyPoint(sweeps []Sweep, idx []int) map[string]SweepValue {
	vars := map[string]SweepValue{}
	for i, s := range sweeps {
		v := s.Values[idx[i]]
		l.spec.point = append(l.spec.point, PointValue{Name: s.Name, Key: s.Key, SweepValue: v})
		if s.target.varName != "" {
			vars[s.target.varName] = v
			continue
		}
		body := l.sweepBody(s.target.path, v.Range, true)
		if prev := body.Attributes[s.target.attr]; prev != nil {
			// The file's expression goes; a variable it read no longer
			// matters here, so a variant setting it would be hidden.
			for _, tr := range prev.Expr.Variables() {
				if step, ok := varStep(tr); ok {
					l.hiddenVars = append(l.hiddenVars, hiddenVar{name: step, sweep: s.Name, at: v.Range, attr: prev.SrcRange})
				}
			}
		}
		a := &hclsyntax.Attribute{Name: s.target.attr, Expr: &hclsyntax.LiteralValueExpr{Val: v.Value, SrcRange: v.Range},
			SrcRange: v.Range, NameRange: v.Range, EqualsRange: v.Range}
		body.Attributes[s.target.attr] = a
	}
	return vars
}

// sweepBody finds (or adds) the block at path.
func (l *loader) sweepBody(path []string, at hcl.Range, create bool) *hclsyntax.Body {
	body := l.file.Body.(*hclsyntax.Body)
	labels := 0
	switch {
	case path[0] == blockWorkload:
		labels = 2
	case len(path) > 1 && path[0] != blockMachine && path[0] != blockKernel && path[0] != blockRun && l.labelled(sdk.Kind(path[0])):
		labels = 1
	}
	find := func(in *hclsyntax.Body, typ string, lbl []string) *hclsyntax.Body {
		for _, b := range in.Blocks {
			if b.Type == typ && slices.Equal(b.Labels, lbl) {
				return b.Body
			}
		}
		if !create {
			return nil
		}
		nb := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}, SrcRange: at, EndRange: at}
		lr := make([]hcl.Range, len(lbl))
		for i := range lr {
			lr[i] = at
		}
		in.Blocks = append(in.Blocks, &hclsyntax.Block{Type: typ, Labels: lbl, Body: nb, TypeRange: at, LabelRanges: lr, OpenBraceRange: at, CloseBraceRange: at})
		return nb
	}
	body = find(body, path[0], path[1:1+labels])
	if rest := path[1+labels:]; len(rest) == 1 && body != nil {
		body = find(body, rest[0], nil)
	}
	if body == nil {
		return nil
	}
	if body.Attributes == nil {
		body.Attributes = hclsyntax.Attributes{}
	}
	return body
}

// markSwept records the file's attributes that the sweeps set, so that the
// hash leaves them out: every point of an experiment hashes alike, whether a
// point is applied or not.
func (l *loader) markSwept(sweeps []Sweep) {
	l.sweptAttrs = map[*hclsyntax.Attribute]bool{}
	l.sweptVars = map[string]bool{}
	for _, s := range sweeps {
		l.sweptNames = append(l.sweptNames, s.target.String())
		if s.target.varName != "" {
			l.sweptVars[s.target.varName] = true
			continue
		}
		if b := l.sweepBody(s.target.path, hcl.Range{}, false); b != nil {
			if a := b.Attributes[s.target.attr]; a != nil {
				l.sweptAttrs[a] = true
			}
		}
	}
	slices.Sort(l.sweptNames)
}

// swept reports whether a sweep sets the attribute, directly or through a
// variable its expression reads.
func (l *loader) swept(a *hclsyntax.Attribute) bool {
	if a == nil {
		return false
	}
	if l.sweptAttrs[a] {
		return true
	}
	for _, tr := range a.Expr.Variables() {
		if name, ok := varStep(tr); ok && l.sweptVars[name] {
			return true
		}
	}
	return false
}

// varStep returns the variable a traversal reads (var.NAME).
func varStep(tr hcl.Traversal) (string, bool) {
	if tr.RootName() != "var" || len(tr) < 2 {
		return "", false
	}
	step, ok := tr[1].(hcl.TraverseAttr)
	return step.Name, ok
}

// hiddenVar is a variable read by a file attribute that a sweep replaces at
// the point being loaded.
type hiddenVar struct {
	name, sweep string
	at, attr    hcl.Range // the sweep value; the replaced attribute
}

// sweptIn reports whether a sweep sets the attribute name of the top-level
// block typ (machine, run).
func (l *loader) sweptIn(typ, name string) bool {
	for _, b := range l.fileBlocks(typ) {
		if l.swept(b.Body.Attributes[name]) {
			return true
		}
	}
	return false
}

// Sweeps returns the experiment's sweeps: the file's sweep blocks, replaced
// or extended by Options.Sweeps, in order (file first).
func (s *Spec) Sweeps() []Sweep { return slices.Clone(s.sweeps) }

// Point returns the sweep values applied (Options.Point); nil when none.
func (s *Spec) Point() Point { return slices.Clone(s.point) }

// jsonText prints any value for a message, as JSON.
func jsonText(v cty.Value) string {
	if !v.IsWhollyKnown() {
		return "an unknown value"
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return ctyText(v)
	}
	return string(b)
}
