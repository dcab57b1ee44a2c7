package cli

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/tickemu/tickemu/framework/replayrun"
	"github.com/tickemu/tickemu/framework/workload"
)

// cmdReplay replays a capture and scores the model against it:
//
//	tickemu replay CAPTURE [--config FILE] [--variant V] [--var k=v] [--seed N]
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
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, true)
	var pmQoS optDuration
	fs.Var(&pmQoS, "pm-qos", "hold a PM QoS CPU latency request (/dev/cpu_dma_latency) of this `duration` for the run, as cyclictest does (0s: poll only); a trace cannot show it (default: none, or the one a capture bundle's host held)")
	cfgFile := fs.String("config", "", "HCL file with the machine, plugins, kernel block and variants to replay on (default: the builtin defaults)")
	if wantsHelp(fs, "tickemu replay CAPTURE [flags]", "replay a kernel capture (a capture bundle, ftrace or babeltrace text) and print capture and model side by side", args, stdout) {
		return 0
	}
	capture, ok := parseFile(fs, args, stderr)
	if !ok {
		return 2
	}
	abs, err := filepath.Abs(capture)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	cp, err := workload.ScanCapture(abs)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: replay: %v\n", err)
		return 2
	}
	// A capture bundle brings its host: the machine to replay on (unless
	// --config gives one) and the PM QoS constraint the host held (unless
	// --pm-qos does).
	hostSrc, notes, hostQoS, isBundle, err := replayrun.BundleMachine(abs)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: replay: %v\n", err)
		return 2
	}
	qos := int64(-1) // no request
	switch {
	case pmQoS.set:
		qos = int64(pmQoS.d)
	case isBundle:
		qos = hostQoS
	}
	var src []byte
	var name string
	if isBundle && *cfgFile == "" {
		src, name, err = replayrun.ConfigSrc(hostSrc, filepath.Base(capture)+" (host)", abs, cp, qos)
	} else {
		src, name, err = replayrun.ConfigWith(*cfgFile, abs, cp, qos)
		notes = nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: replay: %v\n", err)
		return 2
	}
	opts, log, ok := c.setup(stderr)
	if !ok {
		return 2
	}
	spec, ok := c.loadSpecBytes(name, src, opts)
	if !ok {
		return 2
	}
	op, closeOp, err := a.newOpener(&c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	defer closeOp()

	out, err := replayrun.Run(abs, cp, spec, c.runOptions(op, log))
	if err != nil {
		return reportError(stderr, err)
	}
	out.Notes = notes
	if err := out.Write(stdout, capture); err != nil {
		return 1
	}
	return 0
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
