package eras

import (
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

func rel(maj, min, patch int) Release { return Release{Major: maj, Minor: min, Patch: patch} }

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Release
		str  string // "" when Parse must fail
	}{
		{"6.13", rel(6, 13, 0), "6.13"},
		{"v5.9", rel(5, 9, 0), "5.9"},
		{"6.18.44", rel(6, 18, 44), "6.18.44"},
		{"v6.18.44", rel(6, 18, 44), "6.18.44"},
		{"6.18.0", rel(6, 18, 0), "6.18"}, // uname's mainline release is the series' first
		{"4.9.337", rel(4, 9, 337), "4.9.337"},
		{"6.x", Release{}, ""},
		{"6.18.44.1.2", Release{}, ""},
		{"6.18.44.1", Release{}, ""},
		{"6", Release{}, ""},
		{"", Release{}, ""},
		{"6.18.", Release{}, ""},
		{"6..18", Release{}, ""},
		{"6.18-rc1", Release{}, ""},
		{"6.18.44-fc-v1300", Release{}, ""},
		{"06.18", Release{}, ""},
		{"+6.18", Release{}, ""},
		{"6.-18", Release{}, ""},
		{"6.18.1000", Release{}, ""},
		{"100.1", Release{}, ""},
	} {
		r, err := Parse(c.in)
		if c.str == "" {
			if err == nil || !strings.Contains(err.Error(), "not a release") || !strings.Contains(err.Error(), "MAJOR.MINOR.PATCH") {
				t.Errorf("Parse(%q) = %v, %v; want an error naming the forms", c.in, r, err)
			}
			continue
		}
		if err != nil || r != c.want || r.String() != c.str {
			t.Errorf("Parse(%q) = %v (%#v), %v; want %s", c.in, r, r, err, c.str)
		}
	}
}

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"6.18", "6.18.0", 0},
		{"6.18", "6.18.1", -1},
		{"6.18.44", "6.18.43", 1},
		{"6.18.44", "6.18.100", -1},
		{"6.18.44", "6.19", -1},
		{"6.18.44", "7.1", -1},
		{"7.1.3", "7.1", 1},
		{"6.9", "6.10", -1},
		{"4.20", "5.0", -1},
		{"3.10.108", "3.11", -1},
	} {
		a, err1 := Parse(c.a)
		b, err2 := Parse(c.b)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := a.Compare(b); got != c.want {
			t.Errorf("%s vs %s = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := b.Compare(a); got != -c.want {
			t.Errorf("%s vs %s = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
	if s := rel(6, 18, 44).Series(); s != rel(6, 18, 0) || s.String() != "6.18" {
		t.Errorf("Series of 6.18.44 = %v", s)
	}
}

func TestParseUname(t *testing.T) {
	for in, want := range map[string]string{
		"6.18.44-fc-v1300": "6.18.44",
		"6.1.0-28-amd64":   "6.1",
		"3.10.0-1160.el7":  "3.10",
		"6.18-rc1":         "6.18",
		"5.10":             "5.10",
		"4.4.0.1-foo":      "4.4",
		"6.18.":            "6.18",
		"linux":            "",
		"6":                "",
		"6-rc1":            "",
	} {
		r, err := ParseUname(in)
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), in) {
				t.Errorf("ParseUname(%q) = %v, %v; want an error naming it", in, r, err)
			}
			continue
		}
		if err != nil || r.String() != want {
			t.Errorf("ParseUname(%q) = %v, %v; want %s", in, r, err, want)
		}
	}
}

// TestValueAtBackports: a point release has a change backported to its
// series from the point release Backports names on; its series' first
// release, earlier point releases, other series and later mainline
// releases before the change's own do not.
func TestValueAtBackports(t *testing.T) {
	es := []sdk.Era{
		{Since: "3.10", Value: "a"},
		{Since: "6.12", Value: "b", Commit: "000000000001", Title: "t"},
		{Since: "7.1", Value: "c", Commit: "000000000002", Title: "t", Backports: "6.6.90, 6.18.44"},
	}
	for in, want := range map[string]string{
		"3.10": "a", "6.6": "a", "6.6.89": "a", "6.6.90": "c", "6.6.200": "c",
		"6.11": "a", "6.12": "b", "6.12.80": "b", "6.18": "b", "6.18.43": "b",
		"6.18.44": "c", "6.18.45": "c", "6.19": "b", "6.19.44": "b", "7.0.5": "b",
		"7.1": "c", "7.1.2": "c",
	} {
		r, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := ValueAt(es, r); !ok || got != want {
			t.Errorf("ValueAt(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := ValueAt(nil, rel(6, 18, 44)); ok {
		t.Error("ValueAt of no eras is ok")
	}
}

func TestCheckBackports(t *testing.T) {
	attr := func(first, later sdk.Era) sdk.Attribute {
		later.Value, later.Commit, later.Title = "b", "000000000001", "t"
		return sdk.Attribute{Name: "x", Type: sdk.TypeString, OneOf: []string{"a", "b"}, Eras: []sdk.Era{first, later}}
	}
	base := sdk.Era{Since: "3.10", Value: "a"}
	for _, c := range []struct {
		name  string
		first sdk.Era
		later sdk.Era
		err   string
	}{
		{"ok", base, sdk.Era{Since: "7.1", Backports: "6.6.90, 6.18.44"}, ""},
		{"ok spaces", base, sdk.Era{Since: "7.1", Backports: " 6.18.44 "}, ""},
		{"since a point release", base, sdk.Era{Since: "7.1.1"}, "goes in Backports"},
		{"mainline backport", base, sdk.Era{Since: "7.1", Backports: "6.18"}, "not a stable point release"},
		{"backport not older", base, sdk.Era{Since: "7.1", Backports: "7.1.2"}, "not older than"},
		{"backport before oldest", base, sdk.Era{Since: "7.1", Backports: "3.2.1"}, "before the oldest"},
		{"two in a series", base, sdk.Era{Since: "7.1", Backports: "6.18.44, 6.18.50"}, "one point release per stable series"},
		{"out of order", base, sdk.Era{Since: "7.1", Backports: "6.18.44, 6.12.1"}, "oldest series first"},
		{"unparsable", base, sdk.Era{Since: "7.1", Backports: "6.18.x"}, "not a release"},
		{"first era backport", sdk.Era{Since: "3.10", Value: "a", Backports: "6.18.44"}, sdk.Era{Since: "7.1"}, "names no commit or backport"},
	} {
		err := Check(attr(c.first, c.later))
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
}
