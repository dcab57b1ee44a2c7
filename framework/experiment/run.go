// Package experiment turns an evaluated configuration into a run: it opens and
// configures the plugins, builds the kernel and its workloads, simulates, and
// collects a Result. Compare (compare.go) runs variants across seeds.
package experiment

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/contract"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace"
	"github.com/tickemu/tickemu/framework/workload"
)

// Instance is an opened plugin.
type Instance interface {
	Plugin() sdk.Plugin
	// Describe names the instance in messages ("hrtimer (pid 1234)").
	Describe() string
	Kill()
}

// Opener finds and starts plugins; framework/loader implements it.
type Opener interface {
	// Describe returns a plugin's info and schema without keeping it open.
	Describe(kind sdk.Kind, name string) (sdk.Info, sdk.Schema, error)
	// Open starts a plugin; isolation is config.IsolationInProcess or IsolationProcess.
	Open(kind sdk.Kind, name, isolation string) (Instance, error)
}

// Options control a run.
//
// Fields: one per setting a command passes to a run (most are a flag of run
// or compare), each read in one place of the run; every caller sets a few
// by name, and grouping them would add a level to each of those literals.
type Options struct {
	Opener Opener
	// Isolation, when set, overrides every plugin block's isolation (--isolation).
	Isolation string
	// Trace receives the ftrace-format trace; nil disables it.
	Trace       io.Writer
	TraceEvents string
	// TraceFormat, TraceFrom/TraceTo (the window; To 0 = the end) and
	// TraceWarnBytes with OnTraceEstimate (called once, early, when the
	// trace is on course to exceed TraceWarnBytes) shape the trace.
	TraceFormat     trace.Format
	TraceFrom       ktime.Time
	TraceTo         ktime.Time
	TraceWarnBytes  int64
	OnTraceEstimate func(estimate int64, at ktime.Time)
	Log             zerolog.Logger
	// Progress, when set, is called about a thousand times during the
	// simulation with the simulated time reached, the end and the events
	// so far (for a progress line; it must not touch the simulation).
	Progress func(now, end ktime.Time, events uint64)
	// BreakNS is --breaktrace in ns: the run stops at the first latency
	// workload wakeup slower than it (cyclictest -b); 0 is off. TraceRing,
	// when positive, keeps only that much simulated time of trace before
	// the end (the window that led to the break).
	BreakNS   int64
	TraceRing ktime.Time
	// MaxWall, when positive, bounds the run's wall-clock time and overrides
	// run.max_wall (--max-wall); negative means no bound whatever the file
	// says. A run that reaches it stops cleanly: Run returns the results so
	// far with Result.Incomplete set.
	MaxWall time.Duration
	// Stop, when closed, ends the run after the current event: Run returns
	// ErrInterrupted (compare on SIGINT: the run is missing, not partial).
	Stop <-chan struct{}
	// Interrupt, when closed, ends the run after the current event as the
	// wall-clock bound does: Run returns the results so far with
	// Result.Incomplete set (tickemu run on SIGINT: partial, not missing).
	Interrupt <-chan struct{}
	// OnWallEstimate, when set, is called once for a run longer than
	// LongRun of simulated time, after EstimateAfter of wall time, with the
	// estimated wall time of the whole run: so a run of 1000h says up front
	// that it takes days instead of running with no word.
	OnWallEstimate func(WallEstimate)
	// OnWarnings, when set, receives the warnings of a configuration that
	// builds (a plugin's Configure may warn about a combination no kernel
	// shipped), with the files for their snippets; a configuration with an
	// error returns them with the error instead (DiagError).
	OnWarnings func(diags hcl.Diagnostics, files map[string]*hcl.File)
	// CallTimeout is the deadline of each call into a linked-in plugin
	// (--plugin-call-timeout, as plugin processes get from the loader): 0
	// is DefaultCallTimeout, negative none. See watchdog.
	CallTimeout time.Duration
	// PluginStats (--plugin-stats) meters every plugin's calls
	// (contract.Count): the result then has PluginStats and PluginWall.
	// Off, the plugins run behind their checkers alone, at no cost. On, the
	// vetted builtins are checked too (the meter counts through the
	// checker).
	PluginStats bool
	// CheckBuiltins (--check-builtins) checks every answer of the vetted
	// builtins linked in process (sdk.Factory.Vetted) against the plugin
	// contract, as every other plugin's are: for whoever edits a builtin.
	// The results are the same bytes either way.
	CheckBuiltins bool
}

// LongRun is the simulated time from which a run estimates its wall time
// (Options.OnWallEstimate); the scenarios run a few simulated seconds.
const LongRun = ktime.Time(60 * ktime.Second)

// EstimateAfter is the wall time a long run measures its pace over before
// estimating.
const EstimateAfter = time.Second

// WallEstimate is a long run's estimate of its wall time.
type WallEstimate struct {
	// Total is the estimated wall time of the whole run; Elapsed the wall
	// time so far, over which the run reached Reached of End simulated.
	Total, Elapsed time.Duration
	Reached, End   ktime.Time
	// MaxWall is the bound in force (0: none).
	MaxWall time.Duration
}

// ErrInterrupted is the error of a run stopped through Options.Stop.
var ErrInterrupted = errors.New("not finished: tickemu was interrupted")

// Incomplete marks a Result of a run stopped by its wall-clock bound: the
// metrics cover the simulated time from 0 to Reached, not to the end.
type Incomplete struct {
	Reason    string `json:"reason"`
	ReachedNS int64  `json:"reached_ns"`
	EndNS     int64  `json:"end_ns"`
}

// wallLimit is the error that stops a run at its wall-clock bound, or at
// an interrupt (Options.Interrupt) when reason is set.
type wallLimit struct {
	max    time.Duration
	reason string
}

func (e *wallLimit) Error() string {
	if e.reason != "" {
		return e.reason
	}
	return fmt.Sprintf("max_wall %v reached", e.max)
}

// watchWall arms the wall-clock bound, the interrupt and the estimate of o
// on the kernel, through its poll (nothing when none is asked for).
func (b *built) watchWall(spec *config.Spec, o Options, end ktime.Time) {
	maxWall := maxWallOf(spec, o)
	estimate := o.OnWallEstimate != nil && end > LongRun
	if maxWall == 0 && o.Stop == nil && o.Interrupt == nil && !estimate && b.wd == nil {
		return
	}
	start := time.Now()
	b.k.SetPoll(func(now ktime.Time) error {
		b.wd.tick()
		if o.Stop != nil {
			select {
			case <-o.Stop:
				return ErrInterrupted
			default:
			}
		}
		if o.Interrupt != nil {
			select {
			case <-o.Interrupt:
				return &wallLimit{reason: "interrupted"}
			default:
			}
		}
		elapsed := time.Since(start)
		// The estimate first: a run that reaches its bound right after
		// EstimateAfter (a poll delayed on a loaded machine) still says
		// what it would have taken.
		if estimate && elapsed >= EstimateAfter && now > 0 {
			estimate = false
			total := time.Duration(float64(elapsed) * float64(end) / float64(now))
			o.OnWallEstimate(WallEstimate{Total: total, Elapsed: elapsed, Reached: now, End: end, MaxWall: maxWall})
		}
		if maxWall > 0 && elapsed >= maxWall {
			return &wallLimit{max: maxWall}
		}
		return nil
	})
}

// PluginInfo records which plugin served a block.
type PluginInfo struct {
	Kind      sdk.Kind          `json:"kind"`
	Role      string            `json:"role,omitempty"`
	Name      string            `json:"name"`
	Version   string            `json:"version"`
	Isolation string            `json:"-"` // not a simulation input: results are identical either way
	Config    map[string]string `json:"config"`
	Counters  []sdk.Counter     `json:"-"`
	// Schema is the plugin's config schema: the text output prints each
	// value in its attribute's unit.
	Schema sdk.Schema `json:"-"`
	// plugin is the checked plugin (framework/contract) the run used.
	plugin sdk.Plugin
	// meter counts its calls (Options.PluginStats), else nil.
	meter *contract.Meter
}

// ErrDiagnostics marks an error made of config diagnostics.
var ErrDiagnostics = errors.New("configuration error")

// DiagError carries hcl.Diagnostics as an error.
type DiagError struct {
	Diags hcl.Diagnostics
	Files map[string]*hcl.File
}

func (e *DiagError) Error() string { return e.Diags.Error() }

// Unwrap makes errors.Is(err, ErrDiagnostics) true.
func (e *DiagError) Unwrap() error { return ErrDiagnostics }

// built is a configured machine ready to run.
type built struct {
	k         *kernel.Kernel
	workloads []workload.Workload
	wblocks   []config.WorkloadBlock
	plugins   []PluginInfo
	instances []Instance
	settings  kernel.KernelSettings
	tw        *trace.Writer
	// overrides are the versioned attributes the file sets against the
	// kernel version.
	overrides []config.Override
	// spec is the spec the run used: the file's, with the machine a
	// workload brought (workloadMachine).
	spec *config.Spec
	// wd is the run's watchdog (nil: none).
	wd *watchdog
}

func (b *built) close() {
	for _, in := range b.instances {
		in.Kill()
	}
}

// Run simulates spec once.
func Run(spec *config.Spec, o Options) (res *Result, err error) {
	return watched(o, maxWallOf(spec, o), func(w *watchdog) (*Result, error) { return run(spec, o, w) })
}

// maxWallOf is the wall-clock bound in force: --max-wall, else run.max_wall;
// 0 for none.
func maxWallOf(spec *config.Spec, o Options) time.Duration {
	maxWall := o.MaxWall
	if maxWall == 0 {
		maxWall = time.Duration(spec.Run.MaxWall)
	}
	return max(maxWall, 0)
}

// run is Run on the goroutine the watchdog w watches (nil: none).
func run(spec *config.Spec, o Options, w *watchdog) (res *Result, err error) {
	b := &built{wd: w}
	defer b.close()
	// A linked-in plugin's panic ends the run as an out-of-process one's
	// does (linkedPanic); the deferred close still kills what was opened.
	defer b.recoverLinkedPanic(&res, &err)
	if err := b.build(spec, o); err != nil {
		return nil, err
	}
	warm := ktime.Time(spec.Run.Warmup)
	end := warm + ktime.Time(spec.Run.Duration)
	for i, w := range b.workloads {
		var err error
		b.wd.tick()
		if terr := catchTransport(func() { err = w.Setup(b.k, warm) }); terr != nil {
			return nil, terr
		}
		if err != nil {
			return nil, &DiagError{Diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Workload setup failed",
				Detail: fmt.Sprintf("workload %q %q: %v", b.wblocks[i].Type, b.wblocks[i].Name, err), Subject: b.wblocks[i].DefRange.Ptr()}},
				Files: spec.Files()}
		}
	}
	// Boot and Start already call the plugins: a failure there is the run's.
	b.wd.tick()
	if err := catchTransport(func() { b.k.Boot(); b.k.Start(0) }); err != nil {
		return nil, err
	}
	if o.Progress != nil {
		b.k.SetProgress(func(now ktime.Time, events uint64) { o.Progress(now, end, events) })
	}
	b.watchWall(spec, o, end)
	runErr := b.k.Run(end)
	var incomplete *Incomplete
	var wl *wallLimit
	if errors.As(runErr, &wl) {
		// Stopped cleanly at the bound: what ran is reported, marked.
		runErr = nil
		incomplete = &Incomplete{Reason: wl.Error(), ReachedNS: int64(b.k.End()), EndNS: int64(end)}
		end = b.k.End()
	}
	if err := b.tw.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("trace: %w", err)
	}
	if runErr == nil && b.tw != nil && b.tw.Lines() == 0 && o.TraceEvents != "" {
		o.Log.Warn().Str("events", o.TraceEvents).Msg("trace: no event matched in the traced time")
	}
	if runErr != nil {
		return nil, runErr
	}
	if b.k.Broke() != "" {
		end = b.k.Now() // the results cover the time simulated
	}
	b.wd.tick()
	res, err = collect(b.spec, b, end)
	if res != nil {
		res.Incomplete = incomplete
	}
	return res, err
}

// describeSummary titles a Describe failure: "Unknown plugin" only when no
// plugin has the name (the opener's error has a PluginNotFound method that
// says so, as framework/loader's do); a plugin that exists but could not be
// asked (another protocol version, no handshake, refused by a lock file) is
// "Plugin unavailable", with the reason in the detail.
func describeSummary(err error) string {
	var nf interface{ PluginNotFound() bool }
	if errors.As(err, &nf) && nf.PluginNotFound() {
		return "Unknown plugin"
	}
	return "Plugin unavailable"
}

// build opens and configures the plugins, the workloads and the kernel of
// spec, step by step; every block's diagnostics are collected before it
// fails (a *DiagError), except that a plugin transport failure ends it at
// once. b is returned either way, so that the caller can close what opened.
func (b *built) build(spec *config.Spec, o Options) error {
	var diags hcl.Diagnostics
	if spec, diags = workloadMachine(spec); diags.HasErrors() {
		return &DiagError{Diags: diags, Files: spec.Files()}
	}
	b.spec = spec
	fail := func() error { return &DiagError{Diags: diags, Files: spec.Files()} }
	// The kernel block first: the plugins' Setup carries its timer_migration.
	kschema := kernel.KernelSchema()
	kcfg, kd, decoded := b.decodeKernel(kschema)
	diags = append(diags, kd...)
	plugins, d, err := b.openPlugins(o)
	diags = append(diags, d...)
	if err != nil {
		return err
	}
	if decoded {
		// After the plugin blocks' overrides, as they are listed.
		b.overrides = append(b.overrides, spec.Overrides("kernel", "", kschema, kcfg)...)
	}
	diags = append(diags, b.newWorkloads()...)
	if diags.HasErrors() {
		return fail()
	}
	b.openTrace(o)
	if d := b.newKernel(plugins, o); d != nil {
		diags = append(diags, d)
		return fail()
	}
	if len(diags) > 0 && o.OnWarnings != nil {
		o.OnWarnings(diags, spec.Files())
	}
	return nil
}

// decodeKernel decodes the kernel block into b.settings; decoded reports
// that the block itself decoded (its settings may still be invalid).
func (b *built) decodeKernel(kschema sdk.Schema) (kcfg sdk.Config, diags hcl.Diagnostics, decoded bool) {
	spec := b.spec
	kcfg, diags = spec.DecodeKernel(kschema)
	decoded = !diags.HasErrors()
	if decoded {
		var err error
		if b.settings, err = kernel.ParseKernelSettings(kcfg); err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid kernel block",
				Detail: err.Error(), Subject: spec.Kernel.MissingItemRange().Ptr()})
		}
	}
	return kcfg, diags, decoded
}

// openPlugins opens and configures the plugin of every plugin block, in
// order, and hands each to the kernel slot of its kind. A block that fails
// adds its diagnostics and is skipped; a plugin transport failure ends the
// build (err).
func (b *built) openPlugins(o Options) (plugins kernel.Plugins, diags hcl.Diagnostics, err error) {
	spec := b.spec
	km := machineOf(spec.Machine)
	setup := sdk.Setup{CPUs: spec.Machine.CPUs, HZ: spec.Machine.HZ, HighRes: spec.Machine.HighRes, Seed: spec.Run.Seed,
		TimerMigration: kernel.TimerMigrationActive(b.settings, km), TimerHousekeeping: kernel.TimerHousekeeping(km)}
	for _, pb := range spec.Plugins {
		p, d, err := b.openPlugin(pb, setup, o)
		diags = append(diags, d...)
		if err != nil {
			return plugins, diags, err
		}
		if p == nil {
			continue
		}
		d, err = b.attachPlugin(&plugins, pb, p)
		diags = append(diags, d...)
		if err != nil {
			return plugins, diags, err
		}
	}
	diags = append(diags, b.usePolicies(spec.Plugins)...)
	return plugins, diags, nil
}

// policyBase is the base plugin kind that asks each policy kind.
var policyBase = map[sdk.Kind]sdk.Kind{
	sdk.KindHangPolicy:    sdk.KindHRTimer,
	sdk.KindRestartPolicy: sdk.KindHRTimer,
	sdk.KindCatchupPolicy: sdk.KindTimerBase,
}

// usePolicies hands every opened policy to the base plugin that asks it
// (sdk.PolicyUser), after both are configured. The policy goes through its
// contract checker; the base is handed it directly. A base in its own process
// is its shim client, which hands its process a proxy that asks the host over
// the base's session (framework/sdk/shim, policypeer.go), so every base and
// policy isolation works alike.
func (b *built) usePolicies(blocks []config.PluginBlock) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, pol := range b.plugins {
		want, ok := policyBase[pol.Kind]
		if !ok {
			continue
		}
		i := slices.IndexFunc(b.plugins, func(p PluginInfo) bool { return p.Kind == want })
		j := slices.IndexFunc(blocks, func(pb config.PluginBlock) bool { return pb.Kind == pol.Kind })
		if i < 0 || j < 0 {
			continue // the base failed to open: its own diagnostics say why
		}
		base := b.plugins[i]
		u, ok := contract.Unwrap(base.plugin).(sdk.PolicyUser)
		taken, failed := false, error(nil)
		if ok {
			taken, failed = usePolicy(u, pol)
		}
		if taken {
			continue
		}
		why := "it does not implement sdk.PolicyUser for this kind"
		switch {
		case failed != nil:
			why = fmt.Sprintf("its process failed the UsePolicy call (%v); a plugin binary built with an SDK older than policy callbacks cannot take policies: rebuild it, or run the base in process", failed)
		case !ok:
			why = "it does not implement sdk.PolicyUser"
		}
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Policy not taken",
			Detail:  fmt.Sprintf("%s: the %s plugin %q does not take %s policies: %s.", blocks[j].What(), want, base.Name, pol.Kind, why),
			Subject: blocks[j].PluginRange.Ptr()})
	}
	return diags
}

// usePolicy hands pol to u; a transport failure of a base in its own
// process (it panics with a *sdk.TransportError) is failed.
func usePolicy(u sdk.PolicyUser, pol PluginInfo) (taken bool, failed error) {
	defer func() {
		if v := recover(); v != nil {
			te, ok := v.(*sdk.TransportError)
			if !ok {
				panic(v)
			}
			taken, failed = false, te
		}
	}()
	return u.UsePolicy(pol.Kind, pol.plugin), nil
}

// openPlugin describes, decodes, starts and configures the plugin of block
// pb and records it in b (nil without an error: the block has diagnostics).
func (b *built) openPlugin(pb config.PluginBlock, setup sdk.Setup, o Options) (sdk.Plugin, hcl.Diagnostics, error) {
	spec := b.spec
	var diags hcl.Diagnostics
	iso := pb.Isolation
	if o.Isolation != "" {
		iso = o.Isolation
	}
	info, schema, err := o.Opener.Describe(pb.Kind, pb.Plugin)
	if err != nil {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: describeSummary(err),
			Detail: fmt.Sprintf("%s: %v", pb.What(), err), Subject: pb.PluginRange.Ptr()})
		return nil, diags, nil
	}
	written := pb
	pb, d := pluginBody(spec, pb, o)
	diags = append(diags, d...)
	cfg, d := spec.DecodePlugin(pb, schema)
	diags = append(diags, explainMissingPlugin(written, o, d)...)
	if d.HasErrors() {
		return nil, diags, nil
	}
	inst, err := o.Opener.Open(pb.Kind, pb.Plugin, iso)
	if err != nil {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Plugin failed to start",
			Detail: fmt.Sprintf("%s: %v", pb.What(), err), Subject: pb.PluginRange.Ptr()})
		return nil, diags, nil
	}
	b.instances = append(b.instances, inst)
	p := inst.Plugin()
	b.wd.opened(linkedPluginOf(p, pb.Kind, info.Name), inst)
	if ls, ok := p.(sdk.LoggerSetter); ok {
		ls.SetLogger(o.Log.With().Str("plugin", pb.Plugin).Logger())
	}
	if !vetted(inst) || o.CheckBuiltins || o.PluginStats {
		p = contract.Wrap(pb.Kind, pb.Plugin, p, contract.Limits{CPUs: spec.Machine.CPUs})
	}
	var meter *contract.Meter
	if o.PluginStats {
		p, meter = contract.Count(p)
	}
	s := setup
	s.Role = sdk.Role(pb.Role)
	var pds sdk.Diagnostics
	b.wd.tick()
	if err := catchTransport(func() { pds = p.Configure(s, cfg) }); err != nil {
		return nil, diags, err
	}
	diags = append(diags, pb.Diagnostics(pds)...)
	if pds.HasErrors() {
		return nil, diags, nil
	}
	b.overrides = append(b.overrides, slotOverrides(spec, pb)...)
	b.overrides = append(b.overrides, spec.Overrides(string(pb.Kind), pb.Plugin, schema, cfg)...)
	b.plugins = append(b.plugins, PluginInfo{Kind: pb.Kind, Role: pb.Role, Name: info.Name, Version: info.Version, Isolation: iso, Config: cfg, Schema: schema, plugin: p, meter: meter})
	return p, diags, nil
}

// vetted reports whether inst is a builtin linked in process
// (sdk.Factory.Vetted). Its answers are held to the contract by its
// conformance suite in tickemu's tests, and its config by its schema's bounds,
// so openPlugin leaves it out of the contract checker, an extra call and a
// copy of every answer on the kernel's hottest paths; every other plugin
// (out of process, linked in by tickemu build --with, a test's) is checked
// on every call.
func vetted(inst Instance) bool {
	v, ok := inst.(interface{ Vetted() bool })
	return ok && v.Vetted()
}

// attachPlugin puts p, the plugin of block pb, in its kernel slot; a
// clockevent device goes through the clockevents core first.
func (b *built) attachPlugin(plugins *kernel.Plugins, pb config.PluginBlock, p sdk.Plugin) (hcl.Diagnostics, error) {
	var typed bool
	switch pb.Kind {
	case sdk.KindTimerBase:
		plugins.Wheel, typed = p.(sdk.TimerBase)
	case sdk.KindHRTimer:
		plugins.HRTimer, typed = p.(sdk.HRTimerBase)
	case sdk.KindGovernor:
		plugins.Governor, typed = p.(sdk.Governor)
	case sdk.KindHangPolicy:
		_, typed = p.(sdk.HangPolicy)
	case sdk.KindCatchupPolicy:
		_, typed = p.(sdk.CatchupPolicy)
	case sdk.KindRestartPolicy:
		_, typed = p.(sdk.RestartPolicy)
	case sdk.KindClockEvent:
		var dev sdk.ClockEventDevice
		dev, typed = p.(sdk.ClockEventDevice)
		if typed {
			var ce *clockevents.Device
			var err error
			if terr := catchTransport(func() { ce, err = clockevents.New(dev, clockeventsOptions(b.spec, b.settings)) }); terr != nil {
				return nil, terr
			}
			if err != nil {
				return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unusable clockevent device",
					Detail: fmt.Sprintf("%s: %v", pb.What(), err), Subject: pb.DefRange.Ptr()}}, nil
			}
			if pb.Role == "broadcast" {
				plugins.Broadcast = ce
			} else {
				plugins.Local = ce
			}
		}
	}
	if !typed {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Wrong plugin kind",
			Detail: fmt.Sprintf("%s: plugin %q does not implement the %s kind", pb.What(), pb.Plugin, pb.Kind), Subject: pb.PluginRange.Ptr()}}, nil
	}
	return nil, nil
}

// workloadDiag is the diagnostic for a workload block the workload type
// refused: on the attribute a workload.FieldError names, else the block.
func workloadDiag(wb config.WorkloadBlock, err error) *hcl.Diagnostic {
	subject := wb.DefRange
	var fe *workload.FieldError
	if errors.As(err, &fe) {
		subject = config.AttributeRange(wb.Body, fe.Attr)
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid workload",
		Detail: fmt.Sprintf("workload %q %q: %v", wb.Type, wb.Name, err), Subject: subject.Ptr()}
}

// newWorkloads builds the workload of every workload block, in order.
func (b *built) newWorkloads() hcl.Diagnostics {
	spec := b.spec
	var diags hcl.Diagnostics
	m := machineOf(spec.Machine)
	for _, wb := range spec.Workloads {
		t, ok := workload.Lookup(wb.Type)
		if !ok {
			diags = append(diags, config.UnknownNameError(wb.TypeRange, "workload type", wb.Type, workload.Names()))
			continue
		}
		cfg, d := spec.DecodeBody(wb.Body, t.Schema, fmt.Sprintf("workload %q %q", wb.Type, wb.Name))
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		rd := cfg.Reader()
		w, err := t.New(wb.Name, rd, m)
		if err == nil {
			if rdiags := rd.Diagnostics(); rdiags.HasErrors() {
				err = &workload.FieldError{Attr: rdiags[0].Attribute, Msg: rdiags.Error()}
			}
		}
		if err != nil {
			diags = append(diags, workloadDiag(wb, err))
			continue
		}
		b.workloads = append(b.workloads, w)
		b.wblocks = append(b.wblocks, wb)
	}
	return diags
}

// openTrace makes the trace writer when the run writes a trace.
func (b *built) openTrace(o Options) {
	if o.Trace == nil {
		return
	}
	spec := b.spec
	b.tw = trace.NewWith(o.Trace, o.TraceEvents, machineOf(spec.Machine).CPUs, trace.Options{
		Format: o.TraceFormat, From: o.TraceFrom, To: o.TraceTo,
		WarnBytes: o.TraceWarnBytes, OnEstimate: o.OnTraceEstimate, Ring: o.TraceRing,
		End:     ktime.Time(spec.Run.Warmup + spec.Run.Duration),
		Release: spec.KernelVersion,
		// A trace that cannot be written stops the run at once.
		OnError: func(err error) {
			if b.k != nil {
				b.k.Stop(fmt.Errorf("trace: %w", err))
			}
		},
	})
}

// newKernel builds the kernel from the plugins and the machine; a machine
// the kernel refuses is a diagnostic on the machine block.
func (b *built) newKernel(plugins kernel.Plugins, o Options) *hcl.Diagnostic {
	spec := b.spec
	k, err := kernel.New(kernel.Options{Machine: machineOf(spec.Machine), Settings: b.settings, Plugins: plugins, Seed: spec.Run.Seed, Trace: b.tw, Log: o.Log,
		Release: spec.KernelVersion})
	if err != nil {
		return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid machine", Detail: err.Error(), Subject: spec.Machine.DefRange.Ptr()}
	}
	b.k = k
	k.SetBreak(o.BreakNS)
	return nil
}

// workloadMachine gives the machine the CPU count and HZ a workload brings
// (workload.Type.Machine: a replayed capture's) where the machine block does
// not set them; it returns a copy of spec when it changes anything.
func workloadMachine(spec *config.Spec) (*config.Spec, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	m := spec.Machine
	changed := false
	for _, wb := range spec.Workloads {
		t, ok := workload.Lookup(wb.Type)
		if !ok || t.Machine == nil || (m.CPUsSet && m.HZSet) {
			continue
		}
		cfg, d := spec.DecodeBody(wb.Body, t.Schema, fmt.Sprintf("workload %q %q", wb.Type, wb.Name))
		if d.HasErrors() {
			continue // reported when the workload is built
		}
		cpus, hz, err := t.Machine(cfg.Reader())
		if err != nil {
			diags = append(diags, workloadDiag(wb, err))
			continue
		}
		if !m.CPUsSet && cpus > m.CPUs && cpus <= config.MaxCPUs {
			m.CPUs, changed = cpus, true
		}
		if !m.HZSet && ktime.ValidHZ(hz) && hz != m.HZ {
			m.HZ, changed = hz, true
		}
	}
	if !changed {
		return spec, diags
	}
	c := *spec
	c.Machine = m
	return &c, diags
}

// clockeventsOptions are the core's build and version choices for the
// machine: CONFIG_HZ and the kernel block's min-delta variant and guard.
func clockeventsOptions(spec *config.Spec, ks kernel.KernelSettings) clockevents.Options {
	o := clockevents.Options{HZ: spec.Machine.HZ, StarvationGuard: ks.StarvationGuard}
	switch ks.MinDelta {
	case kernel.MinDeltaRetry10:
		o.MinDelta = clockevents.RetryTenfold
	case kernel.MinDeltaOnce:
		o.MinDelta = clockevents.RetryOnce
	default:
		o.MinDelta = clockevents.MinAdjust
	}
	return o
}

func machineOf(m config.Machine) kernel.Machine {
	km := kernel.Machine{CPUs: m.CPUs, HZ: m.HZ, NoHZ: m.NoHZ, NoHZFull: m.NoHZFull, IsolCPUs: m.IsolCPUs, HighRes: m.HighRes}
	for _, s := range m.IdleStates {
		km.IdleStates = append(km.IdleStates, kernel.IdleState{Name: s.Name, ExitLatency: s.ExitLatency,
			TargetResidency: s.TargetResidency, StopsLocalTimer: s.StopsLocalTimer})
	}
	return km
}

// catchTransport runs f and turns a plugin transport failure or contract
// violation into an error.
func catchTransport(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			switch f := r.(type) {
			case *sdk.TransportError:
				err = f
				return
			case *sdk.ContractError:
				err = f
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// Validate builds everything Run would (plugins opened and configured,
// kernel, workloads) without simulating.
func Validate(spec *config.Spec, o Options) (err error) {
	_, err = watched(o, 0, func(w *watchdog) (struct{}, error) {
		b := &built{wd: w}
		defer b.close()
		var err error
		defer b.recoverLinkedPanic(nil, &err)
		err = b.build(spec, o)
		return struct{}{}, err
	})
	return err
}
