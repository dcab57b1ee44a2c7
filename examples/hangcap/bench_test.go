package hangcap_test

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/examples/hangcap"
	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
)

// BenchmarkDecision times one hang decision of hang_cap linked in and in
// each out-of-process form, opened as a run opens it (the loader, the
// session socket where the plugin offers one): out of process a decision
// is one round trip.
//
//	go test -run '^$' -bench Decision ./examples/hangcap
func BenchmarkDecision(b *testing.B) {
	dirs := binaries(b)
	isolate(b)
	forms := []struct {
		name string
		open func(b *testing.B) sdk.HangPolicy
	}{
		{"linked", func(*testing.B) sdk.HangPolicy { return hangcap.New().(sdk.HangPolicy) }},
	}
	for _, form := range []string{"go", "python", "node"} {
		forms = append(forms, struct {
			name string
			open func(b *testing.B) sdk.HangPolicy
		}{form, func(b *testing.B) sdk.HangPolicy {
			cat, err := loader.New(loader.Options{Path: []string{dirs[form]}, Logger: zerolog.Nop()})
			if err != nil {
				b.Fatal(err)
			}
			in, err := cat.Open(sdk.KindHangPolicy, "hang_cap", loader.Process)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(in.Kill)
			return in.Plugin().(sdk.HangPolicy)
		}})
	}
	for _, f := range forms {
		b.Run(f.name, func(b *testing.B) {
			p := f.open(b)
			if d := p.Configure(sdk.Setup{CPUs: 2, HZ: 1000, HighRes: true, Seed: 1}, sdk.Config{"cap": "1000"}); d.HasErrors() {
				b.Fatal(d)
			}
			r := sdk.HangRequest{CPU: 1, Now: 5000, Entry: 3000, NrHangs: 1, MaxHangTime: 1910}
			b.ResetTimer()
			for b.Loop() {
				if p.Hang(r).Delay != 1000 {
					b.Fatal("wrong delay")
				}
			}
		})
	}
}
