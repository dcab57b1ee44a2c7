package config

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// TestHostileConfigs loads files that used to panic, overflow the stack or
// grow without bound: each must now fail with one clear error at its place.
func TestHostileConfigs(t *testing.T) {
	nested := func(open, mid, close string, n int) string {
		return "run {\n  duration = \"1s\"\n  seed = " + strings.Repeat(open, n) + mid + strings.Repeat(close, n) + "\n}\n"
	}
	tests := []struct {
		name, src   string
		wantSummary string
		wantLine    int
	}{
		{"infinity", "kernel {\n  x = 1/0\n}\n" + runBlock, "Invalid number", 2},
		{"minus infinity", "kernel {\n  x = -1/0\n}\n" + runBlock, "Invalid number", 2},
		{"infinity in a list", "kernel {\n  x = [1, 2, 1/0]\n}\n" + runBlock, "Invalid number", 2},
		{"infinity in a variable default", "variable \"d\" {\n  default = 1/0\n}\n" + runBlock, "Invalid number", 2},
		{"100000 brackets", nested("[", "1", "]", 100000), "Expression nested too deeply", 3},
		{"100000 parentheses", nested("(", "1", ")", 100000), "Expression nested too deeply", 3},
		{"100000 objects", nested("{a=", "1", "}", 100000), "Expression nested too deeply", 3},
		{"100000 templates", nested(`"${`, "1", `}"`, 100000), "Expression nested too deeply", 3},
		{"100000 function calls", nested("abs(", "1", ")", 100000), "Expression nested too deeply", 3},
		{"1000000 minus signs", nested("-", "1", "", 1000000), "Expression nested too deeply", 3},
		{"100000 conditionals", nested("true ? 1 : ", "1", "", 100000), "Expression nested too deeply", 3},
		{"100000 additions", nested("1 + ", "1", "", 100000), "Expression nested too deeply", 3},
		{"100000 indexes", nested("", "[[0]]", "[0]", 100000), "Expression nested too deeply", 3},
		{"nested for over range", "kernel {\n  x = [for a in range(1024): [for b in range(1024): [for c in range(1024): c]]]\n}\n" + runBlock,
			"Expression too large", 2},
		{"nested for over literals", "kernel {\n  x = [for a in [" + strings.Repeat("1,", 1000) + "]: [for b in [" + strings.Repeat("1,", 1000) + "]: [for c in [" + strings.Repeat("1,", 1000) + "]: c]]]\n}\n" + runBlock,
			"Expression too large", 2},
		{"template for", "kernel {\n  x = \"%{for a in range(1000)}%{for b in range(1000)}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx%{endfor}%{endfor}\"\n}\n" + runBlock,
			"Error in function call", 2},
		{"replace growth", "kernel {\n  x = " + strings.Repeat(`replace(`, 12) + `"aaaaaaaa"` + strings.Repeat(`, "a", "aaaaaaaa")`, 12) + "\n}\n" + runBlock,
			"Error in function call", 2},
		{"join growth", "kernel {\n  x = join(\"" + strings.Repeat("s", 100000) + "\", [for a in range(1000): \"x\"])\n}\n" + runBlock,
			"Error in function call", 2},
		{"one big default used many times", "variable \"big\" {\n  default = \"" + strings.Repeat("b", 200000) + "\"\n}\nkernel {\n  x = [" + strings.Repeat("var.big,", 100) + "]\n}\n" + runBlock,
			"Expression too large", 5},
		{"file too large", "# " + strings.Repeat("x", MaxFileBytes) + "\n" + runBlock, "Configuration file too large", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := LoadBytes("t.hcl", []byte(tt.src), Options{})
			if !diags.HasErrors() {
				t.Fatalf("LoadBytes() has no errors, want %q", tt.wantSummary)
			}
			i := slices.IndexFunc(diags, func(d *hcl.Diagnostic) bool {
				return d.Summary == tt.wantSummary && d.Subject != nil && d.Subject.Start.Line == tt.wantLine
			})
			if i < 0 {
				t.Fatalf("LoadBytes() has no %q on line %d; the first diagnostics:\n%s", tt.wantSummary, tt.wantLine, diagsString(diags[:min(len(diags), 5)]))
			}
			d := diags[i]
			if tt.wantSummary == "Error in function call" && !strings.Contains(d.Detail, "the limits for one configuration file") {
				t.Errorf("LoadBytes() detail = %q, want the expression limits", d.Detail)
			}
		})
	}
}

// TestLimitsLeaveOrdinaryExpressionsAlone: what scenarios write still loads,
// nesting and functions included.
func TestLimitsLeaveOrdinaryExpressionsAlone(t *testing.T) {
	src := `variable "cpus" {
  default = [0, 1, 2, 3]
}
kernel {
  a = [for c in var.cpus : c * 2 if c % 2 == 0]
  b = join(",", [for c in range(64) : tostring(c)])
  c = "${upper("x")}-%{for c in var.cpus}${c}%{endfor}"
  d = ((((1 + 2) * 3) - -4) / 5) > 1 ? !false : true
  e = {for c in var.cpus : tostring(c) => [c, c + 1]}
  f = try(var.cpus[9], -1)
  g = length(range(1024)) + length(flatten([for a in range(100) : range(100)]))
}
` + runBlock
	s, diags := LoadBytes("t.hcl", []byte(src), Options{})
	if diags.HasErrors() {
		t.Fatalf("LoadBytes() diagnostics:\n%s", diagsString(diags))
	}
	// Decoding after load has a budget of its own, as often as it is asked.
	for range 3 {
		if _, diags := s.DecodeBody(s.Kernel, fuzzSchema, "kernel block"); diags.HasErrors() && strings.Contains(diagsString(diags), "too large") {
			t.Fatalf("DecodeBody() after load = %s", diagsString(diags))
		}
	}
}

func TestCheckNestingAllowsLongFiles(t *testing.T) {
	// Depth, not length: many expressions one after another are fine.
	var b strings.Builder
	b.WriteString("kernel {\n")
	for i := range 2000 {
		b.WriteString("  a" + strings.Repeat("x", i%7) + "_" + string(rune('a'+i%26)) + " = [[1 + 2], (3 * 4), \"${5}\"]\n")
	}
	b.WriteString("}\n")
	if diags := checkNesting([]byte(b.String()), "t.hcl", hcl.InitialPos); diags.HasErrors() {
		t.Fatalf("checkNesting() = %s", diagsString(diags))
	}
	ok := "x = " + strings.Repeat("[", MaxNesting-1) + strings.Repeat("]", MaxNesting-1)
	if diags := checkNesting([]byte(ok), "t.hcl", hcl.InitialPos); diags.HasErrors() {
		t.Errorf("checkNesting(%d brackets) = %s, want none", MaxNesting-1, diagsString(diags))
	}
	bad := "x = " + strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1)
	if diags := checkNesting([]byte(bad), "t.hcl", hcl.InitialPos); !diags.HasErrors() {
		t.Errorf("checkNesting(%d brackets) = no error", MaxNesting+1)
	}
}

func TestParseVarValueDeep(t *testing.T) {
	s := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	if v := ParseVarValue(s); v.AsString() != s {
		t.Errorf("ParseVarValue(100000 brackets) is not the string itself")
	}
}

// TestWriteDiagnosticsFoldsAndBounds: 1,000 copies of one error print once
// with where the others are; distinct ones stop at MaxDiagnostics; NUL bytes
// and escape sequences never reach the output raw.
func TestWriteDiagnosticsFoldsAndBounds(t *testing.T) {
	var idle strings.Builder
	idle.WriteString("machine {\n  cpus = 2\n")
	for i := range 1000 {
		idle.WriteString("  idle_state \"C" + strings.Repeat("1", 1+i/100) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + "\" {\n    exit_latency = \"1us\"\n    target_residency = \"1us\"\n  }\n")
	}
	idle.WriteString("}\n" + runBlock)
	tests := []struct {
		name, src string
		want      []string
		maxBytes  int
	}{
		{"1000 idle states", idle.String(), []string{
			"Error: Too many idle states",
			"The same error is reported at 990 more places: t.hcl:43,3, t.hcl:47,3, t.hcl:51,3, t.hcl:55,3, t.hcl:59,3, and 985 more.",
		}, 2000},
		{"1000 NUL bytes", strings.Repeat("\x00", 1000), []string{
			"Error: Invalid character",
			"The same error is reported at 999 more places",
		}, 4000},
		{"escape sequence in a name", "workload \"\x1b[2J\x1b[Hfake\" \"x\" {\n}\n" + runBlock, []string{
			`There is no workload type "\x1b[2J\x1b[Hfake"`,
		}, 4000},
		{"many distinct errors", "machine {\n" + manyAttrs(500) + "}\n" + runBlock, []string{
			"Error: Unsupported argument",
			"480 more errors not shown",
			"not shown (only the first 20 distinct diagnostics are printed)",
		}, 100000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, diags := LoadBytes("t.hcl", []byte(tt.src), Options{})
			if tt.name == "escape sequence in a name" {
				// The workload type is checked by whoever knows the types.
				diags = append(diags, UnknownNameError(s.Workloads[0].TypeRange, "workload type", s.Workloads[0].Type, []string{"cyclictest"}))
			}
			var b bytes.Buffer
			if err := WriteDiagnostics(&b, diags, s.Files(), false); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("WriteDiagnostics() =\n%s\nwant it to contain %q", out, w)
				}
			}
			if strings.ContainsFunc(out, isControl) {
				t.Errorf("WriteDiagnostics() output holds control characters:\n%q", out)
			}
			if len(out) > tt.maxBytes {
				t.Errorf("WriteDiagnostics() wrote %d bytes, want at most %d:\n%s", len(out), tt.maxBytes, out)
			}
		})
	}
}

func manyAttrs(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("  unknown_" + strings.Repeat("x", i) + " = 1\n")
	}
	return b.String()
}

// TestCallsFunction: an evaluation gets the charged functions exactly when
// its expression has a call, wherever it sits (in a template, a for
// expression's parts, which instrument wraps, an object, a conditional); an
// expression that cannot be walked counts as calling.
func TestCallsFunction(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{`1`, false},
		{`var.cpus`, false},
		{`"a${var.x}b"`, false},
		{`[for c in [1, 2] : c * 2 if c > 1]`, false},
		{`"%{for c in var.cpus}${c}%{endfor}"`, false},
		{`{a = [1, var.x], b = "x"}`, false},
		{`abs(-1)`, true},
		{`"${upper("x")}"`, true},
		{`[for c in range(3) : c]`, true},
		{`[for c in [1] : tostring(c)]`, true},
		{`{for c in [1] : c => [max(c, 2)]}`, true},
		{`"%{for c in [1]}${c}%{endfor}${lower("X")}"`, true},
		{`true ? 1 : abs(-1)`, true},
		{`var.m[length(var.l)]`, true},
	}
	for _, tt := range tests {
		expr, diags := hclsyntax.ParseExpression([]byte(tt.src), "t.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("ParseExpression(%s): %s", tt.src, diagsString(diags))
		}
		instrument(expr)
		if got := callsFunction(expr); got != tt.want {
			t.Errorf("callsFunction(%s) = %v, want %v", tt.src, got, tt.want)
		}
	}
	if !callsFunction(hcl.StaticExpr(cty.NumberIntVal(1), hcl.Range{})) {
		t.Errorf("callsFunction of a non-hclsyntax expression = false, want true")
	}
}
