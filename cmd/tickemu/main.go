// Command tickemu emulates the Linux kernel's timekeeping path: timer wheel,
// hrtimers, tick/NO_HZ, clockevent devices, softirqs, POSIX timers and
// signals, deterministically in simulated time.
//
//	tickemu run FILE [flags]        run a scenario once
//	tickemu compare FILE [flags]    run variants across seeds and compare
//	tickemu validate FILE [flags]   check a scenario without running it
//	tickemu plugins                 list builtin and discovered plugins
//	tickemu version                 print the version
//
// The command line itself is package framework/cli; this main links the
// builtin plugins only (a custom build links more, see docs/plugins.md).
package main

import (
	"os"

	"github.com/tickemu/tickemu/framework/cli"
)

func main() { os.Exit(cli.Main()) }
