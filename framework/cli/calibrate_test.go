package cli

import (
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/bundle"
)

func TestDistinctHosts(t *testing.T) {
	guest := bundle.Host{Release: "6.18.44", Machine: "x86_64", CPUModel: "AMD EPYC", CPUs: 2, Hypervisor: "KVM", HZ: 250}
	other := guest
	other.Release = "6.12.1"
	in := func(h bundle.Host) calInput { return calInput{b: &bundle.Bundle{}, m: bundle.Manifest{Host: h}} }
	for _, tc := range []struct {
		name string
		ins  []calInput
		want int
	}{
		{"one machine, twice", []calInput{in(guest), in(guest)}, 1},
		{"two releases", []calInput{in(guest), in(other), in(guest)}, 2},
		{"a plain trace has no host to compare", []calInput{in(guest), {path: "t.txt"}}, 1},
	} {
		if got := distinctHosts(tc.ins); len(got) != tc.want || !slices.Contains(got, hostLine(guest)) {
			t.Errorf("%s: distinctHosts = %q, want %d hosts among them %q", tc.name, got, tc.want, hostLine(guest))
		}
	}
}
