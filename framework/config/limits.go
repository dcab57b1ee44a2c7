package config

import (
	"fmt"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Resource limits on what a configuration file may make the loader do. Each
// is far above anything a scenario needs and far below what hurts: a file is
// refused with a diagnostic that names the limit instead of exhausting the
// stack or the memory of the process.
const (
	// MaxFileBytes bounds the size of a configuration file (the scenarios in
	// configs/ are a few KB).
	MaxFileBytes = 4 << 20
	// MaxNesting bounds how deeply brackets, strings, templates and operators
	// nest in one expression. HCL's parser and evaluator recurse once or more
	// per level, with several KB of stack each, so 100,000 nested brackets
	// overflow the goroutine stack and kill the process: depth is checked on
	// the tokens, before the parser runs.
	MaxNesting = 256
	// MaxElements bounds the collection elements that one file's expressions
	// (for expressions, function results) build in total; a few lines of
	// nested for expressions would otherwise build billions.
	MaxElements = 200_000
	// MaxStringBytes bounds the string bytes that one file's expressions
	// (templates, function results) build in total.
	MaxStringBytes = 16 << 20
)

// checkSize reports a file larger than MaxFileBytes.
func checkSize(name string, src []byte) hcl.Diagnostics {
	if len(src) <= MaxFileBytes {
		return nil
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Configuration file too large",
		Detail:   fmt.Sprintf("%s holds %d bytes; a configuration file may hold at most %d (%d MiB).", name, len(src), MaxFileBytes, MaxFileBytes>>20),
		Subject:  &hcl.Range{Filename: name, Start: hcl.InitialPos, End: hcl.InitialPos},
	}}
}

// checkNesting scans the tokens of src, which the lexer produces without
// recursion, and reports the first place that nests deeper than MaxNesting.
//
// A level is an open bracket, quote, heredoc or template sequence, plus one for
// each operator and each index bracket in the expression at that level so far: unary operators, conditionals and binary chains recurse in the
// parser or the evaluator just as brackets do. A comma ends an expression, and
// so does a newline outside ( ) and [ ], where HCL allows an expression to go
// on over lines.
func checkNesting(src []byte, name string, start hcl.Pos) hcl.Diagnostics {
	tokens, _ := hclsyntax.LexConfig(src, name, start)
	type level struct {
		open hclsyntax.TokenType
		ops  int
	}
	stack := []level{{}}
	depth := 0 // len(stack)-1 + the sum of ops
	prev := hclsyntax.TokenNewline
	for _, tok := range tokens {
		top := &stack[len(stack)-1]
		switch tok.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			if tok.Type == hclsyntax.TokenOBrack && endsOperand(prev) {
				// x[i][j]: each index wraps the expression before it.
				top.ops++
				depth++
			}
			stack = append(stack, level{open: tok.Type})
			depth++
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			if len(stack) > 1 {
				depth -= 1 + top.ops
				stack = stack[:len(stack)-1]
			}
		case hclsyntax.TokenComma:
			depth -= top.ops
			top.ops = 0
		case hclsyntax.TokenNewline:
			if top.open != hclsyntax.TokenOParen && top.open != hclsyntax.TokenOBrack {
				depth -= top.ops
				top.ops = 0
			}
		case hclsyntax.TokenStar, hclsyntax.TokenSlash, hclsyntax.TokenPlus, hclsyntax.TokenMinus,
			hclsyntax.TokenPercent, hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual,
			hclsyntax.TokenLessThan, hclsyntax.TokenLessThanEq, hclsyntax.TokenGreaterThan,
			hclsyntax.TokenGreaterThanEq, hclsyntax.TokenAnd, hclsyntax.TokenOr,
			hclsyntax.TokenBang, hclsyntax.TokenQuestion:
			top.ops++
			depth++
		}
		prev = tok.Type
		if depth > MaxNesting {
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Expression nested too deeply",
				Detail: fmt.Sprintf("Brackets, strings and operators nest more than %d levels deep here. "+
					"Split the expression, or write the value out.", MaxNesting),
				Subject: tok.Range.Ptr(),
			}}
		}
	}
	return nil
}

func endsOperand(t hclsyntax.TokenType) bool {
	switch t {
	case hclsyntax.TokenIdent, hclsyntax.TokenNumberLit, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
		hclsyntax.TokenCBrace, hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
		return true
	}
	return false
}

// budget counts what the evaluation of expressions builds, against
// MaxElements and MaxStringBytes. The loader charges one budget for a whole
// file; a later decode of the loaded file's bodies gets a fresh one per call.
// A budget is used by one goroutine at a time.
type budget struct {
	elements, bytes int64
	// spent is set once a limit has been reported: from then on counted
	// nodes and functions give unknown values without evaluating anything,
	// so loops around the expression that passed the limit end at once
	// instead of failing once per iteration.
	spent bool
}

var errTooLarge = fmt.Errorf("the file's expressions would build more than %d collection elements or %d MiB of strings in all, the limits for one configuration file",
	MaxElements, MaxStringBytes>>20)

// charge adds the size of v, every element and string byte it holds, failing
// as soon as a limit is passed. It walks v, so it costs as much as v is big,
// and never more than the limits.
func (b *budget) charge(v cty.Value) error {
	var err error
	_ = cty.Walk(v, func(_ cty.Path, x cty.Value) (bool, error) {
		if !x.IsKnown() || x.IsNull() {
			return false, nil
		}
		x, _ = x.Unmark()
		switch t := x.Type(); {
		case t == cty.String:
			b.bytes += int64(len(x.AsString()))
		case t.IsListType() || t.IsSetType() || t.IsMapType() || t.IsTupleType() || t.IsObjectType():
			b.elements += int64(x.LengthInt())
		}
		if b.elements > MaxElements || b.bytes > MaxStringBytes {
			err = errTooLarge
		}
		return err == nil, nil
	})
	return err
}

// room reports whether elements and bytes more still fit.
func (b *budget) room(elements, bytes int64) error {
	if b.elements+elements > MaxElements || b.bytes+bytes > MaxStringBytes {
		return errTooLarge
	}
	return nil
}

// budgets maps the evaluation context that evalExpr makes for one evaluation
// to its budget, so the counting nodes of the syntax tree (shared by every
// evaluation, perhaps concurrently) find the budget of theirs.
var budgets sync.Map // *hcl.EvalContext -> *budget

func budgetOf(ctx *hcl.EvalContext) *budget {
	for c := ctx; c != nil; c = c.Parent() {
		if b, ok := budgets.Load(c); ok {
			return b.(*budget)
		}
	}
	return nil
}

// counted wraps an expression whose value is new data: the collection and the
// element values of a for expression, the parts of a template. Its value is
// charged to the evaluation's budget before the enclosing expression goes on,
// so a runaway expression stops at the limit instead of after building its
// result. Embedding the interface keeps hclsyntax's walkers working: they see
// counted, then the wrapped expression's children (see visitAll).
type counted struct {
	hclsyntax.Expression
}

func (c *counted) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	b := budgetOf(ctx)
	if b != nil && b.spent {
		return cty.DynamicVal, nil
	}
	v, diags := c.Expression.Value(ctx)
	if diags.HasErrors() || b == nil || b.spent {
		return v, diags
	}
	if err := b.charge(v); err != nil {
		b.spent = true
		return cty.DynamicVal, append(diags, tooLargeError(c.Range()))
	}
	return v, diags
}

func tooLargeError(r hcl.Range) *hcl.Diagnostic {
	return errorAt(r, "Expression too large", "Evaluating this, %s. Write big values out, or build them with fewer nested for expressions.", errTooLarge)
}

// instrument wraps, in place, the parts of every expression under node that
// build new data in counted nodes. It is idempotent.
func instrument(node hclsyntax.Node) {
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		instrumentNode(n)
		return nil
	})
}

// instrumentNode wraps n's own children. A wrapped child is instrumented here,
// because the walk sees its wrapper in its place.
func instrumentNode(n hclsyntax.Node) {
	wrap := func(e hclsyntax.Expression) hclsyntax.Expression {
		if e == nil {
			return nil
		}
		if _, done := e.(*counted); done {
			return e
		}
		instrumentNode(e)
		return &counted{e}
	}
	switch n := n.(type) {
	case *hclsyntax.ForExpr:
		n.CollExpr = wrap(n.CollExpr)
		n.KeyExpr = wrap(n.KeyExpr)
		n.ValExpr = wrap(n.ValExpr)
	case *hclsyntax.TemplateExpr:
		for i, p := range n.Parts {
			n.Parts[i] = wrap(p)
		}
	}
}

// visitAll is hclsyntax.VisitAll that also shows fn the expression inside
// each counted node.
func visitAll(node hclsyntax.Node, fn func(hclsyntax.Node)) {
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		for {
			c, ok := n.(*counted)
			if !ok {
				break
			}
			n = c.Expression
		}
		fn(n)
		return nil
	})
}

// budgetContext returns the context one evaluation of expr runs in: a child
// of ctx (which may be nil) whose functions are ctx's, each charging its
// result to b. The caller registers it in budgets for the evaluation. An
// expression that calls no function gets the child without them: wrapping
// every function of ctx for each attribute decoded was most of what a run
// allocated to decode its configuration.
func budgetContext(ctx *hcl.EvalContext, b *budget, expr hcl.Expression) *hcl.EvalContext {
	child := ctx.NewChild()
	if !callsFunction(expr) {
		return child
	}
	var funcs map[string]function.Function
	for c := ctx; c != nil; c = c.Parent() {
		for name, f := range c.Functions {
			if funcs == nil {
				funcs = map[string]function.Function{}
			}
			if _, shadowed := funcs[name]; !shadowed {
				funcs[name] = chargedFunction(name, f, b)
			}
		}
	}
	child.Functions = funcs
	return child
}

// callsFunction reports whether expr may call a function: it has a function
// call, or it is not an hclsyntax expression whose nodes can be walked.
func callsFunction(expr hcl.Expression) bool {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return true
	}
	calls := false
	visitAll(node, func(n hclsyntax.Node) {
		if _, ok := n.(*hclsyntax.FunctionCallExpr); ok {
			calls = true
		}
	})
	return calls
}

// chargedFunction is f with its result charged to b. join and replace can
// build a result far bigger than their arguments, so their result's size is
// bounded from the arguments before f runs; every other function's result is
// at most as big as its arguments (range builds at most 1024 elements).
func chargedFunction(name string, f function.Function, b *budget) function.Function {
	spec := &function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type:        f.ReturnTypeForValues,
		Impl: func(args []cty.Value, ret cty.Type) (cty.Value, error) {
			if b.spent {
				return cty.UnknownVal(ret), nil
			}
			if n := resultBytesBound(name, args); n > 0 {
				if err := b.room(0, n); err != nil {
					b.spent = true
					return cty.DynamicVal, err
				}
			}
			v, err := f.Call(args)
			if err != nil || b.spent {
				return v, err
			}
			if err := b.charge(v); err != nil {
				b.spent = true
				return cty.DynamicVal, err
			}
			return v, nil
		},
	}
	return function.New(spec)
}

// resultBytesBound bounds the string bytes join and replace return, from their
// arguments; 0 for other functions or unknown arguments.
func resultBytesBound(name string, args []cty.Value) int64 {
	str := func(v cty.Value) (int64, bool) {
		v, _ = v.Unmark()
		if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
			return 0, false
		}
		return int64(len(v.AsString())), true
	}
	switch name {
	case "replace":
		if len(args) != 3 {
			return 0
		}
		s, ok1 := str(args[0])
		sub, ok2 := str(args[1])
		rep, ok3 := str(args[2])
		if !ok1 || !ok2 || !ok3 {
			return 0
		}
		// Each match, at least one byte long (an empty one matches between
		// every byte), becomes rep.
		return s + (s+1)*rep/max(sub, 1)
	case "join":
		if len(args) < 1 {
			return 0
		}
		sep, ok := str(args[0])
		if !ok {
			return 0
		}
		var total int64
		for _, l := range args[1:] {
			l, _ = l.Unmark()
			if !l.IsWhollyKnown() || l.IsNull() || !l.CanIterateElements() {
				return 0
			}
			for it := l.ElementIterator(); it.Next(); {
				_, e := it.Element()
				n, _ := str(e)
				total += n + sep
			}
		}
		return total
	}
	return 0
}

// nonFinite reports whether v holds an infinite number (1/0 evaluates to
// +Inf in HCL). No emulator parameter can be infinite, and JSON, which the
// configuration hash is computed from, has no infinity.
func nonFinite(v cty.Value) bool {
	found := false
	_ = cty.Walk(v, func(_ cty.Path, x cty.Value) (bool, error) {
		if x.IsKnown() && !x.IsNull() && x.Type() == cty.Number {
			x, _ = x.Unmark()
			if x.AsBigFloat().IsInf() {
				found = true
			}
		}
		return !found, nil
	})
	return found
}

func nonFiniteError(r hcl.Range, v cty.Value) *hcl.Diagnostic {
	what := "an infinite number"
	if v.Type() == cty.Number {
		if v.AsBigFloat().Sign() < 0 {
			what = "-Inf"
		} else {
			what = "+Inf"
		}
	}
	return errorAt(r, "Invalid number",
		"This evaluates to %s (a division by zero?); numbers in a configuration must be finite.", what)
}
