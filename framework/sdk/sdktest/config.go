package sdktest

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Defaults returns the Config the host passes to Configure for a block that
// sets nothing: every attribute of s at its default in the canonical form a
// plugin sees (strings as written, numbers and frequencies in Go's %g,
// durations in integer nanoseconds, bools true or false; an empty default is
// the type's zero), each other one checked against the attribute's OneOf, Min and Max
// as the host checks it. over, in that canonical form, is put on top. The
// error names each default the host would refuse.
//
// A plugin reads its Config through sdk.ConfigReader, which treats a missing
// attribute as an error: a test that configures a plugin starts here rather
// than from a partial Config. framework/scenariotest's
// TestSDKDefaultsMatchHost holds it to the host's decoder (framework/config)
// for every builtin schema; sdktest itself imports no host package.
func Defaults(s sdk.Schema, over sdk.Config) (sdk.Config, error) {
	c := sdk.Config{}
	var errs []error
	for _, a := range s.Attributes {
		v, err := defaultValue(a)
		if err != nil {
			errs = append(errs, fmt.Errorf("attribute %q: default %q: %v", a.Name, a.Default, err))
			continue
		}
		c[a.Name] = v
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("schema defaults: %v", errs)
	}
	for k, v := range over {
		c[k] = v
	}
	return c, nil
}

// defaultValue is a's Default in canonical form, checked against its OneOf
// and bounds.
func defaultValue(a sdk.Attribute) (string, error) {
	text := a.Default
	if text == "" {
		// The type's zero, unchecked, as the host gives it.
		switch a.Type {
		case sdk.TypeString:
			return "", nil
		case sdk.TypeBool:
			return "false", nil
		case sdk.TypeNumber, sdk.TypeDuration, sdk.TypeFrequency:
			return "0", nil
		}
		return "", fmt.Errorf("unknown attribute type %q", a.Type)
	}
	v, err := canonical(a.Type, text)
	if err != nil {
		return "", err
	}
	if len(a.OneOf) > 0 && !slices.Contains(a.OneOf, v) {
		return "", fmt.Errorf("%q is not one of %q", v, a.OneOf)
	}
	for _, b := range []struct {
		text string
		max  bool
	}{{a.Min, false}, {a.Max, true}} {
		if b.text == "" {
			continue
		}
		bv, err := canonical(a.Type, b.text)
		if err != nil {
			return "", fmt.Errorf("bound %q: %v", b.text, err)
		}
		x, _, err1 := big.ParseFloat(v, 10, 512, big.ToNearestEven)
		y, _, err2 := big.ParseFloat(bv, 10, 512, big.ToNearestEven)
		if err1 != nil || err2 != nil {
			return "", fmt.Errorf("bound %q on a %s attribute", b.text, a.Type)
		}
		if c := x.Cmp(y); (b.max && c > 0) || (!b.max && c < 0) {
			return "", fmt.Errorf("%s is outside the bound %s", v, b.text)
		}
	}
	return v, nil
}

// canonical converts a schema's default or bound, written as a user writes
// it in HCL (without quotes), to the canonical text of type t.
func canonical(t sdk.AttrType, text string) (string, error) {
	switch t {
	case sdk.TypeString:
		return text, nil
	case sdk.TypeBool:
		if text != "true" && text != "false" {
			return "", fmt.Errorf("not true or false")
		}
		return text, nil
	case sdk.TypeNumber:
		f, _, err := big.ParseFloat(text, 10, 512, big.ToNearestEven)
		if err != nil {
			return "", fmt.Errorf("not a number")
		}
		x, _ := f.Float64()
		if math.IsInf(x, 0) {
			return "", fmt.Errorf("%s is too large", text)
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case sdk.TypeDuration:
		ns, err := ktime.ParseDuration(text)
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(ns, 10), nil
	case sdk.TypeFrequency:
		hz, err := ktime.ParseFrequency(text)
		if err != nil {
			return "", err
		}
		return strconv.FormatFloat(hz, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("unknown attribute type %q", t)
}

// Configure configures p with its schema's defaults and over (see Defaults),
// failing the test on an error diagnostic; it returns p.
func Configure[P sdk.Plugin](t testing.TB, p P, s sdk.Setup, over sdk.Config) P {
	t.Helper()
	c, err := Defaults(p.Schema(), over)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Configure(s, c); d.HasErrors() {
		t.Fatalf("Configure(%v) = %v", over, d)
	}
	return p
}

// mustDefaults is Defaults without overrides, failing the test on a schema
// whose defaults the host cannot decode.
func mustDefaults(t testing.TB, s sdk.Schema) sdk.Config {
	t.Helper()
	c, err := Defaults(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkSchema checks what a plugin kind's suite asks of every schema: named,
// documented attributes, OneOf only on strings and holding the default, eras
// in order, and defaults the host can decode.
func checkSchema(t *testing.T, s sdk.Schema) {
	checkEras(t, s)
	seen := map[string]bool{}
	for _, a := range s.Attributes {
		if a.Name == "" || a.Name == "plugin" || a.Name == "isolation" || seen[a.Name] {
			t.Errorf("attribute %q: empty, reserved or duplicate name", a.Name)
		}
		seen[a.Name] = true
		if a.Doc == "" {
			t.Errorf("attribute %q has no Doc", a.Name)
		}
		if a.Required {
			continue
		}
		if len(a.OneOf) > 0 {
			if a.Type != sdk.TypeString {
				t.Errorf("attribute %q: OneOf on a %s attribute", a.Name, a.Type)
			}
			found := false
			for _, v := range a.OneOf {
				found = found || v == a.Default
			}
			if !found {
				t.Errorf("attribute %q: default %q not in OneOf %q", a.Name, a.Default, a.OneOf)
			}
		}
	}
	if _, err := Defaults(s, nil); err != nil {
		t.Error(err)
	}
}
