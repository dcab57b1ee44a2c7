// Package cli is the tickemu command line as a library, so that a custom build
// (`tickemu build --with MODULE`, or a hand-written main) can link extra plugins
// in process next to the builtins:
//
//	package main
//
//	import (
//		"os"
//
//		"example.com/riscv"
//		"github.com/tickemu/tickemu/framework/cli"
//	)
//
//	func main() { os.Exit(cli.Main(riscv.Factories()...)) }
//
// cmd/tickemu is exactly that with no extras. Every subcommand lives here, one
// file each; the linked-in factories reach them through App.
package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/internal/suggest"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// version is the tickemu version; release builds set it with
// -ldflags "-X github.com/tickemu/tickemu/framework/cli.version=...".
var version = "0.1.0-dev"

// App is the command line over one set of linked-in plugins.
type App struct {
	// factories are the builtins followed by the extras, all linked in
	// process; each can also run out of process through `tickemu plugin
	// serve`, which re-executes this binary.
	factories []sdk.Factory
}

// New returns the command line with the builtin plugins and extra linked in.
// An extra is not vetted whatever its Factory says: only the builtin list's
// conformance suites run in tickemu's tests, so only its plugins run
// unchecked (sdk.Factory.Vetted).
func New(extra ...sdk.Factory) *App {
	fs := builtin.Factories()
	for _, f := range extra {
		f.Vetted = false
		fs = append(fs, f)
	}
	return &App{factories: fs}
}

// Main runs the command line on os.Args with the builtins and extra linked in
// and returns the exit status, for os.Exit.
// SIGINT, SIGTERM and SIGHUP kill every plugin process (and what it forked)
// before tickemu exits with 128+signal.
func Main(extra ...sdk.Factory) int {
	if err := checkStdout(os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "tickemu: %v\n", err)
		return 1
	}
	defer watchSignals(os.Stderr)()
	return New(extra...).Run(os.Args[1:], os.Stdout, os.Stderr)
}

// Run runs one command (args without the program name) and returns the exit
// status: 0 ok, 1 the run failed, 2 bad usage or configuration.
//
// A write error on stdout (closed, full) makes a successful status 1, with
// the error on stderr: output that was lost is never reported as a success.
func (a *App) Run(args []string, stdout, stderr io.Writer) int {
	out := &resultWriter{w: stdout}
	return out.finish(a.run(args, out, stderr), stderr)
}

func (a *App) run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return a.cmdRun(rest, stdout, stderr)
	case "compare":
		return a.cmdCompare(rest, stdout, stderr)
	case "merge":
		return a.cmdMerge(rest, stdout, stderr)
	case "validate":
		return a.cmdValidate(rest, stdout, stderr)
	case "replay":
		return a.cmdReplay(rest, stdout, stderr)
	case "check":
		return a.cmdCheck(rest, stdout, stderr)
	case "calibrate":
		return a.cmdCalibrate(rest, stdout, stderr)
	case "capture":
		return a.cmdCapture(rest, stdout, stderr)
	case "bisect":
		return a.cmdBisect(rest, stdout, stderr)
	case "plugins":
		return a.cmdPlugins(rest, stdout, stderr)
	case "workloads", "schema":
		return a.cmdWorkloads(cmd, rest, stdout, stderr)
	case "plugin":
		return a.cmdPlugin(rest, stdout, stderr)
	case "build":
		return a.cmdBuild(rest, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintf(stdout, "tickemu %s (plugin protocol %d)\n", version, protocolVersion())
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	hint := ""
	if s := suggest.Nearest(cmd, commands); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	fmt.Fprintf(stderr, "tickemu: unknown command %q%s; tickemu --help lists the commands\n", cmd, hint)
	return 2
}

// commands are the commands usage lists, for the suggestion on a misspelt one.
var commands = []string{"run", "compare", "merge", "bisect", "validate", "replay", "check", "calibrate",
	"capture", "plugins", "plugin", "workloads", "schema", "build", "version", "help"}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: tickemu <command> [arguments]

commands:
  run FILE       run a scenario once (once per sweep point): [--var k=v] [--variant NAME] [--seed N]
                 [--sweep NAME=V1,V2]...
                 [--isolation inprocess|process] [--format text|json|bench]
                 [--trace FILE|-] [--trace-events LIST] [--trace-window FROM..TO]
                 [--trace-format text|perfetto] [--breaktrace US] [--report FILE.html]
                 [--max-wall D]
  compare FILE   run variants across sweep points and seeds: [--variants a,b | --no-variants]
                 [--sweep NAME=V1,V2]... [--seeds N] [--seed FIRST] [--jobs N] [--alpha A]
                 [--kernels 6.12,6.13: releases instead of variants]
                 [--format text|json|bench|csv] [--report FILE.html] [--max-wall D]
                 [--shard I/N] [--emit slurm|k8s --shards N [--results DIR]]
  merge FILES    merge the shard files of compare --shard into the comparison's report
                 [--format text|json|bench|csv] [--report FILE.html]
  bisect FILE    which modelled kernel change moves a metric: --good A --bad B --metric NAME
                 [--seeds N] [--jobs N] [--format text|json] (docs/kernel-changes.md)
  validate FILE  load and check a scenario without running it
  replay CAPTURE replay a kernel capture (a capture bundle, ftrace or babeltrace text) and print capture
                 and model side by side: [--config FILE] [--variant NAME] (docs/replay.md)
  check BUNDLE...  run capture bundles' commands on the model, model against real with
                 tolerances: [--profile FILE] [--format text|json] [--seed N] [--scenario]
  calibrate BUNDLE...
                 fit this machine's costs from capture bundles (or tracefs text traces), print them with their
                 uncertainties and the replay residuals: [--out PROFILE] [--no-replay]
                 (docs/calibration-fit.md)
  capture -- CMD record CMD on the local kernel (root, tracefs) into a capture bundle for replay:
                 [--out BUNDLE] [--name N] [--note TEXT] [--events LIST] [--buffer-kb N]
                 [--clock C] [--global] (docs/capture.md)
  plugins        list builtin and discovered plugins with their schemas [--format text|json]
  plugins lock   write tickemu-plugins.lock: the SHA-256 of every plugin binary on the path
  plugin check BINARY  run the conformance suite of every plugin BINARY serves, any language
  workloads      list the workload types, the machine and kernel blocks with every attribute
                 [--format text|json]
  schema BLOCK   the same for one block: machine, idle_state, kernel or a workload type
  build          build a tickemu with plugin modules linked in:
                 --with MODULE[@VERSION][=DIR] ... [-o FILE] [--tickemu VERSION|DIR]
  version        print the version

tickemu COMMAND --help prints a command's flags.

run, compare, validate and bisect take --var k=v and --kernel-version V (a kernel release's settings).
common flags: --log-format auto|console|json, --log-level LEVEL, --plugin-dir DIR,
              --plugin-call-timeout D (deadline of each plugin call, 0 = none; default 5s),
              --plugin-lock FILE, --plugin-reattach JSON (a plugin started with --debug),
              --plugin-env KEY=VALUE (docs/plugins.md)
`)
}
