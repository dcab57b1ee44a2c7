package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/tickemu/tickemu/framework/experiment"
)

// sweepSection plots every metric against the first swept setting: one line
// per series (a variant at a point of the other sweeps) through the medians
// over the seeds, with whiskers from the smallest to the largest seed's
// value. Metrics equal at every point, variant and seed are listed, not
// plotted.
type sweepSection struct {
	X      string // the first sweep's name
	Series []string
	// ByVariant is set when the series are the variants (one sweep).
	ByVariant bool
	Plots     []template.HTML
	Constant  []string // "Kernel hrtimer-hangs = 0"
	// Legend names the lines of every plot, once above them: in each plot
	// it needed the y axis to run far past the data (to 1e+08 over 1e+06).
	Legend []legendItem
}

// sweepMetric is one metric (Name and Unit) over the grid's points.
type sweepMetric struct {
	name, unit string
	at         []*experiment.MetricComparison // per point; nil where no run had it
}

// sweepMetrics groups the comparison's metrics by Name and Unit, in order of
// first appearance.
func sweepMetrics(c *experiment.Comparison) []sweepMetric {
	var out []sweepMetric
	idx := map[[2]string]int{}
	for i := range c.Metrics {
		m := &c.Metrics[i]
		k := [2]string{m.Name, m.Unit}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, sweepMetric{name: m.Name, unit: m.Unit, at: make([]*experiment.MetricComparison, len(c.Grid.Points()))})
		}
		out[j].at[m.Point] = m
	}
	return out
}

// xAxis places the first sweep's values on the x axis: at their numbers
// when every value is a number or a duration (its ticks are labelled as the
// values are written, "1ms"), else evenly, by name. A numeric axis spanning
// a factor of 10 or more is logarithmic.
type xAxis struct {
	pos     []float64
	nominal bool
	log     bool
	label   string
}

func newXAxis(sw experiment.SweepInfo) xAxis {
	ax := xAxis{label: sw.Name}
	for _, v := range sw.Values {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			d, derr := time.ParseDuration(v)
			if derr != nil {
				ax.nominal = true
				break
			}
			f = d.Seconds()
		}
		ax.pos = append(ax.pos, f)
	}
	if ax.nominal {
		ax.pos = ax.pos[:0]
		for i := range sw.Values {
			ax.pos = append(ax.pos, float64(i))
		}
		return ax
	}
	lo, hi := minMax(ax.pos)
	ax.log = lo > 0 && hi/lo >= 10
	return ax
}

func minMax(xs []float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// sweepPlots draws the sweep section.
func sweepPlots(c *experiment.Comparison) (*sweepSection, error) {
	sr := newSeries(c)
	ax := newXAxis(c.Sweeps[0])
	sec := &sweepSection{X: c.Sweeps[0].Name, Series: sr.names, ByVariant: len(c.Sweeps) == 1}
	for i, name := range sr.names {
		it := seriesLegend([]string{name})[0]
		col := colorOf(i)
		it.Color = "#" + hex2(col.R) + hex2(col.G) + hex2(col.B)
		if i > 0 {
			it.Dash = fmt.Sprintf("%d %d", 1+2*i, 1+i)
		}
		it.Glyph = glyphSVG(i, it.Color)
		sec.Legend = append(sec.Legend, it)
	}
	for _, sm := range sweepMetrics(c) {
		if v, ok := constant(sm); ok {
			unit, scale := displayUnit(sm.unit)
			sec.Constant = append(sec.Constant, fmt.Sprintf("%s %s = %s", sm.name, unit, num(v*scale)))
			continue
		}
		svg, err := sweepPlot(c, sr, ax, sm)
		if err != nil {
			return nil, err
		}
		sec.Plots = append(sec.Plots, template.HTML(svg))
	}
	return sec, nil
}

// constant reports whether every value of sm is the same (failed runs
// aside).
func constant(sm sweepMetric) (float64, bool) {
	first, seen := 0.0, false
	for _, m := range sm.at {
		if m == nil {
			return 0, false // missing at a point: worth a look
		}
		for _, vs := range m.Variants {
			for _, x := range vs.Values {
				if math.IsNaN(x) {
					continue
				}
				if !seen {
					first, seen = x, true
				} else if x != first {
					return 0, false
				}
			}
		}
	}
	return first, seen
}

// spread is a series' median and seed range at each x.
type spread struct {
	plotter.XYs
	low, high []float64
}

func (s spread) YError(i int) (float64, float64) { return s.low[i], s.high[i] }

func sweepPlot(c *experiment.Comparison, sr series, ax xAxis, sm sweepMetric) (string, error) {
	p := newPlot()
	unit, scale := displayUnit(sm.unit)
	// Which way is better goes in the title: in the y label it made the
	// label longer than the plot is high, and cut.
	p.Title.Text = sm.name + " " + unit
	for _, m := range sm.at {
		if m != nil && m.Better != "" {
			p.Title.Text += ", " + m.Better + " is better"
			break
		}
	}
	p.X.Label.Text = ax.label
	p.Y.Label.Text = unit
	var lines []spread
	var all []float64
	var tips []pointTip
	for i := range sr.names {
		var sp spread
		for x := range sr.nx {
			m := sm.at[sr.point(i, x)]
			if m == nil {
				continue
			}
			// A metric may be ±Inf (a ratio over nothing) or absurdly large
			// in an edited shard file: plot the values a plot can hold.
			vals := plottable(scaled(m.Variants[sr.variant(i)].Values.Present(), scale))
			med := m.Variants[sr.variant(i)].Summary.Median * scale
			if len(vals) == 0 || !inPlotRange(med) {
				continue
			}
			lo, hi := minMax(vals)
			sp.XYs = append(sp.XYs, plotter.XY{X: ax.pos[x], Y: med})
			tips = append(tips, pointTip{X: ax.pos[x], Y: med, Series: sr.names[i], Metric: sm.name + " " + unit, Variant: c.Variants[sr.variant(i)],
				Point: c.Grid.Points()[sr.point(i, x)].Key(),
				Text:  fmt.Sprintf("%s at %s: %s median %s, seeds %s to %s", sr.names[i], sr.xLabel(x), unit, num(med), num(lo), num(hi))})
			sp.low, sp.high = append(sp.low, max(med-lo, 0)), append(sp.high, max(hi-med, 0))
			all = append(all, vals...)
		}
		lines = append(lines, sp)
	}
	lo, hi := minMax(all)
	logY := lo > 0 && hi/lo >= 100
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = decadeTicks{}
		p.Title.Text += ", log scale"
		p.Y.Label.Text = "" // see logYLabel
	}
	if ax.log {
		p.X.Scale = plot.LogScale{}
	}
	for i, sp := range lines {
		if len(sp.XYs) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(sp.XYs)
		if err != nil {
			return "", err
		}
		l.LineStyle.Color = colorOf(i)
		l.LineStyle.Width = vg.Points(1.5)
		if i > 0 {
			l.LineStyle.Dashes = []vg.Length{vg.Points(float64(1 + 2*i)), vg.Points(float64(1 + i))}
		}
		pts.GlyphStyle.Color = colorOf(i)
		pts.GlyphStyle.Radius = vg.Points(3)
		pts.GlyphStyle.Shape = plotutil.Shape(i)
		eb, err := plotter.NewYErrorBars(sp)
		if err != nil {
			return "", err
		}
		eb.LineStyle.Color = colorOf(i)
		p.Add(l, pts, eb)
	}
	if ax.nominal {
		p.NominalX(c.Sweeps[0].Values...)
		p.X.Min, p.X.Max = -0.3, float64(sr.nx)-0.7
	} else {
		// A tick at every swept value, labelled as written.
		ticks := make(plot.ConstantTicks, len(ax.pos))
		for i, x := range ax.pos {
			ticks[i] = plot.Tick{Value: x, Label: c.Sweeps[0].Values[i]}
		}
		p.X.Tick.Marker = ticks
		// Room at the ends for the glyphs.
		x0, x1 := minMax(ax.pos)
		if ax.log {
			p.X.Min, p.X.Max = x0/1.15, x1*1.15
		} else if pad := (x1 - x0) * 0.05; pad > 0 {
			p.X.Min, p.X.Max = x0-pad, x1+pad
		} else {
			p.X.Min, p.X.Max = x0-1, x1+1
		}
	}
	// A little room around the data (the legend is the section's).
	switch {
	case logY:
		p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
	case hi > lo:
		p.Y.Min, p.Y.Max = math.Min(lo, 0), hi+(hi-math.Min(lo, 0))*0.08
	default:
		p.Y.Min, p.Y.Max = math.Min(lo, 0), math.Max(hi*1.5, 1)
	}
	p.Add(plotter.NewGrid())
	return svgOf(p, 5.6*vg.Inch, 3.4*vg.Inch, tips...)
}

// maxPlotted bounds the values a sweep plot draws: far beyond any metric, and
// far enough below the largest float64 that the axis' room around the data
// stays finite (an infinite axis would never finish its ticks).
const maxPlotted = 1e200

func inPlotRange(v float64) bool {
	a := math.Abs(v)
	return v == 0 || a >= 1/maxPlotted && a <= maxPlotted // NaN fails both
}

// glyphSVG draws plotutil.Shape(i), the glyph of the sweep plots' i-th
// line, centred in a 32 x 10 legend swatch.
func glyphSVG(i int, color string) template.HTML {
	const x, y, r = 16, 5, 3.5
	open := fmt.Sprintf(`fill="none" stroke="%s"`, color)
	fill := fmt.Sprintf(`fill="%s"`, color)
	var g string
	switch i % 8 { // plotutil.DefaultGlyphShapes' order
	case 0: // ring
		g = fmt.Sprintf(`<circle cx="%d" cy="%d" r="%g" %s/>`, x, y, r, open)
	case 1: // square
		g = fmt.Sprintf(`<rect x="%g" y="%g" width="%g" height="%g" %s/>`, x-r, y-r, 2*r, 2*r, open)
	case 2: // triangle
		g = fmt.Sprintf(`<polygon points="%g,%g %g,%g %g,%g" %s/>`, float64(x), y-r, x-r, y+r, x+r, y+r, open)
	case 3: // cross
		g = fmt.Sprintf(`<path d="M%g %gL%g %gM%g %gL%g %g" stroke="%s"/>`, x-r, y-r, x+r, y+r, x-r, y+r, x+r, y-r, color)
	case 4: // plus
		g = fmt.Sprintf(`<path d="M%g %dL%g %dM%d %gL%d %g" stroke="%s"/>`, x-r, y, x+r, y, x, y-r, x, y+r, color)
	case 5: // circle
		g = fmt.Sprintf(`<circle cx="%d" cy="%d" r="%g" %s/>`, x, y, r, fill)
	case 6: // box
		g = fmt.Sprintf(`<rect x="%g" y="%g" width="%g" height="%g" %s/>`, x-r, y-r, 2*r, 2*r, fill)
	default: // pyramid
		g = fmt.Sprintf(`<polygon points="%g,%g %g,%g %g,%g" %s/>`, float64(x), y-r, x-r, y+r, x+r, y+r, fill)
	}
	return template.HTML(g) // made here from numbers and a colour of the palette
}

// plottable keeps the values a plot can draw.
func plottable(vs []float64) []float64 {
	var out []float64
	for _, v := range vs {
		if inPlotRange(v) {
			out = append(out, v)
		}
	}
	return out
}

// scaled returns vs times scale.
func scaled(vs []float64, scale float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = v * scale
	}
	return out
}
