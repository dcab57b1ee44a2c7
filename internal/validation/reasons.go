package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// reason is one line of the reasons file: why a row is outside its
// tolerance. Each of bundle, section and figure is matched exactly, or is
// "*" (anything), or ends in "*" (anything starting with what precedes it).
type reason struct {
	bundle, section, figure, text string
	line                          int
	used                          bool
}

func matchField(pat, s string) bool {
	if pat == "*" {
		return true
	}
	if p, ok := strings.CutSuffix(pat, "*"); ok {
		return strings.HasPrefix(s, p)
	}
	return pat == s
}

// readReasons reads the reasons file: one reason a line, "BUNDLE | SECTION
// | FIGURE | REASON", blank lines and lines starting with '#' ignored.
func readReasons(r io.Reader, name string) ([]*reason, error) {
	var out []*reason
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, "|", 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("%s:%d: want BUNDLE | SECTION | FIGURE | REASON, got %q", name, n, line)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		for i, what := range []string{"bundle", "section", "figure", "reason"} {
			if f[i] == "" {
				return nil, fmt.Errorf("%s:%d: empty %s", name, n, what)
			}
		}
		out = append(out, &reason{bundle: f[0], section: f[1], figure: f[2], text: f[3], line: n})
	}
	return out, sc.Err()
}

// lookup is the first reason for a row (in file order), marked used.
func lookup(rs []*reason, bundle, section, figure string) *reason {
	for _, r := range rs {
		if matchField(r.bundle, bundle) && matchField(r.section, section) && matchField(r.figure, figure) {
			r.used = true
			return r
		}
	}
	return nil
}
