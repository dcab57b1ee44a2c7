// Package builtin lists the plugins linked into tickemu. It is the only place
// that knows them: the framework never imports plugins, and a new builtin is one
// line here.
package builtin

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/plugins/archtimer"
	"github.com/tickemu/tickemu/plugins/hpet"
	"github.com/tickemu/tickemu/plugins/hrtimer"
	"github.com/tickemu/tickemu/plugins/lapic"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// Factories returns the builtin plugins in a stable order.
func Factories() []sdk.Factory {
	return []sdk.Factory{
		{Kind: sdk.KindTimerBase, Name: "wheel", New: wheel.New},
		{Kind: sdk.KindHRTimer, Name: "hrtimer", New: hrtimer.New},
		{Kind: sdk.KindClockEvent, Name: "lapic", New: lapic.New},
		{Kind: sdk.KindClockEvent, Name: "hpet", New: hpet.New},
		{Kind: sdk.KindClockEvent, Name: "archtimer", New: archtimer.New},
	}
}
