package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/workload"
)

// The plots are gonum/plot figures rendered to SVG and inlined in the page:
// no script, no external file, and the same input gives the same bytes.

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

// svgOf renders p at w x h and returns the <svg> element (without the XML
// declaration, which HTML does not want).
func svgOf(p *plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return s, nil
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

// histPlot draws the variants' latency histograms (samples per microsecond
// bucket, log scale) as step lines on one plot.
func histPlot(title string, names []string, ms []merged) (string, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "latency (us)"
	p.Y.Label.Text = "samples"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	top := 1.0
	for i, m := range ms {
		var pts plotter.XYs
		for _, k := range m.keys() {
			pts = append(pts, plotter.XY{X: float64(k), Y: float64(m.counts[k])})
			top = math.Max(top, float64(m.counts[k]))
		}
		if len(pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return "", err
		}
		s.GlyphStyle.Color = colorOf(i)
		s.GlyphStyle.Radius = vg.Points(2.5)
		s.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(s)
		p.Legend.Add(names[i], s)
	}
	p.Y.Min, p.Y.Max = 0.5, top*200 // room above the points for the legend
	p.Add(plotter.NewGrid())
	return svgOf(p, 8*vg.Inch, 3.4*vg.Inch)
}

// cdfPlot draws the variants' latency CDFs on one plot as their tails:
// 1 - CDF, the fraction of wakeups slower than x, on log scales, so that the
// rare slow wakeups that make a Max are as visible as the bulk.
func cdfPlot(title string, names []string, ms []merged) (string, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "latency (us)"
	p.Y.Label.Text = "fraction of wakeups > x  (1 - CDF)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	floor := 1.0
	for i, m := range ms {
		if m.n == 0 {
			continue
		}
		floor = math.Min(floor, 0.5/float64(m.n))
		var pts plotter.XYs
		acc := int64(0)
		for _, k := range m.keys() {
			x := math.Max(float64(k), 1) // the 0 us bucket on the log axis
			if len(pts) > 0 {
				pts = append(pts, plotter.XY{X: x, Y: pts[len(pts)-1].Y}) // the step
			}
			acc += m.counts[k]
			y := float64(m.n-acc) / float64(m.n)
			if y <= 0 {
				y = 0.5 / float64(m.n) // below the last sample: off the scale
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		if len(pts) == 1 {
			pts = append(pts, plotter.XY{X: pts[0].X * 1.01, Y: pts[0].Y})
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
		p.Legend.Add(names[i], l)
	}
	p.Y.Min, p.Y.Max = floor, 100 // room above 1 for the legend
	p.Add(plotter.NewGrid())
	return svgOf(p, 8*vg.Inch, 3.4*vg.Inch)
}

// breakdownPlot draws each worst case as a horizontal stacked bar of its
// parts (one bar per thread).
func breakdownPlot(title string, wcs []workload.WorstCase) (string, error) {
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
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "us of the Max"
	p.Legend.Top = true
	var labels []string
	for _, wc := range wcs {
		labels = append(labels, fmt.Sprintf("T:%d", wc.Thread))
	}
	var below *plotter.BarChart
	widest := 0.0
	for _, wc := range wcs {
		widest = math.Max(widest, float64(wc.LatencyNS)/1000)
	}
	p.X.Min, p.X.Max = 0, widest*1.5 // room on the right for the legend
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
			return "", err
		}
		b.Horizontal = true
		b.LineStyle.Width = 0
		b.Color = causeColor(cause)
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(cause, b)
	}
	p.NominalY(labels...)
	h := 1.2*vg.Inch + vg.Length(max(len(wcs), len(causes)/2))*0.3*vg.Inch
	return svgOf(p, 8*vg.Inch, h)
}

// timeline draws the spans of one wakeup window on its CPU as a Gantt row:
// x is microseconds from the target time, one colour per kind of work.
type timeline struct {
	spans  []kernel.Span
	origin float64 // ns
	kinds  map[kernel.SpanKind]int
}

func (t *timeline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
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

// legendBox is a legend thumbnail of one colour.
type legendBox struct{ c color.Color }

func (l legendBox) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(l.c, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// timelinePlot draws the worst wakeup's window: what the CPU did from the
// thread's target time to its clock read.
func timelinePlot(title string, wc workload.WorstCase) (string, error) {
	if len(wc.Spans) == 0 {
		return "", nil
	}
	origin := float64(wc.At)
	// Clip to the window; show a little before it for context.
	var spans []kernel.Span
	from := wc.At - (wc.At-wc.Spans[0].Start)/4
	kinds := map[kernel.SpanKind]int{}
	var order []kernel.SpanKind
	for _, s := range wc.Spans {
		if s.Start < from {
			s.Start = from
		}
		if s.End <= s.Start {
			continue
		}
		spans = append(spans, s)
		if _, ok := kinds[s.Kind]; !ok {
			kinds[s.Kind] = len(order)
			order = append(order, s.Kind)
		}
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "us from the thread's target time (the window ends at its clock read)"
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0.5, Label: fmt.Sprintf("CPU %d", wc.CPU)}}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = true
	tl := &timeline{spans: spans, origin: origin, kinds: kinds}
	p.Add(tl)
	x0, x1, _, _ := tl.DataRange()
	p.X.Min, p.X.Max = x0, x1+(x1-x0)*0.35 // room on the right for the legend
	// Mark the target and the end of the window.
	end := float64(wc.LatencyNS) / 1000
	for _, x := range []float64{0, end} {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: 1}})
		if err != nil {
			return "", err
		}
		l.LineStyle.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		p.Add(l)
	}
	for _, k := range order {
		p.Legend.Add(k.String(), legendBox{colorOf(kinds[k])})
	}
	return svgOf(p, 8*vg.Inch, 2.4*vg.Inch)
}
