// Command tickemu emulates the Linux kernel's timekeeping path: timer wheel,
// hrtimers, tick/NO_HZ, clockevent devices, softirqs, POSIX timers and
// signals, deterministically in simulated time.
//
//	tickemu run FILE [flags]        run a scenario once
//	tickemu compare FILE [flags]    run variants across seeds and compare
//	tickemu validate FILE [flags]   check a scenario without running it
//	tickemu plugins                 list builtin and discovered plugins
//	tickemu version                 print the version
package main

import (
	"fmt"
	"io"
	"os"
)

// version is the tickemu version; release builds set it with -ldflags.
var version = "0.1.0-dev"

func main() {
	os.Exit(mainWith(os.Args[1:], os.Stdout, os.Stderr))
}

// mainWith runs the CLI and returns the exit status: 0 ok, 1 the run failed,
// 2 bad usage or configuration.
func mainWith(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(rest, stdout, stderr)
	case "compare":
		return cmdCompare(rest, stdout, stderr)
	case "validate":
		return cmdValidate(rest, stdout, stderr)
	case "plugins":
		return cmdPlugins(rest, stdout, stderr)
	case "plugin":
		return cmdPlugin(rest, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintf(stdout, "tickemu %s (plugin protocol %d)\n", version, protocolVersion())
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "tickemu: unknown command %q\n", cmd)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: tickemu <command> [arguments]

commands:
  run FILE       run a scenario once: [--var k=v] [--variant NAME] [--seed N]
                 [--isolation inprocess|process] [--format text|json|bench]
                 [--trace FILE] [--trace-events LIST]
  compare FILE   run variants across seeds: [--variants a,b] [--seeds N] [--seed FIRST]
                 [--jobs N] [--alpha A] [--format text|json|bench|csv]
  validate FILE  load and check a scenario without running it
  plugins        list builtin and discovered plugins with their schemas
  version        print the version

common flags: --log-format auto|console|json, --log-level LEVEL, --plugin-dir DIR
`)
}
