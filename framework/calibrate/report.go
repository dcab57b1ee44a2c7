package calibrate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// fmtEst prints an estimate: "1.23us ± 45ns (n 2000)", or "not constrained".
func fmtEst(e Estimate) string {
	if !e.Constrained() {
		return "not constrained"
	}
	return fmt.Sprintf("%s ± %s (n %d)", fmtNS(e.Centre), fmtNS(e.SE), e.N)
}

// WriteEstimates prints every estimator: per bundle and pooled.
func WriteEstimates(w io.Writer, names []string, per []map[string]Estimate, pooled map[string]Estimate) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "estimate")
	for _, n := range names {
		fmt.Fprintf(tw, "\t%s", n)
	}
	if len(names) > 1 {
		fmt.Fprint(tw, "\tpooled")
	}
	fmt.Fprintln(tw, "\tmedian")
	for _, est := range Estimators {
		fmt.Fprint(tw, est.Name)
		for _, p := range per {
			fmt.Fprintf(tw, "\t%s", fmtEst(p[est.Name]))
		}
		pe := pooled[est.Name]
		if len(names) > 1 {
			fmt.Fprintf(tw, "\t%s", fmtEst(pe))
		}
		med := "-"
		if pe.Constrained() {
			med = fmtNS(pe.Median)
		}
		fmt.Fprintf(tw, "\t%s\n", med)
	}
	return tw.Flush()
}

// WriteParams prints the fitted parameters, then the ones no bundle
// constrains.
func WriteParams(w io.Writer, params []Param) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "parameter\tfitted\tdefault\tfrom")
	for _, p := range params {
		v := "not constrained: " + p.Why
		if p.Constrained {
			v = fmt.Sprintf("%s ± %s", fmtNS(p.Value), fmtNS(p.SE))
		}
		def := "-"
		if p.Block != "" {
			def = fmtNS(p.Default)
		}
		from := p.From
		if p.Note != "" {
			from += " (" + p.Note + ")"
		}
		if !p.Written && p.Note == "" {
			from += " (reported, not written)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Key(), v, def, from)
		switch {
		case !p.Spread.Zero():
			fmt.Fprintf(tw, "%s_spread\t%s\t-\tdeviations of %d samples of %s from their bundle's centre\n", p.Key(), p.Spread, p.SpreadN, p.SpreadFrom)
		case p.SpreadWhy != "":
			fmt.Fprintf(tw, "%s_spread\tnot fitted: %s\t-\t\n", p.Key(), p.SpreadWhy)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "not constrained by any estimator (the profile leaves them at the model's defaults):")
	for _, u := range Unconstrained {
		fmt.Fprintf(w, "  %s: %s\n", u.Key, u.Why)
	}
	return nil
}

// Provenance is what a profile's header says about where it came from.
type Provenance struct {
	Tool    string   // tickemu version
	Bundles []string // one line each: name, command, capture date
	Host    string   // the machine's facts
}

// WriteProfile writes the machine profile: the fitted values a scenario
// takes with machine { profile = "FILE" }, each with its uncertainty and
// formula in a comment.
func WriteProfile(w io.Writer, pv Provenance, params []Param) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Machine profile fitted by tickemu calibrate (tickemu %s) from %d capture bundle(s):\n", oneLine(pv.Tool), len(pv.Bundles))
	for _, l := range pv.Bundles {
		fmt.Fprintf(&b, "#   %s\n", oneLine(l))
	}
	fmt.Fprintf(&b, "# host: %s\n", oneLine(pv.Host))
	b.WriteString("# Each value is the fit ± its standard error and the estimators it comes from\n")
	b.WriteString("# (docs/calibration-fit.md). Use it with: machine { profile = \"THIS FILE\" }.\n")
	b.WriteString("# Not set here (the model's defaults stay):\n")
	for _, p := range params {
		if p.Written && !p.Constrained {
			fmt.Fprintf(&b, "#   %s: not constrained: %s\n", p.Key(), p.Why)
		}
	}
	for _, u := range Unconstrained {
		fmt.Fprintf(&b, "#   %s: %s\n", u.Key, u.Why)
	}
	blocks := []string{}
	byBlock := map[string][]Param{}
	for _, p := range params {
		if !p.Written || !p.Constrained {
			continue
		}
		if _, ok := byBlock[p.Block]; !ok {
			blocks = append(blocks, p.Block)
		}
		byBlock[p.Block] = append(byBlock[p.Block], p)
	}
	for _, bl := range blocks {
		ps := byBlock[bl]
		fmt.Fprintf(&b, "\n%s {\n", bl)
		width := 0
		for _, p := range ps {
			width = max(width, len(p.Attr))
			if !p.Spread.Zero() {
				width = max(width, len(p.Attr+"_spread"))
			}
		}
		if ps[0].Plugin != "" {
			width = max(width, len("plugin"))
			fmt.Fprintf(&b, "  %-*s = %q\n", width, "plugin", ps[0].Plugin)
		}
		for _, p := range ps {
			note := ""
			if p.Note != "" {
				note = "; " + p.Note
			}
			fmt.Fprintf(&b, "  %-*s = %q # ± %s: %s%s\n", width, p.Attr, fmt.Sprintf("%.0fns", p.Value), fmtNS(p.SE), p.From, note)
			if !p.Spread.Zero() {
				fmt.Fprintf(&b, "  %-*s = %q # deviations of %d samples of %s from their bundle's centre\n", width, p.Attr+"_spread", p.Spread.String(), p.SpreadN, p.SpreadFrom)
			}
		}
		b.WriteString("}\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLine keeps text from a bundle (a note, a command) inside its comment
// line: control characters become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
