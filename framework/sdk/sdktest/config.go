package sdktest

import (
	"fmt"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/sdk"
)

// Defaults returns the Config the host passes to Configure for a block that
// sets nothing: every attribute of s at its default, decoded by the host's own
// decoder (framework/config), so numbers, durations and frequencies are in
// the canonical form a plugin sees. over, in that canonical form, is put on
// top. The error names each default the host cannot decode.
//
// A plugin reads its Config through sdk.ConfigReader, which treats a missing
// attribute as an error: a test that configures a plugin starts here rather
// than from a partial Config.
func Defaults(s sdk.Schema, over sdk.Config) (sdk.Config, error) {
	c, diags := config.DecodeBody(hcl.EmptyBody(), nil, s, "schema")
	if diags.HasErrors() {
		return nil, fmt.Errorf("schema defaults: %s", diags.Error())
	}
	for k, v := range over {
		c[k] = v
	}
	return c, nil
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
