package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/cli"
)

// artifactDir is where tests keep files for people to look at (gitignored).
func artifactDir(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "test-artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// chromium finds the headless browser scripts/install-test-deps.sh installs.
func chromium(t *testing.T) string {
	for _, b := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed: run scripts/install-test-deps.sh (make test does)")
	return ""
}

// runChromium runs headless Chromium on page with args and returns its
// stdout and stderr (its log, console messages included).
func runChromium(t *testing.T, page string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--log-level=0"}, args...)
	cmd := exec.CommandContext(ctx, chromium(t), append(all, "file://"+page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// screenshot keeps a picture of page in test-artifacts/NAME, for a person
// to look at.
func screenshot(t *testing.T, page, name string) {
	t.Helper()
	shot := filepath.Join(artifactDir(t), name)
	os.Remove(shot)
	runChromium(t, page, "--hide-scrollbars", "--window-size=1280,3000", "--screenshot="+shot)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
		t.Fatalf("no screenshot: %v", err)
	}
	t.Logf("screenshot: %s", shot)
}

// loadReport checks that the report at page is self-contained (no script,
// stylesheet or link outside it, no URL in its inline script) and loads it
// in headless Chromium, with every host name unresolvable, without a
// console message (a blocked request or a script error would log one); it
// checks the loaded page's structure (checkDOM) and returns its DOM, the
// explore script's work included.
func loadReport(t *testing.T, page string) string {
	t.Helper()
	src, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:|//|file:)[^"]*"|<script[^>]*\ssrc|<link|url\(|https?://(?:[^w]|w[^w])`).Find(src); m != nil {
		t.Errorf("the report is not self-contained: %s", m)
	}
	dom, log := runChromium(t, page, "--dump-dom", "--virtual-time-budget=5000", "--host-resolver-rules=MAP * ~NOTFOUND")
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, ":CONSOLE") {
			t.Errorf("console message while loading the report: %s", l)
		}
	}
	checkDOM(t, dom)
	return dom
}

// checkDOM checks a loaded report: a table of contents whose every entry
// leads to an element, unique ids, latencies in us (no ns column, no raw
// ns interval), the plots in the page's sans-serif, and every explore chart
// drawn by its script.
func checkDOM(t *testing.T, dom string) {
	t.Helper()
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(` id="([^"]*)"`).FindAllStringSubmatch(dom, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q appears %d times", id, n)
		}
	}
	if !strings.Contains(dom, `<nav class="toc"`) {
		t.Error("no table of contents")
	}
	for _, m := range regexp.MustCompile(`<a href="#([^"]*)">`).FindAllStringSubmatch(dom, -1) {
		if ids[m[1]] != 1 {
			t.Errorf("contents entry #%s leads nowhere", m[1])
		}
	}
	// The configuration's source (a <pre>) may name metrics as the CLI does.
	shown := regexp.MustCompile(`(?s)<pre>.*?</pre>`).ReplaceAllString(dom, "")
	if m := regexp.MustCompile(`latency-ns|<th>[^<]*ns</th>|Liberation Serif`).FindString(shown); m != "" {
		t.Errorf("the page shows %q: want every latency in us and the plots in sans-serif", m)
	}
	if n, drawn := strings.Count(dom, `class="explore"`), strings.Count(dom, `data-ready="1"`); n == 0 || drawn != n {
		t.Errorf("%d explore charts, %d drawn by the script", n, drawn)
	}
}

// TestReportInBrowser renders the report of `tickemu compare
// configs/nohz-catchup.hcl` (two seeds) and opens it in headless Chromium:
// it must load with no console message (no script error, nothing blocked),
// reference nothing outside itself, and have every section and plot. The
// screenshot is kept in test-artifacts/report-nohz-catchup.png.
func TestReportInBrowser(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var stdout, stderr bytes.Buffer
	code := cli.New().Run([]string{"compare", filepath.Join("..", "..", "configs", "nohz-catchup.hcl"), "--seeds", "2", "--report", page}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("compare exit %d: %s", code, stderr.String())
	}
	dom := loadReport(t, page)
	for _, want := range []string{`id="config"`, `id="latency-1"`, `id="compare"`, `id="cpus"`, `id="worst"`, `id="timeline"`,
		"Comparison with per_jiffy", "TIMER_SOFTIRQ catch-up", "next_expiry"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the loaded page lacks %q", want)
		}
	}
	// Histogram, CDF, three breakdowns and the timeline: six plots.
	if n := strings.Count(dom, "<svg"); n < 6 {
		t.Errorf("%d plots in the loaded page, want at least 6", n)
	}
	screenshot(t, page, "report-nohz-catchup.png")
}

// TestSweepReportInBrowser renders the report of a sweep over hz of
// configs/nohz-catchup.hcl's per_jiffy and next_expiry catch-ups (two seeds)
// and opens it in headless Chromium: no console message, nothing outside
// the page, a plot per metric that varies with hz, a table per point, the
// per-point latency, counter and worst-case sections. The report of the
// same comparison merged from two shards is the same page. The screenshot
// is kept in test-artifacts/report-sweep-nohz-catchup.png.
func TestSweepReportInBrowser(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	args := []string{"compare", filepath.Join("..", "..", "configs", "nohz-catchup.hcl"), "--variants", "per_jiffy,next_expiry",
		"--sweep", "hz=100,1000", "--seeds", "2", "--var", "duration=6s"}
	var stdout, stderr bytes.Buffer
	if code := cli.New().Run(append(args, "--report", page), &stdout, &stderr); code != 0 {
		t.Fatalf("compare exit %d: %s", code, stderr.String())
	}
	dom := loadReport(t, page)
	for _, want := range []string{`id="sweep"`, "Metrics against hz", "Comparison with per_jiffy at each sweep point",
		`id="point-hz-100"`, `id="point-hz-1000"`, "Cyclictest/thread=0 max-latency (us)", "Kernel wheel-iterations",
		"Latency: cyclictest \"isolated\" at hz=1000", "hz=1000/variant=next_expiry, seed 1", "TIMER_SOFTIRQ catch-up"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the loaded page lacks %q", want)
		}
	}
	sweep := dom[strings.Index(dom, `id="sweep"`):strings.Index(dom, `id="compare"`)]
	if n := strings.Count(sweep, "<svg"); n < 4 {
		t.Errorf("%d sweep plots in the loaded page, want at least 4", n)
	}
	// Shards merged: the same page.
	var files []string
	for i := 1; i <= 2; i++ {
		var out bytes.Buffer
		if code := cli.New().Run(append(args, "--shard", fmt.Sprintf("%d/2", i)), &out, &stderr); code != 0 {
			t.Fatalf("shard %d exit %d: %s", i, code, stderr.String())
		}
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		if err := os.WriteFile(f, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	merged := filepath.Join(dir, "merged.html")
	if code := cli.New().Run(append([]string{"merge", "--report", merged}, files...), &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("merge exit %d: %s", code, stderr.String())
	}
	src, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(merged); err != nil || !bytes.Equal(got, src) {
		t.Errorf("merge --report of the shards differs from compare --report (%v)", err)
	}
	screenshot(t, page, "report-sweep-nohz-catchup.png")
}

// TestRunReport: `run --report` writes the same page twice for the same
// config and seed, with the run's worst cases in it.
func TestRunReport(t *testing.T) {
	dir := t.TempDir()
	var pages [2][]byte
	for i := range pages {
		page := filepath.Join(dir, "run.html")
		var stdout, stderr bytes.Buffer
		code := cli.New().Run([]string{"run", filepath.Join("..", "..", "configs", "devices.hcl"), "--variant", "lapic_c6_broadcast", "--report", page}, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("run exit %d: %s", code, stderr.String())
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		pages[i] = b
	}
	if !bytes.Equal(pages[0], pages[1]) {
		t.Error("two reports of the same run differ")
	}
	for _, want := range []string{"idle exit C6", "broadcast hand-off", "<h2 id=\"timeline\">", "Results"} {
		if !bytes.Contains(pages[0], []byte(want)) {
			t.Errorf("the run report lacks %q", want)
		}
	}
	var stderr bytes.Buffer
	if code := cli.New().Run([]string{"run", filepath.Join("..", "..", "configs", "default.hcl"), "--report", filepath.Join(dir, "no", "such", "dir.html")}, &bytes.Buffer{}, &stderr); code != 1 || !strings.Contains(stderr.String(), "--report") {
		t.Errorf("unwritable report: exit %d, %q", code, stderr.String())
	}
}
