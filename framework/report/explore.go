package report

import (
	_ "embed"
	"encoding/json"
	"html/template"
)

// The explore layer: under each latency section's plots, a small chart
// drawn in the browser from the section's histograms (embedded as JSON)
// that shows each 1 us bucket's samples under the pointer and zooms on a
// stretch of the latency axis (dragged, or the tail from p99 or p99.9).
// It is plain JavaScript inline in the page, loads nothing and needs no
// network; without script the page's SVG plots say the same.

//go:embed explore.js
var exploreJS string

// exploreSeries is one line of the explore chart: a variant's histogram as
// [us, samples] pairs in increasing us, with its samples past the
// histogram (Over, counted in N) and its Max in us, from which the script
// finds the latency table's quantiles as pct does.
type exploreSeries struct {
	Name    string     `json:"name"`
	Color   string     `json:"color"`
	Buckets [][2]int64 `json:"buckets"`
	N       int64      `json:"n"`
	Over    int64      `json:"over"`
	Max     int64      `json:"max"`
}

// exploreData is the JSON of the explore chart of one latency section.
func exploreData(names []string, ms []merged) (template.JS, error) {
	var ss []exploreSeries
	for i, m := range ms {
		c := colorOf(i)
		s := exploreSeries{Name: names[i], N: m.n, Over: m.over, Max: m.maxUS, Buckets: [][2]int64{},
			Color: "#" + hex2(c.R) + hex2(c.G) + hex2(c.B)}
		for _, k := range m.keys() {
			s.Buckets = append(s.Buckets, [2]int64{k, m.counts[k]})
		}
		ss = append(ss, s)
	}
	b, err := json.Marshal(ss) // escapes <, > and &: safe in a script element
	return template.JS(b), err
}

func hex2(v uint8) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[v>>4], digits[v&15]})
}
