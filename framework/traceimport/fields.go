package traceimport

import (
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/tickemu/tickemu/framework/termtext"
)

// pair is one key=value of an event's fields.
type pair struct{ k, v string }

// fieldSet is an event's decoded fields, reused from line to line.
type fieldSet struct {
	p    []pair
	line int64
	err  *ParseError
}

func (f *fieldSet) reset(line int64) {
	f.p = f.p[:0]
	f.line = line
	f.err = nil
}

func (f *fieldSet) add(k, v string) { f.p = append(f.p, pair{k, v}) }

// get returns the value of key, or "", false.
func (f *fieldSet) get(k string) (string, bool) {
	for i := range f.p {
		if f.p[i].k == k {
			return f.p[i].v, true
		}
	}
	return "", false
}

func (f *fieldSet) fail(field, msg string) {
	if f.err == nil {
		f.err = &ParseError{Line: f.line, Field: field, Msg: msg}
	}
}

// str returns a required string field.
func (f *fieldSet) str(k string) string {
	v, ok := f.get(k)
	if !ok {
		f.fail(k, "missing")
	}
	return v
}

// optStr returns an optional string field.
func (f *fieldSet) optStr(k string) string {
	v, _ := f.get(k)
	return v
}

// int returns a required integer field (decimal, or hex with 0x).
func (f *fieldSet) int(k string) int64 {
	v, ok := f.get(k)
	if !ok {
		f.fail(k, "missing")
		return 0
	}
	n, ok := parseInt(v)
	if !ok {
		f.fail(k, "not a number: "+quoteShort(v))
	}
	return n
}

// optInt returns an optional integer field and whether it was there.
func (f *fieldSet) optInt(k string) (int64, bool) {
	v, ok := f.get(k)
	if !ok {
		return 0, false
	}
	n, ok := parseInt(v)
	if !ok {
		f.fail(k, "not a number: "+quoteShort(v))
	}
	return n, true
}

// ptr returns a required pointer field.
func (f *fieldSet) ptr(k string) uint64 {
	v, ok := f.get(k)
	if !ok {
		f.fail(k, "missing")
		return 0
	}
	if v == "" {
		f.fail(k, "empty")
	}
	return parsePtr(v)
}

// firstOf returns the first of the keys present, for fields whose name
// differs across versions.
func (f *fieldSet) firstOf(keys ...string) string {
	for _, k := range keys {
		if _, ok := f.get(k); ok {
			return k
		}
	}
	return keys[0]
}

// parseInt parses a decimal or 0x-hex integer; unsigned 64-bit values above
// MaxInt64 wrap (s64 fields printed with %llu).
func parseInt(s string) (int64, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		u, err := strconv.ParseUint(s[2:], 16, 64)
		return int64(u), err == nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	u, err := strconv.ParseUint(s, 10, 64)
	return int64(u), err == nil
}

// parsePtr parses a pointer as printed by %p (hashed, 16 hex digits without
// 0x), %px or trace-cmd (0x...); anything else (an early-boot
// "(____ptrval____)") is hashed, so equal texts still name the same object.
func parsePtr(s string) uint64 {
	h := s
	if len(h) > 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X') {
		h = h[2:]
	}
	if len(h) > 0 && len(h) <= 16 {
		if u, err := strconv.ParseUint(h, 16, 64); err == nil {
			return u
		}
	}
	x := fnv.New64a()
	x.Write([]byte(s))
	return x.Sum64() | 1<<63
}

// cleanFunction strips what printers add to a symbol: trace-cmd's
// "/0xOFFSET" and a module suffix " [i915]".
func cleanFunction(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "/0x"); i > 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "+0x"); i > 0 {
		s = s[:i]
	}
	// A symbol is printed by replay and check: a capture can hold anything
	// there, and the terminal must not act on it.
	return termtext.Safe(s)
}

func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}

// intern keeps one copy of each callback name, so millions of events share a
// few strings; the table is bounded (a fuzzed capture may have a new name per
// line).
type interner struct{ m map[string]string }

const maxInterned = 1 << 14

func (in *interner) get(s string) string {
	if v, ok := in.m[s]; ok {
		return v
	}
	if in.m == nil {
		in.m = map[string]string{}
	}
	if len(in.m) < maxInterned {
		s = strings.Clone(s)
		in.m[s] = s
	}
	return s
}
