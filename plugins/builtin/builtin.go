// Package builtin lists the plugins linked into every tickemu binary. It is the
// only place that knows them: the command line (framework/cli) links this list,
// the rest of the framework never imports plugins, and a new builtin is one line
// here. It is public so that a plugin author's tests (sdktest) and a custom
// build's main can run scenarios with the builtins next to their own plugin.
//
// Each builtin states its kind, name and constructor once, in its package's
// Factory; Info takes them from there.
package builtin

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/plugins/archtimer"
	"github.com/tickemu/tickemu/plugins/governor"
	"github.com/tickemu/tickemu/plugins/hpet"
	"github.com/tickemu/tickemu/plugins/hrtimer"
	"github.com/tickemu/tickemu/plugins/lapic"
	"github.com/tickemu/tickemu/plugins/policy"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// Factories returns the builtin plugins in a stable order, each Vetted: the
// conformance suites run on every one of them (TestConformance), so the host
// trusts their answers linked in process and checks them only when asked
// (--check-builtins, --plugin-stats).
func Factories() []sdk.Factory {
	fs := append([]sdk.Factory{
		wheel.Factory,
		hrtimer.Factory,
		lapic.Factory,
		hpet.Factory,
		archtimer.Factory,
		governor.MenuFactory,
		governor.TeoFactory,
		governor.AlwaysStopFactory,
		governor.HaltpollFactory,
	}, policy.Factories()...)
	for i := range fs {
		fs[i].Vetted = true
	}
	return fs
}
