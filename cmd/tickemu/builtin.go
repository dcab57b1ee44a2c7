package main

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/plugins/hpet"
	"github.com/tickemu/tickemu/plugins/hrtimer"
	"github.com/tickemu/tickemu/plugins/lapic"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// builtins is the explicit list of plugins linked into tickemu. A new builtin
// is one line here; nothing registers itself.
var builtins = []sdk.Factory{
	{Kind: sdk.KindTimerBase, Name: "wheel", New: wheel.New},
	{Kind: sdk.KindHRTimer, Name: "hrtimer", New: hrtimer.New},
	{Kind: sdk.KindClockEvent, Name: "lapic", New: lapic.New},
	{Kind: sdk.KindClockEvent, Name: "hpet", New: hpet.New},
}
