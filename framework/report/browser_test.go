package report_test

// Browser tests: the reports of real comparisons (tickemu compare
// configs/nohz-catchup.hcl, and a sweep of it over hz) opened in Debian's
// headless Chromium and used with a pointer as a person would, through the
// DevTools protocol (chromedp): hover a marked point and read the tooltip
// against the latency table, zoom, pan and reset the explore chart, unfold
// the folded sections, follow the table of contents, read the page in a
// narrow window, read every plot's labels (none overlapping or cut), and
// load it with no network. Screenshots go to the test's temporary
// directory, or to -shots DIR to keep them. chromedp talks to chromium
// itself (no chromedriver); make test-deps installs chromium.

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tickemu/tickemu/framework/cli"
)

var shots = flag.String("shots", "", "keep the browser tests' screenshots in this directory")

// The browser and the reports are made once for every test that needs
// them; TestMain ends the browser.
var (
	browserOnce sync.Once
	browserCtx  context.Context
	browserErr  error
	browserStop = func() {}

	reportsOnce sync.Once
	reportsDir  string
	reportsErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	browserStop()
	if reportsDir != "" {
		os.RemoveAll(reportsDir)
	}
	os.Exit(code)
}

// browser starts Debian's chromium, headless (without its sandbox as root,
// where it refuses to start with it), shared by the tests; each test opens
// its own tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, b := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(b); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Fatal("chromium is not installed: run `make test-deps` (scripts/install-test-deps.sh installs Debian's chromium package)")
	}
	browserOnce.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.WindowSize(1280, 900),
			chromedp.Flag("hide-scrollbars", true),
			// Nothing leaves the machine: every host name is unresolvable.
			chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
			chromedp.Flag("force-color-profile", "srgb"),
		)
		if os.Geteuid() == 0 {
			opts = append(opts, chromedp.NoSandbox)
		}
		actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelB := chromedp.NewContext(actx)
		browserStop = func() { cancelB(); cancelA() }
		browserCtx, browserErr = bctx, chromedp.Do(bctx)
	})
	if browserErr != nil {
		t.Fatalf("starting %s: %v", path, browserErr)
	}
	return browserCtx
}

// reports writes, once, the reports the tests open: compare.html (three
// catch-up variants, two seeds) and sweep.html (two variants over hz).
func reports(t *testing.T) string {
	t.Helper()
	reportsOnce.Do(func() {
		if reportsDir, reportsErr = os.MkdirTemp("", "report-browser-"); reportsErr != nil {
			return
		}
		cfg := filepath.Join("..", "..", "configs", "nohz-catchup.hcl")
		for name, args := range map[string][]string{
			"compare.html": {"compare", cfg, "--seeds", "2"},
			"sweep.html":   {"compare", cfg, "--variants", "per_jiffy,next_expiry", "--sweep", "hz=100,1000", "--seeds", "2", "--var", "duration=6s"},
		} {
			var out, errb strings.Builder
			if code := cli.New().Run(append(args, "--report", filepath.Join(reportsDir, name)), &out, &errb); code != 0 {
				reportsErr = fmt.Errorf("tickemu %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
				return
			}
		}
	})
	if reportsErr != nil {
		t.Fatal(reportsErr)
	}
	return reportsDir
}

// tab is one report open in a new tab at width x height, loaded and drawn
// (every explore chart's script done), with what the page logged and asked
// the network for.
type tab struct {
	t        *testing.T
	ctx      context.Context
	url      string
	mu       sync.Mutex
	requests []string // URLs the page asked for
	problems []string // console messages, script errors, log entries
}

func open(t *testing.T, name string, width, height int64) *tab {
	t.Helper()
	page := filepath.Join(reports(t), name)
	if filepath.Dir(name) == "testdata" { // a golden page
		var err error
		if page, err = filepath.Abs(name); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := chromedp.NewContext(browser(t))
	t.Cleanup(cancel)
	tb := &tab{t: t, ctx: ctx, url: "file://" + page}
	if err := chromedp.Listen(ctx, tb.event); err != nil {
		t.Fatal(err)
	}
	tctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelT)
	tb.ctx = tctx
	tb.do(chromedp.EmulateViewport(width, height), chromedp.Navigate(tb.url))
	n := tb.eval(`document.querySelectorAll(".explore").length`)
	if n == 0 {
		t.Fatal("no explore chart on the page")
	}
	if _, err := chromedp.Run(tb.ctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll(".explore[data-ready='1']").length === %v`, n),
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the explore charts were not drawn: %v (%v)", err, tb.problemList())
	}
	return tb
}

func (tb *tab) event(ev any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		tb.requests = append(tb.requests, e.Request.URL)
	case *runtime.EventConsoleAPICalled:
		var args []string
		for _, a := range e.Args {
			args = append(args, string(a.Value)+a.Description)
		}
		tb.problems = append(tb.problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		tb.problems = append(tb.problems, fmt.Sprintf("script error at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
	case *cdplog.EventEntryAdded:
		tb.problems = append(tb.problems, fmt.Sprintf("%s %s: %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
	}
}

func (tb *tab) problemList() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.problems...)
}

func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, actions...); err != nil {
		tb.t.Fatal(err)
	}
}

// eval runs js in the page and returns its value (JSON: float64, string,
// []any, map[string]any).
func (tb *tab) eval(js string) any {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[any](js))
	if err != nil {
		tb.t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (tb *tab) str(js string) string {
	tb.t.Helper()
	s, _ := tb.eval(js).(string)
	return s
}

func (tb *tab) num(js string) float64 {
	tb.t.Helper()
	f, ok := tb.eval(js).(float64)
	if !ok {
		tb.t.Fatalf("%s is not a number", js)
	}
	return f
}

// point is where the pointer goes: the middle of what selector finds (the
// index-th match), scrolled into view, in viewport pixels.
func (tb *tab) point(selector string, index int) (x, y float64) {
	tb.t.Helper()
	r, ok := tb.eval(fmt.Sprintf(`(() => { const e = document.querySelectorAll(%q)[%d]; if (!e) return null;
		e.scrollIntoView({block: "center", inline: "center"}); const r = e.getBoundingClientRect();
		return [r.left + r.width / 2, r.top + r.height / 2]; })()`, selector, index)).([]any)
	if !ok {
		tb.t.Fatalf("nothing on the page matches %s [%d]", selector, index)
	}
	return r[0].(float64), r[1].(float64)
}

func (tb *tab) move(x, y float64) {
	tb.t.Helper()
	tb.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y))
}

// drag presses the left button at (x0, y), moves to (x1, y) in steps and
// lets go.
func (tb *tab) drag(x0, x1, y float64) {
	tb.t.Helper()
	tb.move(x0, y)
	tb.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x0, y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	for i := 1; i <= 5; i++ {
		tb.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x0+(x1-x0)*float64(i)/5, y, chromedp.ButtonLeft))
	}
	tb.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x1, y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
}

func (tb *tab) click(x, y float64, count int) {
	tb.t.Helper()
	for i := 1; i <= count; i++ {
		tb.do(chromedp.MouseClickXY(x, y, chromedp.ClickCount(i)))
	}
}

// shot saves a picture of the viewport (or the whole page) as name.png.
func (tb *tab) shot(name string, full bool) {
	tb.t.Helper()
	var b []byte
	var err error
	if full {
		b, err = chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	} else {
		b, err = chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
	}
	if err != nil {
		tb.t.Fatal(err)
	}
	dir := *shots
	if dir == "" {
		dir = tb.t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot %s", filepath.Join(dir, name+".png"))
}

// tip is the explore chart's tooltip as shown ("" when hidden).
func (tb *tab) tip(box int) string {
	return tb.str(fmt.Sprintf(`(() => { const t = document.querySelectorAll(".explore")[%d].querySelector(".tip");
		return t && !t.hidden && t.offsetWidth > 0 ? t.innerText : ""; })()`, box))
}

var pages = []string{"compare.html", "sweep.html"}

// TestBrowserOffline: each report loads with every host unresolvable,
// asks the network for nothing but itself, logs nothing (no script error,
// nothing blocked) and draws every explore chart.
func TestBrowserOffline(t *testing.T) {
	for _, name := range pages {
		t.Run(name, func(t *testing.T) {
			tb := open(t, name, 1280, 900)
			tb.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: true, DownloadThroughput: -1, UploadThroughput: -1})
				return err
			}), chromedp.Reload())
			tb.eval(`new Promise(r => document.readyState === "complete" ? r(1) : addEventListener("load", () => r(1)))`)
			if !tb.eval(`document.querySelectorAll(".explore:not([data-ready='1'])").length === 0`).(bool) {
				t.Error("offline, an explore chart is not drawn")
			}
			tb.mu.Lock()
			for _, u := range tb.requests {
				if u != tb.url {
					t.Errorf("the page asked for %s: a report must hold everything it shows", u)
				}
			}
			tb.mu.Unlock()
			for _, p := range tb.problemList() {
				t.Errorf("while loading: %s", p)
			}
			if n := tb.num(`document.querySelectorAll("img, link, iframe, object, embed, script[src]").length`); n != 0 {
				t.Errorf("%v elements that load something", n)
			}
		})
	}
}

// TestBrowserHoverMatchesTable: every marked point of every explore chart
// (each series' p50, p99, p99.9 and Max), hovered with the pointer, shows
// a tooltip whose latency is the number in the latency table's row and
// column for that series and quantile.
//
// The goldens are hovered too: in the real comparisons every quantile but
// the Max falls in the bulk's bucket, in the goldens' made-up histograms
// (90 samples at 3 us, 10 in the tail per run) p99 and p99.9 fall in the
// tail.
func TestBrowserHoverMatchesTable(t *testing.T) {
	for _, name := range append(pages, "testdata/compare.html", "testdata/sweep.html") {
		t.Run(name, func(t *testing.T) {
			tb := open(t, name, 1280, 900)
			// Per chart: the table's rows (label, p50, p99, p99.9, max).
			tables, _ := tb.eval(`Array.from(document.querySelectorAll(".explore")).map(box => {
				const h = document.getElementById(box.dataset.src.replace(/-data$/, ""));
				let e = h.nextElementSibling; while (e && !e.querySelector("table")) e = e.nextElementSibling;
				const head = Array.from(e.querySelectorAll("tr:first-child th")).map(th => th.innerText.trim());
				return Array.from(e.querySelectorAll("tr")).slice(1).map(tr => {
					const row = {}; Array.from(tr.cells).forEach((td, i) => row[head[i]] = td.innerText.trim()); return row; });
			})`).([]any)
			if len(tables) == 0 {
				t.Fatal("no latency table")
			}
			checked := 0
			for box, tbl := range tables {
				for _, r := range tbl.([]any) {
					row := r.(map[string]any)
					label, _ := row["variant"].(string)
					if label == "" {
						label, _ = row["series"].(string)
					}
					for _, q := range []struct{ col, mark string }{{"p50 us", "p50"}, {"p99 us", "p99"}, {"p99.9 us", "p99.9"}, {"max us", "Max"}} {
						want := row[q.col].(string)
						idx := tb.num(fmt.Sprintf(`Array.from(document.querySelectorAll(".explore")[%d].querySelectorAll("circle.mark")).findIndex(c =>
							c.dataset.series === %q && c.dataset.q.split(" ").includes(%q))`, box, label, q.mark))
						if idx < 0 {
							t.Errorf("chart %d: no %s mark for %s (table: %s us)", box, q.mark, label, want)
							continue
						}
						x, y := tb.markPoint(box, int(idx))
						tb.move(x, y)
						tip := tb.tip(box)
						lines := strings.Split(tip, "\n")
						if lines[0] != want+" us" {
							t.Errorf("chart %d: hovering %s's %s mark shows %q, the table says %s us", box, label, q.mark, lines[0], want)
						}
						found := false
						for _, l := range lines[1:] {
							if rest, ok := strings.CutPrefix(l, label+": "); ok {
								m := hereRE.FindStringSubmatch(rest)
								found = m != nil && strings.Contains(" "+m[1]+" ", " "+q.mark+" ")
							}
						}
						if !found {
							t.Errorf("chart %d: hovering %s's %s mark: the tooltip does not name it:\n%s", box, label, q.mark, tip)
						}
						checked++
					}
				}
			}
			// 4 marks per line: compare.html 3 variants, sweep.html 2
			// sections of 2 series; the goldens 2 variants, and 3 sections
			// of 4 series.
			if want := map[string]int{"compare.html": 12, "sweep.html": 16, "testdata/compare.html": 8, "testdata/sweep.html": 48}[name]; checked != want {
				t.Errorf("%d marks checked, want %d", checked, want)
			}
			// Away from the chart the tooltip goes.
			tb.move(2, 2)
			if tip := tb.tip(0); tip != "" {
				t.Errorf("the tooltip stays when the pointer leaves: %q", tip)
			}
			x, y := tb.markPoint(0, 0)
			tb.move(x, y)
			tb.shot(strings.TrimSuffix(filepath.Base(name), ".html")+"-hover", false)
		})
	}
}

// TestBrowserHoverSweepPoints: every point of every sweep plot (a median
// over the seeds), hovered, shows a tooltip whose median is the number in
// the comparison table of that sweep point, in the row of that metric and
// the column of that variant.
func TestBrowserHoverSweepPoints(t *testing.T) {
	for _, name := range []string{"sweep.html", "testdata/sweep.html"} {
		t.Run(name, func(t *testing.T) {
			tb := open(t, name, 1280, 900)
			n := int(tb.num(`document.querySelectorAll(".plots circle.pt").length`))
			// 10 plots of 2 lines at 2 points; the golden's 2 plots of 4
			// lines at 3 points.
			if want := map[string]int{"sweep.html": 40, "testdata/sweep.html": 24}[name]; n != want {
				t.Errorf("%d points on the sweep plots, want %d", n, want)
			}
			for i := range n {
				pt := tb.eval(fmt.Sprintf(`(() => { const c = document.querySelectorAll(".plots circle.pt")[%d], d = c.dataset;
					const h = Array.from(document.querySelectorAll("h3")).find(h => h.textContent === d.point);
					let cell = null;
					for (let e = h && h.nextElementSibling; e && !cell && e.tagName !== "H3" && e.tagName !== "H2"; e = e.nextElementSibling)
						for (const table of e.querySelectorAll("table")) {
							const col = Array.from(table.rows[0].cells).map(c => c.textContent.trim()).indexOf(d.variant);
							for (const row of Array.from(table.rows).slice(1)) {
								const m = row.cells[0].textContent.trim();
								if (col > 0 && (m === d.metric || m.startsWith(d.metric + " ("))) cell = row.cells[col].textContent.trim();
							}
						}
					return [d.metric, d.variant, d.point, cell, d.series]; })()`, i)).([]any)
				where := fmt.Sprintf("%v of %v at %v", pt[0], pt[1], pt[2])
				cell, ok := pt[3].(string)
				if !ok {
					t.Errorf("%s: no such cell in the sweep point's table", where)
					continue
				}
				x, y := tb.point(".plots circle.pt", i)
				tb.move(x, y)
				tip := tb.str(`(() => { const t = document.querySelector(".ptip"); return t && !t.hidden ? t.innerText : ""; })()`)
				// Its line of the tooltip (the lines whose points coincide
				// share one).
				var m []string
				for _, l := range strings.Split(tip, "\n") {
					if strings.HasPrefix(l, pt[4].(string)+" at ") {
						m = regexp.MustCompile(`median (\S+),`).FindStringSubmatch(l)
					}
				}
				if m == nil || m[1] != cell {
					t.Errorf("%s: hovering its point shows %q, the table says %s", where, tip, cell)
				}
			}
			x, y := tb.point(".plots circle.pt", n-1)
			tb.move(x, y)
			tb.shot(strings.TrimSuffix(filepath.Base(name), ".html")+"-point-hover", false)
			tb.move(2, 2)
			if tip := tb.str(`document.querySelector(".ptip").hidden ? "" : document.querySelector(".ptip").innerText`); tip != "" {
				t.Errorf("the point's tooltip stays when the pointer leaves: %q", tip)
			}
		})
	}
}

// hereRE finds the quantiles a tooltip's line says fall in its bucket.
var hereRE = regexp.MustCompile(`, ([^;]*) here;`)

// markPoint scrolls chart box's index-th mark into view and returns its
// centre.
func (tb *tab) markPoint(box, index int) (x, y float64) {
	tb.t.Helper()
	r := tb.eval(fmt.Sprintf(`(() => { const b = document.querySelectorAll(".explore")[%d], c = b.querySelectorAll("circle.mark")[%d];
		b.scrollIntoView({block: "center"}); const r = c.getBoundingClientRect();
		return [r.left + r.width / 2, r.top + r.height / 2]; })()`, box, index)).([]any)
	return r[0].(float64), r[1].(float64)
}

// xTicks are the explore chart's latency axis labels as shown.
func (tb *tab) xTicks(box int) []float64 {
	tb.t.Helper()
	var out []float64
	for _, v := range tb.eval(fmt.Sprintf(`Array.from(document.querySelectorAll(".explore")[%d].querySelectorAll("text.xtick")).map(e => e.textContent)`, box)).([]any) {
		f, err := strconv.ParseFloat(v.(string), 64)
		if err != nil {
			tb.t.Fatalf("x tick %q: %v", v, err)
		}
		out = append(out, f)
	}
	return out
}

// usUnder is the bucket the tooltip shows with the pointer at (x, y).
func (tb *tab) usUnder(box int, x, y float64) float64 {
	tb.t.Helper()
	tb.move(x, y)
	tip := tb.tip(box)
	us, err := strconv.ParseFloat(strings.TrimSuffix(strings.SplitN(tip, "\n", 2)[0], " us"), 64)
	if err != nil {
		tb.t.Fatalf("no bucket in the tooltip at (%v, %v): %q", x, y, tip)
	}
	return us
}

// TestBrowserZoomPanReset: dragging across the first explore chart zooms on
// the buckets between the drag's ends (the axis and the tooltip say so),
// the arrows pan within the data, and a double-click, Escape or "all"
// bring every bucket back.
func TestBrowserZoomPanReset(t *testing.T) {
	tb := open(t, "compare.html", 1280, 900)
	// at is the pointer at fraction f across the plot area (56..748 of
	// the chart's 760 units), on its middle row, with the chart scrolled
	// to the middle of the window (clicking a button may have scrolled).
	var y float64
	at := func(f float64) float64 {
		r := tb.eval(`(() => { const s = document.querySelector(".explore svg"); s.scrollIntoView({block: "center"});
			const r = s.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`).([]any)
		left, top, width, height := r[0].(float64), r[1].(float64), r[2].(float64), r[3].(float64)
		y = top + height*0.5
		return left + (56+f*(760-56-12))*width/760
	}
	full := tb.xTicks(0)
	showing := func() string { return tb.str(`document.querySelector(".explore .view").textContent`) }
	if len(full) < 3 || showing() != "showing every bucket" {
		t.Fatalf("before zooming: ticks %v, %q", full, showing())
	}
	a := tb.usUnder(0, at(0.3), y)
	b := tb.usUnder(0, at(0.6), y)
	tb.drag(at(0.3), at(0.6), y)
	zoomed := tb.xTicks(0)
	if len(zoomed) < 3 || zoomed[0] < a || zoomed[len(zoomed)-1] > b+1 {
		t.Errorf("zoomed on %v..%v us: the axis shows %v", a, b, zoomed)
	}
	if want := fmt.Sprintf("showing %v to %v us", a, b+1); !strings.HasPrefix(showing(), want) {
		t.Errorf("zoomed: %q, want %q", showing(), want)
	}
	x0 := at(0.5)
	if mid := tb.usUnder(0, x0, y); mid < a || mid > b {
		t.Errorf("zoomed on %v..%v us, the middle of the plot is %v us", a, b, mid)
	}
	tb.shot("compare-zoomed", false)
	// Pan right by half a view, then back.
	x, by := tb.point(`.explore button[aria-label="pan right"]`, 0)
	tb.click(x, by, 1)
	if p := tb.xTicks(0); p[0] <= zoomed[0] {
		t.Errorf("panned right, the axis still starts at %v (was %v)", p[0], zoomed[0])
	}
	x, by = tb.point(`.explore button[aria-label="pan left"]`, 0)
	tb.click(x, by, 1)
	if p := tb.xTicks(0); fmt.Sprint(p) != fmt.Sprint(zoomed) {
		t.Errorf("panned right and left: axis %v, want %v", p, zoomed)
	}
	// Reset three ways.
	for _, reset := range []struct {
		name string
		do   func()
	}{
		{"double-click", func() { x := at(0.5); tb.click(x, y, 2) }},
		{"Escape", func() {
			tb.do(chromedp.Focus(chromedp.CSS(".explore svg")), chromedp.KeyEvent("\u001b"))
		}},
		{"all", func() { x, y := tb.point(`.explore button`, 0); tb.click(x, y, 1) }},
	} {
		x0, x1 := at(0.2), at(0.4)
		tb.drag(x0, x1, y)
		if fmt.Sprint(tb.xTicks(0)) == fmt.Sprint(full) {
			t.Fatalf("the drag before %s did not zoom", reset.name)
		}
		reset.do()
		if got := tb.xTicks(0); fmt.Sprint(got) != fmt.Sprint(full) || showing() != "showing every bucket" {
			t.Errorf("after %s: axis %v (%q), want every bucket %v", reset.name, got, showing(), full)
		}
	}
	// The tail from the smallest p99.9 of the table starts at it.
	x, by = tb.point(`.explore button[aria-label^="zoom on the buckets from the smallest p99.9"]`, 0)
	tb.click(x, by, 1)
	p999 := tb.eval(`Math.min(...Array.from(document.querySelectorAll("#latency-1 ~ .scroll")[0].querySelectorAll("tr")).slice(1).map(tr => +tr.cells[5].innerText))`).(float64)
	if v := tb.str(`document.querySelector(".explore").dataset.view`); !strings.HasPrefix(v, fmt.Sprint(p999)+",") {
		t.Errorf("tail from p99.9: view %s, want it to start at the table's smallest p99.9, %v us", v, p999)
	}
}

// TestBrowserUnfold: every folded section (the configuration, the metrics
// the same in every variant, the sweep's CPU tables) opens with a click on
// its summary and shows its content, which was hidden.
func TestBrowserUnfold(t *testing.T) {
	for _, name := range pages {
		t.Run(name, func(t *testing.T) {
			tb := open(t, name, 1280, 900)
			n := int(tb.num(`document.querySelectorAll("details").length`))
			if n < 2 {
				t.Fatalf("%d folded sections, want at least 2 (the configuration, the unchanged metrics)", n)
			}
			// The height of what a section holds beside its summary, as
			// shown (checkVisibility: a folded section's content keeps its
			// layout box in Chromium, hidden by content-visibility).
			content := func(i int) float64 {
				return tb.num(fmt.Sprintf(`(() => { const d = document.querySelectorAll("details")[%d]; let h = 0;
					for (const c of d.children) if (c.tagName !== "SUMMARY" && c.checkVisibility()) h += c.getBoundingClientRect().height; return h; })()`, i))
			}
			for i := range n {
				summary := tb.str(fmt.Sprintf(`document.querySelectorAll("details > summary")[%d].innerText`, i))
				if tb.eval(fmt.Sprintf(`document.querySelectorAll("details")[%d].open`, i)).(bool) || content(i) != 0 {
					t.Errorf("%q is not folded", summary)
					continue
				}
				x, y := tb.point("details > summary", i)
				tb.click(x, y, 1)
				if h := content(i); h < 10 {
					t.Errorf("%q clicked: its content is %v px high", summary, h)
				}
				if strings.Contains(summary, "the same in every variant") {
					rows := tb.num(fmt.Sprintf(`document.querySelectorAll("details")[%d].querySelectorAll("tr").length - 1`, i))
					if want := regexp.MustCompile(`^\d+`).FindString(summary); fmt.Sprint(rows) != want {
						t.Errorf("%q unfolds %v rows", summary, rows)
					}
					if name == "compare.html" {
						tb.shot("compare-unfolded", false)
					}
				}
				tb.click(x, y, 1)
				if h := content(i); h != 0 {
					t.Errorf("%q clicked twice: still %v px shown", summary, h)
				}
			}
		})
	}
}

// TestBrowserContents: each entry of the table of contents, clicked, leads
// to its section (the one element with that id, brought to the top of the
// window unless the page ends first).
func TestBrowserContents(t *testing.T) {
	for _, name := range pages {
		t.Run(name, func(t *testing.T) {
			tb := open(t, name, 1280, 900)
			n := int(tb.num(`document.querySelectorAll("nav.toc a").length`))
			if n < 5 {
				t.Fatalf("%d entries in the contents, want at least 5", n)
			}
			for i := range n {
				tb.eval(`window.scrollTo(0, 0)`)
				href := tb.str(fmt.Sprintf(`document.querySelectorAll("nav.toc a")[%d].getAttribute("href")`, i))
				id := strings.TrimPrefix(href, "#")
				if c := tb.num(fmt.Sprintf(`document.querySelectorAll(%q).length`, `[id="`+id+`"]`)); c != 1 {
					t.Errorf("contents entry %s: %v elements with that id", href, c)
					continue
				}
				x, y := tb.point("nav.toc a", i)
				tb.click(x, y, 1)
				if h := tb.str(`location.hash`); h != href {
					t.Errorf("clicked %s: the address ends in %q", href, h)
				}
				top := tb.num(fmt.Sprintf(`document.getElementById(%q).getBoundingClientRect().top`, id))
				atEnd := tb.eval(`Math.ceil(scrollY + innerHeight) >= document.documentElement.scrollHeight`).(bool)
				if math.Abs(top) > 2 && !(atEnd && top > 0 && top < 900) {
					t.Errorf("clicked %s: its section is at %v px from the top of the window", href, top)
				}
				if vis := tb.eval(fmt.Sprintf(`document.getElementById(%q).checkVisibility()`, id)).(bool); !vis {
					t.Errorf("clicked %s: its section is hidden", href)
				}
			}
		})
	}
}

// TestBrowserNarrow: in a window narrowed to a phone's width (360 px) after
// loading, nothing sticks out sideways: the page does not scroll
// horizontally, and every element ends inside the window unless a box of
// its own scrolls it (wide tables and plots, the configuration's text); the
// tooltip stays inside the window too.
func TestBrowserNarrow(t *testing.T) {
	for _, name := range pages {
		t.Run(name, func(t *testing.T) {
			// Loaded wide, then the window narrowed, as a person does.
			tb := open(t, name, 1280, 900)
			tb.do(chromedp.EmulateViewport(360, 740))
			if w := tb.num(`innerWidth`); w != 360 {
				t.Fatalf("the window is %v px wide, want 360", w)
			}
			if w, sw := tb.num(`innerWidth`), tb.num(`document.documentElement.scrollWidth`); sw > w {
				t.Errorf("the page is %v px wide in a %v px window", sw, w)
			}
			out := tb.eval(`(() => { const out = [];
				const scrolls = e => { for (let p = e.parentElement; p; p = p.parentElement) { const s = getComputedStyle(p).overflowX;
					if (s === "auto" || s === "scroll" || s === "hidden") return true; } return false; };
				for (const e of document.body.querySelectorAll("*")) {
					const r = e.getBoundingClientRect();
					if (r.width > 0 && r.right > innerWidth + 0.5 && !scrolls(e) && !e.closest("svg")) out.push(e.tagName + "." + e.className + " " + Math.round(r.right) + " px");
				}
				return out.slice(0, 10); })()`).([]any)
			for _, o := range out {
				t.Errorf("sticks out of a 360 px window: %v", o)
			}
			x, y := tb.markPoint(0, 0)
			tb.move(x, y)
			if tb.tip(0) == "" {
				t.Fatal("no tooltip in the narrow window")
			}
			if r := tb.num(`document.querySelector(".explore .tip").getBoundingClientRect().right`); r > tb.num(`innerWidth`)+0.5 {
				t.Errorf("the tooltip ends at %v px, past the window", r)
			}
			tb.shot(strings.TrimSuffix(name, ".html")+"-narrow", false)
		})
	}
}

// TestBrowserPlotText: in every plot, as the browser draws it in a
// 1280 px window, no two labels overlap (a legend entry, a tick label, a
// timeline block's name), none is cut by the plot's edge and none is
// smaller than 9 px. With -shots DIR it keeps a picture of every section.
func TestBrowserPlotText(t *testing.T) {
	for _, name := range pages {
		t.Run(name, func(t *testing.T) {
			tb := open(t, name, 1280, 900)
			bad := tb.eval(`(() => { const out = [];
				document.querySelectorAll(".plot svg, .plots svg, .explore svg").forEach((svg, n) => {
					const title = (svg.querySelector("text") || {}).textContent || "";
					const ts = Array.from(svg.querySelectorAll("text")).filter(e => e.textContent.trim() !== "")
						.map(e => [e.textContent, e.getBoundingClientRect()]);
					const box = svg.getBoundingClientRect();
					ts.forEach(([s, r], i) => {
						// The browser's text box is a line high (1.16 em in DejaVu
						// Sans), taller than the glyphs: 3 px of slack across the
						// line (sideways for the rotated y labels), 1 along it.
						const rot = r.height > r.width, a = rot ? 3 : 1, b = rot ? 1 : 3;
						if (r.left < box.left - a || r.right > box.right + a || r.top < box.top - b || r.bottom > box.bottom + b)
							out.push("plot " + n + " (" + title + "): " + JSON.stringify(s) + " is cut by the plot's edge");
						if (r.height < 9) out.push("plot " + n + " (" + title + "): " + JSON.stringify(s) + " is " + r.height.toFixed(1) + " px high");
						ts.slice(i + 1).forEach(([s2, r2]) => {
							const w = Math.min(r.right, r2.right) - Math.max(r.left, r2.left), h = Math.min(r.bottom, r2.bottom) - Math.max(r.top, r2.top);
							if (w > 1 && h > 1) out.push("plot " + n + " (" + title + "): " + JSON.stringify(s) + " overlaps " + JSON.stringify(s2));
						});
					});
				});
				return out; })()`).([]any)
			// With -shots, a picture of each section, a window (1280 x
			// 900) from its heading, for a person to look at.
			if *shots != "" {
				for i, id := range tb.eval(`Array.from(document.querySelectorAll("h2[id]")).map(h => h.id)`).([]any) {
					tb.eval(fmt.Sprintf(`document.getElementById(%q).scrollIntoView()`, id))
					tb.shot(fmt.Sprintf("%s-%02d-%s", strings.TrimSuffix(name, ".html"), i, id), false)
				}
			}
			for i, b := range bad {
				if i == 15 {
					t.Errorf("and %d more", len(bad)-i)
					break
				}
				t.Error(b)
			}
		})
	}
}

// TestBrowserInterrupted: the report of a comparison interrupted by Ctrl-C
// (testdata/interrupted.html) says so before anything else, in the first
// window: the heading is tagged INCOMPLETE and the note under it counts the
// runs that did not finish. The runs the interrupt stopped are under
// Interrupted runs, each with what became of it, the partial figures of
// the one stopped early folded and shown with a click; Failed runs holds
// the failed run alone; both are in the contents and reached from there.
// It keeps two screenshots: the top of the page and the interrupted runs
// unfolded.
func TestBrowserInterrupted(t *testing.T) {
	tb := open(t, "testdata/interrupted.html", 1280, 900)
	if h := tb.str(`document.querySelector("h1").innerText`); !strings.HasSuffix(h, "INCOMPLETE") {
		t.Errorf("the heading reads %q, want it tagged INCOMPLETE", h)
	}
	note := tb.str(`document.getElementById("incomplete").innerText`)
	if !strings.HasPrefix(note, "INCOMPLETE: interrupted. 2 of 6 runs did not finish (1 stopped early, 1 not run)") {
		t.Errorf("the note at the top reads %q", note)
	}
	// In the first window, above the contents and every section.
	if top, nav := tb.num(`document.getElementById("incomplete").getBoundingClientRect().bottom`), tb.num(`document.querySelector("nav.toc").getBoundingClientRect().top`); top > 900 || top > nav {
		t.Errorf("the note ends at %v px, the contents start at %v px: want it first, in the first window", top, nav)
	}
	if !tb.eval(`document.getElementById("incomplete").checkVisibility()`).(bool) {
		t.Error("the note at the top is hidden")
	}
	tb.shot("interrupted-top", false)

	items := func(id string) []string {
		var out []string
		for _, s := range tb.eval(fmt.Sprintf(`(() => { let e = document.getElementById(%q).nextElementSibling; while (e && e.tagName !== "UL") e = e.nextElementSibling;
			return Array.from(e.children).map(li => li.firstChild.textContent.trim()); })()`, id)).([]any) {
			out = append(out, s.(string))
		}
		return out
	}
	if f := items("failures"); len(f) != 1 || f[0] != "variant b seed 2: plugin wheel exited: signal: killed" {
		t.Errorf("Failed runs lists %q, want b's seed 2 alone", f)
	}
	in := items("interrupted")
	if len(in) != 2 || !strings.HasPrefix(in[0], "variant a seed 3: stopped early: interrupted: stopped at 4s of 10s simulated") ||
		in[1] != "variant b seed 3: not run: interrupted before it started" {
		t.Errorf("Interrupted runs lists %q, want a's seed 3 stopped early and b's not run", in)
	}
	for _, id := range []string{"failures", "interrupted"} {
		if n := tb.num(fmt.Sprintf(`document.querySelectorAll('nav.toc a[href="#%s"]').length`, id)); n != 1 {
			t.Errorf("%v contents entries lead to #%s, want 1", n, id)
		}
	}
	x, y := tb.point(`nav.toc a[href="#interrupted"]`, 0)
	tb.click(x, y, 1)
	if top := tb.num(`document.getElementById("interrupted").getBoundingClientRect().top`); math.Abs(top) > 2 {
		t.Errorf("the contents' Interrupted runs entry, clicked, puts the section at %v px", top)
	}
	const partial = `document.querySelector("#interrupted ~ ul details")`
	if tb.eval(partial + `.querySelector("table").checkVisibility()`).(bool) {
		t.Error("the partial figures are not folded")
	}
	x, y = tb.point("#interrupted ~ ul details > summary", 0)
	tb.click(x, y, 1)
	rows := tb.num(partial + `.querySelectorAll("tr").length`)
	if !tb.eval(partial+`.querySelector("table").checkVisibility()`).(bool) || rows != 4 {
		t.Errorf("the partial figures, clicked: visible %v, %v rows; want the header and 3 metrics shown",
			tb.eval(partial+`.querySelector("table").checkVisibility()`), rows)
	}
	if cell := tb.str(partial + `.querySelector("tr:nth-child(2)").innerText`); cell != "Cyclictest/thread=0 max-latency (us)\t3.02" {
		t.Errorf("the first partial figure reads %q", cell)
	}
	tb.eval(`document.getElementById("failures").scrollIntoView()`)
	tb.shot("interrupted-runs", false)
}
