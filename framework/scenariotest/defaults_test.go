package scenariotest_test

import (
	"maps"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// TestSDKDefaultsMatchHost: sdktest.Defaults, which the conformance suites
// configure plugins with and which may not import the host, gives the
// Config the host's decoder (config.DecodeBody of an empty body) gives, for
// the schema of every builtin plugin and of a schema with every type, bound
// and empty default.
func TestSDKDefaultsMatchHost(t *testing.T) {
	schemas := map[string]sdk.Schema{"every type": {Attributes: []sdk.Attribute{
		{Name: "s", Type: sdk.TypeString, Default: "x", OneOf: []string{"x", "y"}},
		{Name: "s0", Type: sdk.TypeString},
		{Name: "b", Type: sdk.TypeBool, Default: "true"},
		{Name: "b0", Type: sdk.TypeBool},
		{Name: "n", Type: sdk.TypeNumber, Default: "2000000", Min: "0", Max: "1e7"},
		{Name: "f", Type: sdk.TypeNumber, Default: "3.6"},
		{Name: "n0", Type: sdk.TypeNumber},
		{Name: "d", Type: sdk.TypeDuration, Default: "1.5us", Min: "0ns", Max: "10s"},
		{Name: "d0", Type: sdk.TypeDuration},
		{Name: "hz", Type: sdk.TypeFrequency, Default: "100MHz"},
		{Name: "hz0", Type: sdk.TypeFrequency},
	}}}
	for _, f := range builtin.Factories() {
		schemas[string(f.Kind)+"/"+f.Name] = f.New().Schema()
	}
	for name, s := range schemas {
		want, diags := config.DecodeBody(hcl.EmptyBody(), nil, s, "schema")
		if diags.HasErrors() {
			t.Errorf("%s: the host refuses the defaults: %s", name, diags.Error())
			continue
		}
		got, err := sdktest.Defaults(s, nil)
		if err != nil {
			t.Errorf("%s: sdktest.Defaults: %v", name, err)
			continue
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: sdktest.Defaults = %v\nthe host decodes %v", name, got, want)
		}
	}
	// A default out of its bounds is refused by both.
	bad := sdk.Schema{Attributes: []sdk.Attribute{{Name: "d", Type: sdk.TypeDuration, Default: "20s", Max: "10s"}}}
	if _, diags := config.DecodeBody(hcl.EmptyBody(), nil, bad, "schema"); !diags.HasErrors() {
		t.Error("the host accepts a default above Max")
	}
	if _, err := sdktest.Defaults(bad, nil); err == nil {
		t.Error("sdktest.Defaults accepts a default above Max")
	}
}
