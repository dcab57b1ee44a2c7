package kernelversion

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/eras"
)

// Key names one versioned setting: the attribute Attr of plugin Plugin of
// kind Kind, or of a host block (Kind "kernel", or "governor" with Attr
// "plugin" for the governor choice) when Plugin is empty.
type Key struct {
	Kind   string
	Plugin string
	Attr   string
}

// String is how the key is printed: "hrtimer.hang_delay",
// "kernel.posix_timer_signals", "clockevent(archtimer).programming" (the
// plugin is named when it differs from the kind).
func (k Key) String() string {
	if k.Plugin == "" || k.Plugin == k.Kind {
		return k.Kind + "." + k.Attr
	}
	return k.Kind + "(" + k.Plugin + ")." + k.Attr
}

// Setting is one versioned attribute and its eras.
type Setting struct {
	Key  Key
	Attr sdk.Attribute
}

// Unversioned is a strategy attribute that does not follow the release.
type Unversioned struct {
	Key    Key
	Reason string
}

// Change is one modelled kernel change: an era after a setting's first.
type Change struct {
	Key     Key
	Era     sdk.Era
	Release Release
	// Backports are the stable point releases that carry the change
	// before Release (Era.Backports, parsed).
	Backports []Release
	// From is the setting's value before the change.
	From string
}

// In reports whether release r has the change: r is Release or later, or a
// point release at or after the backport to its series (eras.In).
func (c Change) In(r Release) bool { return eras.In(c.Era, r) }

// ID names the change: its commit, or its title when the id is unknown.
func (c Change) ID() string {
	if c.Era.Commit != "" {
		return c.Era.Commit
	}
	return c.Era.Title
}

// Table is the versioned settings of a set of schemas.
type Table struct {
	Settings    []Setting
	Unversioned []Unversioned
	// Undeclared are strategy attributes with neither eras nor a reason:
	// a third-party plugin's that predates eras. They keep their schema
	// default at every version; the builtins have none (a test holds them
	// to it).
	Undeclared []Key
	changes    []Change
}

// Add adds the strategy attributes of one schema. A strategy attribute
// (sdk.Attribute.Strategy) without eras should say why (Unversioned); one
// that does not is listed in Undeclared. Eras must be well formed (see
// eras.Check); the error names the attribute.
func (t *Table) Add(kind, plugin string, s sdk.Schema) error {
	var errs []string
	for _, a := range s.Attributes {
		k := Key{Kind: kind, Plugin: plugin, Attr: a.Name}
		if len(a.Eras) == 0 {
			if a.Strategy() && a.Unversioned == "" {
				if !slices.Contains(t.Undeclared, k) {
					t.Undeclared = append(t.Undeclared, k)
				}
			} else if a.Strategy() {
				t.Unversioned = append(t.Unversioned, Unversioned{Key: k, Reason: a.Unversioned})
			}
			continue
		}
		if i := slices.IndexFunc(t.Settings, func(x Setting) bool { return x.Key == k }); i >= 0 {
			continue // the same plugin in two blocks (hpet local and broadcast)
		}
		if err := eras.Check(a); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
			continue
		}
		t.Settings = append(t.Settings, Setting{Key: k, Attr: a})
	}
	t.changes = nil
	if len(errs) > 0 {
		return fmt.Errorf("kernel version table: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Changes returns every modelled change, oldest release first; changes of
// one release keep the table's order (settings in the order they were added,
// eras in their order).
func (t *Table) Changes() []Change {
	if t.changes != nil {
		return t.changes
	}
	var cs []Change
	for _, s := range t.Settings {
		for i, e := range s.Attr.Eras[1:] {
			r, _ := Parse(e.Since)
			bps, _ := eras.Backports(e) // Add checked them
			cs = append(cs, Change{Key: s.Key, Era: e, Release: r, Backports: bps, From: s.Attr.Eras[i].Value})
		}
	}
	slices.SortStableFunc(cs, func(a, b Change) int { return a.Release.Compare(b.Release) })
	t.changes = cs
	return cs
}

// State is the value of every versioned setting.
type State map[Key]string

// Baseline is the state at eras.Oldest.
func (t *Table) Baseline() State {
	st := State{}
	for _, s := range t.Settings {
		st[s.Key] = s.Attr.Eras[0].Value
	}
	return st
}

// At is the state at release r: the baseline with every change up to r,
// and, at a point release, every change backported to its series by then.
func (t *Table) At(r Release) State {
	st := t.Baseline()
	for _, c := range t.Changes() {
		if c.In(r) {
			st[c.Key] = c.Era.Value
		}
	}
	return st
}

// Apply returns st with the changes applied in order.
func (st State) Apply(cs ...Change) State {
	out := State{}
	for k, v := range st {
		out[k] = v
	}
	for _, c := range cs {
		out[c.Key] = c.Era.Value
	}
	return out
}

// ValueAt is the value of eras at release r (see eras.ValueAt); false when
// there are no eras.
func ValueAt(es []sdk.Era, r Release) (string, bool) { return eras.ValueAt(es, r) }

// Point is a position in the ordered changes: a release, or the state right
// after one change (its commit id, for a change no release has on its own,
// such as a regression fixed before the release).
type Point struct {
	Name string
	// Applied is how many of Table.Changes() the point has: the state is
	// the baseline with Changes()[:Applied].
	Applied int
}

// ParsePoint reads a release ("6.13") or the commit id (or its 12-hex
// prefix, at least 7 digits) of a modelled change. A point release is a
// point only while no backport sets it apart from its series: a state with a
// later release's change is not a prefix of the ordered changes.
func (t *Table) ParsePoint(s string) (Point, error) {
	cs := t.Changes()
	if r, err := Parse(s); err == nil {
		if _, err := ParseCovered(s); err != nil {
			return Point{}, err
		}
		n := 0
		for _, c := range cs {
			if c.Release.Compare(r) <= 0 {
				n++
			} else if c.In(r) {
				return Point{}, fmt.Errorf("%s carries %s's %s (%s) as a stable backport, so it is no point on the mainline order of changes: name %s or a later release, or set %s in the file", r, c.Release, c.ID(), c.Key, r.Series(), c.Key)
			}
		}
		return Point{Name: r.String(), Applied: n}, nil
	}
	if len(s) >= 7 && len(s) <= 12 && eras.IsHex12(s+strings.Repeat("0", 12-len(s))) {
		for i, c := range cs {
			if strings.HasPrefix(c.Era.Commit, s) {
				return Point{Name: c.Era.Commit, Applied: i + 1}, nil
			}
		}
		return Point{}, fmt.Errorf("%s is no modelled change's commit (docs/kernel-changes.md lists them)", s)
	}
	return Point{}, fmt.Errorf("%q is neither a release (MAJOR.MINOR[.PATCH], %s) nor the commit id of a modelled change", s, Covered())
}

// StateOf is the state at p.
func (t *Table) StateOf(p Point) State {
	return t.Baseline().Apply(t.Changes()[:p.Applied]...)
}

// Between returns the changes from a to b, in order, and whether b is later
// than a (false: the changes lead from b to a).
func (t *Table) Between(a, b Point) ([]Change, bool) {
	cs := t.Changes()
	if a.Applied <= b.Applied {
		return cs[a.Applied:b.Applied], true
	}
	return cs[b.Applied:a.Applied], false
}
