// Package builtin lists the plugins linked into every tickemu binary. It is the
// only place that knows them: the command line (framework/cli) links this list,
// the rest of the framework never imports plugins, and a new builtin is one line
// here. It is public so that a plugin author's tests (sdktest) and a custom
// build's main can run scenarios with the builtins next to their own plugin.
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

// Factories returns the builtin plugins in a stable order.
func Factories() []sdk.Factory {
	return append([]sdk.Factory{
		{Kind: sdk.KindTimerBase, Name: "wheel", New: wheel.New},
		{Kind: sdk.KindHRTimer, Name: "hrtimer", New: hrtimer.New},
		{Kind: sdk.KindClockEvent, Name: "lapic", New: lapic.New},
		{Kind: sdk.KindClockEvent, Name: "hpet", New: hpet.New},
		{Kind: sdk.KindClockEvent, Name: "archtimer", New: archtimer.New},
		{Kind: sdk.KindGovernor, Name: "menu", New: governor.NewMenu},
		{Kind: sdk.KindGovernor, Name: "teo", New: governor.NewTeo},
		{Kind: sdk.KindGovernor, Name: "always_stop", New: governor.NewAlwaysStop},
		{Kind: sdk.KindGovernor, Name: "haltpoll", New: governor.NewHaltpoll},
	}, policy.Factories()...)
}
