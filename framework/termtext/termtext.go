// Package termtext makes text that tickemu did not write itself (a name in
// a configuration file, a function name in a capture, a string in a shard
// file, a plugin's log message) safe to print on a terminal.
//
// A terminal acts on some characters instead of showing them: C0 controls
// (ESC starts a CSI or OSC sequence that moves the cursor, clears the
// screen, retitles the window or writes the clipboard; BEL, BS and CR
// overwrite what was printed), DEL, the C1 controls U+0080-U+009F (CSI and
// OSC in one character on some terminals), and the Unicode bidirectional
// overrides and isolates, which reorder what follows them on the line
// (CVE-2021-42574, "Trojan Source"). Safe escapes each as Go's strconv
// does (\x1b, \u202e), so the text is still readable and nothing is lost or
// acted on; invalid UTF-8 bytes are escaped as \xNN.
//
// No library is used: the ones that exist strip ANSI sequences only (CSI, not
// C1 or bidi controls) and drop the text instead of showing it.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Unsafe reports whether a terminal acts on r instead of showing it.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidi marks, embeddings, overrides and isolates
	case r == 0x2028, r == 0x2029:
		return true // line and paragraph separators
	}
	return false
}

// Clean reports whether s prints as it is: valid UTF-8 with no unsafe rune.
func Clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return clean(s[i:])
		}
	}
	return true
}

func clean(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false
			}
		}
		if Unsafe(r) {
			return false
		}
	}
	return true
}

// Safe returns s with every unsafe rune and invalid byte escaped; s itself
// when it is clean (no allocation).
func Safe(s string) string {
	return escape(s, false)
}

// SafeLines is Safe keeping newlines and tabs: for a multi-line message.
func SafeLines(s string) string {
	return escape(s, true)
}

func escape(s string, lines bool) string {
	if Clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case lines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && Unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case Unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
