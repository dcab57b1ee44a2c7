package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tickemu/tickemu/framework/bundle"
	"github.com/tickemu/tickemu/framework/calibrate"
	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/internal/outfile"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/replay"
	"github.com/tickemu/tickemu/framework/replayrun"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/traceimport"
	"github.com/tickemu/tickemu/framework/workload"
)

// cmdCalibrate fits this machine's costs from capture bundles:
//
//	tickemu calibrate BUNDLE... [--out PROFILE] [--no-replay]
//
// It measures every estimator in each bundle's trace, pools the bundles,
// prints the estimates and the fitted parameters with their uncertainties,
// writes the machine profile to PROFILE, and replays each bundle on the
// model with the builtin defaults and with the fitted profile, printing the
// residuals (docs/calibration-fit.md).
func (a *App) cmdCalibrate(args []string, stdout, stderr io.Writer) int {
	f, status, ok := parseCalibrateFlags(args, stdout, stderr)
	if !ok {
		return status
	}
	ins, err := openCalInputs(f.paths)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: calibrate: %v\n", err)
		return 2
	}
	if hosts := distinctHosts(ins.opened); len(hosts) > 1 {
		fmt.Fprintf(stderr, "tickemu: calibrate: warning: the bundles come from %d machines (%s); a profile pools them as one\n",
			len(hosts), strings.Join(hosts, "; "))
	}
	defaults, err := a.costDefaults()
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: calibrate: %v\n", err)
		return 1
	}
	per, pooled, params := calibrate.Fit(ins.bundles, defaults)
	if err := ins.writeFit(stdout, per, pooled, params); err != nil {
		return 1
	}
	prof, err := ins.profile(params)
	if err != nil {
		return 1
	}
	if f.out != "" {
		if err := outfile.WriteFile(f.out, prof); err != nil {
			fmt.Fprintf(stderr, "tickemu: calibrate: %v\n", err)
			return 1
		}
	}
	if f.noReplay {
		return 0
	}
	return a.calibrateResiduals(f, ins, prof, stdout, stderr)
}

// calibrateFlags are calibrate's flags and its bundles.
type calibrateFlags struct {
	c        common
	out      string // --out: the profile's path; "" writes none
	noReplay bool
	paths    []string
}

// parseCalibrateFlags parses calibrate's command line; ok is false with the
// status to exit with (0 after --help).
func parseCalibrateFlags(args []string, stdout, stderr io.Writer) (f *calibrateFlags, status int, ok bool) {
	f = &calibrateFlags{}
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.c.registerPluginFlags(fs)
	fs.StringVar(&f.out, "out", "", "write the machine profile (HCL) to this file")
	fs.BoolVar(&f.noReplay, "no-replay", false, "skip the residual check (replaying each bundle with and without the profile)")
	if wantsHelp(fs, "tickemu calibrate BUNDLE... [flags]", "fit this machine's costs from capture bundles and write a machine profile (docs/calibration-fit.md)", args, stdout) {
		return nil, 0, false
	}
	paths, err := parseInterspersed(fs, args)
	if err != nil || !outputsAreNotInputs(stderr, paths, [2]string{"--out", f.out}) {
		return nil, 2, false
	}
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "usage: tickemu calibrate BUNDLE... [--out PROFILE] [--no-replay]")
		return nil, 2, false
	}
	f.paths = paths
	return f, 0, true
}

// calInputs are calibrate's bundles (or plain traces), opened and measured:
// bundles[i] is what opened[i] measured.
type calInputs struct {
	bundles []calibrate.Bundle
	opened  []calInput
}

// openCalInputs opens and measures every path.
func openCalInputs(paths []string) (*calInputs, error) {
	ins := &calInputs{}
	for _, p := range paths {
		in, err := openCalInput(p)
		if err != nil {
			return nil, err
		}
		m, err := in.measure()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.traceName(), err)
		}
		h := in.m.Host
		ce := strings.Join(h.Clockevents, ",")
		lapic := slices.ContainsFunc(h.Clockevents, func(s string) bool { return strings.HasPrefix(s, "lapic") })
		if in.b == nil && m.TSCDeadline {
			// A plain trace says nothing of its host, but its writes of
			// IA32_TSC_DEADLINE do: the device is the local APIC.
			ce, lapic = "lapic-deadline (from its MSR writes)", true
		}
		ins.bundles = append(ins.bundles, calibrate.Bundle{Name: filepath.Base(p), M: m, Clockevents: ce, LAPIC: lapic})
		ins.opened = append(ins.opened, in)
	}
	return ins, nil
}

// names are the bundles' names, as the tables print them.
func (ins *calInputs) names() []string {
	var names []string
	for _, b := range ins.bundles {
		names = append(names, b.Name)
	}
	return names
}

// writeFit prints a header line for each bundle, then the estimates and the
// fitted parameters.
func (ins *calInputs) writeFit(w io.Writer, per []map[string]calibrate.Estimate, pooled map[string]calibrate.Estimate, params []calibrate.Param) error {
	var hdr strings.Builder
	for i, b := range ins.bundles {
		m := ins.opened[i].m
		res := "ns timestamps"
		if b.M.Resolution == 1000 {
			res = "us timestamps"
		}
		msr := "no msr events"
		if b.M.MSRTraced {
			msr = "msr:write_msr traced"
		}
		what := fmt.Sprintf("%q, %s, trace clock %s", strings.Join(m.Command, " "), hostLine(m.Host), orDash(m.Trace.Clock))
		if ins.opened[i].b == nil {
			what = "a plain trace (no manifest: no command, host or trace clock)"
		}
		fmt.Fprintf(&hdr, "# %s: %s (%s), %d events, %s, clockevent %s\n", b.Name, what, res, b.M.Events, msr, orDash(b.Clockevents))
	}
	if _, err := io.WriteString(w, hdr.String()); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n## estimates (each interval less the tracepoints it spans; centre ± standard error, n samples)")
	if err := calibrate.WriteEstimates(w, ins.names(), per, pooled); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n## fitted parameters")
	return calibrate.WriteParams(w, params)
}

// profile is the machine profile of params, with the bundles it was fitted
// from as its provenance.
func (ins *calInputs) profile(params []calibrate.Param) ([]byte, error) {
	var pv calibrate.Provenance
	pv.Tool = version
	for i, b := range ins.bundles {
		m := ins.opened[i].m
		line := fmt.Sprintf("%s: %s, captured %s", b.Name, strings.Join(m.Command, " "), m.Start.UTC().Format(time.DateTime+" UTC"))
		if ins.opened[i].b == nil {
			line = b.Name + ": a plain trace (no manifest)"
		}
		if m.Note != "" {
			line += " (" + m.Note + ")"
		}
		pv.Bundles = append(pv.Bundles, line)
	}
	pv.Host = hostLine(ins.opened[0].m.Host)
	var prof strings.Builder
	if err := calibrate.WriteProfile(&prof, pv, params); err != nil {
		return nil, err
	}
	return []byte(prof.String()), nil
}

// calibrateResiduals replays each bundle on the model with the defaults and
// with the fitted profile prof (written to --out, or else to a temporary
// file) and prints the residual table.
func (a *App) calibrateResiduals(f *calibrateFlags, ins *calInputs, prof []byte, stdout, stderr io.Writer) int {
	tmp, err := os.MkdirTemp("", "tickemu-calibrate-")
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: calibrate: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	withProf, err := fittedConfig(tmp, f.out, prof)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: calibrate: %v\n", err)
		return 1
	}
	opts, log, ok := f.c.setup(stderr)
	if !ok {
		return 2
	}
	op, closeOp, err := a.newOpener(&f.c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	defer closeOp()
	names := ins.names()
	fmt.Fprintln(stdout, "\n## residuals: each bundle replayed on the model with the defaults and with the fitted profile")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "bundle\tfigure\tcapture\tdefaults\tfitted\t")
	for i, in := range ins.opened {
		trace, err := in.tracePath(filepath.Join(tmp, fmt.Sprintf("trace%d.txt", i)))
		if err != nil {
			fmt.Fprintf(stderr, "tickemu: calibrate: %v\n", err)
			return 1
		}
		var cols [2][]replay.Row
		for j, cfg := range []string{"", withProf} {
			rows, err := replayRows(trace, cfg, opts, op, f.c.isolation)
			if err != nil {
				return reportError(stderr, fmt.Errorf("%s: %w", names[i], err))
			}
			cols[j] = rows
		}
		for k, r := range cols[0] {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", names[i], r.Name, rowValue(r, r.Capture), rowValue(r, r.Model), rowValue(cols[1][k], cols[1][k].Model))
		}
	}
	if err := tw.Flush(); err != nil {
		return 1
	}
	return 0
}

// fittedConfig writes, in tmp, a configuration whose machine takes the
// profile at profPath (or, with none, prof written to tmp) and returns its
// path.
func fittedConfig(tmp, profPath string, prof []byte) (string, error) {
	if profPath == "" {
		profPath = filepath.Join(tmp, "profile.hcl")
		if err := os.WriteFile(profPath, prof, 0o644); err != nil {
			return "", err
		}
	}
	absProf, err := filepath.Abs(profPath)
	if err != nil {
		return "", err
	}
	withProf := filepath.Join(tmp, "fitted.hcl")
	if err := os.WriteFile(withProf, []byte(fmt.Sprintf("machine {\n  profile = %q\n}\n", absProf)), 0o644); err != nil {
		return "", err
	}
	return withProf, nil
}

// residualRows are the replay table's rows the residual check prints.
var residualRows = []string{"hrtimer_wakeup lateness p50", "hrtimer_wakeup lateness p99", "posix_timer_fn lateness p50", "posix_timer_fn lateness p99", "tick expiries", "tick stops"}

func replayRows(trace, cfgFile string, opts config.Options, op experiment.Opener, isolation string) ([]replay.Row, error) {
	cp, err := workload.ScanCapture(trace)
	if err != nil {
		return nil, err
	}
	src, name, err := replayrun.Config(cfgFile, trace, cp)
	if err != nil {
		return nil, err
	}
	spec, diags := config.LoadBytes(name, src, opts)
	if diags.HasErrors() {
		return nil, &experiment.DiagError{Diags: diags, Files: spec.Files()}
	}
	o, err := replayrun.Run(trace, cp, spec, experiment.Options{Opener: op, Isolation: isolation})
	if err != nil {
		return nil, err
	}
	var rows []replay.Row
	all := replay.Table(o.CaptureScore, o.ModelScore, false, !cp.OffsetKnown)
	for _, want := range residualRows {
		for _, r := range all {
			if r.Name == want {
				rows = append(rows, r)
			}
		}
	}
	return rows, nil
}

func rowValue(r replay.Row, v int64) string {
	if r.NA {
		return "n/a"
	}
	if r.Duration {
		return calibrateNS(v)
	}
	return strconv.FormatInt(v, 10)
}

func calibrateNS(ns int64) string {
	switch {
	case ns >= 1_000_000 || ns <= -1_000_000:
		return fmt.Sprintf("%.3gms", float64(ns)/1e6)
	case ns >= 1000 || ns <= -1000:
		return fmt.Sprintf("%.3gus", float64(ns)/1e3)
	}
	return fmt.Sprintf("%dns", ns)
}

// calInput is one of calibrate's inputs: a capture bundle (b), or a plain
// tracefs text trace, whose manifest m is then empty.
type calInput struct {
	path string
	b    *bundle.Bundle
	m    bundle.Manifest
}

func openCalInput(path string) (calInput, error) {
	b, err := bundle.Open(path)
	if err == nil {
		return calInput{path: path, b: b, m: b.Manifest}, nil
	}
	if !errors.Is(err, bundle.ErrNotBundle) {
		return calInput{}, err
	}
	return calInput{path: path}, nil
}

// traceName names the trace in messages.
func (in calInput) traceName() string {
	if in.b == nil {
		return in.path
	}
	return in.path + ": " + bundle.TraceName
}

func (in calInput) openTrace() (io.ReadCloser, error) {
	if in.b == nil {
		return os.Open(in.path)
	}
	return in.b.Trace()
}

func (in calInput) measure() (*calibrate.Measurement, error) {
	r, err := in.openTrace()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fr := traceimport.NewFtrace(r)
	fr.DecodeExtra()
	return calibrate.Measure(fr)
}

// tracePath is a file holding the trace text for replay: a plain trace
// itself, a bundle's trace extracted to tmp.
func (in calInput) tracePath(tmp string) (string, error) {
	if in.b == nil {
		return filepath.Abs(in.path)
	}
	r, err := in.b.Trace()
	if err != nil {
		return "", err
	}
	defer r.Close()
	f, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return "", err
	}
	return tmp, f.Close()
}

// distinctHosts lists the machines the bundles with a manifest ran on, by
// kernel release, architecture, CPU model, CPU count and hypervisor, in the
// order first seen.
func distinctHosts(ins []calInput) []string {
	var hosts []string
	for _, in := range ins {
		if in.b == nil {
			continue
		}
		if h := hostLine(in.m.Host); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

func hostLine(h bundle.Host) string {
	s := fmt.Sprintf("Linux %s %s", orDash(h.Release), h.Machine)
	if h.Hypervisor != "" {
		s += ", " + h.Hypervisor + " guest"
	}
	s += fmt.Sprintf(", %d CPUs", h.CPUs)
	if h.HZ != 0 {
		s += fmt.Sprintf(", HZ %d", h.HZ)
	}
	if h.NoHZ != "" {
		s += ", nohz " + h.NoHZ
	}
	if h.CPUModel != "" {
		s += ", " + h.CPUModel
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// costDefaults gives the model's default of every constant the fit names:
// the kernel block's costs and the builtin plugins' cost attributes.
func (a *App) costDefaults() (func(string) float64, error) {
	vals := map[string]float64{}
	for _, at := range kernel.KernelSchema().Attributes {
		if at.Type == sdk.TypeDuration {
			d, err := time.ParseDuration(at.Default)
			if err != nil {
				return nil, fmt.Errorf("kernel.%s's default %q: %v", at.Name, at.Default, err)
			}
			vals["kernel."+at.Name] = float64(d.Nanoseconds())
		}
	}
	for _, f := range a.factories {
		p := f.New()
		info := p.Info()
		for _, at := range p.Schema().Attributes {
			switch {
			case at.Type == sdk.TypeDuration:
				if d, err := time.ParseDuration(at.Default); err == nil {
					vals[info.Name+"."+at.Name] = float64(d.Nanoseconds())
				}
			case strings.HasSuffix(at.Name, "_ns"):
				if v, err := strconv.ParseFloat(at.Default, 64); err == nil {
					vals[info.Name+"."+at.Name] = v
				}
			}
		}
	}
	return func(k string) float64 { return vals[k] }, nil
}
