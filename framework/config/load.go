package config

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/tickemu/tickemu/framework/internal/limitio"
	"github.com/tickemu/tickemu/framework/sdk"
)

// Load reads and evaluates the configuration file at path. The Spec is never
// nil: when diags has errors only its Files are meaningful, for printing them
// with WriteDiagnostics. Warnings may come with a usable Spec.
func Load(path string, opts Options) (*Spec, hcl.Diagnostics) {
	src, err := ReadFile(path)
	if err != nil {
		summary := "Cannot read configuration"
		var tl *limitio.TooLargeError
		if errors.As(err, &tl) {
			summary = "Configuration file too large"
		}
		return &Spec{files: map[string]*hcl.File{}}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  summary,
			Detail:   err.Error(),
		}}
	}
	return LoadBytes(path, src, opts)
}

// ReadFile reads a configuration file, failing as soon as it passes
// MaxFileBytes: an endless input (/dev/zero, a FIFO) is never read whole.
func ReadFile(path string) ([]byte, error) {
	return limitio.ReadFile(path, MaxFileBytes, "a configuration file")
}

// LoadBytes is Load for a file already in memory; name is used in messages.
func LoadBytes(name string, src []byte, opts Options) (*Spec, hcl.Diagnostics) {
	s := &Spec{files: map[string]*hcl.File{}}
	if diags := checkSize(name, src); diags.HasErrors() {
		return s, diags
	}
	if diags := checkNesting(src, name, hcl.InitialPos); diags.HasErrors() {
		// The source is kept for the snippet; it was not parsed.
		s.files[name] = &hcl.File{Body: hcl.EmptyBody(), Bytes: src}
		return s, diags
	}
	file, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if file != nil {
		s.files[name] = file
	}
	if diags.HasErrors() {
		return s, sortDiags(diags)
	}
	instrument(file.Body.(*hclsyntax.Body))
	l := &loader{spec: s, opts: opts, file: file, diags: diags, varIndex: map[string]int{}, budget: &budget{}}
	l.slots = opts.PluginSlots
	if l.slots == nil {
		l.slots = DefaultPluginSlots()
	}
	l.load()
	return s, sortDiags(l.diags)
}

// loader carries the state of one Load.
type loader struct {
	spec  *Spec
	opts  Options
	file  *hcl.File
	slots []PluginSlot
	diags hcl.Diagnostics
	// budget is charged with everything the file's expressions build.
	budget *budget

	// profile is the machine profile the machine block names, or nil.
	profile *profile

	vars     []variable
	varIndex map[string]int
	variants []variant
	ctx      *hcl.EvalContext

	// The settings sweeps set, left out of the hash (sweep.go).
	sweptAttrs map[*hclsyntax.Attribute]bool
	sweptVars  map[string]bool
	sweptNames []string
	hiddenVars []hiddenVar // read by attributes the point replaces
}

// Top-level block types that are not plugin kinds.
const (
	blockVariable = "variable"
	blockVariant  = "variant"
	blockMachine  = "machine"
	blockKernel   = "kernel"
	blockWorkload = "workload"
	blockRun      = "run"
	blockSweep    = "sweep"
)

func (l *loader) rootSchema() *hcl.BodySchema {
	bs := &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: blockVariable, LabelNames: []string{"name"}},
		{Type: blockVariant, LabelNames: []string{"name"}},
		{Type: blockSweep, LabelNames: []string{"name"}},
		{Type: blockMachine},
	}}
	for _, k := range l.kinds() {
		h := hcl.BlockHeaderSchema{Type: string(k)}
		if l.labelled(k) {
			h.LabelNames = []string{"role"}
		}
		bs.Blocks = append(bs.Blocks, h)
	}
	bs.Blocks = append(bs.Blocks,
		hcl.BlockHeaderSchema{Type: blockKernel},
		hcl.BlockHeaderSchema{Type: blockWorkload, LabelNames: []string{"type", "name"}},
		hcl.BlockHeaderSchema{Type: blockRun},
	)
	return bs
}

// kinds lists the slots' kinds, first appearance first.
func (l *loader) kinds() []sdk.Kind {
	var ks []sdk.Kind
	for _, s := range l.slots {
		if !slices.Contains(ks, s.Kind) {
			ks = append(ks, s.Kind)
		}
	}
	return ks
}

func (l *loader) labelled(k sdk.Kind) bool {
	return slices.ContainsFunc(l.slots, func(s PluginSlot) bool { return s.Kind == k && s.Role != "" })
}

func (l *loader) load() {
	schema := l.rootSchema()
	content, diags := l.file.Body.Content(schema)
	l.diags = append(l.diags, explainUnsupported(diags, schema, "top level")...)
	byType := map[string]hcl.Blocks{}
	for _, b := range content.Blocks {
		byType[b.Type] = append(byType[b.Type], b)
	}

	l.decodeVariables(byType[blockVariable])
	l.decodeVariants(byType[blockVariant])
	for _, v := range l.variants {
		l.spec.variants = append(l.spec.variants, v.name)
	}
	sweeps := l.resolveSweeps(l.decodeSweeps(byType[blockSweep]), l.opts.Sweeps)
	for _, sw := range l.opts.Sweeps {
		if sw.src != nil {
			l.spec.files[sweepFlagFile] = sw.src
		}
	}
	l.spec.sweeps = sweeps
	var sweptVars map[string]SweepValue
	if p := l.opts.Point; p != nil && sweeps != nil {
		if !validPoint(sweeps, p) {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid sweep point",
				Detail: fmt.Sprintf("Point %v does not index the %d sweeps.", p, len(sweeps))})
		} else {
			sweptVars = l.applyPoint(sweeps, p)
		}
	}
	l.markSwept(sweeps)
	l.resolveVariables(sweptVars)
	l.spec.ctx = l.ctx

	l.decodeMachine(byType[blockMachine])
	l.decodeKernel(byType[blockKernel])
	l.spec.presets = l.opts.Presets
	l.decodeKernelVersion()
	l.decodePlugins(byType)
	l.decodeWorkloads(byType[blockWorkload])
	l.decodeRun(byType[blockRun])
	if !l.diags.HasErrors() {
		l.spec.hash = l.hash()
	}
}

// only returns the single block of a type, reporting duplicates.
func (l *loader) only(blocks hcl.Blocks) *hcl.Block {
	for _, b := range blocks[min(1, len(blocks)):] {
		l.diags = append(l.diags, errorAt(b.DefRange, fmt.Sprintf("Duplicate %s block", b.Type),
			"Only one %s block is allowed; the first is at %s.", b.Type, blocks[0].DefRange))
	}
	if len(blocks) == 0 {
		return nil
	}
	return blocks[0]
}

// fileStart is where diagnostics about something the file omits point.
func (l *loader) fileStart() hcl.Range {
	return l.file.Body.MissingItemRange()
}

// emptyBody is a body with no content located at r, so decoding defaults from
// it reports positions in the file rather than none.
func emptyBody(r hcl.Range) hcl.Body {
	return &hclsyntax.Body{Attributes: hclsyntax.Attributes{}, SrcRange: r, EndRange: r}
}

func (l *loader) decodeKernel(blocks hcl.Blocks) {
	if b := l.only(blocks); b != nil {
		l.spec.Kernel, l.spec.KernelRange = b.Body, b.DefRange
	} else {
		l.spec.KernelRange = l.fileStart()
		l.spec.Kernel = emptyBody(l.spec.KernelRange)
	}
	l.profileKernel()
}

func (l *loader) decodeWorkloads(blocks hcl.Blocks) {
	seen := map[[2]string]hcl.Range{}
	for _, b := range blocks {
		key := [2]string{b.Labels[0], b.Labels[1]}
		if prev, ok := seen[key]; ok {
			l.diags = append(l.diags, errorAt(b.DefRange, "Duplicate workload",
				"workload %q %q is already defined at %s; give each instance its own name.", key[0], key[1], prev))
			continue
		}
		seen[key] = b.DefRange
		l.spec.Workloads = append(l.spec.Workloads, WorkloadBlock{
			Type: key[0], Name: key[1], Body: b.Body, DefRange: b.DefRange, TypeRange: b.LabelRanges[0],
		})
	}
}

// RunSchema is the run block's schema.
var RunSchema = sdk.Schema{Attributes: []sdk.Attribute{
	{Name: "duration", Type: sdk.TypeDuration, Required: true, Doc: "simulated time measured after the warm-up"},
	{Name: "warmup", Type: sdk.TypeDuration, Default: "0s", Doc: "simulated time run first, its metrics discarded"},
	{Name: "seed", Type: TypeInteger, Default: "1", Doc: "seed of every random stream (0..2^64-1); --seed overrides it"},
	{Name: "max_wall", Type: sdk.TypeDuration, Default: "0s", Min: "0s", Doc: "wall-clock time after which the run stops, its results so far marked incomplete; 0s: no bound; --max-wall overrides it"},
}}

func (l *loader) decodeRun(blocks hcl.Blocks) {
	b := l.only(blocks)
	if b == nil {
		l.diags = append(l.diags, errorAt(l.fileStart(), "Missing run block",
			"The file needs a run block with at least a duration: run { duration = \"2s\" }."))
		return
	}
	const what = "run block"
	d := decoder{ctx: l.ctx, budget: l.budget}
	cfg, diags := d.decode(b.Body, RunSchema, what)
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() {
		return
	}
	rd := cfg.Reader()
	r := Run{Duration: rd.Duration("duration"), Warmup: rd.Duration("warmup"), MaxWall: rd.Duration("max_wall"), DefRange: b.DefRange}
	l.hostDiags(rd, b.DefRange)
	if r.Duration <= 0 {
		l.diags = append(l.diags, errorAt(AttributeRange(b.Body, "duration"), `Invalid value for "duration"`,
			`"duration" in the %s: a run must last longer than 0ns.`, what))
	}
	if l.opts.Seed != nil {
		r.Seed = *l.opts.Seed
	} else if seed, ok := parseUint64(cfg["seed"]); ok {
		r.Seed = seed
	} else {
		l.diags = append(l.diags, errorAt(AttributeRange(b.Body, "seed"), `Invalid value for "seed"`,
			`"seed" in the %s: a seed is a whole number from 0 to 18446744073709551615; got %s.`, what, cfg["seed"]))
	}
	l.spec.Run = r
}

// stringAttr checks that a documentation attribute is a literal string.
func (l *loader) stringAttr(a *hcl.Attribute, name string) {
	v, diags := evalExpr(a.Expr, nil, l.budget)
	l.diags = append(l.diags, diags...)
	if !diags.HasErrors() && !v.IsNull() && v.Type() != cty.String {
		l.diags = append(l.diags, errorAt(a.Expr.Range(), fmt.Sprintf("Invalid value for %q", name),
			"%q must be a string.", name))
	}
}

func validPoint(sweeps []Sweep, p []int) bool {
	if len(p) != len(sweeps) {
		return false
	}
	for i, j := range p {
		if j < 0 || j >= len(sweeps[i].Values) {
			return false
		}
	}
	return true
}
