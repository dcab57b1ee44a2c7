package experiment

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/internal/limitio"
	"github.com/tickemu/tickemu/framework/termtext"
)

// A shard file holds the raw results of some cells of an experiment's grid
// (`tickemu compare --shard I/N`), for `tickemu merge` to put back together.
// The format is JSON, versioned by ShardFormat and ShardVersion; see
// docs/compare.md. Each cell keeps exactly what the comparison reports read
// of a run: its bench configuration lines, its bench result lines and its
// metrics, so a merge prints byte for byte what the unsharded comparison
// prints.
const (
	ShardFormat  = "tickemu-shard"
	ShardVersion = 3
)

// Experiment identifies an experiment: everything that decides its cells and
// what its reports say. Shards merge only with the same Experiment.
type Experiment struct {
	// Tickemu is the version of the tickemu that ran the cells.
	Tickemu string `json:"tickemu"`
	File    string `json:"file"`
	// Source is the file's text, for the report's configuration section
	// (`tickemu merge --report` may run where the file is not).
	Source     string      `json:"source"`
	Variants   []string    `json:"variants"`
	Sweeps     []SweepInfo `json:"sweeps"`
	Seeds      []uint64    `json:"seeds"`
	Alpha      float64     `json:"alpha"`
	Confidence float64     `json:"confidence"`
	// ConfigHashes holds each variant's config hash (config.Spec.Hash:
	// without the seed and the swept settings, so one per variant).
	ConfigHashes []string `json:"config_hashes"`
}

// ID is a digest of the experiment, written in every shard file.
func (e Experiment) ID() string {
	b, err := json.Marshal(e)
	if err != nil {
		panic(fmt.Sprintf("experiment: marshal experiment: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Grid is the experiment's grid of cells.
func (e Experiment) Grid() Grid {
	var sweeps []config.Sweep
	for _, s := range e.Sweeps {
		sw := config.Sweep{Name: s.Name, Key: s.Key}
		for _, v := range s.Values {
			sw.Values = append(sw.Values, config.SweepValue{Text: v})
		}
		sweeps = append(sweeps, sw)
	}
	return NewGrid(e.Variants, sweeps, e.Seeds)
}

// SweepInfos describes sweeps for reports and shard files.
func SweepInfos(sweeps []config.Sweep) []SweepInfo {
	out := []SweepInfo{}
	for _, sw := range sweeps {
		si := SweepInfo{Name: sw.Name, Key: sw.Key, Values: []string{}}
		for _, v := range sw.Values {
			si.Values = append(si.Values, v.Text)
		}
		out = append(out, si)
	}
	return out
}

// ShardFile is one shard's file.
type ShardFile struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// ID is Experiment.ID(), so that shards of different experiments are
	// told apart at a glance.
	ID         string     `json:"experiment_id"`
	Experiment Experiment `json:"experiment"`
	// Shard is this shard's number (1..Shards).
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// Interrupted names the signal that stopped the shard before every run
	// finished ("interrupt" for Ctrl-C, "terminated" for a scheduler's
	// SIGTERM); the cells say which runs did not finish. A merge of an
	// interrupted shard says so.
	Interrupted string      `json:"interrupted,omitempty"`
	Cells       []ShardCell `json:"cells"`
}

// ShardCell is the raw result of one cell.
type ShardCell struct {
	// Index numbers the cell in the grid (Grid.Index).
	Index   int    `json:"index"`
	Variant string `json:"variant"`
	Point   string `json:"point,omitempty"`
	Seed    uint64 `json:"seed"`
	// Header and Bench are the run's bench lines (RunOutcome), Metrics its
	// metrics; all empty when the run failed, and the partial ones of a run
	// the interrupt stopped early (Incomplete).
	Header  []string    `json:"header,omitempty"`
	Bench   []string    `json:"bench,omitempty"`
	Metrics []RunMetric `json:"metrics,omitempty"`
	// Detail is what the HTML report shows of the run.
	Detail *RunDetail `json:"detail,omitempty"`
	// Error is the first line of why the run failed; Interrupted is set when
	// it did not finish because the shard was interrupted, and Incomplete
	// as well when it stopped after its current event with partial results
	// (IncompleteError), which Header, Bench and Metrics keep.
	Error       string      `json:"error,omitempty"`
	Interrupted bool        `json:"interrupted,omitempty"`
	Incomplete  *Incomplete `json:"incomplete,omitempty"`
}

// Unfinished counts the shard's runs that did not finish because it was
// interrupted: those stopped early with partial results and those not
// started.
func (f *ShardFile) Unfinished() (stopped, notStarted int) {
	for _, c := range f.Cells {
		switch {
		case c.Incomplete != nil:
			stopped++
		case c.Interrupted:
			notStarted++
		}
	}
	return stopped, notStarted
}

// NewShardFile records the runs of shard i of n; runs is the grid as
// RunMatrix returns it and cells the shard's (Grid.Shard). interrupted
// names the signal that stopped the runs, if one did.
func NewShardFile(e Experiment, i, n int, cells []int, runs []RunOutcome, interrupted string) *ShardFile {
	f := &ShardFile{Format: ShardFormat, Version: ShardVersion, ID: e.ID(), Experiment: e, Shard: i, Shards: n,
		Interrupted: interrupted, Cells: []ShardCell{}}
	for _, c := range slices.Sorted(slices.Values(cells)) {
		r := runs[c]
		sc := ShardCell{Index: c, Variant: r.Variant, Point: r.Point.Key(), Seed: r.Seed}
		var ie *IncompleteError
		switch {
		case errors.As(r.Err, &ie):
			// Stopped early by the interrupt: its partial results are kept,
			// as the unsharded comparison keeps them.
			sc.Error, sc.Interrupted, sc.Incomplete = r.ErrorLine(), true, ie.Incomplete
			sc.Header, sc.Bench, sc.Metrics = r.Header, r.Bench, r.Metrics
		case r.Err != nil:
			sc.Error = r.ErrorLine()
			sc.Interrupted = errors.Is(r.Err, ErrInterrupted)
		default:
			sc.Header, sc.Bench, sc.Metrics, sc.Detail = r.Header, r.Bench, r.Metrics, r.Detail
		}
		f.Cells = append(f.Cells, sc)
	}
	if stopped, notStarted := f.Unfinished(); stopped+notStarted == 0 {
		f.Interrupted = "" // the signal came after the last run: nothing is missing
	}
	return f
}

// Write writes f as indented JSON.
func (f *ShardFile) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	return enc.Encode(f)
}

// MaxShardBytes bounds a shard file: thousands of cells with their bench
// lines, metrics and report details are tens of MB.
const MaxShardBytes = 256 << 20

// LoadShardFile reads the shard file at path through MaxShardBytes, so an
// endless or oversized input fails at the limit instead of filling memory.
func LoadShardFile(path string) (*ShardFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sf, err := ReadShardFile(bufio.NewReader(limitio.Reader(f, MaxShardBytes, path, "a shard file")))
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return nil, tl
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sf, nil
}

// ReadShardFile reads a shard file, checking its format and version.
func ReadShardFile(r io.Reader) (*ShardFile, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f ShardFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a shard file: %w", err)
	}
	if f.Format != ShardFormat {
		return nil, fmt.Errorf("not a shard file: format %q, want %q", f.Format, ShardFormat)
	}
	if f.Version != ShardVersion {
		return nil, fmt.Errorf("shard file version %d; this tickemu reads version %d", f.Version, ShardVersion)
	}
	if f.ID != f.Experiment.ID() {
		return nil, errors.New("the experiment_id does not match the experiment it describes (the file was edited?)")
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// MaxMetric bounds a metric's magnitude in a shard file: a run's metrics
// are counts, rates and nanoseconds far below it; 1e308 made merge print
// -9223372036854775808% and -Inf%.
const MaxMetric = 1e18

// check refuses what no run writes: text a terminal would act on
// (termtext), a metric that is not finite, beyond MaxMetric or repeated in
// its cell, an unknown direction, config hashes that do not match the
// variants. Merge checks the cells against the grid.
func (f *ShardFile) check() error {
	e := f.Experiment
	texts := [][2]string{{"tickemu", e.Tickemu}, {"file", e.File}, {"interrupted", f.Interrupted}}
	for _, v := range e.Variants {
		texts = append(texts, [2]string{"variant", v})
	}
	for _, s := range e.Sweeps {
		texts = append(texts, [2]string{"sweep", s.Name}, [2]string{"sweep key", s.Key})
		for _, v := range s.Values {
			texts = append(texts, [2]string{"sweep value", v})
		}
	}
	if len(e.ConfigHashes) != len(e.Variants) && len(e.ConfigHashes) > 0 {
		return fmt.Errorf("%d config hashes for %d variants (the file was edited?)", len(e.ConfigHashes), len(e.Variants))
	}
	for _, h := range e.ConfigHashes {
		// "" for a variant that did not load.
		if _, err := hex.DecodeString(h); err != nil || len(h) > 128 {
			return fmt.Errorf("config hash %q is not a digest in hex", termtext.Safe(h))
		}
	}
	for _, t := range texts {
		if !termtext.Clean(t[1]) {
			return fmt.Errorf("%s %q holds characters a terminal acts on", t[0], termtext.Safe(t[1]))
		}
	}
	for i, c := range f.Cells {
		where := fmt.Sprintf("cell %d (index %d)", i+1, c.Index)
		for _, t := range [][2]string{{"variant", c.Variant}, {"point", c.Point}, {"error", c.Error}} {
			if !termtext.Clean(t[1]) {
				return fmt.Errorf("%s: %s %q holds characters a terminal acts on", where, t[0], termtext.Safe(t[1]))
			}
		}
		for _, l := range append(slices.Clip(c.Header), c.Bench...) {
			if !termtext.Clean(strings.ReplaceAll(l, "\t", " ")) {
				return fmt.Errorf("%s: line %q holds characters a terminal acts on", where, termtext.Safe(l))
			}
		}
		if err := c.checkIncomplete(f.Interrupted); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		seen := make(map[[2]string]bool, len(c.Metrics))
		for _, m := range c.Metrics {
			k := [2]string{m.Bench, m.Unit}
			switch {
			case !termtext.Clean(m.Bench) || !termtext.Clean(m.Unit) || m.Unit == "":
				return fmt.Errorf("%s: metric %q %q: not a metric name", where, termtext.Safe(m.Bench), termtext.Safe(m.Unit))
			case m.Better != "" && m.Better != "lower" && m.Better != "higher":
				return fmt.Errorf("%s: metric %s %s: better %q, want lower or higher", where, m.Bench, m.Unit, termtext.Safe(m.Better))
			case math.IsNaN(m.Value) || math.Abs(m.Value) > MaxMetric:
				return fmt.Errorf("%s: metric %s %s = %s: outside [-%g, %g]", where, m.Bench, m.Unit, ShortNumber(m.Value), MaxMetric, MaxMetric)
			case seen[k]:
				return fmt.Errorf("%s: metric %s %s appears more than once", where, m.Bench, m.Unit)
			}
			seen[k] = true
		}
	}
	return nil
}

// checkIncomplete refuses an interrupted cell in a file that does not say
// it was interrupted, partial results not marked as such, and a stop
// outside the run.
func (c ShardCell) checkIncomplete(interrupted string) error {
	in := c.Incomplete
	switch {
	case c.Interrupted && interrupted == "":
		return errors.New("interrupted, but the file does not say the shard was (the file was edited?)")
	case in == nil && c.Error != "" && len(c.Metrics) > 0:
		return errors.New("an error and metrics: a failed run has none, a run stopped early is marked incomplete")
	case in == nil:
		return nil
	case !c.Interrupted:
		return errors.New("incomplete but not interrupted: only the interrupt stops a shard's run early")
	case !termtext.Clean(in.Reason):
		return fmt.Errorf("incomplete reason %q holds characters a terminal acts on", termtext.Safe(in.Reason))
	case in.ReachedNS < 0 || in.ReachedNS > in.EndNS:
		return fmt.Errorf("incomplete: stopped at %d ns of %d: outside the run", in.ReachedNS, in.EndNS)
	}
	return nil
}

// ShortNumber prints a number for a message: at most a dozen characters
// whatever its size (hz = 1e400 was echoed with 300 digits).
func ShortNumber(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// errFailedCell is a failed run read back from a shard.
type errFailedCell struct{ msg string }

func (e errFailedCell) Error() string { return e.msg }

// Merge puts the shards of one experiment back together into the
// comparison the unsharded run makes. names label the files in errors. It
// refuses shards of different experiments or tickemu versions, a shard
// count that differs, a missing or repeated shard, and any cell missing,
// repeated or not where its shard should have it.
func Merge(names []string, files []*ShardFile) (*Comparison, error) {
	if len(files) == 0 {
		return nil, errors.New("merge needs at least one shard file")
	}
	if err := checkShardSet(names, files); err != nil {
		return nil, err
	}
	e := files[0].Experiment
	if err := checkGridSize(e, files); err != nil {
		return nil, err
	}
	g := e.Grid()
	runs := make([]RunOutcome, g.Len())
	have := make([]string, g.Len()) // the file that holds each cell
	for k, f := range files {
		if err := mergeShard(g, names[k], f, runs, have); err != nil {
			return nil, err
		}
	}
	c := AnalyzeGrid(e.File, g, runs, e.Alpha, e.Confidence)
	for _, r := range runs {
		if errors.Is(r.Err, ErrInterrupted) {
			c.Interrupted++
		}
	}
	return c, nil
}

// checkShardSet refuses files that are not the shards 1..n of one
// experiment, made by one tickemu, each once.
func checkShardSet(names []string, files []*ShardFile) error {
	first := files[0]
	e, n := first.Experiment, first.Shards
	seen := map[int]string{}
	for k, f := range files {
		if f.Experiment.Tickemu != e.Tickemu {
			return fmt.Errorf("%s was made by tickemu %s, %s by tickemu %s: shards of one experiment come from one tickemu", names[k], f.Experiment.Tickemu, names[0], e.Tickemu)
		}
		if f.ID != first.ID {
			return fmt.Errorf("%s is not of the experiment of %s: %s", names[k], names[0], experimentDiff(f.Experiment, e))
		}
		if f.Shards != n {
			return fmt.Errorf("%s is shard %d of %d, %s one of %d", names[k], f.Shard, f.Shards, names[0], n)
		}
		if f.Shard < 1 || f.Shard > n {
			return fmt.Errorf("%s: shard %d of %d", names[k], f.Shard, n)
		}
		if prev, ok := seen[f.Shard]; ok {
			return fmt.Errorf("%s and %s are both shard %d of %d", prev, names[k], f.Shard, n)
		}
		seen[f.Shard] = names[k]
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shards %s of %d are missing", strings.Join(missing, ", "), n)
	}
	return nil
}

// checkGridSize refuses an experiment whose grid is far larger than the
// cells the files hold, before the grid is built (a file's sweeps could
// describe billions of points): every cell is in one file, so most shards
// would be missing; a few missing cells are named by mergeShard.
func checkGridSize(e Experiment, files []*ShardFile) error {
	total := 0
	for _, f := range files {
		total += len(f.Cells)
	}
	bound := 2*total + 1024
	size := len(e.Variants) * len(e.Seeds)
	for _, sw := range e.Sweeps {
		if size > bound {
			break
		}
		size *= len(sw.Values)
	}
	if size > bound {
		return fmt.Errorf("the experiment has %s cells and the files hold %d: most shards are missing", cellCount(size, bound), total)
	}
	return nil
}

// mergeShard puts the cells of shard file f (named name) into runs, at
// their grid index, noting name in have; it refuses a cell outside the
// grid, not the grid's cell at its index, held by another file too, or not
// of the shard, and a shard that lacks one of its cells.
func mergeShard(g Grid, name string, f *ShardFile, runs []RunOutcome, have []string) error {
	want, err := g.Shard(f.Shard, f.Shards)
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	inShard := map[int]bool{}
	for _, c := range want {
		inShard[c] = true
	}
	for _, sc := range f.Cells {
		if sc.Index < 0 || sc.Index >= g.Len() {
			return fmt.Errorf("%s: cell %d is outside the grid of %d cells", name, sc.Index, g.Len())
		}
		cell := g.Cell(sc.Index)
		label := g.Label(cell)
		if sc.Variant != cell.Variant || sc.Seed != cell.Seed || sc.Point != cell.Point.Key() {
			return fmt.Errorf("%s: cell %d is %s, but the grid has %s there", name, sc.Index, g.Label(Cell{Variant: sc.Variant, Seed: sc.Seed, Point: nil}), label)
		}
		if prev := have[sc.Index]; prev != "" {
			return fmt.Errorf("%s and %s both hold the cell %s", prev, name, label)
		}
		if !inShard[sc.Index] {
			return fmt.Errorf("%s holds the cell %s, which is not in shard %d of %d", name, label, f.Shard, f.Shards)
		}
		have[sc.Index] = name
		runs[sc.Index] = sc.outcome(cell)
	}
	for _, c := range want {
		if have[c] == "" {
			return fmt.Errorf("%s lacks the cell %s of shard %d of %d", name, g.Label(g.Cell(c)), f.Shard, f.Shards)
		}
	}
	return nil
}

// outcome is the run of cell that sc records, as RunMatrix returned it but
// for what a shard file does not keep (the Result, a failure's error chain).
func (sc ShardCell) outcome(cell Cell) RunOutcome {
	r := RunOutcome{Variant: cell.Variant, Point: cell.Point, Seed: cell.Seed}
	switch {
	case sc.Incomplete != nil:
		r.Err = &IncompleteError{Incomplete: sc.Incomplete}
		r.Header, r.Bench, r.Metrics = sc.Header, sc.Bench, sc.Metrics
	case sc.Interrupted:
		r.Err = ErrInterrupted
	case sc.Error != "":
		r.Err = errFailedCell{sc.Error}
	default:
		r.Header, r.Bench, r.Metrics, r.Detail = sc.Header, sc.Bench, sc.Metrics, sc.Detail
	}
	return r
}

// experimentDiff says how two experiments differ.
func experimentDiff(a, b Experiment) string {
	var d []string
	if a.File != b.File {
		d = append(d, fmt.Sprintf("file %s vs %s", a.File, b.File))
	}
	if a.Source != b.Source {
		d = append(d, "the file's text differs")
	}
	if !slices.Equal(a.Variants, b.Variants) {
		d = append(d, fmt.Sprintf("variants %v vs %v", a.Variants, b.Variants))
	}
	if !slices.Equal(a.Seeds, b.Seeds) {
		d = append(d, fmt.Sprintf("seeds %v vs %v", a.Seeds, b.Seeds))
	}
	if !slices.EqualFunc(a.Sweeps, b.Sweeps, func(x, y SweepInfo) bool {
		return x.Name == y.Name && x.Key == y.Key && slices.Equal(x.Values, y.Values)
	}) {
		d = append(d, fmt.Sprintf("sweeps %v vs %v", a.Sweeps, b.Sweeps))
	}
	if a.Alpha != b.Alpha || a.Confidence != b.Confidence {
		d = append(d, fmt.Sprintf("alpha/confidence %v/%v vs %v/%v", a.Alpha, a.Confidence, b.Alpha, b.Confidence))
	}
	if !slices.Equal(a.ConfigHashes, b.ConfigHashes) {
		d = append(d, fmt.Sprintf("config hashes %v vs %v (the configuration file or a --var differs)", a.ConfigHashes, b.ConfigHashes))
	}
	if len(d) == 0 {
		return "the experiments differ"
	}
	return strings.Join(d, "; ")
}

// cellCount prints a grid size that may have passed the bound.
func cellCount(size, bound int) string {
	if size > bound {
		return fmt.Sprintf("more than %d", bound)
	}
	return fmt.Sprint(size)
}

// MarshalJSON writes the value as a JSON number, or as the string "NaN",
// "+Inf" or "-Inf", which JSON numbers cannot hold (a metric may be 0/0).
func (m RunMetric) MarshalJSON() ([]byte, error) {
	type plain RunMetric
	var v any = m.Value
	if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
		v = strconv.FormatFloat(m.Value, 'g', -1, 64)
	}
	return json.Marshal(struct {
		plain
		Value any `json:"value"`
	}{plain(m), v})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *RunMetric) UnmarshalJSON(b []byte) error {
	type plain RunMetric
	var raw struct {
		plain
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = RunMetric(raw.plain)
	if len(raw.Value) > 0 && raw.Value[0] == '"' {
		var s string
		if err := json.Unmarshal(raw.Value, &s); err != nil {
			return err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(math.IsNaN(v) || math.IsInf(v, 0)) {
			return fmt.Errorf("metric value %q: want a number, \"NaN\", \"+Inf\" or \"-Inf\"", s)
		}
		m.Value = v
		return nil
	}
	return json.Unmarshal(raw.Value, &m.Value)
}
