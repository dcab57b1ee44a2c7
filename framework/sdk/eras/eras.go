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

// Release is a kernel release, MAJOR.MINOR.PATCH as the kernel's Makefile
// numbers it (VERSION, PATCHLEVEL, SUBLEVEL). Patch 0 is a mainline
// release, the first of its series: "6.18" and "6.18.0" are the same
// release, v6.18, and print "6.18". A Patch above 0 is a point release of
// the series' stable branch (linux-6.18.y): 6.18.44 is 6.18 plus whatever
// stable backports an era records (sdk.Era.Backports) up to 6.18.44, and
// sorts after 6.18 and before 6.19.
type Release struct{ Major, Minor, Patch int }

// The releases the table covers. Oldest is the earliest state the builtins
// model (3.10, the nohz-catchup report's kernel); Newest is the latest
// release a modelled change is in. A version outside them is refused: the
// model does not know what came before or after. Point releases of a
// covered series are covered.
var (
	Oldest = Release{Major: 3, Minor: 10}
	Newest = Release{Major: 7, Minor: 1}
)

// Parse reads "6.13", "6.18.44" (or "v6.13"). An -rc, a distribution suffix
// or a fourth number is refused: a kernel version names a release
// (ParseUname reads a uname -r).
func Parse(s string) (Release, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Release{}, notRelease(s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		// Two digits for a major or minor number, three for a point
		// release (4.9.337 is the longest stable series yet).
		if err != nil || v < 0 || p != strconv.Itoa(v) || i < 2 && v > 99 || v > 999 {
			return Release{}, notRelease(s)
		}
		n[i] = v
	}
	return Release{Major: n[0], Minor: n[1], Patch: n[2]}, nil
}

func notRelease(s string) error {
	return fmt.Errorf("%q is not a release: want MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. \"6.13\" or \"6.18.44\"", s)
}

// ParseUname reads the release a uname -r names: its leading
// MAJOR.MINOR[.PATCH], without the local version ("6.18.44-fc-v1272" is
// 6.18.44, "3.10.0-1160.el7" is 3.10, "6.18-rc1" is 6.18).
func ParseUname(s string) (Release, error) {
	end := strings.IndexFunc(s, func(c rune) bool { return c != '.' && (c < '0' || c > '9') })
	if end < 0 {
		end = len(s)
	}
	parts := strings.Split(strings.TrimRight(s[:end], "."), ".")
	if len(parts) > 3 {
		parts = parts[:3] // "4.4.0.1": the kernel's numbers are three
	}
	r, err := Parse(strings.Join(parts, "."))
	if err != nil {
		return Release{}, fmt.Errorf("uname -r %q does not start with a release MAJOR.MINOR[.PATCH]", s)
	}
	return r, nil
}

// String is "6.18" for a mainline release, "6.18.44" for a point release.
func (r Release) String() string {
	if r.Patch == 0 {
		return fmt.Sprintf("%d.%d", r.Major, r.Minor)
	}
	return fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.Patch)
}

// IsZero reports whether r is unset.
func (r Release) IsZero() bool { return r == Release{} }

// Series is the mainline release r is a point release of (itself when it
// is mainline): 6.18 for 6.18.44.
func (r Release) Series() Release { return Release{Major: r.Major, Minor: r.Minor} }

// Compare orders releases: -1, 0 or 1. A point release sorts after its
// series' mainline release and before the next one.
func (r Release) Compare(o Release) int {
	if c := cmp.Compare(r.Major, o.Major); c != 0 {
		return c
	}
	if c := cmp.Compare(r.Minor, o.Minor); c != 0 {
		return c
	}
	return cmp.Compare(r.Patch, o.Patch)
}

// Backports reads an era's Backports: the point releases, one per stable
// series, comma-separated ("6.12.80, 6.18.44").
func Backports(e sdk.Era) ([]Release, error) {
	if strings.TrimSpace(e.Backports) == "" {
		return nil, nil
	}
	var out []Release
	for _, s := range strings.Split(e.Backports, ",") {
		r, err := Parse(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// In reports whether release r has era e's change: r is Since or later, or
// r is a point release of a stable series the change was backported to, at
// or after the point release Backports names for that series. A malformed
// era (Check refuses it) is in no release.
func In(e sdk.Era, r Release) bool {
	since, err := Parse(e.Since)
	if err != nil {
		return false
	}
	if r.Compare(since) >= 0 {
		return true
	}
	bps, _ := Backports(e)
	for _, b := range bps {
		if b.Series() == r.Series() && r.Patch >= b.Patch {
			return true
		}
	}
	return false
}

// ValueAt is the value of eras at release r: that of the last era whose
// change r has (In), else the first era's; false when there are no eras.
// The last, not the first missing: a point release may have a backported
// change without the mainline changes between its series and the change's
// release.
func ValueAt(es []sdk.Era, r Release) (string, bool) {
	if len(es) == 0 {
		return "", false
	}
	v := es[0].Value
	for _, e := range es[1:] {
		if In(e, r) {
			v = e.Value
		}
	}
	return v, true
}

// Check holds an attribute's kernel eras (sdk.Attribute.Eras) to the rules
// the host's version table applies: releases parse, are mainline (no point
// release) and increase, the first era is the state at or
// before Oldest and names no commit, later ones are inside the covered range
// and name a 12-hex commit with its title (or explain in Note why the id is
// not known), their backports are point releases of covered series older
// than the change's release, one per series, and every value is one the
// attribute allows.
func Check(a sdk.Attribute) error {
	var prev Release
	for i, e := range a.Eras {
		r, err := Parse(e.Since)
		if err != nil {
			return fmt.Errorf("era %d: %v", i, err)
		}
		if r.Patch != 0 {
			return fmt.Errorf("era %d (%s): Since is the first mainline release with the change (%s); a stable point release that has it goes in Backports", i, e.Since, r.Series())
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
			if e.Commit != "" || e.Backports != "" {
				return fmt.Errorf("the first era is the state at %s and names no commit or backport (got %s%s)", Oldest, e.Commit, e.Backports)
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
		if err := checkBackports(e, r); err != nil {
			return fmt.Errorf("era %d (%s): %v", i, r, err)
		}
		prev = r
	}
	return nil
}

// checkBackports holds an era's Backports to its rules: point releases
// (not mainline: that is Since), of covered series older than the change's
// release since (a series at or after it has the change from its first
// release), one per series, oldest series first.
func checkBackports(e sdk.Era, since Release) error {
	bps, err := Backports(e)
	if err != nil {
		return fmt.Errorf("backports: %v", err)
	}
	for j, b := range bps {
		switch {
		case b.Patch == 0:
			return fmt.Errorf("backport %s is not a stable point release (MAJOR.MINOR.PATCH)", b)
		case b.Series().Compare(since) >= 0:
			return fmt.Errorf("backport %s is not older than the change's release %s, which has it already", b, since)
		case b.Series().Compare(Oldest) < 0:
			return fmt.Errorf("backport %s is before the oldest modelled release %s", b, Oldest)
		case j > 0 && b.Series().Compare(bps[j-1].Series()) <= 0:
			return fmt.Errorf("backports %s and %s: one point release per stable series, oldest series first", bps[j-1], b)
		}
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
