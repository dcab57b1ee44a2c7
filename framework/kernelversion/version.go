// Package kernelversion maps Linux releases to the strategy settings that
// model them. Each strategy attribute of a plugin schema or of the kernel
// block declares its value per release (sdk.Attribute.Eras); a Table gathers
// them, orders the modelled kernel changes, and gives the setting of every
// attribute at a release or after any subset of the changes: what
// `kernel { version }`, `--kernel-version`, `compare --kernels` and
// `tickemu bisect` use. docs/kernel-changes.md is generated from the table of
// the builtins (internal/kernelchanges).
package kernelversion

import (
	"fmt"
	"slices"

	"github.com/tickemu/tickemu/framework/sdk/eras"
)

// Release is a kernel release, MAJOR.MINOR or a stable point release
// MAJOR.MINOR.PATCH (framework/sdk/eras, which also holds the covered
// range, eras.Oldest to eras.Newest, and the rules a schema's eras follow).
// "6.18" is the series' first release, mainline v6.18: what the eras'
// Since name. "6.18.44" is 6.18 with the changes whose eras name a stable
// backport at or before 6.18.44 (sdk.Era.Backports).
type Release = eras.Release

// Parse reads "6.13", "6.18.44" (or "v6.13"); see eras.Parse.
func Parse(s string) (Release, error) { return eras.Parse(s) }

// ParseCovered is Parse plus the range check: a release of a series the
// table covers (any point release of it: the table knows its backports,
// and a point release without one behaves as its series).
func ParseCovered(s string) (Release, error) {
	r, err := Parse(s)
	if err != nil {
		return r, err
	}
	if r.Series().Compare(eras.Oldest) < 0 || r.Series().Compare(eras.Newest) > 0 {
		return r, fmt.Errorf("%s is outside the modelled releases: the table covers %s", r, Covered())
	}
	if last, ok := lastMinor[r.Major]; ok && r.Minor > last {
		return r, fmt.Errorf("there is no release %s: %d.%d was the last of %d.x (the table covers %s)", r, r.Major, last, r.Major, Covered())
	}
	return r, nil
}

// lastMinor is the last release of each major series the range crosses:
// Linus moves to the next major number after about 20 minors.
var lastMinor = map[int]int{3: 19, 4: 20, 5: 19, 6: 19}

// Releases lists every mainline release of the covered range, oldest first
// (no point releases: Backports lists those the table names).
func Releases() []Release {
	var out []Release
	for r := eras.Oldest; r.Compare(eras.Newest) <= 0; {
		out = append(out, r)
		if last, ok := lastMinor[r.Major]; ok && r.Minor >= last {
			r = Release{Major: r.Major + 1}
		} else {
			r.Minor++
		}
	}
	return out
}

// Backports lists the stable point releases the eras of t name, oldest
// first, each once: the releases whose state is not their series'.
func (t *Table) Backports() []Release {
	var out []Release
	for _, c := range t.Changes() {
		for _, b := range c.Backports {
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	slices.SortFunc(out, Release.Compare)
	return out
}

// Covered names the covered range ("3.10 to 7.1"), point releases of its
// series included.
func Covered() string { return eras.Oldest.String() + " to " + eras.Newest.String() }
