package bisect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/resultfmt"
)

// WriteText writes the report for people: the changes, the endpoints, each
// measurement and the verdict.
func WriteText(w io.Writer, r *Report) error {
	b := &bytes.Buffer{}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	metric := r.Metric
	if metric == "" {
		metric = "the metric"
	}
	p("tickemu bisect %s: good %s, bad %s, %s over %d seeds (%s)\n", r.File, r.Good, r.Bad, metric, len(r.Seeds), seedRange(r.Seeds))
	how := "applied"
	if !r.Forward {
		how = "reverted (bad is the older state)"
	}
	if len(r.Changes) == 0 {
		p("no modelled change between %s and %s applies to this scenario", r.Good, r.Bad)
		if len(r.Pinned) > 0 {
			p(" (the file sets what the changes in between would: %s)", keys(r.Pinned))
		}
		p("\nverdict: no modelled change explains it\n")
		_, err := w.Write(b.Bytes())
		return err
	}
	p("modelled changes from good to bad, %s in this order:\n", how)
	for _, c := range r.Changes {
		p("  %-5s %-12s %s %s -> %s: %s\n", c.Release, shortID(c), c.Key, c.From, c.Era.Value, c.Era.Title)
	}
	if len(r.Pinned) > 0 {
		p("set by the file, so without effect here: %s\n", keys(r.Pinned))
	}
	if r.Endpoints != nil {
		p("\ngood -> bad: %s\n", stepText(r.Endpoints))
	}
	switch r.Mode {
	case "each":
		p("\neach change alone (good with it %s) and left out (bad without it):\n", verb(r.Forward))
		for i := range r.Alone {
			c := r.Alone[i].Change
			p("  %-12s alone:    %s\n", shortID(*c), stepText(r.Alone[i]))
			if len(r.Alone) > 1 {
				p("  %-12s left out: %s\n", "", stepText(r.LeftOut[i]))
			}
		}
	case "search":
		if len(r.Probes) > 0 {
			p("\nbinary search over the path (state after the first K changes):\n")
			for _, pr := range r.Probes {
				side := "good"
				if pr.Bad {
					side = "bad"
				}
				p("  K=%-3d %-18s %s: %s\n", pr.K, pr.Name, side, stepText(pr.Step))
			}
		}
	}
	if len(r.Failures) > 0 {
		p("\n%d runs failed:\n", len(r.Failures))
		for _, f := range r.Failures {
			p("  %s seed %d: %s\n", f.Variant, f.Seed, f.Error)
		}
	}
	p("\n")
	if !r.Explained() {
		if r.Endpoints != nil && !r.Endpoints.Significant() {
			p("verdict: no modelled change explains it: %s does not differ significantly between %s and %s, and no change moves it on its own\n", metric, r.Good, r.Bad)
		} else {
			p("verdict: no modelled change explains it: none of the changes moves %s significantly on its own\n", metric)
		}
		_, err := w.Write(b.Bytes())
		return err
	}
	for i, c := range r.Culprits {
		lead := "verdict:"
		if i > 0 {
			lead = "also:   "
		}
		p("%s %s (%s, %s; %s %s -> %s) %s %s by %s (%s -> %s; %s), measured %s\n", lead, shortID(c.Change), c.Change.Era.Title, c.Change.Release,
			c.Change.Key, c.Change.From, c.Change.Era.Value, movesVerb(r.Forward), metric, pct(c.Step.Delta()), center(c.Step, 0), center(c.Step, 1), tests(c.Step), c.How)
	}
	if r.Endpoints != nil && !r.Endpoints.Significant() {
		p("(%s does not differ significantly between good and bad: the changes above cancel out)\n", metric)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteJSON writes the report as JSON.
func WriteJSON(w io.Writer, r *Report) error {
	type change struct {
		Release string `json:"release"`
		Commit  string `json:"commit,omitempty"`
		Title   string `json:"title"`
		Setting string `json:"setting"`
		From    string `json:"from"`
		To      string `json:"to"`
	}
	conv := func(cs []kernelversion.Change) []change {
		out := []change{}
		for _, c := range cs {
			out = append(out, change{c.Release.String(), c.Era.Commit, c.Era.Title, c.Key.String(), c.From, c.Era.Value})
		}
		return out
	}
	type culprit struct {
		Change change   `json:"change"`
		How    string   `json:"how"`
		Delta  *float64 `json:"delta"`
		Step   *Step    `json:"step"`
	}
	var cs []culprit
	for _, c := range r.Culprits {
		d := c.Step.Delta()
		var dp *float64
		if !math.IsNaN(d) {
			dp = &d
		}
		cs = append(cs, culprit{conv([]kernelversion.Change{c.Change})[0], c.How, dp, c.Step})
	}
	out := struct {
		File      string    `json:"file"`
		Good      string    `json:"good"`
		Bad       string    `json:"bad"`
		Metric    string    `json:"metric"`
		Seeds     []uint64  `json:"seeds"`
		Forward   bool      `json:"forward"`
		Mode      string    `json:"mode"`
		Changes   []change  `json:"changes"`
		Pinned    []change  `json:"pinned"`
		Endpoints *Step     `json:"endpoints,omitempty"`
		Alone     []*Step   `json:"alone,omitempty"`
		LeftOut   []*Step   `json:"left_out,omitempty"`
		Probes    []Probe   `json:"probes,omitempty"`
		Explained bool      `json:"explained"`
		Culprits  []culprit `json:"culprits"`
		Failures  []any     `json:"failures"`
	}{r.File, r.Good, r.Bad, r.Metric, r.Seeds, r.Forward, r.Mode, conv(r.Changes), conv(r.Pinned), r.Endpoints,
		r.Alone, r.LeftOut, r.Probes, r.Explained(), cs, []any{}}
	for _, f := range r.Failures {
		out.Failures = append(out.Failures, f)
	}
	if out.Culprits == nil {
		out.Culprits = []culprit{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func verb(forward bool) string {
	if forward {
		return "applied"
	}
	return "reverted"
}

func movesVerb(forward bool) string {
	if forward {
		return "moves"
	}
	return "reverted (good to bad) moves"
}

func shortID(c kernelversion.Change) string {
	if c.Era.Commit != "" {
		return c.Era.Commit
	}
	return "(no id)"
}

func keys(cs []kernelversion.Change) string {
	var ks []string
	for _, c := range cs {
		ks = append(ks, fmt.Sprintf("%s (%s %s)", c.Key, shortID(c), c.Release))
	}
	return strings.Join(ks, ", ")
}

// stepText is one measurement as compare prints its cells.
func stepText(s *Step) string {
	if s == nil || s.Metric == nil {
		return "not measured"
	}
	if s.Metric.Variants[0].Summary.N == 0 || s.Metric.Variants[1].Summary.N == 0 {
		return fmt.Sprintf("%s -> %s: no finished run", s.Base, s.Variant)
	}
	b := resultfmt.Cells(s.Metric, 0)
	v := resultfmt.Cells(s.Metric, 1)
	return fmt.Sprintf("%s %s ± %s -> %s %s ± %s: %s (%s), paired %s (%s)", s.Base, b.Center, b.Range, s.Variant, v.Center, v.Range,
		pct(s.Delta()), v.Test, v.PairedDelta, v.PairedTest)
}

func center(s *Step, v int) string { return resultfmt.Cells(s.Metric, v).Center }

func tests(s *Step) string {
	v := resultfmt.Cells(s.Metric, 1)
	return fmt.Sprintf("%s; paired %s %s", v.Test, v.PairedDelta, v.PairedTest)
}

func pct(d float64) string {
	if math.IsNaN(d) {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", 100*d)
}

func seedRange(seeds []uint64) string {
	if len(seeds) == 1 {
		return fmt.Sprint(seeds[0])
	}
	return fmt.Sprintf("%d..%d", seeds[0], seeds[len(seeds)-1])
}
