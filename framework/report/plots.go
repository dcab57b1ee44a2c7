package report

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"codeberg.org/go-fonts/dejavu/dejavusans"
	"golang.org/x/image/font/opentype"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/workload"
)

// The plots are gonum/plot figures rendered to SVG and inlined in the page:
// no external file, and the same input gives the same bytes (explore.go
// adds the one inline script).

// palette is a colour-blind-safe qualitative palette (Okabe-Ito).
var palette = []color.RGBA{
	{0, 114, 178, 255}, {230, 159, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{86, 180, 233, 255}, {213, 94, 0, 255}, {240, 228, 66, 255}, {0, 0, 0, 255},
}

func colorOf(i int) color.RGBA { return palette[i%len(palette)] }

// causeColors gives each wakeup-path cause the same colour in every plot.
var causeOrder = []string{"TIMER_SOFTIRQ", "idle exit", "broadcast hand-off", "hrtimer_interrupt", "irq",
	"return to user", "tick-sched", "timer slack", "timer interrupt delay", "hrtimer hang delay", "preempted", "HRTIMER_SOFTIRQ"}

var extraColors = []color.RGBA{{120, 120, 120, 255}, {170, 110, 40, 255}, {128, 0, 128, 255}, {0, 128, 128, 255}}

func causeColor(cause string) color.RGBA {
	for i, c := range causeOrder {
		if strings.HasPrefix(cause, c) {
			if i < len(palette) {
				return palette[i]
			}
			return extraColors[(i-len(palette))%len(extraColors)]
		}
	}
	return color.RGBA{160, 160, 160, 255}
}

// sans is the plots' font, DejaVu Sans (go-fonts/dejavu, which gonum/plot
// itself tests with). gonum/plot places text by its measured width (legend
// entries against their swatches, tick labels against the axis), and the
// browser draws it in the first font of the SVG's font-family it has, so the
// two must agree or the browser's be narrower: DejaVu Sans is the widest
// common sans-serif, Debian's and most Linux desktops' default, and every
// fallback (Liberation Sans, Arial, Helvetica) is narrower, so text never
// runs into its neighbour, at worst sits a little loose. Text measured in
// Liberation Sans and drawn in system-ui (DejaVu Sans on Debian) ran the
// legends into their swatches and the tick labels into the axis.
var sans = font.Font{Typeface: "DejaVu", Variant: "Sans"}

func init() {
	face, err := opentype.Parse(dejavusans.TTF)
	if err != nil {
		panic(fmt.Sprintf("report: the bundled DejaVu Sans: %v", err))
	}
	font.DefaultCache.Add(font.Collection{{Font: sans, Face: face}})
}

// newPlot is a plot with every text in sans.
func newPlot() *plot.Plot {
	p := plot.New()
	p.Title.TextStyle.Font = font.From(sans, 12)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, 11)
		ax.Tick.Label.Font = font.From(sans, 10)
	}
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Tick.Marker = trimmedTicks{plot.DefaultTicks{}}
	}
	p.Legend.TextStyle.Font = font.From(sans, 10)
	// Rows a line apart: without padding they are an em apart, and the
	// browser's text boxes (ascent and descent, 1.16 em) overlap.
	p.Legend.Padding = vg.Points(3)
	return p
}

// pageFont names the measuring font first in the SVG, then only narrower
// ones (see sans).
var pageFont = strings.NewReplacer("font-family:DejaVu Sans", "font-family:DejaVu Sans, Bitstream Vera Sans, sans-serif")

// pointTip is a data point of a plot that shows Text when hovered (the
// page's script, explore.js, draws the tooltip): an invisible circle over
// the point, with the point's Series (its line), Metric (its tables' row),
// Variant and sweep Point for a reader of the page to find it in the
// tables.
type pointTip struct {
	X, Y                                 float64 // data coordinates
	Text, Series, Metric, Variant, Point string
}

// svgOf renders p at w x h and returns the <svg> element (without the XML
// declaration, which HTML does not want), with a hover target over each of
// tips.
func svgOf(p *plot.Plot, w, h vg.Length, tips ...pointTip) (string, error) {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	p.Draw(dc)
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	if len(tips) > 0 {
		// The data canvas' transforms give a point's place in the canvas,
		// whose y runs up from the bottom; the SVG's runs down.
		data := p.DataCanvas(dc)
		trX, trY := p.Transforms(&data)
		var g strings.Builder
		g.WriteString(`<g class="tips">`)
		for _, t := range tips {
			fmt.Fprintf(&g, `<circle class="pt" cx="%.2f" cy="%.2f" r="7" fill="transparent" data-tip="%s" data-series="%s" data-metric="%s" data-variant="%s" data-point="%s"/>`,
				trX(t.X).Points(), (h - trY(t.Y)).Points(), html.EscapeString(t.Text), html.EscapeString(t.Series), html.EscapeString(t.Metric),
				html.EscapeString(t.Variant), html.EscapeString(t.Point))
		}
		g.WriteString("</g>\n</svg>")
		if i := strings.LastIndex(s, "</svg>"); i >= 0 {
			s = s[:i] + g.String() + s[i+len("</svg>"):]
		}
	}
	return pageFont.Replace(s), nil
}

// trimmedTicks are m's ticks with their labels' trailing zeros cut:
// plot.DefaultTicks writes "50000.00" when an axis' ticks are far apart
// relative to its labels' width.
type trimmedTicks struct{ m plot.Ticker }

func (t trimmedTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := t.m.Ticks(lo, hi)
	for i := range ts {
		if l := ts[i].Label; strings.Contains(l, ".") && !strings.ContainsAny(l, "eE") {
			ts[i].Label = strings.TrimSuffix(strings.TrimRight(l, "0"), ".")
		}
	}
	return ts
}

// decadeTicks marks a log axis at its powers of ten, labelled as a person
// writes them ("0.001", "1e-05", "100", "1e+06" from %g), with minor ticks
// at 2..9 times each: plot.LogTicks labels 1e-4 as 9.999999999999999e-05.
// On an axis spanning less than a factor of 300 the minor ticks are
// labelled too (2 and 5 of each decade; all of them under a factor of 30):
// a CDF from 0.8 to 4.5 us had one label, "1", and its step at 3 us none.
type decadeTicks struct{}

func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	if lo <= 0 || hi <= lo {
		return ts
	}
	labelled := func(m int) bool { return m == 1 }
	switch {
	case hi/lo < 30:
		labelled = func(int) bool { return true }
	case hi/lo < 300:
		labelled = func(m int) bool { return m == 1 || m == 2 || m == 5 }
	}
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		base := math.Pow(10, float64(e))
		for m := 1; m < 10; m++ {
			v := base * float64(m)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled(m) {
				t.Label = strconv.FormatFloat(v, 'g', 1, 64) // 1e+06, 2e-05
				if e >= -4 && e <= 4 {
					t.Label = strconv.FormatFloat(v, 'f', -1, 64) // 0.001, 2000
				}
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// merged is one variant's latency distribution over threads and seeds.
type merged struct {
	counts map[int64]int64 // us -> samples
	over   int64
	n      int64
	maxUS  int64
}

func mergeHists(hs []workload.LatencyHist) merged {
	m := merged{counts: map[int64]int64{}}
	for _, h := range hs {
		for _, b := range h.Buckets {
			m.counts[b[0]] += b[1]
			m.n += b[1]
			m.maxUS = max(m.maxUS, b[0])
		}
		m.over += h.Overflow
		m.n += h.Overflow
		m.maxUS = max(m.maxUS, h.MaxNS/1000)
	}
	return m
}

func (m merged) keys() []int64 {
	ks := make([]int64, 0, len(m.counts))
	for k := range m.counts {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

// histPlot draws the variants' latency histograms as step lines: samples
// per microsecond bucket on a log scale (a bucket with none drawn at the
// bottom), on a linear latency axis up to 50 us and a log one beyond, so
// that a tail at 1000 us and a bulk at 3 us both show. The axes end just
// past the data.
func histPlot(title string, names []string, ms []merged) (string, error) {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "latency (us)"
	logYLabel(p, "samples per 1 us bucket")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = decadeTicks{}
	top, lo, hi := 1.0, math.Inf(1), 0.0
	for _, m := range ms {
		for _, k := range m.keys() {
			top = math.Max(top, float64(m.counts[k]))
			lo, hi = math.Min(lo, float64(k)), math.Max(hi, float64(k))
		}
	}
	if hi == 0 && math.IsInf(lo, 1) {
		lo = 0
	}
	logX := hi > 50 && hi/math.Max(lo, 1) >= 20
	const floor = 0.5 // a bucket with no sample, on the log scale
	for i, m := range ms {
		keys := m.keys()
		if len(keys) == 0 {
			continue
		}
		var pts plotter.XYs
		for j, k := range keys {
			if j > 0 && k > keys[j-1]+1 {
				pts = append(pts, plotter.XY{X: float64(keys[j-1]) + 1, Y: floor}, plotter.XY{X: float64(k), Y: floor})
			}
			pts = append(pts, plotter.XY{X: math.Max(float64(k), 0.5), Y: float64(m.counts[k])})
		}
		last := keys[len(keys)-1]
		pts = append(pts, plotter.XY{X: float64(last) + 1, Y: float64(m.counts[last])}, plotter.XY{X: float64(last) + 1, Y: floor})
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.StepStyle = plotter.PostStep
		l.LineStyle.Color = colorOf(i)
		l.LineStyle.Width = vg.Points(1.5)
		if i > 0 {
			l.LineStyle.Dashes = []vg.Length{vg.Points(float64(2 * i)), vg.Points(float64(2 * i))}
		}
		p.Add(l)
	}
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = decadeTicks{}
		p.X.Min, p.X.Max = math.Max(lo, 1)/1.5, (hi+1)*1.5
	} else {
		p.X.Min, p.X.Max = math.Max(lo-1, 0), hi+2
	}
	p.Y.Min, p.Y.Max = floor, top*2 // the legend is the page's (seriesLegend)
	p.Add(plotter.NewGrid())
	return svgOf(p, 8*vg.Inch, 3.4*vg.Inch)
}

// logYLabel says what a log y axis counts in the title (one line: gonum
// spaces a title's lines closer than the browser's text boxes), not as the
// axis label: gonum/plot (0.17) reserves room for a centred axis label at
// the linear middle of the axis' range, which on a log axis is near its
// top, and so cut the plot's height by the label's length (the latency
// histogram drew its 200 pt of data in 130) and clipped the label.
func logYLabel(p *plot.Plot, label string) {
	p.Title.Text += ": " + label + " (log)"
	p.Y.Label.Text = ""
}

// legendItem is one series of a section's plots, drawn by the page above
// them (one legend for the histogram, the CDF and the explore chart, which
// draw a series alike): the colour and the dashes of its line.
type legendItem struct {
	Name, Color, Dash string
	Box               bool          // a filled box, not a line
	Glyph             template.HTML // drawn on the line (the sweep plots' point glyph)
}

// seriesLegend names the series of a latency section's plots: series i in
// colorOf(i), dashed 2i on 2i from the second on, as histPlot, cdfPlot and
// the explore chart draw it.
func seriesLegend(names []string) []legendItem {
	var out []legendItem
	for i, n := range names {
		c := colorOf(i)
		it := legendItem{Name: n, Color: "#" + hex2(c.R) + hex2(c.G) + hex2(c.B), Dash: "none"}
		if i > 0 {
			it.Dash = fmt.Sprintf("%d %d", 2*i, 2*i)
		}
		out = append(out, it)
	}
	return out
}

// cdfPlot draws the variants' latency CDFs on one plot as their tails:
// 1 - CDF, the fraction of wakeups slower than x, on log scales, so that the
// rare slow wakeups that make a Max are as visible as the bulk.
func cdfPlot(title string, names []string, ms []merged) (string, error) {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "latency (us)"
	logYLabel(p, "fraction slower than x (1 - CDF)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = decadeTicks{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = decadeTicks{}
	const xlo = 0.8
	floor, xhi := 1.0, 1.0
	for i, m := range ms {
		if m.n == 0 {
			continue
		}
		floor = math.Min(floor, 0.5/float64(m.n))
		pts := plotter.XYs{{X: xlo, Y: 1}} // every wakeup is slower than nothing
		acc := int64(0)
		for _, k := range m.keys() {
			x := math.Max(float64(k), 1) // the 0 us bucket on the log axis
			xhi = math.Max(xhi, x)
			pts = append(pts, plotter.XY{X: x, Y: pts[len(pts)-1].Y}) // the step
			acc += m.counts[k]
			y := float64(m.n-acc) / float64(m.n)
			if y <= 0 {
				y = 0.5 / float64(m.n) // below the last sample: off the scale
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.LineStyle.Color = colorOf(i)
		l.LineStyle.Width = vg.Points(1.5)
		l.LineStyle.Dashes = []vg.Length{vg.Points(float64(2 * i)), vg.Points(float64(2 * i))}
		if i == 0 {
			l.LineStyle.Dashes = nil
		}
		p.Add(l)
	}
	// A fraction: at most 1 (the legend is the page's, seriesLegend).
	p.Y.Min, p.Y.Max = floor, 1
	p.X.Min, p.X.Max = xlo, xhi*1.5
	p.Add(plotter.NewGrid())
	return svgOf(p, 8*vg.Inch, 3.4*vg.Inch)
}

// breakdownPlot draws each worst case as a horizontal stacked bar of its
// parts (one bar per thread).
//
// widest is the largest Max of every bar chart on the page: all share one
// scale, so that variants compare at a glance.
//
// The legend (the causes' colours) is the page's, under the chart: in the
// plot it needed the axis to run 50% past the largest Max.
func breakdownPlot(title string, wcs []workload.WorstCase, widest float64) (string, []legendItem, error) {
	causes := []string{}
	seen := map[string]bool{}
	for _, wc := range wcs {
		for _, p := range wc.Parts {
			if !seen[p.Cause] {
				seen[p.Cause] = true
				causes = append(causes, p.Cause)
			}
		}
	}
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "us of the Max (one scale for every variant)"
	var labels []string
	var legend []legendItem
	for _, wc := range wcs {
		labels = append(labels, fmt.Sprintf("T:%d", wc.Thread))
	}
	var below *plotter.BarChart
	p.X.Min, p.X.Max = 0, widest*1.05
	for _, cause := range causes {
		vals := make(plotter.Values, len(wcs))
		for i, wc := range wcs {
			for _, part := range wc.Parts {
				if part.Cause == cause {
					vals[i] += float64(part.NS) / 1000
				}
			}
		}
		b, err := plotter.NewBarChart(vals, vg.Points(14))
		if err != nil {
			return "", nil, err
		}
		b.Horizontal = true
		b.LineStyle.Width = 0
		b.Color = causeColor(cause)
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		legend = append(legend, boxItem(cause, causeColor(cause)))
	}
	p.NominalY(labels...)
	h := 1.2*vg.Inch + vg.Length(len(wcs))*0.3*vg.Inch
	svg, err := svgOf(p, 8*vg.Inch, h)
	return svg, legend, err
}

// boxItem is a legend entry of a filled colour.
func boxItem(name string, c color.RGBA) legendItem {
	return legendItem{Name: name, Color: "#" + hex2(c.R) + hex2(c.G) + hex2(c.B), Box: true}
}

// timeline draws the spans of one wakeup window on its CPU as a Gantt row:
// x is microseconds from the target time, one colour per kind of work.
type timeline struct {
	spans  []kernel.Span
	labels []string // per span, spanLabel of it before clipping
	origin float64  // ns
	kinds  map[kernel.SpanKind]int
	label  text.Style
}

// spanLabel says what a timeline block is, as a trace reader would name it:
// the wheel's catch-up with its jiffies, the interrupt that raised it, the
// idle state, the task.
func spanLabel(spans []kernel.Span, i int) string {
	s := spans[i]
	us := fmt.Sprintf(" %.1f us", float64(s.End-s.Start)/1000)
	switch s.Kind {
	case kernel.SpanSoftirq:
		l := s.Detail + "_SOFTIRQ"
		if s.Gap > 1 {
			l += fmt.Sprintf(": __run_timers() catch-up of %d jiffies", s.Gap)
		}
		return l + us
	case kernel.SpanHRTimer, kernel.SpanTick:
		l := s.Kind.String()
		for _, n := range spans[i+1:] {
			if n.Kind == kernel.SpanSoftirq && n.Gap > 1 {
				l += " (its timer raises the catch-up)"
				break
			}
		}
		if s.Hang > 0 {
			l += fmt.Sprintf(", hang delay %.0f us", float64(s.Hang)/1000)
		}
		return l + us
	case kernel.SpanIdle:
		return "idle " + s.Detail + us
	case kernel.SpanTask:
		return fmt.Sprintf("task %s/%d", s.Detail, s.Pid) + us
	}
	return s.Kind.String() + us
}

func (t *timeline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	// Labels above the bar, then below it, where a block is wide enough
	// and no label is in the way; the legend names every colour.
	var ends [2]vg.Length
	for i := range ends {
		ends[i] = c.Min.X - 1e9
	}
	for i, s := range t.spans {
		x0 := trX((float64(s.Start) - t.origin) / 1000)
		x1 := trX((float64(s.End) - t.origin) / 1000)
		l := t.labels[i]
		w := t.label.Width(l)
		mid := (x0 + x1) / 2
		for row, y := range []float64{0.9, 0.1} {
			if x1-x0 < w/4 || mid-w/2 < ends[row]+4 || mid+w/2 > c.Max.X {
				continue
			}
			st := t.label
			st.XAlign, st.YAlign = draw.XCenter, draw.YCenter
			c.FillText(st, vg.Point{X: mid, Y: trY(y)}, l)
			ends[row] = mid + w/2
			break
		}
	}
	for _, s := range t.spans {
		x0 := trX((float64(s.Start) - t.origin) / 1000)
		x1 := trX((float64(s.End) - t.origin) / 1000)
		y0, y1 := trY(0.2), trY(0.8)
		if x1-x0 < 0.5 {
			x1 = x0 + 0.5 // a visible sliver for sub-pixel spans
		}
		var path vg.Path
		path.Move(vg.Point{X: x0, Y: y0})
		path.Line(vg.Point{X: x1, Y: y0})
		path.Line(vg.Point{X: x1, Y: y1})
		path.Line(vg.Point{X: x0, Y: y1})
		path.Close()
		c.SetColor(colorOf(t.kinds[s.Kind]))
		c.Fill(path)
	}
}

func (t *timeline) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, s := range t.spans {
		xmin = math.Min(xmin, (float64(s.Start)-t.origin)/1000)
		xmax = math.Max(xmax, (float64(s.End)-t.origin)/1000)
	}
	return xmin, xmax, 0, 1
}

// timelinePlot draws the worst wakeup's window: what the CPU did from the
// thread's target time to its clock read, and the legend of its colours
// (the page's, under it: in the plot it took a third of the width).
func timelinePlot(title string, wc workload.WorstCase) (string, []legendItem, error) {
	if len(wc.Spans) == 0 {
		return "", nil, nil
	}
	origin := float64(wc.At)
	// Clip to the window; show a little before it for context.
	var spans []kernel.Span
	var labels []string
	from := wc.At - (wc.At-wc.Spans[0].Start)/4
	kinds := map[kernel.SpanKind]int{}
	var order []kernel.SpanKind
	for j, s := range wc.Spans {
		// Labelled with the whole span's length: clipped, a catch-up that
		// began before the window read as lasting what the clip left.
		l := spanLabel(wc.Spans, j)
		if s.Start < from {
			s.Start = from
			l += fmt.Sprintf(", from %.1f us before the target", float64(wc.At-wc.Spans[j].Start)/1000)
		}
		if s.End <= s.Start {
			continue
		}
		spans = append(spans, s)
		labels = append(labels, l)
		if _, ok := kinds[s.Kind]; !ok {
			kinds[s.Kind] = len(order)
			order = append(order, s.Kind)
		}
	}
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "us from the thread's target time (the window ends at its clock read)"
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0.5, Label: fmt.Sprintf("CPU %d", wc.CPU)}}
	p.Y.Min, p.Y.Max = 0, 1
	lab := p.X.Tick.Label
	lab.Font = font.From(sans, 8)
	tl := &timeline{spans: spans, labels: labels, origin: origin, kinds: kinds, label: lab}
	p.Add(tl)
	x0, x1, _, _ := tl.DataRange()
	p.X.Min, p.X.Max = x0, x1+(x1-x0)*0.03
	// Mark the target and the end of the window.
	end := float64(wc.LatencyNS) / 1000
	for _, x := range []float64{0, end} {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: 1}})
		if err != nil {
			return "", nil, err
		}
		l.LineStyle.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		p.Add(l)
	}
	var legend []legendItem
	for _, k := range order {
		legend = append(legend, boxItem(k.String(), colorOf(kinds[k])))
	}
	svg, err := svgOf(p, 10*vg.Inch, 2.6*vg.Inch)
	return svg, legend, err
}
