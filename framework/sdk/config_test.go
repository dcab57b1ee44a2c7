package sdk

import (
	"errors"
	"strings"
	"testing"
)

// TestConfigGetters: each getter decodes the canonical form and reports a
// missing or malformed attribute by name instead of returning 0.
func TestConfigGetters(t *testing.T) {
	c := Config{"s": "x", "t": "true", "f": "false", "b": "yes", "n": "2.5", "big": "1e+06", "nan": "NaN",
		"w": "abc", "d": "250000", "dbad": "250us", "huge": "1e+30"}
	tests := []struct {
		name string
		get  func() (any, error)
		want any
		err  string // "" for none
	}{
		{"string", func() (any, error) { return c.String("s") }, "x", ""},
		{"string missing", func() (any, error) { return c.String("nope") }, "", "nope is not set"},
		{"bool true", func() (any, error) { return c.Bool("t") }, true, ""},
		{"bool false", func() (any, error) { return c.Bool("f") }, false, ""},
		{"bool bad", func() (any, error) { return c.Bool("b") }, false, `b = "yes": want true or false`},
		{"float", func() (any, error) { return c.Float("n") }, 2.5, ""},
		{"float g format", func() (any, error) { return c.Float("big") }, 1e6, ""},
		{"float NaN", func() (any, error) { return c.Float("nan") }, 0.0, "want a number"},
		{"float bad", func() (any, error) { return c.Float("w") }, 0.0, `w = "abc": want a number`},
		{"int", func() (any, error) { return c.Int("big") }, int64(1e6), ""},
		{"int fraction", func() (any, error) { return c.Int("n") }, int64(0), `n = "2.5": want a whole number`},
		{"int bad", func() (any, error) { return c.Int("w") }, int64(0), "want a whole number"},
		{"int overflow", func() (any, error) { return c.Int("huge") }, int64(0), "want a whole number"},
		{"duration", func() (any, error) { return c.Duration("d") }, int64(250000), ""},
		{"duration unit", func() (any, error) { return c.Duration("dbad") }, int64(0), "want integer nanoseconds"},
		{"duration missing", func() (any, error) { return c.Duration("nope") }, int64(0), "not set"},
	}
	for _, tt := range tests {
		got, err := tt.get()
		if got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.err)
		case err != nil:
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("%s: error %T is not a *ConfigError", tt.name, err)
			}
		}
	}
}

// TestConfigReader: the reader returns the values, and one error
// diagnostic per bad attribute, naming it, however often it is read.
func TestConfigReader(t *testing.T) {
	r := Config{"freq": "3e+09", "cost": "40", "bad": "x"}.Reader()
	if r.Float("freq") != 3e9 || r.Duration("cost") != 40 {
		t.Error("reader lost good values")
	}
	if r.Diagnostics().HasErrors() {
		t.Fatalf("good reads gave %v", r.Diagnostics())
	}
	_ = r.Duration("bad")
	_ = r.Duration("bad")
	_ = r.Bool("missing")
	d := r.Diagnostics()
	if len(d) != 2 || d[0].Attribute != "bad" || d[1].Attribute != "missing" || !d.HasErrors() {
		t.Errorf("diagnostics = %+v, want one for bad and one for missing", d)
	}
}

// TestConfigEnum: an enum attribute decodes to its index in OneOf; a value
// not in it, or a missing attribute, is an error on the attribute.
func TestConfigEnum(t *testing.T) {
	oneOf := []string{"push", "pull", "off"}
	c := Config{"model": "pull", "bad": "sideways"}
	if i, err := c.Enum("model", oneOf); i != 1 || err != nil {
		t.Errorf(`Enum("model") = %d, %v; want 1, nil`, i, err)
	}
	for _, name := range []string{"bad", "missing"} {
		r := c.Reader()
		if i := r.Enum(name, oneOf); i != 0 {
			t.Errorf("Enum(%q) = %d, want 0 with an error", name, i)
		}
		d := r.Diagnostics()
		if len(d) != 1 || d[0].Attribute != name || !strings.Contains(d[0].Summary, "push, pull, off") && name == "bad" {
			t.Errorf("Enum(%q) diagnostics = %v, want one error on %s naming the values", name, d, name)
		}
	}
}
