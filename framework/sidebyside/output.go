package sidebyside

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tickemu/tickemu/framework/replay"
)

// WriteText prints a table: a header on the bundle and the model, then one
// line per row (section, figure, real, model, diff, tolerance, mark), then
// the count within tolerance.
func (t *Table) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# bundle %s: %s\n", t.Bundle, t.Command)
	for _, l := range t.Header {
		fmt.Fprintf(&b, "# %s\n", l)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	nameW, secW := len("figure"), len("section")
	for _, r := range t.Rows {
		nameW, secW = max(nameW, len(r.Name)), max(secW, len(r.Section))
	}
	fmt.Fprintf(&b, "%-*s  %-*s  %12s  %12s  %8s  %6s  %s\n", secW, "section", nameW, "figure", "real", "model", "diff", "tol", "mark")
	for _, r := range t.Rows {
		real, model := r.Format(r.Real, r.HasReal), r.Format(r.Model, r.HasModel)
		fmt.Fprintf(&b, "%-*s  %-*s  %12s  %12s  %8s  %6s  %s\n", secW, r.Section, nameW, r.Name, real, model, r.DiffText(), r.Class.Text(), r.Mark())
	}
	within, marked := t.Within()
	fmt.Fprintf(&b, "# within tolerance: %d of %d rows\n", within, marked)
	_, err := io.WriteString(w, b.String())
	return err
}

// Mark is the row's verdict: "ok" within its tolerance, "OUTSIDE" beyond
// it, "" for a row without a tolerance or without both values.
func (r Row) Mark() string {
	in, ok := r.Within()
	switch {
	case !ok:
		return ""
	case in:
		return "ok"
	}
	return "OUTSIDE"
}

// DiffText is the model's difference from the real value: relative for
// every class but shares (percentage points).
func (r Row) DiffText() string {
	if !r.HasReal || !r.HasModel {
		return ""
	}
	if r.Unit == UnitShare {
		return fmt.Sprintf("%+.1fpt", r.Model-r.Real)
	}
	switch d := r.Diff(); {
	case r.Real == r.Model:
		return "="
	case math.IsNaN(d):
		return "new"
	default:
		return fmt.Sprintf("%+.1f%%", 100*d)
	}
}

// Format prints a value in the row's unit.
func (r Row) Format(v float64, has bool) string {
	if !has {
		return "n/a"
	}
	switch r.Unit {
	case UnitNS:
		return replay.Dur(v)
	case UnitUS:
		return strconv.FormatFloat(v, 'f', -1, 64) + "us"
	case UnitShare:
		return fmt.Sprintf("%.1f%%", v)
	case UnitRate:
		return fmt.Sprintf("%.2f/s", v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// jsonRow is a row as WriteJSON writes it: values absent when unknown.
type jsonRow struct {
	Section   string   `json:"section"`
	Name      string   `json:"name"`
	Unit      string   `json:"unit,omitempty"`
	Real      *float64 `json:"real,omitempty"`
	Model     *float64 `json:"model,omitempty"`
	Class     string   `json:"class,omitempty"`
	Tolerance string   `json:"tolerance,omitempty"`
	Mark      string   `json:"mark,omitempty"`
}

// WriteJSON prints the table as one JSON object (indented; keys in a fixed
// order).
func (t *Table) WriteJSON(w io.Writer) error {
	within, marked := t.Within()
	out := struct {
		Bundle  string    `json:"bundle"`
		Command string    `json:"command"`
		Header  []string  `json:"header"`
		Notes   []string  `json:"notes"`
		Rows    []jsonRow `json:"rows"`
		Within  int       `json:"within"`
		Marked  int       `json:"marked"`
	}{Bundle: t.Bundle, Command: t.Command, Header: t.Header, Notes: t.Notes, Within: within, Marked: marked}
	for _, r := range t.Rows {
		jr := jsonRow{Section: r.Section, Name: r.Name, Unit: string(r.Unit), Class: string(r.Class), Tolerance: r.Class.Text(), Mark: r.Mark()}
		if r.HasReal {
			v := r.Real
			jr.Real = &v
		}
		if r.HasModel {
			v := r.Model
			jr.Model = &v
		}
		out.Rows = append(out.Rows, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
