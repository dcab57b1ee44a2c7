// Package eras is the kernel releases a plugin's strategy attributes name
// (sdk.Attribute.Eras) and the rules those eras follow. A plugin's schema is
// checked against them by sdktest's suites and by the host's version table
// (framework/kernelversion), which maps releases to settings.
package eras

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk"
)

// Release is a mainline release, MAJOR.MINOR.
type Release struct{ Major, Minor int }

// The releases the table covers. Oldest is the earliest state the builtins
// model (3.10, the nohz-catchup report's kernel); Newest is the latest
// release a modelled change is in. A version outside them is refused: the
// model does not know what came before or after.
var (
	Oldest = Release{3, 10}
	Newest = Release{7, 1}
)

// Parse reads "6.13" (or "v6.13"). A stable point release ("6.13.2") or an
// -rc is refused: the table knows mainline releases only.
func Parse(s string) (Release, error) {
	t := strings.TrimPrefix(s, "v")
	maj, min, ok := strings.Cut(t, ".")
	if !ok || strings.Contains(min, ".") {
		return Release{}, fmt.Errorf("%q is not a release: want MAJOR.MINOR, e.g. \"6.13\"", s)
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if err1 != nil || err2 != nil || a < 0 || b < 0 || a > 99 || b > 99 {
		return Release{}, fmt.Errorf("%q is not a release: want MAJOR.MINOR, e.g. \"6.13\"", s)
	}
	return Release{a, b}, nil
}

func (r Release) String() string { return fmt.Sprintf("%d.%d", r.Major, r.Minor) }

// IsZero reports whether r is unset.
func (r Release) IsZero() bool { return r == Release{} }

// Compare orders releases: -1, 0 or 1.
func (r Release) Compare(o Release) int {
	switch {
	case r.Major != o.Major:
		return cmp.Compare(r.Major, o.Major)
	default:
		return cmp.Compare(r.Minor, o.Minor)
	}
}

// Check holds an attribute's kernel eras (sdk.Attribute.Eras) to the rules
// the host's version table applies: releases parse and increase, the first era is the state at or
// before Oldest and names no commit, later ones are inside the covered range
// and name a 12-hex commit with its title (or explain in Note why the id is
// not known), and every value is one the attribute allows.
func Check(a sdk.Attribute) error {
	var prev Release
	for i, e := range a.Eras {
		r, err := Parse(e.Since)
		if err != nil {
			return fmt.Errorf("era %d: %v", i, err)
		}
		if len(a.OneOf) > 0 && !slices.Contains(a.OneOf, e.Value) {
			return fmt.Errorf("era %d (%s): value %q is not one of %q", i, e.Since, e.Value, a.OneOf)
		}
		if a.Type == sdk.TypeBool && e.Value != "true" && e.Value != "false" {
			return fmt.Errorf("era %d (%s): value %q is not true or false", i, e.Since, e.Value)
		}
		if i == 0 {
			if r.Compare(Oldest) > 0 {
				return fmt.Errorf("the first era starts at %s, after the oldest modelled release %s", r, Oldest)
			}
			if e.Commit != "" {
				return fmt.Errorf("the first era is the state at %s and names no commit (got %s)", Oldest, e.Commit)
			}
			prev = r
			continue
		}
		if r.Compare(prev) < 0 {
			return fmt.Errorf("era %d (%s) is older than the era before it (%s)", i, r, prev)
		}
		if r.Compare(Oldest) <= 0 || r.Compare(Newest) > 0 {
			return fmt.Errorf("era %d (%s) is outside the covered releases (after %s, up to %s)", i, r, Oldest, Newest)
		}
		if e.Commit == "" && e.Note == "" {
			return fmt.Errorf("era %d (%s) names no commit and no Note says why", i, r)
		}
		if e.Commit != "" && !IsHex12(e.Commit) {
			return fmt.Errorf("era %d (%s): commit %q is not the first 12 hex digits of a commit id", i, r, e.Commit)
		}
		if e.Title == "" {
			return fmt.Errorf("era %d (%s) has no Title", i, r)
		}
		if e.Value == a.Eras[i-1].Value {
			return fmt.Errorf("era %d (%s) keeps the value %q of the era before it", i, r, e.Value)
		}
		prev = r
	}
	return nil
}

// IsHex12 reports whether s is the first 12 hex digits of a commit id, as an
// era names its commit.
func IsHex12(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
