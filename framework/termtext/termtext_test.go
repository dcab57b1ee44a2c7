package termtext

import "testing"

// TestAttackSafe (issue 31): the sequences that reached the terminal raw
// (an OSC that retitled it, CSI, C1, bidi overrides) come out escaped.
func TestAttackSafe(t *testing.T) {
	for _, tc := range []struct{ in, want, lines string }{
		{"menu", "menu", "menu"},
		{"é ü 日本 🙂", "é ü 日本 🙂", "é ü 日本 🙂"},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"a\x1b[2Jb", `a\x1b[2Jb`, `a\x1b[2Jb`},
		{"x\u009b31mred", `x\u009b31mred`, `x\u009b31mred`},
		{"abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"\u2066iso\u2069", `\u2066iso\u2069`, `\u2066iso\u2069`},
		{"line1\nline2\tx\r", `line1\nline2\tx\r`, "line1\nline2\tx\\r"},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"\u2028", `\u2028`, `\u2028`},
	} {
		if got := Safe(tc.in); got != tc.want {
			t.Errorf("Safe(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := SafeLines(tc.in); got != tc.lines {
			t.Errorf("SafeLines(%q) = %q, want %q", tc.in, got, tc.lines)
		}
		if got := Safe(tc.in); !Clean(got) {
			t.Errorf("Safe(%q) = %q is not clean", tc.in, got)
		}
	}
}

func FuzzSafe(f *testing.F) {
	f.Add("\x1b]0;x\x07\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if !Clean(Safe(s)) {
			t.Fatalf("Safe(%q) = %q", s, Safe(s))
		}
		if Clean(s) && Safe(s) != s {
			t.Fatalf("a clean string changed: %q", s)
		}
	})
}
