package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/replay"
	"github.com/tickemu/tickemu/framework/traceimport"
	"github.com/tickemu/tickemu/framework/workload"
)

// cmdReplay replays a capture and scores the model against it:
//
//	tickemu replay CAPTURE [--config FILE] [--variant V] [--var k=v] [--seed N]
//
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
	cfgFile := fs.String("config", "", "HCL file with the machine, plugins, kernel block and variants to replay on (default: the builtin defaults)")
	if wantsHelp(fs, "tickemu replay CAPTURE [flags]", "replay a kernel capture (ftrace or babeltrace text) and print capture and model side by side", args, stdout) {
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
	src, name, err := replayConfig(*cfgFile, abs, cp)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: replay: %v\n", err)
		return 2
	}
	opts, log, ok := c.setup(stderr)
	if !ok {
		return 2
	}
	spec, diags := config.LoadBytes(name, src, opts)
	if len(diags) > 0 {
		var files map[string]*hcl.File
		if spec != nil {
			files = spec.Files()
		}
		config.WriteDiagnostics(stderr, diags, files, false)
	}
	if diags.HasErrors() {
		return 2
	}
	op, closeOp, err := a.newOpener(&c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	defer closeOp()

	// The capture's score.
	f, err := traceimport.Open(abs)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: replay: %v\n", err)
		return 2
	}
	capScore, err := replay.NewScorer(cp.IsTick, cp.TickNsec(), cp.Offset, replay.Options{}).ScoreReader(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: replay: %s: %v\n", capture, err)
		return 2
	}

	// The model's, from its own trace read back as it is written.
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	var modelScore *replay.Score
	hz := spec.Machine.HZ
	if !spec.Machine.HZSet && cp.HZ != 0 {
		hz = cp.HZ
	}
	go func() {
		periodic := cp.Periods
		sc := replay.NewScorer(func(fn string) bool { return replay.TickFunctions[fn] }, ktimeTick(hz), 0,
			replay.Options{Restarts: func(fn string) bool { return periodic[fn] > 0 || replay.TickFunctions[fn] }})
		sc.Until = cp.Span() + 1 // the capture's span; the run's tail lets the model finish
		s, err := sc.ScoreReader(traceimport.NewFtrace(pr))
		modelScore = s
		pr.CloseWithError(err)
		done <- err
	}()
	eo := experiment.Options{Opener: op, Isolation: c.isolation, Log: log, Trace: pw,
		TraceEvents: "hrtimer_start,hrtimer_cancel,hrtimer_expire_entry,timer_start,timer_cancel,timer_expire_entry,tick_stop"}
	res, runErr := experiment.Run(spec, eo)
	pw.Close()
	scoreErr := <-done
	if runErr != nil {
		return reportError(stderr, runErr)
	}
	if scoreErr != nil {
		fmt.Fprintf(stderr, "tickemu: replay: reading the model's trace: %v\n", scoreErr)
		return 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# capture %s: %s, %d CPUs", capture, cp.Format, cp.CPUs)
	if !cp.CPUsStated {
		b.WriteString(" (highest CPU seen)")
	}
	if cp.HZ != 0 {
		fmt.Fprintf(&b, ", HZ %d (from the tick's expiries)", cp.HZ)
	} else {
		b.WriteString(", HZ not inferable (no tick seen)")
	}
	fmt.Fprintf(&b, ", %.6f s, %d events, %d unknown skipped\n", float64(cp.Span())/1e9, cp.Events, cp.Stats.UnknownTotal())
	fmt.Fprintf(&b, "# model: %d CPUs, HZ %d", res.Config.CPUs, res.Config.HZ)
	for _, p := range res.Plugins {
		fmt.Fprintf(&b, ", %s %s", p.Kind, p.Name)
	}
	b.WriteString("\n")
	for _, w := range res.Workloads {
		for _, l := range w.Text {
			b.WriteString("# " + strings.TrimSpace(l) + "\n")
		}
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return 1
	}
	if err := replay.WriteTable(stdout, replay.Table(capScore, modelScore, cp.Format == "babeltrace")); err != nil {
		return 1
	}
	return 0
}

// replayConfig builds the run's HCL: cfgFile's text (or nothing) with the
// replay workload and, when missing, a run block covering the capture.
func replayConfig(cfgFile, capture string, cp *replay.Capture) ([]byte, string, error) {
	var src []byte
	name := "replay.hcl"
	if cfgFile != "" {
		b, err := os.ReadFile(cfgFile)
		if err != nil {
			return nil, "", err
		}
		src, name = b, cfgFile
	}
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	hasRun := false
	if !diags.HasErrors() {
		for _, bl := range f.Body.(*hclsyntax.Body).Blocks {
			hasRun = hasRun || bl.Type == "run"
			if bl.Type == "workload" {
				return nil, "", fmt.Errorf("%s: holds a workload block; tickemu replay adds the capture's (give the machine, plugins, kernel and variants only)", name)
			}
		}
	}
	out := append([]byte{}, src...)
	out = append(out, fmt.Sprintf("\nworkload \"replay\" \"capture\" {\n  capture = %q\n}\n", capture)...)
	if !hasRun {
		// The capture's span, plus 20 ms for the model's last expiries.
		out = append(out, fmt.Sprintf("run {\n  duration = \"%dns\"\n}\n", cp.Span()+20_000_000)...)
	}
	return out, name, nil
}

func ktimeTick(hz int) int64 { return (1_000_000_000 + int64(hz)/2) / int64(hz) }
