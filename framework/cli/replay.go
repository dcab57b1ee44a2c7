package cli

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/replay"
	"github.com/tickemu/tickemu/framework/replayrun"
	"github.com/tickemu/tickemu/framework/traceimport"
	"github.com/tickemu/tickemu/framework/workload"
)

// cmdReplay replays a capture and scores the model against it:
//
//	tickemu replay CAPTURE [--config FILE] [--variant V] [--var k=v] [--seed N] [--kallsyms FILE]
//
// CAPTURE is a trace (ftrace or babeltrace text) or a capture bundle
// (.tcap), whose host facts give the machine when FILE is not given.
// The run is FILE (its machine, plugins, kernel block, variants; a file
// holding only some of them is fine) with a `workload "replay"` block for
// CAPTURE added and, when FILE has no run block, a run covering the capture.
// The machine's CPU count and HZ are the capture's unless FILE sets them.
// Both the capture and the model's own trace are scored with the rules of
// docs/replay.md and printed side by side.
func (a *App) cmdReplay(args []string, stdout, stderr io.Writer) int {
	f, status, ok := parseReplayFlags(args, stdout, stderr)
	if !ok {
		return status
	}
	var syms *traceimport.Kallsyms
	if f.kallsyms != "" {
		var err error
		if syms, err = traceimport.ReadKallsyms(f.kallsyms); err != nil {
			fmt.Fprintf(stderr, "tickemu: replay: --kallsyms: %v\n", err)
			return 2
		}
	}
	rc, err := f.replayConfig()
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: replay: %v\n", err)
		return 2
	}
	opts, log, ok := f.c.setup(stderr)
	if !ok {
		return 2
	}
	spec, ok := f.c.loadSpecBytes(rc.name, rc.src, opts)
	if !ok {
		return 2
	}
	op, closeOp, err := a.newOpener(&f.c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	defer closeOp()

	out, err := replayrun.Run(f.abs, rc.capture, spec, f.c.runOptions(op, log))
	if err != nil {
		return reportError(stderr, err)
	}
	out.Notes = rc.notes
	out.Kallsyms, out.KallsymsFile = syms, f.kallsyms
	if err := out.Write(stdout, f.capture); err != nil {
		return 1
	}
	return 0
}

// replayFlags are replay's flags and its capture.
type replayFlags struct {
	c        common
	pmQoS    optDuration
	cfgFile  string
	kallsyms string
	capture  string // as given
	abs      string // capture's absolute path
}

// parseReplayFlags parses replay's command line; ok is false with the status
// to exit with (0 after --help).
func parseReplayFlags(args []string, stdout, stderr io.Writer) (f *replayFlags, status int, ok bool) {
	f = &replayFlags{}
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.c.register(fs, true)
	fs.Var(&f.pmQoS, "pm-qos", "hold a PM QoS CPU latency request (/dev/cpu_dma_latency) of this `duration` for the run, as cyclictest does (0s: poll only); a trace cannot show it (default: none, or the one a capture bundle's host held)")
	fs.StringVar(&f.cfgFile, "config", "", "HCL file with the machine, plugins, kernel block and variants to replay on (default: the builtin defaults)")
	fs.StringVar(&f.kallsyms, "kallsyms", "", "a copy of the capture machine's /proc/kallsyms (read as root) naming the callbacks an LTTng capture records as raw addresses (default: they stay addresses)")
	if wantsHelp(fs, "tickemu replay CAPTURE [flags]", "replay a kernel capture (a capture bundle, ftrace or babeltrace text) and print capture and model side by side", args, stdout) {
		return nil, 0, false
	}
	capture, ok := parseFile(fs, args, stderr)
	if !ok {
		return nil, 2, false
	}
	abs, err := filepath.Abs(capture)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return nil, 2, false
	}
	f.capture, f.abs = capture, abs
	return f, 0, true
}

// replayConfig is the configuration a replay runs and what it was made of.
type replayConfig struct {
	capture *replay.Capture
	src     []byte
	name    string   // src's name in messages
	notes   []string // the header's remarks on a capture bundle's host translation
}

// replayConfig scans the capture and makes the configuration to replay it
// on: --config's file, or else a capture bundle's own host, with a replay
// workload of the capture added.
func (f *replayFlags) replayConfig() (*replayConfig, error) {
	cp, err := workload.ScanCapture(f.abs)
	if err != nil {
		return nil, err
	}
	// A capture bundle brings its host: the machine to replay on (unless
	// --config gives one) and the PM QoS constraint the host held (unless
	// --pm-qos does).
	hostSrc, notes, hostQoS, isBundle, err := replayrun.BundleMachine(f.abs)
	if err != nil {
		return nil, err
	}
	qos := int64(-1) // no request
	switch {
	case f.pmQoS.set:
		qos = int64(f.pmQoS.d)
	case isBundle:
		qos = hostQoS
	}
	rc := &replayConfig{capture: cp, notes: notes}
	if isBundle && f.cfgFile == "" {
		rc.src, rc.name, err = replayrun.ConfigSrc(hostSrc, filepath.Base(f.capture)+" (host)", f.abs, cp, qos)
	} else if f.cfgFile != "" {
		// A scenario file gives its machine, plugins, kernel block and
		// variants; its workloads and run block are left out, and the
		// header says so.
		var src []byte
		if src, err = config.ReadFile(f.cfgFile); err != nil {
			return nil, err
		}
		src, rc.notes = replayrun.LeaveOutScenario(src, f.cfgFile)
		rc.src, rc.name, err = replayrun.ConfigSrc(src, f.cfgFile, f.abs, cp, qos)
	} else {
		rc.src, rc.name, err = replayrun.ConfigWith("", f.abs, cp, qos)
		rc.notes = nil
	}
	if err != nil {
		return nil, err
	}
	return rc, nil
}

// optDuration is a duration flag that may be left unset: unlike
// flag.Duration its help shows no made-up default (-1ns) for "none".
type optDuration struct {
	d   time.Duration
	set bool
}

func (o *optDuration) String() string {
	if o == nil || !o.set {
		return ""
	}
	return o.d.String()
}

func (o *optDuration) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("%v: want a duration >= 0", d)
	}
	o.d, o.set = d, true
	return nil
}
