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
	"cmp"
	"fmt"
	"strconv"
	"strings"
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

// ParseCovered is Parse plus the range check: a release the table covers.
func ParseCovered(s string) (Release, error) {
	r, err := Parse(s)
	if err != nil {
		return r, err
	}
	if r.Compare(Oldest) < 0 || r.Compare(Newest) > 0 {
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

// Releases lists every mainline release of the covered range, oldest first.
func Releases() []Release {
	var out []Release
	for r := Oldest; r.Compare(Newest) <= 0; {
		out = append(out, r)
		if last, ok := lastMinor[r.Major]; ok && r.Minor >= last {
			r = Release{r.Major + 1, 0}
		} else {
			r.Minor++
		}
	}
	return out
}

// Covered names the covered range ("3.10 to 7.1").
func Covered() string { return Oldest.String() + " to " + Newest.String() }

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
