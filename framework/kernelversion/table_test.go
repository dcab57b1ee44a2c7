package kernelversion

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/eras"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"6.13", "6.13", ""},
		{"v5.9", "5.9", ""},
		{"3.10", "3.10", ""},
		{"6.13.2", "6.13.2", ""},
		{"6.18.0", "6.18", ""},
		{"6.13.2.1", "", "not a release"},
		{"6", "", "not a release"},
		{"6.x", "", "not a release"},
		{"", "", "not a release"},
	} {
		r, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) = %v, %v; want an error with %q", c.in, r, err, c.err)
			}
			continue
		}
		if err != nil || r.String() != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %s", c.in, r, err, c.want)
		}
	}
	for _, s := range []string{"2.6", "3.9", "3.9.11", "7.2", "7.2.1", "8.0"} {
		if _, err := ParseCovered(s); err == nil || !strings.Contains(err.Error(), Covered()) {
			t.Errorf("ParseCovered(%q) = %v; want an error naming the range %s", s, err, Covered())
		}
	}
	if r, _ := Parse("4.20"); r.Compare(Release{Major: 5, Minor: 0}) >= 0 || r.Compare(Release{Major: 4, Minor: 9}) <= 0 {
		t.Error("4.20 must sort between 4.9 and 5.0")
	}
}

func attr(name string, eras ...sdk.Era) sdk.Attribute {
	return sdk.Attribute{Name: name, Type: sdk.TypeString, OneOf: []string{"a", "b", "c"}, Eras: eras}
}

func TestAddChecksEras(t *testing.T) {
	base := sdk.Era{Since: "3.10", Value: "a"}
	for _, c := range []struct {
		name string
		a    sdk.Attribute
		err  string
	}{
		{"ok", attr("x", base, sdk.Era{Since: "5.9", Value: "b", Commit: "d4f7dae87096", Title: "t"}), ""},
		{"value not allowed", attr("x", base, sdk.Era{Since: "5.9", Value: "z", Commit: "d4f7dae87096", Title: "t"}), "not one of"},
		{"first era too late", attr("x", sdk.Era{Since: "4.0", Value: "a"}), "after the oldest"},
		{"first era with commit", attr("x", sdk.Era{Since: "3.10", Value: "a", Commit: "d4f7dae87096"}), "names no commit"},
		{"out of order", attr("x", base, sdk.Era{Since: "5.9", Value: "b", Commit: "d4f7dae87096", Title: "t"},
			sdk.Era{Since: "5.1", Value: "c", Commit: "d4f7dae87097", Title: "t"}), "older than"},
		{"after newest", attr("x", base, sdk.Era{Since: "9.1", Value: "b", Commit: "d4f7dae87096", Title: "t"}), "outside the covered"},
		{"no commit no note", attr("x", base, sdk.Era{Since: "5.9", Value: "b", Title: "t"}), "no Note says why"},
		{"long commit", attr("x", base, sdk.Era{Since: "5.9", Value: "b", Commit: "d4f7dae87096ab", Title: "t"}), "12 hex"},
		{"no title", attr("x", base, sdk.Era{Since: "5.9", Value: "b", Commit: "d4f7dae87096"}), "no Title"},
		{"same value", attr("x", base, sdk.Era{Since: "5.9", Value: "a", Commit: "d4f7dae87096", Title: "t"}), "keeps the value"},
	} {
		var tb Table
		err := tb.Add("k", "p", sdk.Schema{Attributes: []sdk.Attribute{c.a}})
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err = %v; want %q", c.name, err, c.err)
		}
	}
	var tb Table
	if err := tb.Add("k", "p", sdk.Schema{Attributes: []sdk.Attribute{attr("x")}}); err != nil || len(tb.Undeclared) != 1 || tb.Undeclared[0].String() != "k(p).x" {
		t.Errorf("a strategy without eras or reason: %v, undeclared %v", err, tb.Undeclared)
	}
	tb = Table{}
	if err := tb.Add("k", "p", sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "cost", Type: sdk.TypeDuration},
		{Name: "flag", Type: sdk.TypeBool, Unversioned: "hardware"},
	}}); err != nil || len(tb.Unversioned) != 1 || len(tb.Settings) != 0 {
		t.Errorf("tuning and unversioned attributes: %v, %+v", err, tb)
	}
}

func testTable(t *testing.T) *Table {
	t.Helper()
	var tb Table
	if err := tb.Add("hrtimer", "hrtimer", sdk.Schema{Attributes: []sdk.Attribute{
		attr("late", base("a"), sdk.Era{Since: "7.1", Value: "b", Commit: "288924384856", Title: "regress"},
			sdk.Era{Since: "7.1", Value: "c", Title: "fix", Note: "id unknown"}),
		attr("early", base("a"), sdk.Era{Since: "5.12", Value: "b", Commit: "46eb1701c046", Title: "storm fix"}),
	}}); err != nil {
		t.Fatal(err)
	}
	return &tb
}

func base(v string) sdk.Era { return sdk.Era{Since: "3.10", Value: v} }

func TestChangesAndPoints(t *testing.T) {
	tb := testTable(t)
	var ids []string
	for _, c := range tb.Changes() {
		ids = append(ids, c.ID())
	}
	if got := strings.Join(ids, " "); got != "46eb1701c046 288924384856 fix" {
		t.Errorf("changes in order = %s", got)
	}
	late := Key{"hrtimer", "hrtimer", "late"}
	early := Key{"hrtimer", "hrtimer", "early"}
	for _, c := range []struct {
		point       string
		late, early string
	}{
		{"3.10", "a", "a"}, {"5.11", "a", "a"}, {"5.12", "a", "b"}, {"7.0", "a", "b"},
		{"288924384856", "b", "b"}, {"2889243", "b", "b"}, {"7.1", "c", "b"},
	} {
		p, err := tb.ParsePoint(c.point)
		if err != nil {
			t.Fatalf("ParsePoint(%s): %v", c.point, err)
		}
		st := tb.StateOf(p)
		if st[late] != c.late || st[early] != c.early {
			t.Errorf("state at %s = %v; want late=%s early=%s", c.point, st, c.late, c.early)
		}
		if r, err := Parse(c.point); err == nil {
			if at := tb.At(r); at[late] != st[late] || at[early] != st[early] {
				t.Errorf("At(%s) = %v, StateOf = %v", c.point, at, st)
			}
		}
	}
	for _, bad := range []string{"abcdef0", "7.2", "xyz"} {
		if _, err := tb.ParsePoint(bad); err == nil {
			t.Errorf("ParsePoint(%q): no error", bad)
		}
	}
	a, _ := tb.ParsePoint("7.0")
	b, _ := tb.ParsePoint("288924384856")
	cs, forward := tb.Between(a, b)
	if len(cs) != 1 || !forward || cs[0].Era.Commit != "288924384856" {
		t.Errorf("Between(7.0, 288924384856) = %v, %v", cs, forward)
	}
	if cs, forward := tb.Between(b, a); len(cs) != 1 || forward {
		t.Errorf("Between(288924384856, 7.0) = %v, %v", cs, forward)
	}
}

// TestPointReleases: a stable point release is its series plus the
// changes backported to it by then (sdk.Era.Backports); ParsePoint takes it
// while no backport sets it apart from its series, and refuses it, naming
// the change, once one does.
func TestPointReleases(t *testing.T) {
	var tb Table
	if err := tb.Add("kernel", "", sdk.Schema{Attributes: []sdk.Attribute{
		attr("restart", base("a"), sdk.Era{Since: "7.1", Value: "b", Commit: "adcec6a7f566", Title: "t", Backports: "6.18.44"}),
		attr("other", base("a"), sdk.Era{Since: "6.19", Value: "b", Commit: "46eb1701c046", Title: "t"}),
	}}); err != nil {
		t.Fatal(err)
	}
	restart, other := Key{Kind: "kernel", Attr: "restart"}, Key{Kind: "kernel", Attr: "other"}
	for _, c := range []struct{ rel, restart, other string }{
		{"6.18", "a", "a"}, {"6.18.43", "a", "a"}, {"6.18.44", "b", "a"}, {"6.18.50", "b", "a"},
		{"6.19", "a", "b"}, {"6.19.3", "a", "b"}, {"7.1", "b", "b"}, {"7.1.1", "b", "b"},
	} {
		r, err := ParseCovered(c.rel)
		if err != nil {
			t.Fatal(err)
		}
		if st := tb.At(r); st[restart] != c.restart || st[other] != c.other {
			t.Errorf("At(%s) = %v; want restart=%s other=%s", c.rel, st, c.restart, c.other)
		}
	}
	if got := fmt.Sprint(tb.Backports()); got != "[6.18.44]" {
		t.Errorf("Backports() = %s", got)
	}
	p, err := tb.ParsePoint("6.18.43")
	if s, _ := tb.ParsePoint("6.18"); err != nil || p.Applied != s.Applied || p.Name != "6.18.43" {
		t.Errorf("ParsePoint(6.18.43) = %+v, %v; want 6.18's changes", p, err)
	}
	if _, err := tb.ParsePoint("6.18.44"); err == nil || !strings.Contains(err.Error(), "adcec6a7f566") || !strings.Contains(err.Error(), "stable backport") {
		t.Errorf("ParsePoint(6.18.44): %v; want the backport named", err)
	}
}

func TestValueAt(t *testing.T) {
	eras := []sdk.Era{base("a"), {Since: "5.12", Value: "b"}}
	for r, want := range map[Release]string{{Major: 3, Minor: 10}: "a", {Major: 5, Minor: 11}: "a", {Major: 5, Minor: 12}: "b", {Major: 7, Minor: 1}: "b"} {
		if v, ok := ValueAt(eras, r); !ok || v != want {
			t.Errorf("ValueAt(%s) = %q, %v; want %q", r, v, ok, want)
		}
	}
	if _, ok := ValueAt(nil, Release{Major: 6, Minor: 13}); ok {
		t.Error("ValueAt without eras: ok")
	}
}

func TestReleases(t *testing.T) {
	rs := Releases()
	if rs[0] != eras.Oldest || rs[len(rs)-1] != eras.Newest {
		t.Fatalf("Releases() runs %s..%s, want %s..%s", rs[0], rs[len(rs)-1], eras.Oldest, eras.Newest)
	}
	for i, r := range rs {
		if _, err := ParseCovered(r.String()); err != nil {
			t.Errorf("%s: %v", r, err)
		}
		if i > 0 && rs[i-1].Compare(r) >= 0 {
			t.Errorf("%s after %s", r, rs[i-1])
		}
	}
	for _, s := range []string{"4.20", "5.0", "6.19", "7.0"} {
		if _, err := ParseCovered(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := ParseCovered("5.25"); err == nil || !strings.Contains(err.Error(), "no release") {
		t.Errorf("5.25: %v", err)
	}
}
