package kernel

import (
	"strconv"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// ConfigureWith configures p with its schema defaults and the canonical
// values in over. It is a test helper of the package's internal and
// external tests (the rig and the timelines).
func ConfigureWith(t testing.TB, p sdk.Plugin, s sdk.Setup, over sdk.Config) sdk.Plugin {
	t.Helper()
	c := sdk.Config{}
	for _, a := range p.Schema().Attributes {
		v := a.Default
		switch a.Type {
		case sdk.TypeDuration:
			ns, err := ktime.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s default %q: %v", a.Name, v, err)
			}
			v = strconv.FormatInt(ns, 10)
		case sdk.TypeFrequency:
			hz, err := ktime.ParseFrequency(v)
			if err != nil {
				t.Fatalf("%s default %q: %v", a.Name, v, err)
			}
			v = strconv.FormatFloat(hz, 'g', -1, 64)
		}
		c[a.Name] = v
	}
	for k, v := range over {
		c[k] = v
	}
	if d := p.Configure(s, c); d.HasErrors() {
		t.Fatalf("Configure %s: %v", p.Info().Name, d)
	}
	return p
}
