package sdk

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Config holds decoded attribute values in canonical text form: strings as
// written, numbers in Go's 'g' float format, bools "true"/"false", durations as
// integer nanoseconds, frequencies as Hz in 'g' format. Every attribute of the
// schema is present (defaults are filled in by the host).
//
// The getters return a *ConfigError when an attribute is missing or does not
// decode as the type asked for; Reader collects those as Diagnostics so that
// Configure can read every attribute and report all problems at once:
//
//	r := c.Reader()
//	d.freq = r.Float("freq")
//	d.cost = r.Duration("write_cost")
//	if diags := r.Diagnostics(); diags.HasErrors() {
//		return diags
//	}
type Config map[string]string

// ConfigError is an attribute a Config getter could not decode.
type ConfigError struct {
	Attribute string
	Value     string // "" when missing
	Missing   bool
	Want      string // "a number", "a whole number", "true or false", "integer nanoseconds"
	// Err, when set, says what is wrong with Value beyond its type: a CPU
	// the machine does not have, say.
	Err error
}

func (e *ConfigError) Error() string {
	if e.Missing {
		return fmt.Sprintf("attribute %s is not set (the host sets every attribute of the schema; is it in Schema?)", e.Attribute)
	}
	if e.Err != nil {
		return fmt.Sprintf("attribute %s = %q: %v", e.Attribute, e.Value, e.Err)
	}
	return fmt.Sprintf("attribute %s = %q: want %s", e.Attribute, e.Value, e.Want)
}

// Unwrap returns Err.
func (e *ConfigError) Unwrap() error { return e.Err }

func (c Config) raw(name, want string) (string, error) {
	v, ok := c[name]
	if !ok {
		return "", &ConfigError{Attribute: name, Missing: true, Want: want}
	}
	return v, nil
}

// String returns a string attribute.
func (c Config) String(name string) (string, error) { return c.raw(name, "a string") }

// Bool returns a bool attribute ("true" or "false").
func (c Config) Bool(name string) (bool, error) {
	v, err := c.raw(name, "true or false")
	if err != nil {
		return false, err
	}
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &ConfigError{Attribute: name, Value: v, Want: "true or false"}
}

// Float returns a number or frequency attribute; NaN is refused.
func (c Config) Float(name string) (float64, error) {
	v, err := c.raw(name, "a number")
	if err != nil {
		return 0, err
	}
	f, perr := strconv.ParseFloat(v, 64)
	if perr != nil || math.IsNaN(f) {
		return 0, &ConfigError{Attribute: name, Value: v, Want: "a number"}
	}
	return f, nil
}

// Int returns a number attribute that must be a whole number in int64 range.
func (c Config) Int(name string) (int64, error) {
	f, err := c.Float(name)
	if err != nil {
		if ce, ok := err.(*ConfigError); ok {
			ce.Want = "a whole number"
		}
		return 0, err
	}
	if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, &ConfigError{Attribute: name, Value: c[name], Want: "a whole number"}
	}
	return int64(f), nil
}

// Duration returns a duration attribute in nanoseconds.
func (c Config) Duration(name string) (int64, error) {
	v, err := c.raw(name, "integer nanoseconds")
	if err != nil {
		return 0, err
	}
	d, perr := strconv.ParseInt(v, 10, 64)
	if perr != nil {
		return 0, &ConfigError{Attribute: name, Value: v, Want: "integer nanoseconds"}
	}
	return d, nil
}

// Enum returns the index in oneOf of a string attribute that must be one of
// its values (an Attribute's OneOf).
func (c Config) Enum(name string, oneOf []string) (int, error) {
	want := "one of " + strings.Join(oneOf, ", ")
	v, err := c.raw(name, want)
	if err != nil {
		return 0, err
	}
	if i := slices.Index(oneOf, v); i >= 0 {
		return i, nil
	}
	return 0, &ConfigError{Attribute: name, Value: v, Want: want}
}

// Reader returns a reader of c that records decoding errors instead of
// returning them.
func (c Config) Reader() *ConfigReader { return &ConfigReader{c: c} }

// ConfigReader reads a Config, turning each decoding error into an error
// Diagnostic on its attribute; a failed read returns the zero value.
type ConfigReader struct {
	c     Config
	diags Diagnostics
}

func (r *ConfigReader) note(err error) {
	if err == nil {
		return
	}
	attr := ""
	if ce, ok := err.(*ConfigError); ok {
		attr = ce.Attribute
	}
	for _, d := range r.diags {
		if d.Attribute == attr && d.Summary == err.Error() {
			return // read twice: reported once
		}
	}
	r.diags = append(r.diags, Diagnostic{Severity: SeverityError, Attribute: attr, Summary: err.Error()})
}

// String reads a string attribute.
func (r *ConfigReader) String(name string) string { v, err := r.c.String(name); r.note(err); return v }

// Bool reads a bool attribute.
func (r *ConfigReader) Bool(name string) bool { v, err := r.c.Bool(name); r.note(err); return v }

// Float reads a number or frequency attribute.
func (r *ConfigReader) Float(name string) float64 { v, err := r.c.Float(name); r.note(err); return v }

// Int reads a whole-number attribute.
func (r *ConfigReader) Int(name string) int64 { v, err := r.c.Int(name); r.note(err); return v }

// Duration reads a duration attribute in nanoseconds.
func (r *ConfigReader) Duration(name string) int64 {
	v, err := r.c.Duration(name)
	r.note(err)
	return v
}

// Enum reads a string attribute that must be one of oneOf, as its index in
// oneOf.
func (r *ConfigReader) Enum(name string, oneOf []string) int {
	v, err := r.c.Enum(name, oneOf)
	r.note(err)
	return v
}

// Diagnostics returns the errors of every read so far.
func (r *ConfigReader) Diagnostics() Diagnostics { return r.diags }
