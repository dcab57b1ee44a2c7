package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tickemu/tickemu/framework/capture"
)

// cmdCapture records a workload on the local kernel into a capture bundle:
//
//	tickemu capture [--events LIST] [--out BUNDLE] [--name N] [--note TEXT]
//	                [--buffer-kb N] [--clock C] [--global] -- COMMAND [ARG...]
//
// The command's output is echoed as it runs; the summary follows it on
// stdout. The first SIGINT/SIGTERM goes to the command (the bundle is still
// written, exit 128+signal); a second kills it, restores the tracefs
// settings and exits. docs/capture.md.
func (a *App) cmdCapture(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("capture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o capture.Options
	fs.StringVar(&o.Events, "events", "", "trace events: GROUP/NAME, GROUP/*, GROUP, NAME or default, comma-separated; all items +X/-X change the default set (docs/capture.md)")
	fs.StringVar(&o.Out, "out", "", "the bundle to write (default NAME.tcap in the current directory)")
	fs.StringVar(&o.Name, "name", "", "a short name for the capture (default the command's base name)")
	fs.StringVar(&o.Note, "note", "", "provenance text kept in the manifest: why, on what machine, under what load")
	fs.IntVar(&o.BufferKB, "buffer-kb", 0, fmt.Sprintf("trace ring buffer per CPU, KiB (default %d, less where the buffers would take over a quarter of the available memory)", capture.DefaultBufferKB))
	fs.StringVar(&o.Clock, "clock", capture.DefaultClock, "trace clock (mono: CLOCK_MONOTONIC, the hrtimers' clock)")
	fs.BoolVar(&o.Global, "global", false, "record in the top-level trace buffer (its settings saved and restored) instead of a private instance")
	const use = "tickemu capture [flags] -- COMMAND [ARG...]"
	if wantsHelp(fs, use, "record COMMAND on the local kernel (root, tracefs) into a capture bundle", args, stdout) {
		return 0
	}
	if err := parseFlags(fs, args); err != nil {
		return 2
	}
	o.Command = fs.Args()
	if len(o.Command) == 0 {
		fmt.Fprintf(stderr, "usage: %s\n", use)
		return 2
	}
	o.Tool = version
	o.Stdout, o.Stderr, o.Log = stdout, stderr, stderr

	c, err := capture.New(o)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	removeInterrupt := onInterrupt("passed to the command; the bundle is written when it exits", c.Interrupt)
	defer removeInterrupt()
	removeExit := onExit(c.Abort)
	defer removeExit()
	res, err := c.Run()
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: capture: %v\n", err)
		if errors.Is(err, capture.ErrCannotRun) {
			return 2
		}
		return 1
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "tickemu: capture: warning: %s\n", n)
	}
	writeCaptureSummary(stdout, res)
	if res.Interrupted != nil {
		return signalStatus(res.Interrupted)
	}
	return 0
}

// writeCaptureSummary prints what was recorded: the command's status, the
// bundle's size, losses, and the events per type.
func writeCaptureSummary(w io.Writer, res *capture.Result) {
	m := res.Manifest
	status := fmt.Sprintf("exit status %d", m.ExitStatus)
	if m.Signal != "" {
		status = "killed by " + m.Signal
	}
	fmt.Fprintf(w, "capture %s: %s, %s, %.2f s\n", m.Name, strings.Join(m.Command, " "), status, float64(m.WallNS)/1e9)
	var total int64
	for _, c := range res.Counts {
		total += c.Count
	}
	fmt.Fprintf(w, "bundle %s: %s (trace %s, %d events, %d lost)\n", res.Path, sizeText(res.Size), sizeText(res.TraceLen), total, m.Trace.Total())
	fmt.Fprintf(w, "host: Linux %s, %d CPUs, HZ %d, NO_HZ %s, clockevent %s, cpuidle %s/%s\n",
		m.Host.Release, m.Host.CPUs, m.Host.HZ, orNone(m.Host.NoHZ), orNone(strings.Join(uniq(m.Host.Clockevents), ",")),
		orNone(m.Host.CPUIdle.Driver), orNone(m.Host.CPUIdle.Governor))
	if len(m.Trace.Missing) > 0 {
		fmt.Fprintf(w, "missing events: %s\n", strings.Join(m.Trace.Missing, " "))
	}
	for _, c := range res.Counts {
		fmt.Fprintf(w, "  %-28s %10d\n", c.Name, c.Count)
	}
}

func sizeText(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 10<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func uniq(list []string) []string {
	var out []string
	for _, s := range list {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}
