package kernel

import (
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/sdk"
)

// ConfigureWith configures p with its schema defaults and the canonical
// values in over. It is a test helper of the package's internal and
// external tests (the rig and the timelines).
func ConfigureWith(t testing.TB, p sdk.Plugin, s sdk.Setup, over sdk.Config) sdk.Plugin {
	t.Helper()
	// The host's Config for a block that sets nothing (what sdktest.Defaults
	// does; sdktest imports this package).
	c, diags := config.DecodeBody(hcl.EmptyBody(), nil, p.Schema(), p.Info().Name)
	if diags.HasErrors() {
		t.Fatalf("schema defaults of %s: %v", p.Info().Name, diags)
	}
	for k, v := range over {
		c[k] = v
	}
	if d := p.Configure(s, c); d.HasErrors() {
		t.Fatalf("Configure %s: %v", p.Info().Name, d)
	}
	return p
}
